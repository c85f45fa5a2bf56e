//! Redis misbehaving under separate processes, against real servers:
//!
//! - stopped: the ingress answers 503 with `Retry-After` and `/readyz` is not ready;
//!   every process keeps running, logs the outage once rather than once per try,
//!   and recovers by itself when Redis is back;
//! - SIGKILLed under load and restarted from its append-only file (`appendfsync
//!   always`): every ticket that got a 201 is still there.

use crate::Deployment;
use mm_testkit::RedisServer;
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
    for name in POLLING {
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
    }
    let sm = d.proc("server-manager");
    assert!(sm.running(), "the server manager exited:\n{}", sm.log());

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
    for name in POLLING {
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
    unavailable: usize,
    other: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_under_load_and_restarted_from_aof_loses_no_accepted_ticket() {
    let redis = RedisServer::start_aof();
    let mut d = Deployment::over_redis(redis, &[]).await;
    let addr = d.addr.clone();
    let load = Arc::new(Mutex::new(Load::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..8 {
        let (addr, load, stop) = (addr.clone(), load.clone(), stop.clone());
        tasks.spawn(async move {
            let http = reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let player = format!("aof-{task}-{i}");
                let r = post_ticket(&http, &addr, &player).await;
                let status = r.status();
                let body: Value = r.json().await.unwrap_or_default();
                let mut load = load.lock().await;
                match status {
                    StatusCode::CREATED => load
                        .accepted
                        .push((player, body["id"].as_str().unwrap().to_string())),
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
