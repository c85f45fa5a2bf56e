//! Signed player identity against a real `serve`: every endpoint refuses missing,
//! expired, forged and misaddressed tokens with 401 and changes nothing; players
//! act only on what is theirs; a trusted backend acts for players; JWKS keys
//! rotate without a restart; dev tokens are refused off loopback.

use crate::{BIN, Deployment};
use mm_auth::{Algorithm, TokenSigner, public_jwk};
use mm_testkit::keys::{ED1, RSA1, RSA2, SECRET};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const HOUR: Duration = Duration::from_secs(3600);
const ISSUER: &str = "login.test";
const AUDIENCE: &str = "matchmaker-test";
/// A ticket waiting for a match (a worker may be holding it).
const LIVE: [&str; 2] = ["queued", "searching"];

fn hs() -> TokenSigner {
    TokenSigner::hs256(SECRET, ISSUER, AUDIENCE).unwrap()
}

fn jwks(keys: &[(&[u8], Algorithm, &str)]) -> String {
    let keys: Vec<Value> = keys
        .iter()
        .map(|(pem, alg, kid)| public_jwk(pem, *alg, kid).unwrap())
        .collect();
    json!({ "keys": keys }).to_string()
}

/// `serve` verifying HS256 tokens and RS256/EdDSA tokens from a JWKS file.
async fn deployment(dir: &Path) -> Deployment {
    let secret = dir.join("secret");
    std::fs::write(&secret, [SECRET, b"\n"].concat()).unwrap();
    let jwks_file = dir.join("jwks.json");
    std::fs::write(
        &jwks_file,
        jwks(&[
            (RSA1, Algorithm::RS256, "rsa-1"),
            (ED1, Algorithm::EdDSA, "ed-1"),
        ]),
    )
    .unwrap();
    Deployment::embedded_with(&[
        ("AUTH", "jwt"),
        ("ALLOW_CLIENT_RATINGS", "false"),
        ("JWT_SECRET_FILE", secret.to_str().unwrap()),
        ("JWT_JWKS_FILE", jwks_file.to_str().unwrap()),
        ("JWT_ISSUER", ISSUER),
        ("JWT_AUDIENCE", AUDIENCE),
        ("JWT_LEEWAY", "0s"),
    ])
    .await
}

async fn call(
    d: &Deployment,
    token: Option<&str>,
    method: Method,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let mut req = reqwest::Client::new().request(method, format!("http://{}{path}", d.addr));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// A token signed with the right secret whose header marks an extension
/// critical (RFC 7515 4.1.11), which the service must refuse.
fn critical() -> String {
    let mut header = jsonwebtoken::Header::new(Algorithm::HS256);
    header.crit = Some(vec!["exp".into()]);
    jsonwebtoken::encode(
        &header,
        &hs().claims("alice", HOUR),
        &jsonwebtoken::EncodingKey::from_secret(SECRET),
    )
    .unwrap()
}

fn ticket(players: &[&str]) -> Value {
    json!({"players": players, "mode": "1v1", "regions": ["eu"]})
}

#[tokio::test(flavor = "multi_thread")]
async fn every_endpoint_refuses_bad_tokens_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = deployment(dir.path()).await;
    let alice = hs().sign("alice", None, HOUR).unwrap();
    let (status, _, t) = call(
        &d,
        Some(&alice),
        Method::POST,
        "/v1/tickets",
        Some(ticket(&["alice"])),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let tid = t["id"].as_str().unwrap().to_string();
    let before = call(
        &d,
        Some(&alice),
        Method::GET,
        &format!("/v1/tickets/{tid}"),
        None,
        &[],
    )
    .await
    .2;

    let now = hs().claims("alice", HOUR)["iat"].as_u64().unwrap();
    let mut expired = hs().claims("alice", HOUR);
    expired["exp"] = (now - 10).into();
    let mut early = hs().claims("alice", HOUR);
    early["nbf"] = (now + 600).into();
    let forger =
        TokenSigner::hs256(b"not-the-secret-but-32-bytes-long!!!", ISSUER, AUDIENCE).unwrap();
    let bad_tokens: Vec<(&str, Option<String>)> = vec![
        ("no token", None),
        ("expired", Some(hs().sign_claims(&expired).unwrap())),
        ("not yet valid", Some(hs().sign_claims(&early).unwrap())),
        (
            "forged signature",
            Some(forger.sign("alice", None, HOUR).unwrap()),
        ),
        (
            "wrong audience",
            Some(
                TokenSigner::hs256(SECRET, ISSUER, "another-service")
                    .unwrap()
                    .sign("alice", None, HOUR)
                    .unwrap(),
            ),
        ),
        (
            "wrong issuer",
            Some(
                TokenSigner::hs256(SECRET, "evil", AUDIENCE)
                    .unwrap()
                    .sign("alice", None, HOUR)
                    .unwrap(),
            ),
        ),
        (
            "unknown key",
            Some(
                TokenSigner::from_pem(RSA2, Algorithm::RS256, Some("rsa-2"), ISSUER, AUDIENCE)
                    .unwrap()
                    .sign("alice", None, HOUR)
                    .unwrap(),
            ),
        ),
        ("dev token", Some("alice".to_string())),
        ("critical header extension", Some(critical())),
        (
            "operator token",
            Some(hs().sign("ops", Some("operator"), HOUR).unwrap()),
        ),
    ];
    // Every operation the published document declares as needing a token, with
    // its path parameters filled in (so a new endpoint cannot be missed).
    let doc: Value = reqwest::get(format!("http://{}/openapi.json", d.addr))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut endpoints: Vec<(Method, String, Option<Value>)> = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op.get("security").is_none() || path == "/v1/ws" {
                continue;
            }
            let concrete = path.replace("{id}", &tid).replace("{mode}", "1v1");
            let body = match (method.as_str(), path.as_str()) {
                ("post", "/v1/tickets") => Some(ticket(&["alice"])),
                ("post", p) if p.ends_with("/invites") || p.ends_with("/kick") => {
                    Some(json!({"player_id": "bob"}))
                }
                _ => None,
            };
            endpoints.push((method.to_uppercase().parse().unwrap(), concrete, body));
        }
    }
    assert!(endpoints.len() >= 19, "{endpoints:?}");
    for (what, token) in &bad_tokens {
        for (method, path, body) in &endpoints {
            let (status, headers, body) = call(
                &d,
                token.as_deref(),
                method.clone(),
                path,
                body.clone(),
                &[],
            )
            .await;
            if *what == "operator token" {
                assert_eq!(status, StatusCode::FORBIDDEN, "{what}: {method} {path}");
                assert_eq!(body["error"]["code"], "operator_token");
                continue;
            }
            assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "{what}: {method} {path}: {body}"
            );
            if *what == "operator token" {
                // Valid, but for the operator plane only.
                continue;
            }
            // A token that does not verify is `invalid_token`, and the answer
            // says nothing of the keys configured (rsa-1, ed-1) or the one named.
            let want = if token.is_some() {
                "invalid_token"
            } else {
                "unauthorized"
            };
            assert_eq!(body["error"]["code"], want, "{what}: {method} {path}");
            let text = body.to_string();
            for kid in ["rsa-1", "rsa-2", "ed-1", "kid"] {
                assert!(!text.contains(kid), "{what}: {method} {path}: {text}");
            }
            assert!(
                headers.get("www-authenticate").is_some(),
                "{what}: {method} {path} lacks WWW-Authenticate"
            );
        }
        // The WebSocket refuses the upgrade.
        let url = match token {
            Some(t) => format!("ws://{}/v1/ws?token={t}", d.addr),
            None => format!("ws://{}/v1/ws", d.addr),
        };
        let refused = if *what == "operator token" {
            StatusCode::FORBIDDEN
        } else {
            StatusCode::UNAUTHORIZED
        };
        match tokio_tungstenite::connect_async(url).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(r)) => {
                assert_eq!(r.status(), refused, "{what}: ws")
            }
            other => panic!(
                "{what}: ws upgrade was not refused: {:?}",
                other.map(|_| ())
            ),
        }
    }
    // Nothing changed: alice's ticket is as it was, and no other ticket exists.
    let after = call(
        &d,
        Some(&alice),
        Method::GET,
        &format!("/v1/tickets/{tid}"),
        None,
        &[],
    )
    .await
    .2;
    for t in [&before, &after] {
        assert!(LIVE.contains(&t["status"].as_str().unwrap()), "{t}");
    }
    for field in ["id", "players", "rating", "mode", "enqueued_at"] {
        assert_eq!(after[field], before[field], "{field}");
    }
    let (status, _, _) = call(
        &d,
        Some(&alice),
        Method::POST,
        "/v1/tickets",
        Some(ticket(&["alice"])),
        &[],
    )
    .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "alice's one ticket is still live"
    );
    let (status, _, _) = call(
        &d,
        Some(&alice),
        Method::GET,
        "/v1/players/me/party",
        None,
        &[],
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "no party was created for alice"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn players_act_only_on_their_own_and_a_backend_acts_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = deployment(dir.path()).await;
    let alice = hs().sign("alice", None, HOUR).unwrap();
    // EdDSA from the JWKS file works as well as the secret.
    let bob = TokenSigner::from_pem(ED1, Algorithm::EdDSA, Some("ed-1"), ISSUER, AUDIENCE)
        .unwrap()
        .sign("bob", None, HOUR)
        .unwrap();
    let backend = hs().sign("imports", Some("service"), HOUR).unwrap();

    let (s, _, bt) = call(
        &d,
        Some(&bob),
        Method::POST,
        "/v1/tickets",
        Some(ticket(&["bob"])),
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{bt}");
    let bob_ticket = bt["id"].as_str().unwrap().to_string();
    // Another player's ticket reads as missing, and cannot be cancelled.
    for method in [Method::GET, Method::DELETE] {
        let (s, _, body) = call(
            &d,
            Some(&alice),
            method,
            &format!("/v1/tickets/{bob_ticket}"),
            None,
            &[],
        )
        .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{body}");
    }
    // Reading another player's matches, ratings or assignment is forbidden.
    for path in [
        "/v1/players/bob/matches",
        "/v1/players/bob/ratings",
        "/v1/players/bob/assignment",
    ] {
        let (s, _, body) = call(&d, Some(&alice), Method::GET, path, None, &[]).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{path}: {body}");
    }
    // A player may not act for another, nor queue them, nor pass a rating.
    let (s, _, body) = call(
        &d,
        Some(&alice),
        Method::GET,
        &format!("/v1/tickets/{bob_ticket}"),
        None,
        &[("X-Player-Id", "bob")],
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    let (s, _, body) = call(
        &d,
        Some(&alice),
        Method::POST,
        "/v1/tickets",
        Some(ticket(&["bob"])),
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    let rated = json!({"players": ["alice"], "mode": "1v1", "regions": ["eu"], "rating": 2900});
    let (s, _, body) = call(
        &d,
        Some(&alice),
        Method::POST,
        "/v1/tickets",
        Some(rated),
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "rating_not_allowed");
    // Bob's ticket is untouched.
    let (_, _, body) = call(
        &d,
        Some(&bob),
        Method::GET,
        &format!("/v1/tickets/{bob_ticket}"),
        None,
        &[],
    )
    .await;
    assert!(LIVE.contains(&body["status"].as_str().unwrap()), "{body}");

    // The trusted backend queues players with ratings (an import) ...
    let body =
        json!({"players": [{"id": "carol", "rating": 1810}], "mode": "1v1", "regions": ["eu"]});
    let (s, _, ct) = call(
        &d,
        Some(&backend),
        Method::POST,
        "/v1/tickets",
        Some(body),
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{ct}");
    assert_eq!(ct["rating"], 1810.0);
    let carol_ticket = ct["id"].as_str().unwrap().to_string();
    // ... needs to name the player it acts for elsewhere ...
    let (s, _, body) = call(
        &d,
        Some(&backend),
        Method::GET,
        &format!("/v1/tickets/{carol_ticket}"),
        None,
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "player_required");
    // ... and cancels any player's ticket.
    let (s, _, body) = call(
        &d,
        Some(&backend),
        Method::DELETE,
        &format!("/v1/tickets/{bob_ticket}"),
        None,
        &[("X-Player-Id", "bob")],
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "cancelled");
    let (_, _, body) = call(
        &d,
        Some(&bob),
        Method::GET,
        &format!("/v1/tickets/{bob_ticket}"),
        None,
        &[],
    )
    .await;
    assert_eq!(body["status"], "cancelled");

    // The socket takes the token in the query or the header.
    let url = format!("ws://{}/v1/ws?token={alice}", d.addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("socket with ?token=");
    use futures_util::StreamExt;
    let hello = ws.next().await.unwrap().unwrap();
    assert!(hello.to_text().unwrap().contains("\"player_id\":\"alice\""));
}

/// The token `matchmaker token ARGS` prints, for this suite's issuer and audience.
fn token_command(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("token")
        .args(args)
        .env_remove("JWT_SECRET_FILE")
        .env("JWT_ISSUER", ISSUER)
        .env("JWT_AUDIENCE", AUDIENCE)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_command_signs_and_a_rotated_jwks_takes_effect() {
    let dir = tempfile::tempdir().unwrap();
    let d = deployment(dir.path()).await;
    // `matchmaker token` with the same secret, issuer and audience.
    let secret = dir.path().join("secret");
    let token = token_command(&[
        "dora",
        "--ttl",
        "10m",
        "--secret-file",
        secret.to_str().unwrap(),
    ]);
    let (s, _, body) = call(
        &d,
        Some(&token),
        Method::GET,
        "/v1/players/me/ratings",
        None,
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["player_id"], "dora");
    // With a private key and kid.
    let pem = dir.path().join("rsa1.pem");
    std::fs::write(&pem, RSA1).unwrap();
    let erin = token_command(&[
        "erin",
        "--key-file",
        pem.to_str().unwrap(),
        "--kid",
        "rsa-1",
    ]);
    let (s, _, _) = call(
        &d,
        Some(&erin),
        Method::GET,
        "/v1/players/me/ratings",
        None,
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::OK);

    // Rotation: rsa-2 replaces rsa-1 in the JWKS file; the running service
    // picks it up (it checks the file every few seconds).
    let new = TokenSigner::from_pem(RSA2, Algorithm::RS256, Some("rsa-2"), ISSUER, AUDIENCE)
        .unwrap()
        .sign("erin", None, HOUR)
        .unwrap();
    let (s, _, _) = call(
        &d,
        Some(&new),
        Method::GET,
        "/v1/players/me/ratings",
        None,
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    std::fs::write(
        dir.path().join("jwks.json"),
        jwks(&[
            (RSA2, Algorithm::RS256, "rsa-2"),
            (ED1, Algorithm::EdDSA, "ed-1"),
        ]),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (s, _, _) = call(
            &d,
            Some(&new),
            Method::GET,
            "/v1/players/me/ratings",
            None,
            &[],
        )
        .await;
        if s == StatusCode::OK {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the rotated key was never accepted"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (s, _, _) = call(
        &d,
        Some(&erin),
        Method::GET,
        "/v1/players/me/ratings",
        None,
        &[],
    )
    .await;
    assert_eq!(
        s,
        StatusCode::UNAUTHORIZED,
        "the retired key no longer verifies"
    );
}

/// `serve` started as a newcomer might start it in production: token keys set,
/// AUTH left out. It verifies signed tokens (a dev token is refused) instead of
/// falling back to dev mode; and dev mode, whenever it is on, warns at start,
/// as an open gRPC plane does.
#[tokio::test(flavor = "multi_thread")]
async fn serve_with_token_keys_uses_signed_tokens_and_dev_mode_always_warns() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, SECRET).unwrap();
    let start = |name: &str, keys: bool| {
        let addr = format!("127.0.0.1:{}", mm_testkit::free_port());
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .env("LISTEN_ADDR", &addr)
            .env(
                "GRPC_LISTEN_ADDR",
                format!("127.0.0.1:{}", mm_testkit::free_port()),
            )
            .env("DATA_DIR", dir.path().join(name));
        crate::fast_env(&mut cmd);
        cmd.env_remove("AUTH").env_remove("ALLOW_CLIENT_RATINGS");
        if keys {
            cmd.env("JWT_SECRET_FILE", &secret)
                .env("JWT_ISSUER", ISSUER)
                .env("JWT_AUDIENCE", AUDIENCE);
        }
        (addr, mm_testkit::Proc::spawn(name, cmd, dir.path()))
    };
    let ready = |addr: String| async move {
        let deadline = Instant::now() + Duration::from_secs(20);
        while reqwest::get(format!("http://{addr}/readyz")).await.is_err() {
            assert!(Instant::now() < deadline, "not ready");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        addr
    };
    let (addr, signed) = start("signed", true);
    let addr = ready(addr).await;
    let get = |token: String| {
        let addr = addr.clone();
        async move {
            reqwest::Client::new()
                .get(format!("http://{addr}/v1/players/me/ratings"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(
        get("alice".into()).await,
        StatusCode::UNAUTHORIZED,
        "dev token"
    );
    assert_eq!(
        get(hs().sign("alice", None, HOUR).unwrap()).await,
        StatusCode::OK,
        "signed token"
    );
    assert!(!signed.log().contains("dev tokens"), "{}", signed.log());

    let (addr, dev) = start("dev", false);
    ready(addr).await;
    let log = dev.log();
    let warned = |what: &str| log.lines().any(|l| l.contains("WARN") && l.contains(what));
    assert!(warned("listening with dev tokens (AUTH=dev)"), "{log}");
    assert!(warned("gRPC API open to any caller"), "{log}");
}
