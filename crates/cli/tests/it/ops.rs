//! The operator plane, against a real `serve` with signed tokens: `/metrics`
//! and the dashboard are on `OPS_LISTEN_ADDR` and not on the players' port;
//! `/metrics` is open there, the dashboard needs the `OPS_TOKEN_FILE` secret or
//! a token with role operator (a player's or a backend's token is refused), and
//! a browser hands the credential over once and keeps it in a cookie; event
//! streams are capped per address and per operator with 429 and Retry-After,
//! never locking others out; every address is limited in requests. Unsafe
//! settings are refused at start.

use crate::{BIN, Deployment};
use mm_auth::TokenSigner;
use mm_testkit::free_port;
use reqwest::StatusCode;
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef-jwt";
const OPS: &str = "operator-secret-0123456789abcdef0123";
const HOUR: Duration = Duration::from_secs(3600);

fn signer() -> TokenSigner {
    TokenSigner::hs256(SECRET, "matchmaker", "matchmaker").unwrap()
}

/// `serve` verifying signed tokens, its operator plane on a port of its own.
async fn deployment(dir: &std::path::Path) -> (Deployment, String) {
    let (jwt, ops) = (dir.join("jwt"), dir.join("ops"));
    std::fs::write(&jwt, SECRET).unwrap();
    std::fs::write(&ops, format!("{OPS}\n")).unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let d = Deployment::embedded_with(&[
        ("AUTH", "jwt"),
        ("ALLOW_CLIENT_RATINGS", "false"),
        ("JWT_SECRET_FILE", jwt.to_str().unwrap()),
        ("OPS_TOKEN_FILE", ops.to_str().unwrap()),
        ("OPS_LISTEN_ADDR", &addr),
    ])
    .await;
    (d, addr)
}

fn from(local: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(Some(local.parse().unwrap()))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn get(c: &reqwest::Client, url: &str, token: Option<&str>) -> reqwest::Response {
    let mut req = c.get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send().await.unwrap()
}

async fn code(r: reqwest::Response) -> (StatusCode, Value) {
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_plane_is_off_the_player_port_and_for_operators_only() {
    let dir = tempfile::tempdir().unwrap();
    let (d, ops) = deployment(dir.path()).await;
    let c = from("127.0.0.1");
    let player = signer().sign("alice", None, HOUR).unwrap();
    // Nothing of it on the players' port, whoever asks.
    for path in [
        "/metrics",
        "/dashboard",
        "/dashboard/snapshot",
        "/dashboard/events",
    ] {
        for token in [None, Some(OPS), Some(player.as_str())] {
            let r = get(&c, &format!("http://{}{path}", d.addr), token).await;
            assert_eq!(
                r.status(),
                StatusCode::NOT_FOUND,
                "{path} on the player port"
            );
        }
    }
    // /metrics is open on the operator listener.
    let r = get(&c, &format!("http://{ops}/metrics"), None).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.text().await.unwrap().contains("matchmaker_"));
    // The dashboard is not.
    let snapshot = format!("http://{ops}/dashboard/snapshot");
    let (s, b) = code(get(&c, &snapshot, None).await).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );
    let (s, b) = code(get(&c, &snapshot, Some("not-the-secret")).await).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_token"))
    );
    let service = signer().sign("backend", Some("service"), HOUR).unwrap();
    for token in [&player, &service] {
        let (s, b) = code(get(&c, &snapshot, Some(token)).await).await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("not_operator"))
        );
    }
    // The secret, or a token with role operator, opens it.
    let operator = signer().sign("ann", Some("operator"), HOUR).unwrap();
    for token in [OPS, operator.as_str()] {
        let (s, b) = code(get(&c, &snapshot, Some(token)).await).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        assert!(b["pools"].is_array(), "{b}");
    }
    // A browser hands the credential over once: a cookie, and the address bar
    // cleaned; the page's own requests then carry the cookie.
    let r = get(&c, &format!("http://{ops}/dashboard?token={OPS}"), None).await;
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()["location"], "/dashboard");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.starts_with(&format!("mm_ops={OPS};")), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    for path in ["/dashboard", "/dashboard/snapshot"] {
        let r = c
            .get(format!("http://{ops}{path}"))
            .header("cookie", &pair)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path} with the cookie");
    }
    let r = get(&c, &format!("http://{ops}/dashboard?token=wrong"), None).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.headers().get("set-cookie").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn event_streams_are_capped_per_address_and_operator_without_locking_others_out() {
    let dir = tempfile::tempdir().unwrap();
    let (_d, ops) = deployment(dir.path()).await;
    let events = format!("http://{ops}/dashboard/events");
    let mut open = Vec::new();
    let busy = from("127.0.0.2");
    for _ in 0..4 {
        let r = get(&busy, &events, Some(OPS)).await;
        assert_eq!(r.status(), StatusCode::OK);
        open.push(r);
    }
    let r = get(&busy, &events, Some(OPS)).await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(r.headers().contains_key("retry-after"));
    let (_, b) = code(r).await;
    assert_eq!(b["error"]["scope"], "address", "{b}");
    // Another address, same secret: not locked out.
    let other = get(&from("127.0.0.3"), &events, Some(OPS)).await;
    assert_eq!(other.status(), StatusCode::OK);
    open.push(other);
    // One operator from many addresses: 16 streams, then no more for them...
    let ann = signer().sign("ann", Some("operator"), HOUR).unwrap();
    for n in 0..16 {
        let r = get(
            &from(&format!("127.0.1.{}", n / 4 + 1)),
            &events,
            Some(&ann),
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK, "stream {n}");
        open.push(r);
    }
    let r = get(&from("127.0.1.9"), &events, Some(&ann)).await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let (_, b) = code(r).await;
    assert_eq!(b["error"]["scope"], "operator", "{b}");
    // ...while another operator still gets one.
    let bob = signer().sign("bob", Some("operator"), HOUR).unwrap();
    assert_eq!(
        get(&from("127.0.1.9"), &events, Some(&bob)).await.status(),
        StatusCode::OK
    );
    // Closing streams frees their places.
    drop(open);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = get(&busy, &events, Some(OPS)).await;
        if r.status() == StatusCode::OK {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "places never freed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_address_is_limited_in_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (_d, ops) = deployment(dir.path()).await;
    let snapshot = format!("http://{ops}/dashboard/snapshot");
    let guesser = from("127.0.0.5");
    let mut limited = None;
    for i in 0..60 {
        let r = get(&guesser, &snapshot, Some(&format!("guess-{i}"))).await;
        if r.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(r);
            break;
        }
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
    let r = limited.expect("guessing was never limited");
    assert!(r.headers().contains_key("retry-after"));
    // Even the right secret waits from that address; another address does not.
    assert_eq!(
        get(&guesser, &snapshot, Some(OPS)).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        get(&from("127.0.0.6"), &snapshot, Some(OPS)).await.status(),
        StatusCode::OK
    );
    // Prometheus scrapes are not limited.
    for _ in 0..60 {
        let r = get(&guesser, &format!("http://{ops}/metrics"), None).await;
        assert_eq!(r.status(), StatusCode::OK);
    }
}

/// Dev mode keeps the walk-through's single port (open, on loopback); moved to
/// a listener of its own, the dashboard is not on the players' port; an open
/// dashboard on a non-loopback address, or two names for the listener, are
/// refused at start.
#[tokio::test(flavor = "multi_thread")]
async fn dev_mode_keeps_one_port_and_unsafe_settings_are_refused() {
    let d = Deployment::embedded().await;
    let r = reqwest::get(format!("http://{}/dashboard/snapshot", d.addr))
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        StatusCode::OK,
        "dev mode: the walk-through's port"
    );
    let ops = format!("127.0.0.1:{}", free_port());
    let d = Deployment::embedded_with(&[("OPS_LISTEN_ADDR", &ops)]).await;
    let r = reqwest::get(format!("http://{}/dashboard/snapshot", d.addr))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = reqwest::get(format!("http://{ops}/dashboard/snapshot"))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "dev mode on loopback: open");

    let refused = |env: &[(&str, String)]| {
        let data = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .env("LISTEN_ADDR", format!("127.0.0.1:{}", free_port()))
            .env("GRPC_LISTEN_ADDR", format!("127.0.0.1:{}", free_port()))
            .env("DATA_DIR", data.path());
        crate::fast_env(&mut cmd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = refused(&[("OPS_LISTEN_ADDR", format!("0.0.0.0:{}", free_port()))]);
    assert!(err.contains("OPS_TOKEN_FILE"), "{err}");
    let err = refused(&[
        ("OPS_LISTEN_ADDR", format!("127.0.0.1:{}", free_port())),
        ("METRICS_ADDR", format!("127.0.0.1:{}", free_port())),
    ]);
    assert!(
        err.contains("METRICS_ADDR is the older name of OPS_LISTEN_ADDR"),
        "{err}"
    );
}
