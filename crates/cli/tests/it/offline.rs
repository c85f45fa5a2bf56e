//! Tickets of players who left the game (`cancel_offline_after`): a waiting
//! ticket ends `cancelled` with reason `disconnected` once one of its players
//! has had no event socket open for the grace, whether they closed it, never
//! opened one, or their ingress crashed with it; a player back within the
//! grace keeps waiting; modes without the key wait regardless.

use crate::Deployment;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Five a side: a lone ticket or a pair waits. Its tickets end once a player
/// has been gone two seconds.
const LOBBY: &str = r#"
[modes.lobby]
teams = 2
team_size = 5
ready_check = false
placement = "none"
cancel_offline_after = "2s"

[modes.open]
teams = 2
team_size = 5
ready_check = false
placement = "none"
"#;

async fn create(d: &Deployment, players: &[&str], mode: &str) -> String {
    let body = json!({"mode": mode, "players": players, "regions": ["eu"], "rating": 1500.0});
    let (s, v) = d
        .client(players[0])
        .send(Method::POST, "/v1/tickets", Some(body))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    v["id"].as_str().unwrap().to_string()
}

async fn ticket(d: &Deployment, player: &str, id: &str) -> Value {
    let (s, v) = d.client(player).get(&format!("/v1/tickets/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v
}

/// Waits until `player`'s ticket `id` is cancelled as theirs who left.
async fn until_cancelled(d: &Deployment, player: &str, id: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let v = ticket(d, player, id).await;
        if v["status"] == "cancelled" {
            assert_eq!(v["reason"], "disconnected", "{v}");
            return;
        }
        if Instant::now() > deadline {
            d.dump_logs();
            panic!("{player}'s ticket still waits: {v}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn waits(d: &Deployment, player: &str, id: &str) {
    let v = ticket(d, player, id).await;
    assert!(
        ["queued", "searching"].contains(&v["status"].as_str().unwrap()),
        "{player}'s ticket no longer waits: {v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_tickets_of_players_who_left_are_cancelled() {
    let modes = crate::shared_file("offline-modes", LOBBY);
    let ops = format!("127.0.0.1:{}", mm_testkit::free_port());
    let d = Deployment::embedded_with(&[("MODES_FILE", &modes), ("OPS_LISTEN_ADDR", &ops)]).await;

    // Connected and waiting; connected, gone, back within the grace; never
    // connected; connected, then gone; a mode without the key.
    let mut stay_ws = d.socket("of-stay").await;
    let stay = create(&d, &["of-stay"], "lobby").await;
    let back_ws = d.socket("of-back").await;
    let back = create(&d, &["of-back"], "lobby").await;
    let never = create(&d, &["of-never"], "lobby").await;
    let gone_ws = d.socket("of-gone").await;
    let gone = create(&d, &["of-gone"], "lobby").await;
    let open = create(&d, &["of-open"], "open").await;

    back_ws.close().await;
    gone_ws.close().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _back_ws = d.socket("of-back").await;

    until_cancelled(&d, "of-never", &never, Duration::from_secs(10)).await;
    until_cancelled(&d, "of-gone", &gone, Duration::from_secs(10)).await;
    // Past every grace: the others wait on.
    tokio::time::sleep(Duration::from_secs(2)).await;
    waits(&d, "of-stay", &stay).await;
    waits(&d, "of-back", &back).await;
    waits(&d, "of-open", &open).await;
    // The one who stayed heard nothing of it.
    let e = stay_ws.next_event(Duration::from_millis(200)).await;
    assert!(
        e.as_ref().is_none_or(|e| e["type"] != "ticket.cancelled"),
        "{e:?}"
    );

    // A party's ticket ends when one of them leaves; the other is told why.
    d.party("of-lead", &["of-mate"]).await;
    let mut lead_ws = d.socket("of-lead").await;
    let mate_ws = d.socket("of-mate").await;
    let party = create(&d, &["of-lead", "of-mate"], "lobby").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    waits(&d, "of-lead", &party).await;
    mate_ws.close().await;
    let ev = lead_ws
        .wait_for("ticket.cancelled", Duration::from_secs(10))
        .await;
    assert_eq!(
        (&ev["ticket_id"], &ev["reason"]),
        (&json!(party), &json!("disconnected")),
        "{ev}"
    );
    until_cancelled(&d, "of-mate", &party, Duration::from_secs(1)).await;

    // Counted with the other tickets the service ended.
    let (s, text) = crate::metrics::scrape(&ops).await;
    assert_eq!(s, StatusCode::OK);
    let line = text
        .lines()
        .find(|l| {
            l.starts_with("matchmaker_tickets_given_up_total")
                && l.contains("reason=\"disconnected\"")
        })
        .unwrap_or_else(|| panic!("no disconnected count:\n{text}"));
    assert!(!line.ends_with(" 0"), "{line}");
}

/// An ingress killed with a player's socket open renews nothing: the
/// supervisor ends the player's ticket once the ingress's note has run out
/// and the grace has passed.
#[tokio::test(flavor = "multi_thread")]
async fn redis_a_crashed_ingress_s_players_are_taken_for_gone() {
    let modes = crate::shared_file("offline-modes", LOBBY);
    let mut d = Deployment::redis_processes_env(&[
        ("*", "MODES_FILE", &modes),
        ("ingress", "PRESENCE_RENEW", "1s"),
    ])
    .await;
    let _ws = d.socket("of-crash").await;
    let crashed = create(&d, &["of-crash"], "lobby").await;
    let first_ws = d.socket("of-there").await;
    let there = create(&d, &["of-there"], "lobby").await;
    // The ingress renews the notes: both outlast the grace.
    tokio::time::sleep(Duration::from_secs(3)).await;
    waits(&d, "of-crash", &crashed).await;
    waits(&d, "of-there", &there).await;

    d.proc("ingress").kill();
    let addr = d.addr.clone();
    d.respawn(
        "ingress",
        &[
            ("LISTEN_ADDR", &addr),
            ("PRESENCE_RENEW", "1s"),
            ("MODES_FILE", &modes),
        ],
    )
    .await;
    // of-there reconnects at once, as a client does (its ingress's note holds
    // 3 s, and the grace 2 s more); of-crash never does.
    drop(first_ws);
    let mut stay_ws = d.socket("of-there").await;
    // Note (3 s) + grace (2 s) + a sweep (6 passes of 200 ms), with room.
    until_cancelled(&d, "of-crash", &crashed, Duration::from_secs(20)).await;
    waits(&d, "of-there", &there).await;
    let e = stay_ws.next_event(Duration::from_millis(200)).await;
    assert!(
        e.as_ref().is_none_or(|e| e["type"] != "ticket.cancelled"),
        "{e:?}"
    );
    let log = d.proc("supervisor").log();
    assert!(log.contains("a player left the game"), "{log}");
}

/// A store outage longer than the ingress's note of itself: its players
/// stayed connected, so their tickets wait on once the store is back (the
/// supervisor lets the ingresses note themselves again before it sweeps).
#[tokio::test(flavor = "multi_thread")]
async fn redis_an_outage_takes_nobody_for_gone() {
    let modes = crate::shared_file("offline-modes", LOBBY);
    let mut d = Deployment::over_redis(
        mm_testkit::RedisServer::start_aof(),
        &[
            ("*", "MODES_FILE", &modes),
            ("ingress", "PRESENCE_RENEW", "500ms"),
        ],
    )
    .await;
    let _ws = d.socket("of-through").await;
    let through = create(&d, &["of-through"], "lobby").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Down past the ingress's note (1.5 s) and the grace (2 s).
    d.redis.as_mut().unwrap().kill();
    tokio::time::sleep(Duration::from_secs(5)).await;
    d.redis.as_mut().unwrap().restart();
    // Sweeps every 1.2 s would have found the note run out, had they run.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let v = loop {
        let (s, v) = d
            .client("of-through")
            .get(&format!("/v1/tickets/{through}"))
            .await;
        if s == StatusCode::OK {
            break v;
        }
        assert!(
            Instant::now() < deadline,
            "the ingress does not answer: {v}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    if !["queued", "searching"].contains(&v["status"].as_str().unwrap()) {
        d.dump_logs();
        panic!("a connected player's ticket ended after the outage: {v}");
    }
}
