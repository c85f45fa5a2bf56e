//! A ticket's whole life over HTTP and WebSocket: on the embedded default, through
//! separate ingress, worker and supervisor processes on Redis, and the same on a
//! six-node Redis Cluster.

use crate::Deployment;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;

/// A party of three, a party of two and five solo players queue for 5v5: they form
/// one match of two full teams, each party whole on one team, and every member
/// hears of it.
async fn parties_play_together_in_a_balanced_5v5(d: &Deployment) {
    let lead = d.client("p1");
    let mut p2_ws = d.socket("p2").await;
    d.party("p1", &["p2", "p3"]).await;
    d.party("p4", &["p5"]).await;
    let (status, party) = lead
        .send(
            Method::POST,
            "/v1/tickets",
            Some(json!({
                "mode": "5v5",
                "players": [
                    {"id": "p1", "rating": 1510},
                    {"id": "p2", "rating": 1440},
                    {"id": "p3", "rating": 1480},
                ],
                "regions": [{"region": "na", "latency_ms": 90}, {"region": "eu", "latency_ms": 20}],
            })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{party}");
    // The party is matched with its highest rating, in its lowest-latency region.
    assert_eq!(party["rating"], 1510.0);
    assert_eq!(party["region"], "eu");
    let party_id = party["id"].as_str().unwrap().to_string();
    // A member cannot queue on its own for the same mode while in the party's
    // ticket, but may queue for another mode at the same time.
    let (status, busy) = d
        .client("p2")
        .send(
            Method::POST,
            "/v1/tickets",
            Some(json!({"mode": "5v5", "players": ["p2"], "rating": 1500, "region": "eu"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{busy}");
    assert_eq!(busy["error"]["code"], "player_busy");
    // It names the live ticket (the party's), so a client can look it up.
    assert_eq!(busy["error"]["ticket_id"], party["id"], "{busy}");
    let (status, solo) = d.client("p2").create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{solo}");
    let solo_id = solo["id"].as_str().unwrap().to_string();
    let (status, duo) = d
        .client("p4")
        .send(
            Method::POST,
            "/v1/tickets",
            Some(json!({"mode": "5v5", "players": ["p4", "p5"], "rating": 1500, "region": "eu"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{duo}");
    for (i, r) in [1495.0, 1500.0, 1505.0, 1512.0, 1498.0].iter().enumerate() {
        let name = format!("s{i}");
        let (status, t) = d
            .client(&name)
            .send(
                Method::POST,
                "/v1/tickets",
                Some(json!({"mode": "5v5", "players": [name], "rating": r, "regions": ["eu"]})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{t}");
    }
    // p2 hears of the match, and of the 1v1 ticket withdrawn because of it.
    let (mut ev, mut withdrawn) = (None, None);
    while ev.is_none() || withdrawn.is_none() {
        let e = p2_ws
            .next_event(Duration::from_secs(15))
            .await
            .expect("ticket.matched and ticket.cancelled for p2");
        match e["type"].as_str() {
            Some("match.completed") => ev = Some(e),
            Some("ticket.cancelled") => withdrawn = Some(e),
            _ => {}
        }
    }
    let (ev, withdrawn) = (ev.unwrap(), withdrawn.unwrap());
    assert_eq!(withdrawn["ticket_id"], solo_id.as_str());
    assert_eq!(withdrawn["reason"], "matched_elsewhere");
    let (status, view) = d.client("p2").get(&format!("/v1/tickets/{solo_id}")).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["status"], "cancelled", "{view}");
    assert_eq!(view["reason"], "matched_elsewhere", "{view}");
    assert_eq!(ev["ticket_id"], party_id.as_str());
    let m = &ev["match"];
    assert_eq!(m["mode"], "5v5");
    assert_eq!(m["region"], "eu");
    let tickets = m["tickets"].as_array().unwrap();
    assert_eq!(tickets.len(), 7);
    let mut team_players = [0usize; 2];
    let mut team_sum = [0.0f64; 2];
    for t in tickets {
        let team = t["team"].as_u64().unwrap() as usize;
        let n = t["players"].as_array().unwrap().len();
        team_players[team] += n;
        team_sum[team] += n as f64 * t["rating"].as_f64().unwrap();
    }
    assert_eq!(team_players, [5, 5], "{m}");
    // Exact split: 3+2 party players against five solos would be 1504 vs 1502.
    assert!((team_sum[0] - team_sum[1]).abs() / 5.0 <= 10.0, "{m}");
    // A member reads the party's ticket too.
    let (status, view) = d.client("p3").get(&format!("/v1/tickets/{party_id}")).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["status"], "completed");
    assert!(view["team"].as_u64().is_some(), "{view}");
}

async fn two_players_get_matched(d: &Deployment) {
    let (alice, bob) = (d.client("alice"), d.client("bob"));
    let mut alice_ws = d.socket("alice").await;
    let mut bob_ws = d.socket("bob").await;

    let (status, a) = alice.create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{a}");
    assert_eq!(a["status"], "queued");
    // A player queueing alone may leave `players` out: the ticket is theirs.
    let body = serde_json::json!({"mode": "1v1", "regions": ["eu"], "rating": 1520.0});
    let (status, b) = bob
        .send(reqwest::Method::POST, "/v1/tickets", Some(body))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    assert_eq!(b["players"], serde_json::json!(["bob"]), "{b}");
    let (a_id, b_id) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());

    let searching = alice_ws
        .wait_for("ticket.searching", Duration::from_secs(10))
        .await;
    assert_eq!(searching["ticket_id"], a_id);
    let matched = alice_ws
        .wait_for("match.completed", Duration::from_secs(10))
        .await;
    assert_eq!(matched["ticket_id"], a_id);
    let match_id = matched["match_id"].as_str().unwrap().to_string();
    let bob_matched = bob_ws
        .wait_for("match.completed", Duration::from_secs(10))
        .await;
    assert_eq!(bob_matched["match_id"], match_id.as_str());
    assert_eq!(bob_matched["ticket_id"], b_id);

    let (status, view) = alice.get(&format!("/v1/tickets/{a_id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view["status"], "completed");
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
    parties_play_together_in_a_balanced_5v5(&d).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn separate_processes_on_redis_match_two_players() {
    let mut d = Deployment::redis_processes().await;
    two_players_get_matched(&d).await;
    parties_play_together_in_a_balanced_5v5(&d).await;
    // Graceful stop: each process exits cleanly on SIGTERM.
    for p in &mut d.procs {
        assert!(
            p.terminate(Duration::from_secs(10)),
            "clean exit on SIGTERM:\n{}",
            p.log()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn separate_processes_on_a_redis_cluster() {
    let mut d = Deployment::cluster_processes().await;
    two_players_get_matched(&d).await;
    parties_play_together_in_a_balanced_5v5(&d).await;
    for p in &mut d.procs {
        assert!(
            p.terminate(Duration::from_secs(10)),
            "clean exit on SIGTERM:
{}",
            p.log()
        );
    }
}

/// A ticket waits in its best region first and in its next-best one (within the
/// latency cap) once it has waited the mode's `cross_region_after`: a player close
/// to eu and a player only in na meet in na after that wait, not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_reaches_its_next_region_after_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let modes = dir.path().join("modes.toml");
    std::fs::write(
        &modes,
        "[modes.1v1]\nteams = 2\nteam_size = 1\ncross_region_after = \"1s\"\nmax_latency_ms = 150\nready_check = false\nplacement = \"none\"\n",
    )
    .unwrap();
    let d = Deployment::embedded_with(&[("MODES_FILE", modes.to_str().unwrap())]).await;
    let mut ws = d.socket("near-eu").await;
    let body = |id: &str, regions: serde_json::Value| json!({"mode": "1v1", "players": [id], "rating": 1500, "regions": regions});
    let (status, a) = d
        .client("near-eu")
        .send(
            Method::POST,
            "/v1/tickets",
            Some(body(
                "near-eu",
                json!([{"region": "eu", "latency_ms": 20}, {"region": "na", "latency_ms": 90}]),
            )),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{a}");
    assert_eq!(a["region"], "eu");
    let (status, b) = d
        .client("na-only")
        .send(
            Method::POST,
            "/v1/tickets",
            Some(body("na-only", json!([{"region": "na", "latency_ms": 25}]))),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    let ev = ws
        .wait_for("match.completed", Duration::from_secs(15))
        .await;
    let m = &ev["match"];
    assert_eq!(m["region"], "na", "{m}");
    let waited = m["created_at"].as_u64().unwrap() - a["enqueued_at"].as_u64().unwrap();
    assert!(waited >= 1000, "matched in na after {waited} ms");
}

/// A region the deployment does not serve (taken out of `REGIONS`, or one a
/// newer client knows of) is passed over while the ticket lists one it does;
/// listing none it serves is a 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regions_not_served_are_passed_over() {
    let d = Deployment::embedded().await;
    let regions = json!([{"region": "mars", "latency_ms": 5}, {"region": "eu", "latency_ms": 30}]);
    let (s, t) = d
        .client("rg-ann")
        .send(
            Method::POST,
            "/v1/tickets",
            Some(json!({"mode": "1v1", "players": ["rg-ann"], "rating": 1500, "regions": regions})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    assert_eq!(t["region"], "eu", "{t}");
    let (s, e) = d
        .client("rg-bob")
        .send(
            Method::POST,
            "/v1/tickets",
            Some(json!({"mode": "1v1", "players": ["rg-bob"], "rating": 1500, "regions": ["mars", "venus"]})),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(e["error"]["code"], "unknown_region", "{e}");
    let message = e["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"mars\"") && message.contains("eu"),
        "{message}"
    );
}
