//! Redis misbehaving under separate processes, against real servers:
//!
//! - stopped: the ingress answers 503 with `Retry-After` and `/readyz` is not ready;
//!   every process keeps running, logs the outage once rather than once per try,
//!   and recovers by itself when Redis is back;
//! - SIGKILLed under load and restarted from its append-only file (`appendfsync
//!   always`): every ticket that got a 201 is still there;
//! - not there yet: a process waiting for it at start-up stops cleanly on SIGTERM.

use crate::{BIN, Deployment, fast_env};
use mm_testkit::{Proc, RedisServer, free_port};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

const OUTAGE_LINE: &str = "the store is unreachable";
const RECOVERY_LINE: &str = "the store answers again";
/// Processes that call Redis on their own, without being asked.
const POLLING: [&str; 4] = ["ingress", "worker", "supervisor", "rating-service"];

/// Every long-running process, started while nothing answers at `REDIS_URL`,
/// waits for Redis; a SIGTERM then ends it cleanly (exit 0), not by the signal.
#[test]
fn a_process_waiting_for_redis_at_start_up_stops_cleanly() {
    let logs = tempfile::tempdir().unwrap();
    let nobody = format!("redis://127.0.0.1:{}", free_port());
    let db = format!("sqlite://{}", logs.path().join("ratings.db").display());
    let mut procs: Vec<Proc> = [
        "ingress",
        "worker",
        "supervisor",
        "server-manager",
        "rating-service",
    ]
    .into_iter()
    .map(|name| {
        let mut cmd = std::process::Command::new(BIN);
        cmd.arg(name)
            .env("REDIS_URL", &nobody)
            .env("REDIS_STARTUP_WAIT", "60s")
            .env("DATABASE_URL", &db)
            .env("LISTEN_ADDR", format!("127.0.0.1:{}", free_port()))
            .env("GRPC_LISTEN_ADDR", format!("127.0.0.1:{}", free_port()));
        fast_env(&mut cmd);
        Proc::spawn(name, cmd, logs.path())
    })
    .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    for p in &mut procs {
        while !p.log().contains("Redis is unreachable; waiting for it") {
            assert!(
                Instant::now() < deadline,
                "not waiting for Redis:\n{}",
                p.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            p.terminate(Duration::from_secs(10)),
            "clean exit on SIGTERM:\n{}",
            p.log()
        );
        assert!(p.log().contains("stopped while starting"), "{}", p.log());
    }
}

async fn post_ticket(http: &reqwest::Client, addr: &str, player: &str) -> reqwest::Response {
    http.post(format!("http://{addr}/v1/tickets"))
        .bearer_auth(player)
        .json(&json!({"players": [player], "mode": "1v1", "regions": ["eu"], "rating": 1500.0}))
        .send()
        .await
        .expect("the ingress answers while Redis is down")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_gives_503_and_every_process_recovers_by_itself() {
    let mut d = Deployment::redis_processes().await;
    let http = reqwest::Client::new();
    let addr = d.addr.clone();
    // Every process past its start (one that starts while Redis is down waits for it
    // and says so instead).
    let deadline = Instant::now() + Duration::from_secs(20);
    for (name, line) in [
        ("worker", "worker started"),
        ("supervisor", "supervisor started"),
        ("rating-service", "rating consumer started"),
    ] {
        while !d.proc(name).log().contains(line) {
            assert!(Instant::now() < deadline, "{name} did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // A game server heartbeating through the outage (every 200 ms): the server
    // manager answers each beat UNAVAILABLE and logs the outage once, like the
    // processes that poll.
    let _gs = crate::lifecycle::game_server(&d, "gs-outage", "1s").await;

    d.redis.as_mut().unwrap().kill();
    // Every answer while it is down: 503, Retry-After, a JSON error.
    for i in 0..20 {
        let r = post_ticket(&http, &addr, &format!("down-{i}")).await;
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        let retry: u64 = r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(retry >= 1);
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "store_unavailable", "{body}");
    }
    let r = http
        .get(format!("http://{addr}/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(
        http.get(format!("http://{addr}/healthz"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK,
        "alive, only not ready"
    );
    // Long enough for every loop to fail many times and back off.
    tokio::time::sleep(Duration::from_secs(4)).await;
    for name in POLLING.iter().chain(&["server-manager"]) {
        let p = d.proc(name);
        assert!(
            p.running(),
            "{name} exited while Redis was down:\n{}",
            p.log()
        );
        let log = p.log();
        assert_eq!(
            log.matches(OUTAGE_LINE).count(),
            1,
            "{name} should log the outage once:\n{log}"
        );
        let warnings = log.lines().filter(|l| l.contains("WARN")).count();
        assert!(
            warnings <= 2,
            "{name} logged {warnings} warnings for one outage:\n{log}"
        );
        let errors = log.lines().filter(|l| l.contains("ERROR")).count();
        assert_eq!(errors, 0, "{name} logged errors for an outage:\n{log}");
    }

    d.redis.as_mut().unwrap().restart();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = http
            .get(format!("http://{addr}/readyz"))
            .send()
            .await
            .unwrap();
        if r.status() == StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "never ready again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The worker matches again without a restart (1v1 has no ready check in the
    // tests' modes: a ticket is completed once matched).
    let mut ids = Vec::new();
    for p in ["back-a", "back-b"] {
        let r = post_ticket(&http, &addr, p).await;
        assert_eq!(r.status(), StatusCode::CREATED);
        let body: Value = r.json().await.unwrap();
        ids.push((p, body["id"].as_str().unwrap().to_string()));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    for (p, id) in &ids {
        loop {
            let (_, view) = d.client(p).get(&format!("/v1/tickets/{id}")).await;
            if view["status"] == "completed" {
                break;
            }
            if Instant::now() > deadline {
                d.dump_logs();
                panic!("no match after the outage: {view}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // Each process noticed the end of the outage by itself (backoff is at most 5s).
    let deadline = Instant::now() + Duration::from_secs(15);
    for name in POLLING.iter().chain(&["server-manager"]) {
        loop {
            let log = d.proc(name).log();
            if log.contains(RECOVERY_LINE) {
                break;
            }
            assert!(Instant::now() < deadline, "{name} never recovered:\n{log}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for p in &mut d.procs {
        assert!(p.running(), "{} exited", p.name());
    }
}

/// What the load saw: the tickets acknowledged with 201, and the other answers.
#[derive(Default)]
struct Load {
    accepted: Vec<(String, String)>,
    /// When the fault was injected, and the tickets whose request was sent after.
    fault_at: Option<Instant>,
    after_fault: Vec<(String, String)>,
    unavailable: usize,
    other: Vec<String>,
}

/// Eight clients creating 1v1 tickets for new players back to back (`pace`
/// between requests), until `stop`; what they saw is in the returned `Load`.
fn start_load(
    addr: &str,
    prefix: &'static str,
    pace: Duration,
) -> (Arc<Mutex<Load>>, Arc<AtomicBool>, tokio::task::JoinSet<()>) {
    let load = Arc::new(Mutex::new(Load::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..8 {
        let (addr, load, stop) = (addr.to_string(), load.clone(), stop.clone());
        tasks.spawn(async move {
            let http = reqwest::Client::builder()
                .timeout(Duration::from_secs(20))
                .build()
                .unwrap();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                tokio::time::sleep(pace).await;
                let player = format!("{prefix}-{task}-{i}");
                let sent = Instant::now();
                let Ok(r) = http
                    .post(format!("http://{addr}/v1/tickets"))
                    .bearer_auth(&player)
                    .json(&json!({"players": [player], "mode": "1v1", "regions": ["eu"], "rating": 1500.0}))
                    .send()
                    .await
                else {
                    load.lock().await.other.push("no answer".into());
                    continue;
                };
                let status = r.status();
                let body: Value = r.json().await.unwrap_or_default();
                let mut load = load.lock().await;
                match status {
                    StatusCode::CREATED => {
                        let ticket = (player, body["id"].as_str().unwrap().to_string());
                        if load.fault_at.is_some_and(|at| sent > at) {
                            load.after_fault.push(ticket.clone());
                        }
                        load.accepted.push(ticket);
                    }
                    StatusCode::SERVICE_UNAVAILABLE => {
                        load.unavailable += 1;
                        drop(load);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    _ => load.other.push(format!("{status} {body}")),
                }
            }
        });
    }
    (load, stop, tasks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_under_load_and_restarted_from_aof_loses_no_accepted_ticket() {
    let redis = RedisServer::start_aof();
    let mut d = Deployment::over_redis(redis, &[]).await;
    let addr = d.addr.clone();
    let (load, stop, mut tasks) = start_load(&addr, "aof", Duration::ZERO);
    let accepted_now = || async { load.lock().await.accepted.len() };
    let deadline = Instant::now() + Duration::from_secs(30);
    while accepted_now().await < 300 {
        assert!(Instant::now() < deadline, "load too slow");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    d.redis.as_mut().unwrap().kill();
    let at_kill = accepted_now().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    d.redis.as_mut().unwrap().restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    while accepted_now().await < at_kill + 300 {
        assert!(
            Instant::now() < deadline,
            "load did not resume after the restart"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    let load = load.lock().await;
    assert!(
        load.unavailable > 0,
        "the kill landed while no request was made"
    );
    assert!(
        load.other.is_empty(),
        "unexpected answers: {:?}",
        load.other
    );

    let mut lost = Vec::new();
    for (player, id) in &load.accepted {
        let (status, body) = d.client(player).get(&format!("/v1/tickets/{id}")).await;
        if status != StatusCode::OK {
            lost.push(format!("{id}: {status} {body}"));
        }
    }
    eprintln!(
        "{} tickets acknowledged ({at_kill} before the kill), {} answers 503 while Redis was down",
        load.accepted.len(),
        load.unavailable
    );
    assert!(
        lost.is_empty(),
        "{} acknowledged tickets lost: {lost:?}",
        lost.len()
    );
    for p in &mut d.procs {
        assert!(p.running(), "{} exited", p.name());
    }
}

impl std::fmt::Display for Failover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} acknowledged, {} lost, {} players matched twice, first match {:?} after the kill, {} answers 503",
            self.acknowledged,
            self.lost.len(),
            self.duplicated.len(),
            self.to_first_match,
            self.refused_while_failing
        )
    }
}

/// What a failover run saw.
struct Failover {
    acknowledged: usize,
    lost: Vec<String>,
    /// Players in more than one match (each had one ticket).
    duplicated: Vec<String>,
    to_first_match: Duration,
    refused_while_failing: usize,
}

/// Eight clients create 1v1 tickets on a six-node cluster; the primary of the
/// 1v1:eu pool's slot is SIGKILLed mid-load; its replica takes over. Counts what
/// the asynchronous replication window lost or duplicated, and how long from the
/// kill to the first match of a ticket created after it.
async fn failover(env: &[(&str, &str, &str)]) -> Failover {
    let mut d = Deployment::cluster_processes_env(env).await;
    let addr = d.addr.clone();
    // A steady load, not a flood: the cluster's nodes need CPU to fail over.
    let (load, stop, mut tasks) = start_load(&addr, "fo", Duration::from_millis(10));
    let accepted = || async { load.lock().await.accepted.len() };
    let deadline = Instant::now() + Duration::from_secs(30);
    while accepted().await < 200 {
        assert!(Instant::now() < deadline, "load too slow");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let killed_at = Instant::now();
    let at_kill = accepted().await;
    load.lock().await.fault_at = Some(killed_at);
    let port = d
        .cluster
        .as_mut()
        .unwrap()
        .kill_primary_of("mm:{p:1v1:eu}:q");
    eprintln!("killed the primary on port {port} after {at_kill} tickets");

    // The replica takes over; then the operator brings the dead node back, and it
    // rejoins as its replacement's replica (with WAIT 1 the new primary's slots
    // take tickets only once it has a replica again).
    let deadline = Instant::now() + Duration::from_secs(60);
    while d
        .cluster
        .as_ref()
        .unwrap()
        .primary_of("mm:{p:1v1:eu}:q")
        .is_none_or(|p| p == port)
    {
        assert!(
            Instant::now() < deadline,
            "the cluster did not fail over:\n{}",
            d.cluster.as_ref().unwrap().describe()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let failed_over = killed_at.elapsed();
    d.cluster.as_mut().unwrap().restart_node(port);
    eprintln!("replica promoted {failed_over:?} after the kill; dead node restarted");
    // The first ticket acknowledged after the kill that is matched.
    let to_first_match = 'found: loop {
        if killed_at.elapsed() > Duration::from_secs(60) {
            d.dump_logs();
            let (after, acked, refused) = {
                let l = load.lock().await;
                (l.after_fault.clone(), l.accepted.len(), l.unavailable)
            };
            let mut statuses = std::collections::BTreeMap::new();
            for (player, id) in after.iter().rev().take(100) {
                let (_, view) = d.client(player).get(&format!("/v1/tickets/{id}")).await;
                *statuses.entry(view["status"].to_string()).or_insert(0) += 1;
            }
            panic!(
                "no match formed within 60 s of the kill: {} sent after it acknowledged ({acked} in all, {refused} refused); the last 100: {statuses:?}",
                after.len()
            );
        }
        let fresh: Vec<(String, String)> = load.lock().await.after_fault.clone();
        for (player, id) in fresh.iter().take(50) {
            let (_, view) = d.client(player).get(&format!("/v1/tickets/{id}")).await;
            if view["status"] == "completed" {
                break 'found killed_at.elapsed();
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Carry on a little after the failover, then stop and let the queue drain.
    let after = accepted().await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while accepted().await < after + 200 {
        if Instant::now() > deadline {
            d.dump_logs();
            let l = load.lock().await;
            panic!(
                "load did not resume after the failover: {} acknowledged, {} answers 503, others {:?}",
                l.accepted.len(),
                l.unavailable,
                l.other.iter().take(5).collect::<Vec<_>>()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let load = load.lock().await;
    assert!(
        load.other.is_empty(),
        "unexpected answers: {:?}",
        load.other
    );
    let mut lost = Vec::new();
    let mut duplicated = Vec::new();
    for (player, id) in &load.accepted {
        let client = d.client(player);
        let (status, _) = client.get(&format!("/v1/tickets/{id}")).await;
        if status == StatusCode::NOT_FOUND {
            lost.push(id.clone());
        }
        let (_, matches) = client.get("/v1/players/me/matches").await;
        if matches["matches"].as_array().is_some_and(|m| m.len() > 1) {
            duplicated.push(player.clone());
        }
    }
    for p in &mut d.procs {
        assert!(p.running(), "{} exited during the failover", p.name());
    }
    Failover {
        acknowledged: load.accepted.len(),
        lost,
        duplicated,
        to_first_match,
        refused_while_failing: load.unavailable,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_primary_killed_under_load_fails_over_without_a_restart() {
    let f = failover(&[]).await;
    eprintln!("failover (async replication): {f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_wait_a_cluster_failover_loses_no_acknowledged_ticket() {
    let f = failover(&[("ingress", "REDIS_WAIT_REPLICAS", "1")]).await;
    eprintln!("failover (WAIT 1): {f}");
    assert!(f.lost.is_empty(), "acknowledged tickets lost: {:?}", f.lost);
}

/// `REDIS_WAIT_REPLICAS=1` against a primary with no replica: the ingress warns at
/// start-up, naming the primary; every ticket is answered `503 not_replicated`
/// (its first write is not confirmed, so nothing is queued) and creating it
/// again is answered the same, never `201`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_replica_that_is_not_there_is_warned_of_and_answered_503() {
    let redis = RedisServer::start();
    let primary = format!("127.0.0.1:{}", redis.port());
    let mut d = Deployment::over_redis(
        redis,
        &[
            ("ingress", "REDIS_WAIT_REPLICAS", "1"),
            ("ingress", "REDIS_WAIT_TIMEOUT", "200ms"),
        ],
    )
    .await;
    let log = d.proc("ingress").log();
    let warning = log
        .lines()
        .find(|l| l.contains("REDIS_WAIT_REPLICAS=1 but this primary has 0 replica(s)"))
        .unwrap_or_else(|| panic!("no start-up warning:\n{log}"));
    assert!(warning.contains(&primary), "{warning}");
    // The other processes do not wait for replicas and do not warn.
    assert!(!d.proc("worker").log().contains("REDIS_WAIT_REPLICAS"));

    let http = reqwest::Client::new();
    for _ in 0..2 {
        let res = post_ticket(&http, &d.addr, "w1").await;
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_replicated", "{body}");
    }
    // Nothing was queued: the player is not in a match and has no live ticket
    // another creation would collide with.
    let (status, _) = d.client("w1").get("/v1/players/me/assignment").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
