//! Bad input on every endpoint gets a 4xx with a JSON error body; the process
//! stays up and what was accepted before is still there.

use crate::Deployment;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

fn assert_error(status: StatusCode, body: &Value, want: StatusCode, code: &str) {
    assert_eq!(status, want, "body: {body}");
    assert_eq!(body["error"]["code"], code, "body: {body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "message: {body}"
    );
}

async fn raw(
    d: &Deployment,
    method: Method,
    path: &str,
    auth: Option<&str>,
    ctype: Option<&str>,
    body: &str,
) -> (StatusCode, Value) {
    let mut req = reqwest::Client::new().request(method, format!("http://{}{path}", d.addr));
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    if let Some(c) = ctype {
        req = req.header("content-type", c);
    }
    let resp = req.body(body.to_string()).send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text:?}")),
    )
}

async fn every_endpoint_refuses_bad_input(d: &Deployment) {
    let alice = d.client("alice");
    let (status, accepted) = alice.create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED);
    let accepted_id = accepted["id"].as_str().unwrap().to_string();
    let json_ct = Some("application/json");
    let ok_body = r#"{"players":["zed"],"mode":"1v1","regions":["eu"],"rating":1500}"#;

    // Authentication.
    let (s, b) = raw(d, Method::POST, "/v1/tickets", None, json_ct, ok_body).await;
    assert_error(s, &b, StatusCode::UNAUTHORIZED, "unauthorized");
    let (s, b) = raw(
        d,
        Method::POST,
        "/v1/tickets",
        Some("Basic abc"),
        json_ct,
        ok_body,
    )
    .await;
    assert_error(s, &b, StatusCode::UNAUTHORIZED, "unauthorized");
    let (s, b) = raw(
        d,
        Method::POST,
        "/v1/tickets",
        Some("Bearer not a{valid}id"),
        json_ct,
        ok_body,
    )
    .await;
    assert_error(s, &b, StatusCode::UNAUTHORIZED, "invalid_token");
    let (s, b) = raw(
        d,
        Method::GET,
        &format!("/v1/tickets/{accepted_id}?token=alice"),
        None,
        None,
        "",
    )
    .await;
    assert_error(s, &b, StatusCode::UNAUTHORIZED, "unauthorized");

    // POST /v1/tickets.
    let zed = Some("Bearer zed");
    let cases: &[(&str, StatusCode, &str)] = &[
        (
            r#"{"players":["zed"],"mode":"1v1","#,
            StatusCode::BAD_REQUEST,
            "malformed_json",
        ),
        ("", StatusCode::BAD_REQUEST, "malformed_json"),
        (
            r#"{"players":["zed"],"mode":"nope","regions":["eu"],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "unknown_mode",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":["mars"],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "unknown_region",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":[],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "missing_region",
        ),
        (
            r#"{"players":[],"mode":"1v1","regions":["eu"],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "missing_player",
        ),
        (
            r#"{"players":["alice"],"mode":"1v1","regions":["eu"],"rating":1500}"#,
            StatusCode::FORBIDDEN,
            "not_your_ticket",
        ),
        (
            r#"{"players":["zed","amy"],"mode":"1v1","regions":["eu"],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "party_too_large",
        ),
        (
            r#"{"players":["zed","a","b","c","d","e"],"mode":"5v5","regions":["eu"],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "party_too_large",
        ),
        (
            r#"{"players":[{"id":"zed","rating":1500},{"id":"zed","rating":1400}],"mode":"5v5","regions":["eu"]}"#,
            StatusCode::BAD_REQUEST,
            "invalid_player",
        ),
        (
            r#"{"players":[{"id":"zed"},{"id":"amy","rating":1500}],"mode":"5v5","regions":["eu"]}"#,
            StatusCode::BAD_REQUEST,
            "missing_rating",
        ),
        (
            r#"{"players":[{"id":"zed","rating":1500,"level":3}],"mode":"5v5","regions":["eu"]}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":[{"region":"eu","latency_ms":99999}],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "invalid_latency",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":[{"region":"mars","latency_ms":20}],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "unknown_region",
        ),
        (
            r#"{"players":["bad id"],"mode":"1v1","regions":["eu"],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "invalid_player",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":["eu"],"rating":1e12}"#,
            StatusCode::BAD_REQUEST,
            "invalid_rating",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":["eu"],"rating":-5}"#,
            StatusCode::BAD_REQUEST,
            "invalid_rating",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":["eu"],"rating":"high"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":["eu"],"rating":1500,"mmr":3}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            r#"{"players":["zed"],"mode":"1v1","regions":["eu","eu"],"rating":1500}"#,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            r#"[1,2,3]"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
    ];
    for (body, want, code) in cases {
        let (s, b) = raw(d, Method::POST, "/v1/tickets", zed, json_ct, body).await;
        assert_error(s, &b, *want, code);
    }
    // Left out, `players` is the caller alone; a trusted backend acts for
    // nobody, so it must list them.
    let (s, b) = raw(
        d,
        Method::POST,
        "/v1/tickets",
        Some("Bearer service:backend"),
        json_ct,
        r#"{"mode":"1v1","regions":["eu"],"rating":1500}"#,
    )
    .await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "missing_player");
    // A mistake inside a player or a region object is named: the place and
    // the field, not the server's type.
    for (body, said) in [
        (
            r#"{"players":["zed"],"mode":"1v1","regions":[{"region":"eu","latency":3}]}"#,
            "regions[0].latency: unknown field `latency`, expected `region` or `latency_ms`",
        ),
        (
            r#"{"players":[{"id":"zed","rating":"x"}],"mode":"1v1","regions":["eu"]}"#,
            "players[0].rating: invalid type: string \"x\", expected f64",
        ),
        (
            r#"{"players":[7],"mode":"1v1","regions":["eu"]}"#,
            "players[0]: invalid type: integer `7`, expected a player id, or an object",
        ),
    ] {
        let (s, b) = raw(d, Method::POST, "/v1/tickets", zed, json_ct, body).await;
        assert_error(s, &b, StatusCode::UNPROCESSABLE_ENTITY, "invalid_request");
        let message = b["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(said), "{body}: {message}");
    }
    let (s, b) = raw(
        d,
        Method::POST,
        "/v1/tickets",
        zed,
        Some("text/plain"),
        ok_body,
    )
    .await;
    assert_error(
        s,
        &b,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );
    let (s, b) = raw(d, Method::POST, "/v1/tickets", zed, None, ok_body).await;
    assert_error(
        s,
        &b,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );
    let huge = format!(
        r#"{{"players":["zed"],"mode":"{}","regions":["eu"],"rating":1500}}"#,
        "x".repeat(100_000)
    );
    let (s, b) = raw(d, Method::POST, "/v1/tickets", zed, json_ct, &huge).await;
    assert_error(s, &b, StatusCode::PAYLOAD_TOO_LARGE, "body_too_large");

    // GET and DELETE /v1/tickets/{id}.
    for path in [
        "/v1/tickets/t-doesnotexist",
        "/v1/tickets/..%2F..",
        "/v1/tickets/a%7Bb%7D",
    ] {
        let (s, b) = alice.get(path).await;
        assert_error(s, &b, StatusCode::NOT_FOUND, "ticket_not_found");
        let (s, b) = alice.delete(path).await;
        assert_error(s, &b, StatusCode::NOT_FOUND, "ticket_not_found");
    }
    // Someone else's ticket does not exist for you.
    let mallory = d.client("mallory");
    let (s, b) = mallory.get(&format!("/v1/tickets/{accepted_id}")).await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "ticket_not_found");
    let (s, b) = mallory.delete(&format!("/v1/tickets/{accepted_id}")).await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "ticket_not_found");

    // GET /v1/players/{id}/matches.
    let (s, b) = alice.get("/v1/players/bob/matches").await;
    assert_error(s, &b, StatusCode::FORBIDDEN, "forbidden");
    for q in [
        "?limit=0",
        "?limit=abc",
        "?limit=100000",
        "?limit=-1",
        "?other=1",
    ] {
        let (s, b) = alice.get(&format!("/v1/players/me/matches{q}")).await;
        assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid_query");
    }

    // The WebSocket endpoint needs a WebSocket upgrade.
    let (s, b) = alice.get("/v1/ws").await;
    assert!(s.is_client_error(), "{s}");
    assert!(b["error"]["code"].is_string(), "{b}");
    let (s, b) = raw(d, Method::GET, "/v1/ws", None, None, "").await;
    assert_error(s, &b, StatusCode::UNAUTHORIZED, "unauthorized");

    // On the socket: a message that is not an answer gets an error reply and the
    // socket stays; an oversized one (past 64 KiB) closes it; a new one works. (A
    // player with no tickets, so no event comes between a message and its reply.)
    let mut ws = d.socket("quiet").await;
    for bad in [
        json!({"type": "match.accept"}),
        json!({"type": "match.maybe", "match_id": "m-1"}),
        json!(["not", "an", "object"]),
    ] {
        ws.send(bad.clone()).await;
        let reply = ws.next_event(Duration::from_secs(5)).await.expect("reply");
        assert_eq!(reply["type"], "error", "{bad} -> {reply}");
        assert_eq!(reply["error"]["code"], "invalid_message", "{reply}");
    }
    // A frame many times the socket's read buffer still arrives whole.
    ws.send(json!({"type": "match.accept", "match_id": "m-1", "pad": "x".repeat(30 * 1024)}))
        .await;
    let reply = ws.next_event(Duration::from_secs(5)).await.expect("reply");
    assert_eq!(reply["error"]["code"], "invalid_message", "{reply}");
    ws.send(json!({"type": "match.accept", "match_id": "m-1", "pad": "x".repeat(100 * 1024)}))
        .await;
    assert_eq!(ws.next_event(Duration::from_secs(5)).await, None);
    let mut ws = d.socket("quiet").await;
    ws.send(json!({"type": "match.accept", "match_id": "m-nope"}))
        .await;
    let reply = ws.next_event(Duration::from_secs(5)).await.expect("reply");
    assert_eq!(reply["type"], "error", "{reply}");

    // Routing.
    let (s, b) = alice.get("/v2/nothing").await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "no_route");
    let (s, b) = alice
        .send(Method::PUT, "/v1/tickets", Some(json!({})))
        .await;
    assert_error(s, &b, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");

    // Still up, and the accepted ticket is intact.
    let (s, v) = alice.get(&format!("/v1/tickets/{accepted_id}")).await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        ["queued", "searching"].contains(&v["status"].as_str().unwrap()),
        "{v}"
    );
    let (s, _) = alice.get("/healthz").await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_refuses_bad_input() {
    let d = Deployment::embedded().await;
    every_endpoint_refuses_bad_input(&d).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_ingress_refuses_bad_input() {
    let d = Deployment::redis_processes().await;
    every_endpoint_refuses_bad_input(&d).await;
}

/// One HTTP/1.1 response read off a raw connection: status, headers (lower-case
/// names) and body; `None` if the connection closed first.
async fn response(
    r: &mut tokio::io::BufReader<tokio::net::TcpStream>,
) -> Option<(u16, Vec<(String, String)>, String)> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut line = String::new();
    if r.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let status: u16 = line.split_whitespace().nth(1)?.parse().ok()?;
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).await.ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body).await.ok()?;
    Some((status, headers, String::from_utf8_lossy(&body).into_owned()))
}

/// A keep-alive client sends three requests on one connection, the first two
/// refused early (401 for a bad token, 429 over a limit) before their bodies
/// arrived: every request gets its answer on that connection, the 429 with its
/// Retry-After.
#[tokio::test(flavor = "multi_thread")]
async fn early_refusals_keep_the_connection() {
    use tokio::io::AsyncWriteExt;
    let d = Deployment::embedded_with(&[("RATE_LIMIT_ANSWERS", "1/1m,off")]).await;
    // Spend rl-one's only ready-check answer.
    let (s, _) = d
        .client("rl-one")
        .send(Method::POST, "/v1/matches/m-none/accept", None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let body = json!({"pad": "x".repeat(12_000)}).to_string();
    let head = |path: &str, token: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
    };
    let requests = [
        (head("/v1/tickets", "not a player!"), Some(&body), 401),
        (
            head("/v1/matches/m-none/accept", "rl-one"),
            Some(&body),
            429,
        ),
        (
            "GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n".to_string(),
            None,
            200,
        ),
    ];
    let stream = tokio::net::TcpStream::connect(&d.addr).await.unwrap();
    let mut r = tokio::io::BufReader::new(stream);
    for (i, (head, body, want)) in requests.iter().enumerate() {
        // The head first; the body a moment later, after the answer is decided.
        r.get_mut().write_all(head.as_bytes()).await.unwrap();
        if let Some(body) = body {
            tokio::time::sleep(Duration::from_millis(100)).await;
            r.get_mut().write_all(body.as_bytes()).await.unwrap();
        }
        let (status, headers, text) =
            tokio::time::timeout(Duration::from_secs(10), response(&mut r))
                .await
                .expect("an answer in time")
                .unwrap_or_else(|| panic!("request {i}: the connection closed without an answer"));
        assert_eq!(status, *want, "request {i}: {text}");
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        if *want == 429 {
            assert!(header("retry-after").is_some(), "{headers:?}");
        }
        assert_ne!(
            header("connection"),
            Some("close"),
            "request {i}: {headers:?}"
        );
        let _: Value = serde_json::from_str(&text).unwrap();
    }
}
