//! Rate limits through real processes: per player and per address on the HTTP
//! API, socket connects and socket messages, with 429, `Retry-After` and the JSON
//! error (an error message and a close on the socket); trusted backends exempt;
//! and one limit shared by two ingress processes on Redis (ticket creations
//! charged by the store with the activation, cancels by the ingress).

use crate::{BIN, Deployment, fast_env};
use futures_util::{SinkExt, StreamExt};
use mm_testkit::{Proc, free_port};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::process::Command;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

async fn read(base: &str, token: &str) -> (StatusCode, Option<String>, Value) {
    let resp = reqwest::Client::new()
        .get(format!("http://{base}/v1/players/me/matches"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    (status, retry, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread")]
async fn limits_per_player_and_per_address_answer_429_with_retry_after() {
    let d = Deployment::embedded_with(&[
        ("RATE_LIMIT_READS", "3/1m,1000/1m"),
        ("RATE_LIMIT_TICKETS", "100/1m,4/1m"),
    ])
    .await;
    for _ in 0..3 {
        assert_eq!(read(&d.addr, "alice").await.0, StatusCode::OK);
    }
    let (status, retry, body) = read(&d.addr, "alice").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(body["error"]["scope"], "player");
    let secs: u64 = retry.expect("Retry-After").parse().unwrap();
    assert!((1..=20).contains(&secs), "Retry-After {secs}");
    assert!(body["error"]["retry_after_ms"].as_u64().unwrap() > 0);
    // Another player is not affected; a trusted backend is never limited.
    assert_eq!(read(&d.addr, "bob").await.0, StatusCode::OK);
    for _ in 0..10 {
        let resp = reqwest::Client::new()
            .get(format!("http://{}/v1/players/me/matches", d.addr))
            .bearer_auth("service:ops")
            .header("X-Player-Id", "alice")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
    // Per address: four players' tickets from this address, then no more, for
    // anyone; nothing was queued for the refused one.
    for i in 0..4 {
        let (s, t) = d.client(&format!("a{i}")).create(1500.0).await;
        assert_eq!(s, StatusCode::CREATED, "{t}");
    }
    let (s, body) = d.client("a9").create(1500.0).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["scope"], "address");
    let (_, matches) = d.client("a9").get("/v1/players/me/matches").await;
    assert_eq!(matches["matches"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn sockets_are_limited_on_connect_and_per_message() {
    let d = Deployment::embedded_with(&[
        ("RATE_LIMIT_CONNECTS", "2/1m,1000/1m"),
        ("RATE_LIMIT_MESSAGES", "2/1m,1000/1m"),
    ])
    .await;
    let mut first = d.socket("sam").await;
    let _second = d.socket("sam").await;
    let url = format!("ws://{}/v1/ws?token=sam", d.addr);
    match tokio_tungstenite::connect_async(url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => {
            assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
            assert!(r.headers().get("retry-after").is_some());
        }
        other => panic!("a third connect was not refused: {:?}", other.map(|_| ())),
    }
    // Two messages are answered; the third gets an error and a close.
    let msg = json!({"type": "match.accept", "match_id": "m-nope"});
    for _ in 0..2 {
        first.send(msg.clone()).await;
        let reply = first
            .next_event(std::time::Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(reply["error"]["code"], "match_not_found", "{reply}");
    }
    let url = format!("ws://{}/v1/ws?token=tom", d.addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    ws.next().await.unwrap().unwrap(); // session.ready
    for _ in 0..2 {
        ws.send(Message::Text(msg.to_string().into()))
            .await
            .unwrap();
        ws.next().await.unwrap().unwrap();
    }
    ws.send(Message::Text(msg.to_string().into()))
        .await
        .unwrap();
    let error: Value = match ws.next().await.unwrap().unwrap() {
        Message::Text(t) => serde_json::from_str(&t).unwrap(),
        other => panic!("expected the error message, got {other:?}"),
    };
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["code"], "rate_limited");
    match ws.next().await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Policy),
        other => panic!("expected a close, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_limit_holds_across_two_ingress_processes() {
    let mut d = Deployment::redis_processes_env(&[
        ("ingress", "RATE_LIMIT_READS", "6/1m,1000/1m"),
        ("ingress", "RATE_LIMIT_TICKETS", "3/1m,1000/1m"),
    ])
    .await;
    let second = format!("127.0.0.1:{}", free_port());
    let mut cmd = Command::new(BIN);
    cmd.arg("ingress")
        .env("REDIS_URL", d.redis.as_ref().unwrap().url())
        .env("DATABASE_URL", &d.database_url)
        .env("LISTEN_ADDR", &second);
    fast_env(&mut cmd);
    cmd.env("RATE_LIMIT_READS", "6/1m,1000/1m")
        .env("RATE_LIMIT_TICKETS", "3/1m,1000/1m");
    d.procs.push(Proc::spawn("ingress-2", cmd, d.logs.path()));
    let first = d.addr.clone();
    d.addr = second.clone();
    d.wait_ready().await;
    for i in 0..6 {
        let base = if i % 2 == 0 { &first } else { &second };
        assert_eq!(read(base, "una").await.0, StatusCode::OK, "read {i}");
    }
    for base in [&first, &second] {
        let (status, _, body) = read(base, "una").await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{base}: {body}");
    }
    assert_eq!(read(&first, "vic").await.0, StatusCode::OK);

    // Ticket writes: the store charges a creation with the ticket's activation,
    // the ingress a cancel on its own; both count against one limiter.
    let on = |base: &str| {
        let mut c = d.client("wes");
        c.base = format!("http://{base}");
        c
    };
    let (status, ticket) = on(&first).create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{ticket}");
    let path = format!("/v1/tickets/{}", ticket["id"].as_str().unwrap());
    let (status, body) = on(&second).delete(&path).await;
    assert!(status.is_success(), "{status} {body}");
    let (status, ticket) = on(&second).create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{ticket}");
    let (status, body) = on(&first).create(1500.0).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(body["error"]["scope"], "player");
    assert!(body["error"]["retry_after_ms"].as_u64().unwrap() > 0);
    // Nothing happened: the live ticket is still the second one.
    let path = format!("/v1/tickets/{}", ticket["id"].as_str().unwrap());
    let (status, view) = on(&first).get(&path).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        matches!(view["status"].as_str(), Some("queued" | "searching")),
        "{view}"
    );
    let (status, body) = on(&second).delete(&path).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    // Another player is not limited.
    let mut xia = d.client("xia");
    xia.base = format!("http://{first}");
    assert_eq!(xia.create(1500.0).await.0, StatusCode::CREATED);
}

/// Per-address limits behind a proxy (`TRUSTED_PROXIES`), with real loopback
/// source addresses: through the trusted proxy (127.0.0.2) each forwarded client
/// has a budget of its own, read from the rightmost address that is not a proxy
/// (a client's own false entry to its left changes nothing); from any other
/// peer (127.0.0.3) the forwarding headers are ignored.
#[tokio::test(flavor = "multi_thread")]
async fn behind_a_trusted_proxy_each_client_has_its_own_budget() {
    let d = Deployment::embedded_with(&[
        ("RATE_LIMIT_READS", "off,3/1m"),
        ("TRUSTED_PROXIES", "127.0.0.2/32, 10.0.0.0/8"),
    ])
    .await;
    let from = |local: &str| {
        reqwest::Client::builder()
            .local_address(Some(local.parse().unwrap()))
            .build()
            .unwrap()
    };
    let (proxy, stranger) = (from("127.0.0.2"), from("127.0.0.3"));
    let mut n = 0;
    let mut read = |c: &reqwest::Client, header: Option<(&'static str, &str)>| {
        n += 1;
        let mut req = c
            .get(format!("http://{}/v1/players/me/matches", d.addr))
            .bearer_auth(format!("px{n}"));
        if let Some((k, v)) = header {
            req = req.header(k, v);
        }
        async move {
            let r = req.send().await.unwrap();
            let status = r.status();
            (status, r.json::<Value>().await.unwrap())
        }
    };
    // Client 203.0.113.1 through the proxy (and an inner proxy hop 10.0.0.5).
    for _ in 0..3 {
        let h = Some(("x-forwarded-for", "203.0.113.1, 10.0.0.5"));
        let (s, b) = read(&proxy, h).await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
    let (s, b) = read(&proxy, Some(("x-forwarded-for", "203.0.113.1"))).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{b}");
    assert_eq!(b["error"]["scope"], "address");
    // Claiming another address to the left of its own does not help it.
    let (s, _) = read(
        &proxy,
        Some(("x-forwarded-for", "198.51.100.9, 203.0.113.1")),
    )
    .await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    // Another client through the same proxy, by either header, is unaffected.
    let (s, b) = read(&proxy, Some(("x-forwarded-for", "203.0.113.2"))).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, b) = read(
        &proxy,
        Some(("forwarded", "for=\"203.0.113.3:4711\";proto=https")),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    // A peer that is not a trusted proxy is its own address, whatever it writes.
    for lie in ["192.0.2.1", "192.0.2.2", "192.0.2.3"] {
        let (s, b) = read(&stranger, Some(("x-forwarded-for", lie))).await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
    let (s, _) = read(&stranger, Some(("x-forwarded-for", "192.0.2.200"))).await;
    assert_eq!(
        s,
        StatusCode::TOO_MANY_REQUESTS,
        "headers from a stranger are ignored"
    );
    // The proxy's own address was never charged for its clients.
    let (s, b) = read(&proxy, None).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}
