//! A ticket's whole life over HTTP and WebSocket, once on the embedded default and
//! once through separate ingress, worker and supervisor processes on Redis.

use crate::Deployment;
use reqwest::StatusCode;
use std::time::Duration;

async fn two_players_get_matched(d: &Deployment) {
    let (alice, bob) = (d.client("alice"), d.client("bob"));
    let mut alice_ws = d.socket("alice").await;
    let mut bob_ws = d.socket("bob").await;

    let (status, a) = alice.create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{a}");
    assert_eq!(a["status"], "queued");
    let (status, b) = bob.create(1520.0).await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    let (a_id, b_id) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());

    let searching = alice_ws
        .wait_for("ticket.searching", Duration::from_secs(10))
        .await;
    assert_eq!(searching["ticket_id"], a_id);
    let matched = alice_ws
        .wait_for("ticket.matched", Duration::from_secs(10))
        .await;
    assert_eq!(matched["ticket_id"], a_id);
    let match_id = matched["match_id"].as_str().unwrap().to_string();
    let bob_matched = bob_ws
        .wait_for("ticket.matched", Duration::from_secs(10))
        .await;
    assert_eq!(bob_matched["match_id"], match_id.as_str());
    assert_eq!(bob_matched["ticket_id"], b_id);

    let (status, view) = alice.get(&format!("/v1/tickets/{a_id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view["status"], "matched");
    assert_eq!(view["match_id"], match_id.as_str());
    assert_eq!(view["co_players"], serde_json::json!(["bob"]));
    assert!(view["time_in_queue_ms"].as_u64().is_some());

    let (status, list) = bob.get("/v1/players/me/matches").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["matches"][0]["id"], match_id.as_str());
    let (status, _) = bob.get("/v1/players/bob/matches?limit=5").await;
    assert_eq!(status, StatusCode::OK);

    // Too late to cancel.
    let (status, err) = alice.delete(&format!("/v1/tickets/{a_id}")).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(err["error"]["code"], "ticket_matched");

    // Cancelling a queued ticket works and is pushed.
    let carol = d.client("carol");
    let mut carol_ws = d.socket("carol").await;
    let (_, c) = carol.create(9000.0).await;
    let c_id = c["id"].as_str().unwrap();
    let (status, busy) = carol.create(9000.0).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "one active ticket per player: {busy}"
    );
    let (status, view) = carol.delete(&format!("/v1/tickets/{c_id}")).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["status"], "cancelled");
    let ev = carol_ws
        .wait_for("ticket.cancelled", Duration::from_secs(10))
        .await;
    assert_eq!(ev["ticket_id"], c_id);
    let (status, _) = carol.create(9000.0).await;
    assert_eq!(status, StatusCode::CREATED, "a new ticket after cancelling");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_serve_matches_two_players() {
    let d = Deployment::embedded().await;
    two_players_get_matched(&d).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn separate_processes_on_redis_match_two_players() {
    let mut d = Deployment::redis_processes().await;
    two_players_get_matched(&d).await;
    // Graceful stop: each process exits cleanly on SIGTERM.
    for p in &mut d.procs {
        assert!(
            p.terminate(Duration::from_secs(10)),
            "clean exit on SIGTERM:\n{}",
            p.log()
        );
    }
}
