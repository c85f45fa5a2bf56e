//! A match its game server never ends (no result, no release, heartbeats on)
//! ends `failed` (`match_expired`) once its mode's `max_match_duration` has
//! passed since it was placed: the players hear `match.failed`, may queue
//! again at once, and the server's slot goes to the next match; the example
//! game server drops the session its heartbeat no longer lists.

use crate::{BIN, Deployment, Socket};
use mm_testkit::Proc;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::process::Command;
use std::time::{Duration, Instant};

const MODES: &str = r#"
[modes.marathon]
teams = 2
team_size = 1
ready_check = false
max_match_duration = "2s"
"#;

/// The example game server with one slot, whose matches last ten minutes.
async fn slow_server(d: &Deployment) -> Proc {
    let mut cmd = Command::new(BIN);
    cmd.arg("example-game-server")
        .env("SERVER_MANAGER_URL", &d.grpc)
        .env("GAME_SERVER_ID", "gs-slow")
        .env("GAME_SERVER_REGION", "eu")
        .env("GAME_SERVER_MODES", "marathon")
        .env("GAME_SERVER_CAPACITY", "1")
        .env("GAME_SERVER_ADDRESS", "10.1.2.3:7777")
        .env("MATCH_DURATION", "10m");
    let p = Proc::spawn("gs-slow", cmd, d.logs.path());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !p.log().contains("\"registered\"") {
        assert!(Instant::now() < deadline, "never registered:\n{}", p.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    p
}

/// Queues `a` and `b` and waits until both are assigned; returns `a`'s socket
/// and the match id.
async fn assigned(d: &Deployment, a: &str, b: &str) -> (Socket, String) {
    let (mut wa, mut wb) = (d.socket(a).await, d.socket(b).await);
    for p in [a, b] {
        let body = json!({"mode": "marathon", "players": [p], "rating": 1500, "regions": ["eu"]});
        let (s, t) = d
            .client(p)
            .send(Method::POST, "/v1/tickets", Some(body))
            .await;
        assert_eq!(s, StatusCode::CREATED, "{t}");
    }
    let ev = wa.wait_for("match.assigned", Duration::from_secs(15)).await;
    wb.wait_for("match.assigned", Duration::from_secs(5)).await;
    (wa, ev["match_id"].as_str().unwrap().to_string())
}

async fn a_forgotten_match_expires(d: &Deployment) {
    let server = slow_server(d).await;
    let (mut ws, id) = assigned(d, "ex-ann", "ex-bob").await;
    let placed = Instant::now();
    let ev = ws.wait_for("match.failed", Duration::from_secs(15)).await;
    assert_eq!(
        (&ev["match_id"], &ev["reason"], &ev["requeued"]),
        (&json!(id), &json!("match_expired"), &json!(false)),
        "{ev}"
    );
    assert!(
        placed.elapsed() >= Duration::from_millis(1500),
        "ended early"
    );
    let (s, m) = d.client("ex-ann").get(&format!("/v1/matches/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    assert_eq!(
        (&m["status"], &m["reason"]),
        (&json!("failed"), &json!("match_expired")),
        "{m}"
    );
    let (s, a) = d.client("ex-ann").get("/v1/players/me/assignment").await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{a}");
    // The one slot is free again: the same players' next match is placed on it.
    let (_, next) = assigned(d, "ex-ann", "ex-bob").await;
    assert_ne!(next, id);
    // The server knew when the match would end: its mode's limit after
    // the allocation.
    let log = server.log();
    let started: serde_json::Value = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "match_started" && v["match_id"] == id.as_str())
        .unwrap_or_else(|| panic!("{log}"));
    let (allocated, expires) = (
        started["allocated_at_ms"].as_u64().unwrap_or_default(),
        started["expires_at_ms"].as_u64().unwrap_or_default(),
    );
    assert!(allocated > 0 && expires == allocated + 2_000, "{started}");
    // The example server stopped the session its heartbeat no longer listed
    // (it prints so once that heartbeat's answer is in).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let log = server.log();
        if log
            .lines()
            .any(|l| l.contains("\"match_dropped\"") && l.contains(&id))
        {
            break;
        }
        assert!(Instant::now() < deadline, "{log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_a_forgotten_match_expires() {
    let modes = crate::shared_file("marathon-modes", MODES);
    let d = Deployment::embedded_with(&[("MODES_FILE", &modes)]).await;
    a_forgotten_match_expires(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_a_forgotten_match_expires() {
    let modes = crate::shared_file("marathon-modes", MODES);
    let d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &modes)]).await;
    a_forgotten_match_expires(&d).await;
}
