//! The match lifecycle through real processes: tickets -> ready check ->
//! allocation on the example game server -> assignment -> result; the decline,
//! timeout, disconnect and no-server paths; a game server crash mid-match; a
//! SIGKILL of the saga's driver at each step, and of the ingress that took the
//! last accept; the full path on Redis Cluster; events across two ingresses.

use crate::{BIN, Deployment, Socket, fast_env};
use mm_testkit::{Proc, RedisServer, free_port};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

const ADDRESS: &str = "10.1.2.3:7777";

/// Starts the example game server against the deployment and waits until it has
/// registered.
pub async fn game_server(d: &Deployment, name: &str, match_duration: &str) -> Proc {
    let mut cmd = Command::new(BIN);
    cmd.arg("example-game-server")
        .env("SERVER_MANAGER_URL", &d.grpc)
        .env("GAME_SERVER_ID", name)
        .env("GAME_SERVER_REGION", "eu")
        .env("GAME_SERVER_MODES", "duel,duo,rush,fill,fillcheck")
        .env("GAME_SERVER_CAPACITY", "4")
        .env("GAME_SERVER_ADDRESS", ADDRESS)
        .env("MATCH_DURATION", match_duration);
    let p = Proc::spawn(name, cmd, d.logs.path());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !p.log().contains("\"registered\"") {
        assert!(
            Instant::now() < deadline,
            "game server never registered:\n{}",
            p.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    p
}

/// Queues `a` and `b` for `mode` and returns their sockets and the event each got
/// when the match formed (`first`: `match.ready_check` or `match.placing`).
pub async fn pair(
    d: &Deployment,
    mode: &str,
    a: &str,
    b: &str,
    first: &str,
) -> (Socket, Socket, Value) {
    let (mut wa, mut wb) = (d.socket(a).await, d.socket(b).await);
    for p in [a, b] {
        let (status, t) = d
            .client(p)
            .send(
                Method::POST,
                "/v1/tickets",
                Some(json!({"mode": mode, "players": [p], "rating": 1500, "regions": ["eu"]})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{t}");
    }
    let ev = wa.wait_for(first, Duration::from_secs(15)).await;
    let evb = wb.wait_for(first, Duration::from_secs(15)).await;
    assert_eq!(ev["match_id"], evb["match_id"]);
    (wa, wb, ev)
}

/// Waits until the process stopped at its saga failpoint.
async fn paused_at_failpoint(p: &Proc) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !p.log().contains("saga paused for good") {
        assert!(
            Instant::now() < deadline,
            "failpoint not reached:\n{}",
            p.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the game server has started a match, and checks it started only one.
async fn started_once(gs: &Proc) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gs.log().contains("match_started") {
        assert!(Instant::now() < deadline, "{}", gs.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(gs.log().matches("match_started").count(), 1, "{}", gs.log());
}

pub fn path(ev: &Value, tail: &str) -> String {
    format!("/v1/matches/{}{tail}", ev["match_id"].as_str().unwrap())
}

/// The whole path: ready check (one answer over HTTP, one over the socket),
/// allocation on the example game server, assignment, the result it reports.
async fn full_path(d: &Deployment) {
    let gs = game_server(d, "gs-full", "1s").await;
    let (mut wa, mut wb, ev) = pair(d, "duel", "fa", "fb", "match.ready_check").await;
    assert!(ev["deadline"].as_u64().unwrap() > ev["match"]["created_at"].as_u64().unwrap());
    let mid = ev["match_id"].as_str().unwrap().to_string();
    let ticket_a = ev["ticket_id"].as_str().unwrap().to_string();
    let (status, view) = d.client("fa").get(&format!("/v1/tickets/{ticket_a}")).await;
    assert_eq!(
        (status, view["status"].as_str()),
        (StatusCode::OK, Some("requires_acceptance"))
    );

    let (status, m) = d
        .client("fa")
        .send(Method::POST, &path(&ev, "/accept"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    assert_eq!(m["status"], "requires_acceptance");
    assert_eq!(m["answers"]["fa"], "accepted");
    let progress = wb.wait_for("match.accepted", Duration::from_secs(5)).await;
    assert_eq!(
        (progress["accepted"].as_u64(), progress["total"].as_u64()),
        (Some(1), Some(2))
    );
    wb.send(json!({"type": "match.accept", "match_id": mid}))
        .await;
    let answer = wb.wait_for("match.answer", Duration::from_secs(5)).await;
    assert_ne!(answer["status"], "requires_acceptance", "{answer}");

    let assigned = wa.wait_for("match.assigned", Duration::from_secs(10)).await;
    assert_eq!(assigned["server"]["address"], ADDRESS);
    assert_eq!(assigned["server"]["server_id"], "gs-full");
    let (status, a) = d.client("fb").get("/v1/players/me/assignment").await;
    assert_eq!(status, StatusCode::OK, "{a}");
    assert_eq!(
        (a["match_id"].as_str(), a["server"]["address"].as_str()),
        (Some(mid.as_str()), Some(ADDRESS))
    );
    // In a match: no new ticket.
    let (status, err) = d.client("fa").create(1500.0).await;
    assert_eq!(status, StatusCode::CONFLICT, "{err}");
    assert_eq!(err["error"]["code"], "player_in_match");

    let done = wa
        .wait_for("match.completed", Duration::from_secs(15))
        .await;
    assert_eq!(
        done["result"]["teams"].as_array().map(Vec::len),
        Some(2),
        "{done}"
    );
    wb.wait_for("match.completed", Duration::from_secs(5)).await;
    let (_, m) = d.client("fb").get(&path(&ev, "")).await;
    assert_eq!(m["status"], "completed", "{m}");
    let (_, view) = d.client("fa").get(&format!("/v1/tickets/{ticket_a}")).await;
    assert_eq!(view["status"], "completed");
    let (status, _) = d.client("fa").get("/v1/players/me/assignment").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Free again.
    let (status, t) = d.client("fa").create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gs.log().contains("match_finished") {
        assert!(Instant::now() < deadline, "{}", gs.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gs.log().contains(&mid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_path_embedded() {
    full_path(&Deployment::embedded().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_path_redis_processes() {
    full_path(&Deployment::redis_processes().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_path_redis_cluster_processes() {
    full_path(&Deployment::cluster_processes().await).await;
}

/// A decline cancels the match: the accepter goes back to the queue with their
/// wait, the decliner is banned. Then a ready check nobody answers in time: the
/// accepter is requeued again, the silent player's ticket times out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_then_timeout() {
    let d = Deployment::embedded().await;
    let (mut wa, mut wb, ev) = pair(&d, "duel", "da", "db", "match.ready_check").await;
    let ticket_a = ev["ticket_id"].as_str().unwrap().to_string();
    let (_, before) = d.client("da").get(&format!("/v1/tickets/{ticket_a}")).await;
    let (status, _) = d
        .client("da")
        .send(Method::POST, &path(&ev, "/accept"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, m) = d
        .client("db")
        .send(Method::POST, &path(&ev, "/decline"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    assert_eq!(
        (m["status"].as_str(), m["reason"].as_str()),
        (Some("cancelled"), Some("declined"))
    );
    let ca = wa.wait_for("match.cancelled", Duration::from_secs(5)).await;
    assert_eq!(
        (ca["reason"].as_str(), ca["requeued"].as_bool()),
        (Some("declined"), Some(true))
    );
    assert!(ca.get("banned_until").is_none(), "{ca}");
    let cb = wb.wait_for("match.cancelled", Duration::from_secs(5)).await;
    assert_eq!(cb["requeued"], false);
    let until = cb["banned_until"].as_u64().expect("banned_until");
    // The decliner may not queue, and is told until when.
    let (status, err) = d
        .client("db")
        .send(
            Method::POST,
            "/v1/tickets",
            Some(json!({"mode": "duel", "players": ["db"], "rating": 1500, "regions": ["eu"]})),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    assert_eq!(err["error"]["code"], "queue_banned");
    assert_eq!(err["error"]["banned_until"].as_u64(), Some(until));
    // Too late to answer.
    let (status, err) = d
        .client("da")
        .send(Method::POST, &path(&ev, "/accept"), None)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{err}");
    assert_eq!(err["error"]["code"], "ready_check_closed");
    // The accepter's ticket is back, with its original wait.
    let (_, after) = d.client("da").get(&format!("/v1/tickets/{ticket_a}")).await;
    assert_eq!(after["status"], "searching", "{after}");
    assert_eq!(after["enqueued_at"], before["enqueued_at"]);

    // dc meets da's requeued ticket; da accepts, dc never answers.
    let (status, t) = d
        .client("dc")
        .send(
            Method::POST,
            "/v1/tickets",
            Some(json!({"mode": "duel", "players": ["dc"], "rating": 1500, "regions": ["eu"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let ev2 = wa
        .wait_for("match.ready_check", Duration::from_secs(10))
        .await;
    assert_eq!(ev2["ticket_id"], ticket_a.as_str());
    d.client("da")
        .send(Method::POST, &path(&ev2, "/accept"), None)
        .await;
    let ca = wa
        .wait_for("match.cancelled", Duration::from_secs(10))
        .await;
    assert_eq!(
        (ca["reason"].as_str(), ca["requeued"].as_bool()),
        (Some("ready_check_expired"), Some(true))
    );
    let (_, view) = d
        .client("dc")
        .get(&format!("/v1/tickets/{}", t["id"].as_str().unwrap()))
        .await;
    assert_eq!(
        (view["status"].as_str(), view["reason"].as_str()),
        (Some("timed_out"), Some("ready_check_expired"))
    );
    let (status, _) = d.client("dc").create(1500.0).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (_, after) = d.client("da").get(&format!("/v1/tickets/{ticket_a}")).await;
    assert_eq!(
        (after["status"].as_str(), &after["enqueued_at"]),
        (Some("searching"), &before["enqueued_at"])
    );
}

/// A player whose socket closes during the ready check and does not come back
/// within the grace counts as declining.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_player_counts_as_declining_after_the_grace() {
    let d = Deployment::embedded().await;
    let (wa, mut wb, ev) = pair(&d, "duel", "ga", "gb", "match.ready_check").await;
    d.client("gb")
        .send(Method::POST, &path(&ev, "/accept"), None)
        .await;
    wa.close().await;
    let cb = wb
        .wait_for("match.cancelled", Duration::from_secs(10))
        .await;
    assert_eq!(
        (cb["reason"].as_str(), cb["requeued"].as_bool()),
        (Some("disconnected"), Some(true))
    );
    let (_, m) = d.client("gb").get(&path(&ev, "")).await;
    assert_eq!(m["answers"]["ga"], "declined", "{m}");
    let (status, err) = d.client("ga").create(1500.0).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
}

/// No game server: the match fails before the pivot and everyone goes back to
/// the queue, told why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_free_server_sends_everyone_back() {
    let d = Deployment::embedded().await;
    let (mut wa, mut wb, ev) = pair(&d, "rush", "na1", "nb1", "match.placing").await;
    for w in [&mut wa, &mut wb] {
        let f = w.wait_for("match.failed", Duration::from_secs(10)).await;
        assert_eq!(
            (f["reason"].as_str(), f["requeued"].as_bool()),
            (Some("no_server_available"), Some(true))
        );
        assert_eq!(f["match_id"], ev["match_id"]);
    }
    let (_, m) = d.client("na1").get(&path(&ev, "")).await;
    assert_eq!(
        (m["status"].as_str(), m["reason"].as_str()),
        (Some("failed"), Some("no_server_available"))
    );
    // Once a server registers, the requeued tickets are placed.
    let _gs = game_server(&d, "gs-late", "30s").await;
    let a = wa.wait_for("match.assigned", Duration::from_secs(15)).await;
    assert_eq!(a["server"]["address"], ADDRESS);
    assert_eq!(a["ticket_id"], ev["ticket_id"]);
}

/// A game server that stops heartbeating mid-match: the match fails, its players
/// are told, no result is recorded (nothing waits for the rating service, no rating
/// changes), and they can queue again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_server_crash_fails_its_match() {
    let d = Deployment::redis_processes().await;
    let mut gs = game_server(&d, "gs-crash", "60s").await;
    let (mut wa, mut wb, ev) = pair(&d, "rush", "ca", "cb", "match.placing").await;
    wa.wait_for("match.assigned", Duration::from_secs(10)).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gs.log().contains("match_started") {
        assert!(Instant::now() < deadline, "{}", gs.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    gs.kill();
    for w in [&mut wa, &mut wb] {
        let f = w.wait_for("match.failed", Duration::from_secs(15)).await;
        assert_eq!(
            (f["reason"].as_str(), f["requeued"].as_bool()),
            (Some("server_lost"), Some(false))
        );
    }
    let (_, m) = d.client("ca").get(&path(&ev, "")).await;
    assert_eq!(m["status"], "failed");
    assert!(m.get("result").is_none(), "{m}");
    assert_eq!(crate::ratings::pending_results(&d).await, 0);
    let (_, r) = d.client("ca").get("/v1/players/me/ratings").await;
    assert!(
        r["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["version"] == 0),
        "{r}"
    );
    let (status, _) = d.client("ca").get("/v1/players/me/assignment").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, t) = d.client("cb").create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
}

/// SIGKILL of the process driving a saga right after each step: the supervisor
/// finishes it. After allocate or assign, every player ends assigned once, on the
/// one slot; after an unwind (no server), everyone is back in the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_saga_driver_is_finished_by_the_supervisor() {
    for step in ["allocate", "assign", "unwind"] {
        let failpoint = format!("saga-pause-after-{step}");
        let mut d = Deployment::redis_processes_with(&[("MATCHMAKER_FAILPOINT", &failpoint)]).await;
        let gs = if step == "unwind" {
            None
        } else {
            Some(game_server(&d, &format!("gs-{step}"), "60s").await)
        };
        let (a, b) = (format!("k{step}-a"), format!("k{step}-b"));
        let (mut wa, mut wb, ev) = pair(&d, "rush", &a, &b, "match.placing").await;
        let worker = d
            .procs
            .iter_mut()
            .find(|p| p.log().contains("worker started"))
            .expect("worker");
        paused_at_failpoint(worker).await;
        worker.kill();
        for w in [&mut wa, &mut wb] {
            if step == "unwind" {
                let f = w.wait_for("match.failed", Duration::from_secs(15)).await;
                assert_eq!(f["requeued"], true, "{f}");
            } else {
                let got = w.wait_for("match.assigned", Duration::from_secs(15)).await;
                assert_eq!(got["match_id"], ev["match_id"]);
                assert_eq!(got["server"]["address"], ADDRESS);
            }
        }
        let (_, m) = d.client(&a).get(&path(&ev, "")).await;
        if step == "unwind" {
            assert_eq!(
                (m["status"].as_str(), m["settled"].as_bool()),
                (Some("failed"), Some(true)),
                "{m}"
            );
            let (_, v) = d
                .client(&a)
                .get(&format!(
                    "/v1/tickets/{}",
                    ev["ticket_id"].as_str().unwrap()
                ))
                .await;
            // Back in the queue: searching, or already picked up again (the killed
            // worker's other tasks may match the requeued tickets before it dies).
            assert!(
                v["status"] == "searching" || v["match_id"] != ev["match_id"],
                "{v}"
            );
        } else {
            assert_eq!(m["status"], "assigned", "{m}");
            started_once(gs.as_ref().unwrap()).await;
        }
    }
}

/// SIGKILL of the ingress that took the last accept, right after it allocated the
/// slot: the supervisor finishes the saga. The players, back on a new ingress,
/// find their server through the assignment endpoint, and the game server starts
/// the match once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_ingress_after_the_last_accept_is_finished_by_the_supervisor() {
    let mut d = Deployment::redis_processes_env(&[(
        "ingress",
        "MATCHMAKER_FAILPOINT",
        "saga-pause-after-allocate",
    )])
    .await;
    let gs = game_server(&d, "gs-ingress", "60s").await;
    let (_wa, _wb, ev) = pair(&d, "duel", "ki-a", "ki-b", "match.ready_check").await;
    for p in ["ki-a", "ki-b"] {
        let (status, m) = d
            .client(p)
            .send(Method::POST, &path(&ev, "/accept"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{m}");
    }
    // The deployment starts the ingress first.
    let ingress = &mut d.procs[0];
    paused_at_failpoint(ingress).await;
    ingress.kill();

    // The players come back through a new ingress.
    let addr = format!("127.0.0.1:{}", free_port());
    let mut cmd = Command::new(BIN);
    cmd.arg("ingress")
        .env("REDIS_URL", d.redis.as_ref().unwrap().url())
        .env("DATABASE_URL", &d.database_url)
        .env("LISTEN_ADDR", &addr);
    fast_env(&mut cmd);
    d.procs.push(Proc::spawn("ingress-2", cmd, d.logs.path()));
    d.addr = addr;
    d.wait_ready().await;
    for p in ["ki-a", "ki-b"] {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let (status, a) = d.client(p).get("/v1/players/me/assignment").await;
            if status == StatusCode::OK && a["status"] == "assigned" {
                assert_eq!(a["match_id"], ev["match_id"], "{a}");
                assert_eq!(a["server"]["address"], ADDRESS, "{a}");
                break;
            }
            assert!(Instant::now() < deadline, "{p}: {status} {a}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    started_once(&gs).await;
}

/// A player connected to one ingress hears of a match formed by a worker, with
/// the other player's ticket created through another ingress.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_reach_players_on_any_ingress() {
    let redis = RedisServer::start();
    let logs = tempfile::tempdir().unwrap();
    let addrs = [
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
    ];
    let mut procs = Vec::new();
    let database_url = format!("sqlite://{}", logs.path().join("ratings.db").display());
    for (name, sub, addr) in [
        ("ingress1", "ingress", Some(&addrs[0])),
        ("ingress2", "ingress", Some(&addrs[1])),
        ("worker", "worker", None),
        ("supervisor", "supervisor", None),
    ] {
        let mut cmd = Command::new(BIN);
        cmd.arg(sub)
            .env("REDIS_URL", redis.url())
            .env("DATABASE_URL", &database_url);
        fast_env(&mut cmd);
        if let Some(addr) = addr {
            cmd.env("LISTEN_ADDR", addr);
        }
        procs.push(Proc::spawn(name, cmd, logs.path()));
    }
    let ds: Vec<Deployment> = addrs
        .iter()
        .map(|addr| Deployment {
            addr: addr.clone(),
            grpc: String::new(),
            procs: Vec::new(),
            redis: None,
            cluster: None,
            database_url: database_url.clone(),
            logs: tempfile::tempdir().unwrap(),
        })
        .collect();
    for d in &ds {
        d.wait_ready().await;
    }
    // x listens on ingress 1 and queues through ingress 2; y the other way round.
    let mut wx = ds[0].socket("x").await;
    let mut wy = ds[1].socket("y").await;
    let (s1, _) = ds[1].client("x").create(1500.0).await;
    let (s2, _) = ds[0].client("y").create(1500.0).await;
    assert_eq!((s1, s2), (StatusCode::CREATED, StatusCode::CREATED));
    let ex = wx
        .wait_for("match.completed", Duration::from_secs(10))
        .await;
    let ey = wy
        .wait_for("match.completed", Duration::from_secs(10))
        .await;
    assert_eq!(ex["match_id"], ey["match_id"]);
    drop(procs);
}
