//! Wait estimates and queue statistics (issue 35) through a real `serve`: a
//! waiting ticket carries `estimated_wait_ms` once its pool has matched
//! enough tickets lately (`null` before), and `GET /v1/queues/{mode}` shows
//! every region's waiting tickets, matches per minute and time to match, to
//! any authenticated player.

use crate::Deployment;
use reqwest::StatusCode;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_ticket_gets_an_estimate_and_queues_show_their_figures() {
    let d = Deployment::embedded().await;
    // Nothing matched yet: no estimate.
    let (status, t) = d.client("lonely").create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let path = format!("/v1/tickets/{}", t["id"].as_str().unwrap());
    let (_, v) = d.client("lonely").get(&path).await;
    assert!(v["estimated_wait_ms"].is_null(), "{v}");
    let (_, c) = d.client("lonely").delete(&path).await;
    assert_eq!(c["status"], "cancelled", "{c}");

    // Twelve players make six 1v1 matches.
    for i in 0..12 {
        let (status, t) = d.client(&format!("q{i}")).create(1500.0).await;
        assert_eq!(status, StatusCode::CREATED, "{t}");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, q) = d.client("q0").get("/v1/queues/1v1").await;
        let eu = q["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["region"] == "eu")
            .cloned()
            .unwrap();
        if eu["last_5m"]["tickets"].as_u64() == Some(12) {
            assert!(
                eu["last_5m"]["matches_per_minute"].as_f64().unwrap() > 0.0,
                "{q}"
            );
            assert!(eu["last_15m"]["time_to_match_p50_ms"].is_u64(), "{q}");
            assert!(eu["last_5m"]["time_to_match_p90_ms"].is_u64(), "{q}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "queue figures never showed the matches: {q}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A new ticket, alone: the recent matches speak for it.
    let (status, t) = d.client("waiter").create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let (_, v) = d
        .client("waiter")
        .get(&format!("/v1/tickets/{}", t["id"].as_str().unwrap()))
        .await;
    assert!(v["estimated_wait_ms"].is_u64(), "{v}");
    // The figures are cached a few seconds: the waiter shows soon.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, q) = d.client("someone").get("/v1/queues/1v1").await;
        let waiting: u64 = q["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["tickets_waiting"].as_u64().unwrap())
            .sum();
        if waiting >= 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the waiting ticket never showed: {q}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Unknown mode: 404; no token: 401.
    let (status, e) = d.client("someone").get("/v1/queues/nope").await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_mode"))
    );
    let r = reqwest::get(format!("http://{}/v1/queues/1v1", d.addr))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}
