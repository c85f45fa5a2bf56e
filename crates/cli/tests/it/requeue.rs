//! A ticket bound back to the queue never reads as ended: many ready checks are
//! declined at once while the players who did not decline poll their tickets as
//! fast as they can, on the embedded store and on Redis. A status read as
//! terminal must never change again, so a polling client that stops at the first
//! terminal read misses nothing.

use crate::Deployment;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const PAIRS: usize = 16;
const TERMINAL: [&str; 4] = ["completed", "cancelled", "timed_out", "failed"];

async fn declines_while_others_poll(d: &Deployment) {
    // Pairs far apart in rating, so each pair is a match of its own.
    let mut tickets = Vec::new();
    for i in 0..PAIRS {
        for side in ["a", "b"] {
            let player = format!("rq{i}{side}");
            let (s, t) = d
                .client(&player)
                .send(
                    Method::POST,
                    "/v1/tickets",
                    Some(
                        json!({"mode": "duel", "players": [player], "regions": ["eu"],
                                "rating": 300 + i * 150}),
                    ),
                )
                .await;
            assert_eq!(s, StatusCode::CREATED, "{t}");
            tickets.push((player, t["id"].as_str().unwrap().to_string()));
        }
    }
    // Every match in its ready check.
    let mut matches = Vec::new();
    for (player, id) in tickets.iter().filter(|(p, _)| p.ends_with('a')) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (_, v) = d.client(player).get(&format!("/v1/tickets/{id}")).await;
            if v["status"] == "requires_acceptance" {
                matches.push((player.clone(), v["match_id"].as_str().unwrap().to_string()));
                break;
            }
            assert!(Instant::now() < deadline, "no ready check: {v}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // The b players poll their tickets back to back.
    let stop = Arc::new(AtomicBool::new(false));
    let pollers: Vec<_> = tickets
        .iter()
        .filter(|(p, _)| p.ends_with('b'))
        .cloned()
        .map(|(player, id)| {
            let (client, stop) = (d.client(&player), stop.clone());
            tokio::spawn(async move {
                let mut seen: Vec<String> = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let (s, v) = client.get(&format!("/v1/tickets/{id}")).await;
                    assert_eq!(s, StatusCode::OK, "{v}");
                    let status = v["status"].as_str().unwrap().to_string();
                    if seen.last() != Some(&status) {
                        seen.push(status);
                    }
                }
                (player, seen)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Every a player declines at once.
    let declines = matches.iter().map(|(player, mid)| {
        let client = d.client(player);
        let mid = mid.clone();
        async move {
            let (s, m) = client
                .send(Method::POST, &format!("/v1/matches/{mid}/decline"), None)
                .await;
            assert_eq!(s, StatusCode::OK, "{m}");
        }
    });
    futures_util::future::join_all(declines).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::Relaxed);
    for poller in pollers {
        let (player, seen) = poller.await.unwrap();
        // Never ended at all (they did nothing wrong), so never ended and then
        // live again; back in the queue after the ready check.
        assert!(
            !seen.iter().any(|s| TERMINAL.contains(&s.as_str())),
            "{player} read {seen:?}"
        );
        assert_eq!(
            seen.first().map(String::as_str),
            Some("requires_acceptance")
        );
        assert!(
            seen.iter().any(|s| s == "queued" || s == "searching"),
            "{player} read {seen:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_requeued_ticket_never_reads_ended_on_the_embedded_store() {
    let d = Deployment::embedded().await;
    declines_while_others_poll(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_requeued_ticket_never_reads_ended_on_redis() {
    let d = Deployment::redis_processes().await;
    declines_while_others_poll(&d).await;
}
