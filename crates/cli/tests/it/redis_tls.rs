//! Redis over TLS (`rediss://`), as managed Redis services require, one node
//! or a cluster: every process connects, Pub/Sub included, trusting a private
//! CA (`REDIS_TLS_CA_FILE`) and showing a client certificate where Redis asks
//! for one; a server it cannot trust, or that refuses it, stops it at start-up
//! at once (no waiting as for a Redis that is down) with the reason.

use crate::{BIN, Deployment};
use mm_testkit::keys::tls;
use mm_testkit::{Proc, RedisServer};
use reqwest::StatusCode;
use std::process::Command;
use std::time::{Duration, Instant};

/// The test CA and a client certificate it signed, as files.
fn certificates() -> (tempfile::TempDir, [String; 3]) {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, pem: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, pem).unwrap();
        path.display().to_string()
    };
    let files = [
        write("ca.pem", tls::CA),
        write("client.pem", tls::CLIENT_CERT),
        write("client.key", tls::CLIENT_KEY),
    ];
    (dir, files)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_reach_a_tls_redis_with_a_private_ca_and_a_client_certificate() {
    let redis = RedisServer::start_tls(true);
    let url = redis.tls_url();
    let (_dir, [ca, cert, key]) = certificates();
    let d = Deployment::over_redis_at(
        redis,
        &url,
        &[
            ("*", "REDIS_TLS_CA_FILE", &ca),
            ("*", "REDIS_TLS_CERT_FILE", &cert),
            ("*", "REDIS_TLS_KEY_FILE", &key),
        ],
    )
    .await;
    let (alice, bob) = (d.client("alice"), d.client("bob"));
    let mut alice_ws = d.socket("alice").await;
    let mut bob_ws = d.socket("bob").await;
    let (status, a) = alice.create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{a}");
    let (status, b) = bob.create(1510.0).await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    // The events come through Pub/Sub, over TLS as well.
    let matched = alice_ws
        .wait_for("match.completed", Duration::from_secs(15))
        .await;
    assert_eq!(matched["ticket_id"], a["id"]);
    let theirs = bob_ws
        .wait_for("match.completed", Duration::from_secs(15))
        .await;
    assert_eq!(theirs["match_id"], matched["match_id"]);
}

/// A Redis Cluster over TLS (nodes talking to each other over TLS too): every
/// process finds the cluster's nodes through two `rediss://` URLs, and a
/// ticket in any slot is matched and told over Pub/Sub.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_reach_a_tls_redis_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("cluster-ca.pem");
    std::fs::write(&ca, tls::CLUSTER_CA).unwrap();
    let ca = ca.display().to_string();
    let d = Deployment::tls_cluster_processes_env(&[("*", "REDIS_TLS_CA_FILE", &ca)]).await;
    let mut sockets = Vec::new();
    let mut tickets = Vec::new();
    for (i, player) in ["ann", "bob", "cy", "dee"].iter().enumerate() {
        sockets.push(d.socket(player).await);
        let (status, t) = d.client(player).create(1500.0 + i as f64).await;
        assert_eq!(status, StatusCode::CREATED, "{t}");
        tickets.push(t["id"].clone());
    }
    for (ws, id) in sockets.iter_mut().zip(&tickets) {
        let matched = ws
            .wait_for("match.completed", Duration::from_secs(20))
            .await;
        assert_eq!(&matched["ticket_id"], id);
    }
}

/// `matchmaker worker` with `env`, to its end (at most 30 s, though it would
/// wait 60 s for a Redis that does not answer): its output.
fn worker_fails(env: &[(&str, &str)]) -> String {
    let logs = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    cmd.arg("worker")
        .env("REDIS_STARTUP_WAIT", "60s")
        .env("DATA_DIR", logs.path());
    cmd.envs(env.iter().copied());
    let mut p = Proc::spawn("worker", cmd, logs.path());
    let deadline = Instant::now() + Duration::from_secs(30);
    while p.running() {
        assert!(Instant::now() < deadline, "still running:\n{}", p.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    p.log()
}

#[test]
fn a_tls_redis_that_cannot_be_trusted_or_refuses_the_client_stops_start_up() {
    let (_dir, [ca, cert, key]) = certificates();
    let open = RedisServer::start_tls(false);
    // The test CA is no root the system trusts.
    let log = worker_fails(&[("REDIS_URL", &open.tls_url())]);
    assert!(
        log.contains("cannot connect to rediss://127.0.0.1"),
        "{log}"
    );
    assert!(log.to_lowercase().contains("certificate"), "{log}");
    // A Redis that asks for a client certificate, and gets none.
    let strict = RedisServer::start_tls(true);
    let log = worker_fails(&[("REDIS_URL", &strict.tls_url()), ("REDIS_TLS_CA_FILE", &ca)]);
    assert!(
        log.contains("cannot connect to rediss://127.0.0.1"),
        "{log}"
    );
    // Half a client certificate, and certificates for a plain connection.
    let log = worker_fails(&[
        ("REDIS_URL", &strict.tls_url()),
        ("REDIS_TLS_CERT_FILE", &cert),
    ]);
    assert!(
        log.contains("REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE go together"),
        "{log}"
    );
    let log = worker_fails(&[
        ("REDIS_URL", &strict.url()),
        ("REDIS_TLS_CA_FILE", &ca),
        ("REDIS_TLS_CERT_FILE", &cert),
        ("REDIS_TLS_KEY_FILE", &key),
    ]);
    assert!(
        log.contains("need a TLS REDIS_URL (rediss://host:port)"),
        "{log}"
    );
}
