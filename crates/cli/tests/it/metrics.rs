//! Metrics and logs from real processes: `serve` exports Prometheus text on its
//! HTTP port (route templates, never ids; real histograms), every process of a
//! Redis deployment serves `/metrics` on `METRICS_ADDR` with what it did, shared
//! gauges come from the supervisor, `METRICS=false` turns them off, and
//! `LOG_FORMAT=json` writes one JSON object per line; ready-check outcomes and
//! match ends are counted once each; saga steps, allocations, game servers and
//! free slots by region, and the oldest wait per pool are reported.

use crate::lifecycle::{game_server, pair, path};
use crate::{Deployment, Socket};
use mm_testkit::free_port;
use reqwest::StatusCode;
use serde_json::Value;
use std::time::{Duration, Instant};

pub async fn scrape(addr: &str) -> (StatusCode, String) {
    let resp = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// The value of the sample line `series` (name and labels exactly as rendered).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Scrapes `addr` until `series` reads `want` (gauges and counters of other
/// tasks settle a little after the call that caused them).
async fn settle(addr: &str, series: &str, want: f64) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, text) = scrape(addr).await;
        assert_eq!(status, StatusCode::OK);
        if sample(&text, series) == Some(want) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{series} is {:?}, not {want}:\n{text}",
            sample(&text, series)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Alice (1500, with her socket open) and Bob (`bob`) queue for 1v1 and are
/// matched; returns Alice's socket, still open.
async fn one_match(d: &Deployment, bob: f64) -> Socket {
    let mut socket = d.socket("alice").await;
    assert_eq!(
        d.client("alice").create(1500.0).await.0,
        StatusCode::CREATED
    );
    assert_eq!(d.client("bob").create(bob).await.0, StatusCode::CREATED);
    socket
        .wait_for("match.completed", Duration::from_secs(10))
        .await;
    socket
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_exports_metrics_on_its_port_and_logs_json() {
    let d = Deployment::embedded_with(&[("LOG_FORMAT", "json")]).await;
    let socket = one_match(&d, 1510.0).await;
    let (status, _) = d.client("bob").get("/v1/tickets/no-such-ticket-42").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let text = settle(&d.addr, r#"matchmaker_queue_depth{pool="1v1:eu"}"#, 0.0).await;
    let has = |series: &str, want: f64| {
        assert_eq!(sample(&text, series), Some(want), "{series} in:\n{text}");
    };
    has(r#"matchmaker_tickets_created_total{mode="1v1"}"#, 2.0);
    has(
        r#"matchmaker_http_requests_total{route="/v1/tickets",method="POST",status="201"}"#,
        2.0,
    );
    has(
        r#"matchmaker_http_requests_total{route="/v1/tickets/{id}",method="GET",status="404"}"#,
        1.0,
    );
    assert!(!text.contains("no-such-ticket-42"), "an id became a label");
    has(r#"matchmaker_matches_formed_total{mode="1v1"}"#, 1.0);
    // A ticket claimed alone before the other arrived goes back and is claimed again.
    let claimed = sample(&text, r#"matchmaker_tickets_claimed_total{pool="1v1:eu"}"#).unwrap();
    let released =
        sample(&text, r#"matchmaker_tickets_released_total{pool="1v1:eu"}"#).unwrap_or(0.0);
    assert_eq!(claimed - released, 2.0, "{text}");
    has("matchmaker_websocket_connections", 1.0);
    assert!(
        sample(
            &text,
            r#"matchmaker_websocket_events_total{event="match.completed"}"#
        )
        .is_some()
    );
    // Real histograms (buckets), so they sum across processes: the two tickets'
    // times to match, and the match's rating spread of 10 points.
    assert!(text.contains("# TYPE matchmaker_time_to_match_seconds histogram"));
    has(r#"matchmaker_time_to_match_seconds_count{mode="1v1"}"#, 2.0);
    has(
        r#"matchmaker_time_to_match_seconds_bucket{mode="1v1",le="+Inf"}"#,
        2.0,
    );
    has(
        r#"matchmaker_match_rating_spread_bucket{mode="1v1",le="10"}"#,
        1.0,
    );
    socket.close().await;
    settle(&d.addr, "matchmaker_websocket_connections", 0.0).await;

    // The log: one JSON object per line, with the event's fields at the top.
    let log = d.procs[0].log();
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        // A warning in dev mode: it says the tokens are player ids.
        lines.iter().any(|l| l["level"] == "WARN"
            && l["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("listening"))),
        "{log}"
    );
}

/// Redis and separate processes, each serving `/metrics` on its own operator
/// listener: worker, supervisor, server manager, rating service and ingress, in
/// that order (two by the older name METRICS_ADDR, which still works).
pub async fn redis_with_metrics_ports() -> (Deployment, Vec<String>) {
    let ports: Vec<String> = (0..5)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let d = Deployment::redis_processes_env(&[
        ("worker", "OPS_LISTEN_ADDR", &ports[0]),
        ("supervisor", "METRICS_ADDR", &ports[1]),
        ("server-manager", "OPS_LISTEN_ADDR", &ports[2]),
        ("rating-service", "METRICS_ADDR", &ports[3]),
        ("ingress", "OPS_LISTEN_ADDR", &ports[4]),
    ])
    .await;
    (d, ports)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_process_serves_its_own_metrics() {
    let (d, ports) = redis_with_metrics_ports().await;
    let _socket = one_match(&d, 1600.0).await;

    // Each process reports what it did itself; the ingress on its operator
    // listener, never on the players' port.
    let ingress = settle(
        &ports[4],
        r#"matchmaker_tickets_created_total{mode="1v1"}"#,
        2.0,
    )
    .await;
    assert_eq!(scrape(&d.addr).await.0, StatusCode::NOT_FOUND);
    assert!(!ingress.contains("matchmaker_tickets_claimed_total"));
    let worker = settle(
        &ports[0],
        r#"matchmaker_matches_formed_total{mode="1v1"}"#,
        1.0,
    )
    .await;
    assert_eq!(
        sample(&worker, r#"matchmaker_match_rating_spread_sum{mode="1v1"}"#),
        Some(100.0)
    );
    // Every call to Redis is timed, by command.
    assert!(
        sample(
            &worker,
            r#"matchmaker_store_call_duration_seconds_count{command="EVALSHA"}"#
        )
        .is_some_and(|n| n > 0.0),
        "{worker}"
    );
    // Queue depth is shared state: the supervisor reports it, the workers do not.
    assert!(!worker.contains("matchmaker_queue_depth"));
    let supervisor = settle(&ports[1], r#"matchmaker_queue_depth{pool="1v1:eu"}"#, 0.0).await;
    assert!(sample(&supervisor, "matchmaker_reclaim_attempts_total").unwrap() > 0.0);
    for port in &ports[2..4] {
        assert_eq!(scrape(port).await.0, StatusCode::OK, "{port}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ready_checks_and_match_ends_are_counted() {
    let d = Deployment::embedded().await;
    // One ready check declined, one left to time out (3 s).
    let (_wa, _wb, declined) = pair(&d, "duel", "da", "db", "match.ready_check").await;
    let (status, body) = d
        .client("db")
        .send(reqwest::Method::POST, &path(&declined, "/decline"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The player who did not decline goes back to the queue: take them out, so
    // that the next pair is matched with each other.
    settle(
        &d.addr,
        r#"matchmaker_matches_ended_total{status="cancelled"}"#,
        1.0,
    )
    .await;
    let ticket = declined["ticket_id"].as_str().unwrap();
    let (status, body) = d
        .client("da")
        .delete(&format!("/v1/tickets/{ticket}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_ta, _tb, _) = pair(&d, "duel", "ta", "tb", "match.ready_check").await;
    let text = settle(
        &d.addr,
        r#"matchmaker_ready_checks_total{outcome="timed_out"}"#,
        1.0,
    )
    .await;
    assert_eq!(
        sample(
            &text,
            r#"matchmaker_ready_checks_total{outcome="declined"}"#
        ),
        Some(1.0)
    );
    settle(
        &d.addr,
        r#"matchmaker_matches_ended_total{status="cancelled"}"#,
        1.0,
    )
    .await;
    settle(
        &d.addr,
        r#"matchmaker_matches_ended_total{status="timed_out"}"#,
        1.0,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_can_be_turned_off() {
    let d = Deployment::embedded_with(&[("METRICS", "false")]).await;
    assert_eq!(
        d.client("alice").create(1500.0).await.0,
        StatusCode::CREATED
    );
    assert_eq!(scrape(&d.addr).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread")]
async fn fleet_saga_steps_and_oldest_wait_are_reported() {
    let d = Deployment::embedded().await;
    let _gs = game_server(&d, "gs-metrics", "30s").await;
    // A lone 5v5 ticket waits: the oldest wait of its pool grows.
    let (status, body) = d
        .client("lonely")
        .send(
            reqwest::Method::POST,
            "/v1/tickets",
            Some(serde_json::json!({"mode": "5v5", "players": ["lonely"], "rating": 1500, "regions": ["eu"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let text = settle(&d.addr, r#"matchmaker_game_servers{region="eu"}"#, 1.0).await;
    assert_eq!(
        sample(&text, r#"matchmaker_free_slots{region="eu"}"#),
        Some(4.0)
    );
    assert_eq!(
        sample(&text, r#"matchmaker_game_servers{region="na"}"#),
        Some(0.0),
        "a region without servers reads zero"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, text) = scrape(&d.addr).await;
        let wait = sample(
            &text,
            r#"matchmaker_queue_oldest_wait_seconds{pool="5v5:eu"}"#,
        );
        if wait.is_some_and(|w| w >= 1.0) {
            assert_eq!(
                sample(
                    &text,
                    r#"matchmaker_queue_oldest_wait_seconds{pool="1v1:eu"}"#
                ),
                Some(0.0),
                "an empty pool waits for nothing"
            );
            break;
        }
        assert!(Instant::now() < deadline, "oldest wait {wait:?}:\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A match without a ready check takes a slot: allocation and notify steps.
    let (_a, _b, _) = pair(&d, "rush", "ra", "rb", "match.assigned").await;
    let text = settle(&d.addr, r#"matchmaker_free_slots{region="eu"}"#, 3.0).await;
    assert_eq!(
        sample(
            &text,
            r#"matchmaker_allocations_total{region="eu",outcome="allocated"}"#
        ),
        Some(1.0),
        "{text}"
    );
    assert!(
        sample(
            &text,
            r#"matchmaker_saga_steps_total{step="allocate",outcome="applied"}"#
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
    assert!(
        sample(
            &text,
            r#"matchmaker_saga_step_duration_seconds_count{step="notify"}"#
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
}
