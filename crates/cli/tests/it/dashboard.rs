//! The live dashboard in a real headless Chromium: `serve` with a game server and
//! its operator plane on a port of its own behind the operator secret; the page
//! opened at a laptop's size with the secret handed over once in the address
//! (kept in a cookie from then on), then tickets queued and matched while it is
//! open; the numbers on the page change without a reload (server-sent events).
//! Saves `target/tmp/dashboard.png` to look at.

use crate::Deployment;
use crate::browser::Browser;
use crate::lifecycle::{game_server, pair};
use reqwest::StatusCode;
use serde_json::json;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

fn metric(name: &str) -> String {
    format!("document.querySelector('[data-metric=\"{name}\"]').textContent")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dashboard_updates_live_in_a_real_browser() {
    const SECRET: &str = "dashboard-secret-0123456789abcdef0123";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ops-token");
    std::fs::write(&file, SECRET).unwrap();
    let ops = format!("127.0.0.1:{}", mm_testkit::free_port());
    let d = Deployment::embedded_with(&[
        ("OPS_LISTEN_ADDR", &ops),
        ("OPS_TOKEN_FILE", file.to_str().unwrap()),
    ])
    .await;
    let _gs = game_server(&d, "gs-dash", "60s").await;
    let mut browser = Browser::start(1440, 900, d.logs.path()).await;
    browser
        .navigate(&format!("http://{ops}/dashboard?token={SECRET}"))
        .await;
    browser
        .wait_until(
            "Number(document.body.dataset.snapshots || 0) >= 1",
            WAIT,
            "first snapshot",
        )
        .await;
    assert_eq!(browser.eval(&metric("waiting")).await, "0");
    assert_eq!(browser.eval(&metric("game-servers")).await, "1");
    assert_eq!(browser.eval(&metric("free-slots")).await, "4");
    let seen = browser
        .eval("Number(document.body.dataset.snapshots)")
        .await;

    // Three players wait for a 5v5 (it needs ten)...
    for p in ["wait-1", "wait-2", "wait-3"] {
        let (status, body) = d
            .client(p)
            .send(
                reqwest::Method::POST,
                "/v1/tickets",
                Some(json!({"mode": "5v5", "players": [p], "rating": 1500, "regions": ["eu"]})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    // ...and two are matched in a mode placed on the game server.
    let (_a, _b, _) = pair(&d, "rush", "rush-ann", "rush-bob", "match.assigned").await;

    browser
        .wait_until(
            &format!("{} === '3'", metric("waiting")),
            WAIT,
            "tickets waiting",
        )
        .await;
    browser
        .wait_until(
            &format!("{} === '3'", metric("free-slots")),
            WAIT,
            "a slot taken",
        )
        .await;
    browser
        .wait_until(
            "[...document.querySelectorAll('#recent tr[data-match]')].some(r => r.textContent.includes('rush-ann') && r.textContent.includes('rush-bob'))",
            WAIT,
            "the match listed with its players",
        )
        .await;
    browser
        .wait_until(
            "document.querySelector('tr[data-pool=\"5v5:eu\"] [data-field=waiting]').textContent === '3'",
            WAIT,
            "the pool's row",
        )
        .await;
    // The serve's own workers hold a lease on the pool.
    browser
        .wait_until(
            "Number(document.querySelector('tr[data-pool=\"5v5:eu\"] [data-field=workers]').textContent) >= 1",
            WAIT,
            "the pool's workers",
        )
        .await;
    // The oldest wait of the 5v5 pool ticks up while the page stays open.
    browser
        .wait_until(
            "/^[1-9][0-9]*s$/.test(document.querySelector('tr[data-pool=\"5v5:eu\"] [data-field=oldest]').textContent)",
            WAIT,
            "the oldest wait",
        )
        .await;
    let now = browser
        .eval("Number(document.body.dataset.snapshots)")
        .await;
    assert!(
        now.as_u64() > seen.as_u64(),
        "no new snapshot: {seen} then {now}"
    );
    // Every script ran without an error, and the page fits a laptop screen's width.
    assert_eq!(
        browser
            .eval("document.documentElement.scrollWidth <= window.innerWidth")
            .await,
        true
    );

    // The secret left the address bar for a cookie the page's script cannot read.
    assert_eq!(
        browser.eval("location.pathname + location.search").await,
        "/dashboard"
    );
    assert_eq!(browser.eval("document.cookie").await, "");

    let png = browser.screenshot().await;
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    assert!(png.len() > 20_000, "a blank page? {} bytes", png.len());
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
    std::fs::write(&path, &png).unwrap();
    eprintln!("screenshot: {}", path.display());
}
