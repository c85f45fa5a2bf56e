//! Game-server credentials against a real `serve`: every gRPC method refuses a
//! missing or unknown token (`UNAUTHENTICATED`), a fleet acts only as its own
//! servers and on their matches, `Allocate` needs an allocator
//! (`PERMISSION_DENIED`), nothing changes when a call is refused, and the example
//! game server plays with its token.

use crate::{BIN, Deployment};
use mm_proto::v1 as pb;
use mm_proto::{Client, Credential};
use mm_testkit::Proc;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::process::Command;
use std::time::{Duration, Instant};
use tonic::Code;

const EU: &str = "eu-fleet-token-0123456789abcdef";
const OTHER: &str = "other-fleet-token-0123456789abcdef";
const LOBBY: &str = "lobby-allocator-token-0123456789";

const CREDENTIALS: &str = r#"
[[fleet]]
name = "eu"
token = "eu-fleet-token-0123456789abcdef"
servers = ["gs-eu-*"]

[[fleet]]
name = "other"
token = "other-fleet-token-0123456789abcdef"
servers = ["gs-other-*"]

[[allocator]]
name = "lobby"
token = "lobby-allocator-token-0123456789"
"#;

/// Queues each player for `rush` (no ready check: the match goes to a server).
async fn queue_rush(players: &[&crate::Client]) {
    for p in players {
        let (s, t) = p
            .send(
                Method::POST,
                "/v1/tickets",
                Some(json!({"mode": "rush", "players": [p.token], "rating": 1500, "regions": ["eu"]})),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{t}");
    }
}

pub(crate) async fn client(d: &Deployment, token: Option<&str>) -> Client {
    let channel = tonic::transport::Endpoint::from_shared(d.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    mm_proto::client(channel, Credential::new(token).unwrap())
}

fn register(id: &str) -> pb::RegisterRequest {
    pb::RegisterRequest {
        server_id: id.into(),
        region: "eu".into(),
        modes: vec!["rush".into()],
        capacity: 2,
        address: "10.0.0.1:7777".into(),
    }
}

/// Every method of the service called as `server` on `match_id`; the codes.
async fn every_method(c: &mut Client, server: &str, match_id: &str) -> Vec<(&'static str, Code)> {
    let code = |r: Result<(), tonic::Status>| r.err().map(|s| s.code()).unwrap_or(Code::Ok);
    vec![
        (
            "Register",
            code(c.register(register(server)).await.map(|_| ())),
        ),
        (
            "Heartbeat",
            code(
                c.heartbeat(pb::HeartbeatRequest {
                    server_id: server.into(),
                })
                .await
                .map(|_| ()),
            ),
        ),
        (
            "ReportResult",
            code(
                c.report_result(pb::ReportResultRequest {
                    server_id: server.into(),
                    match_id: match_id.into(),
                    teams: vec![pb::TeamResult {
                        team: 0,
                        outcome: pb::Outcome::Win as i32,
                        placement: 0,
                    }],
                    ..Default::default()
                })
                .await
                .map(|_| ()),
            ),
        ),
        (
            "Release",
            code(
                c.release(pb::ReleaseRequest {
                    server_id: server.into(),
                    match_id: match_id.into(),
                    ..Default::default()
                })
                .await
                .map(|_| ()),
            ),
        ),
        (
            "Allocate",
            code(
                c.allocate(pb::AllocateRequest {
                    region: "eu".into(),
                    mode: "rush".into(),
                    allocation_id: "alloc-1".into(),
                })
                .await
                .map(|_| ()),
            ),
        ),
        (
            "OpenBackfill",
            code(c.open_backfill(seats(server, match_id)).await.map(|_| ())),
        ),
        (
            "UpdateBackfill",
            code(c.update_backfill(seats(server, match_id)).await.map(|_| ())),
        ),
        (
            "CloseBackfill",
            code(
                c.close_backfill(pb::CloseBackfillRequest {
                    server_id: server.into(),
                    match_id: match_id.into(),
                })
                .await
                .map(|_| ()),
            ),
        ),
        (
            "PlayerLeft",
            code(
                c.player_left(pb::PlayerLeftRequest {
                    server_id: server.into(),
                    match_id: match_id.into(),
                    player_id: "fa".into(),
                })
                .await
                .map(|_| ()),
            ),
        ),
    ]
}

fn seats(server: &str, match_id: &str) -> pb::OpenBackfillRequest {
    pb::OpenBackfillRequest {
        server_id: server.into(),
        match_id: match_id.into(),
        open: vec![1, 0],
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn game_servers_act_only_with_their_credential_on_their_matches() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.toml");
    std::fs::write(&file, CREDENTIALS).unwrap();
    let d = Deployment::embedded_with(&[("FLEET_CREDENTIALS_FILE", file.to_str().unwrap())]).await;

    // No token, or an unknown one: every method is UNAUTHENTICATED.
    for token in [None, Some("not-a-configured-token-at-all!!"), Some("x")] {
        let mut c = client(&d, token).await;
        for (method, code) in every_method(&mut c, "gs-eu-1", "m-none").await {
            assert_eq!(code, Code::Unauthenticated, "{method} with {token:?}");
        }
    }
    let mut eu = client(&d, Some(EU)).await;
    let mut other = client(&d, Some(OTHER)).await;
    let mut lobby = client(&d, Some(LOBBY)).await;
    // A fleet registers only its own servers; an allocator registers none.
    eu.register(register("gs-eu-1"))
        .await
        .expect("eu registers its server");
    other
        .register(register("gs-other-1"))
        .await
        .expect("other registers its server");
    for (who, c) in [("other", &mut other), ("lobby", &mut lobby)] {
        let err = c.register(register("gs-eu-1")).await.unwrap_err();
        assert_eq!(
            err.code(),
            Code::PermissionDenied,
            "{who} registering gs-eu-1"
        );
    }

    // The allocator takes two slots (servers fill up before empty ones are used,
    // so one server is full); then a match is placed on whichever has room.
    for i in 0..2 {
        lobby
            .allocate(pb::AllocateRequest {
                region: "eu".into(),
                mode: "rush".into(),
                allocation_id: format!("fill-{i}"),
            })
            .await
            .expect("the allocator allocates");
    }
    let (a, b) = (d.client("fa"), d.client("fb"));
    queue_rush(&[&a, &b]).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let (server, allocation) = loop {
        let mut found = None;
        for (server, c) in [("gs-eu-1", &mut eu), ("gs-other-1", &mut other)] {
            let beat = c
                .heartbeat(pb::HeartbeatRequest {
                    server_id: server.into(),
                })
                .await
                .unwrap()
                .into_inner();
            if let Some(m) = beat
                .allocations
                .into_iter()
                .find(|m| m.match_id.starts_with("m-"))
            {
                found = Some((server, m));
            }
        }
        if let Some(f) = found {
            break f;
        }
        assert!(Instant::now() < deadline, "the match was never placed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (owner, intruder, intruder_server) = if server == "gs-eu-1" {
        (&mut eu, &mut other, "gs-other-1")
    } else {
        (&mut other, &mut eu, "gs-eu-1")
    };
    let mid = allocation.match_id.clone();

    // Another fleet, as its own server or as the owner: PERMISSION_DENIED for
    // everything touching the match or the owner's server.
    for (method, code) in every_method(intruder, server, &mid).await {
        assert_eq!(
            code,
            Code::PermissionDenied,
            "{method} as {server} with another fleet's token"
        );
    }
    for (label, code) in [
        (
            "ReportResult",
            intruder
                .report_result(pb::ReportResultRequest {
                    server_id: intruder_server.into(),
                    match_id: mid.clone(),
                    teams: vec![pb::TeamResult {
                        team: 0,
                        outcome: pb::Outcome::Win as i32,
                        placement: 0,
                    }],
                    ..Default::default()
                })
                .await
                .unwrap_err()
                .code(),
        ),
        (
            "Release",
            intruder
                .release(pb::ReleaseRequest {
                    server_id: intruder_server.into(),
                    match_id: mid.clone(),
                    ..Default::default()
                })
                .await
                .map(|_| ())
                .err()
                .map(|s| s.code())
                .unwrap_or(Code::Ok),
        ),
        (
            "Allocate",
            intruder
                .allocate(pb::AllocateRequest {
                    region: "eu".into(),
                    mode: "rush".into(),
                    allocation_id: "sneaky".into(),
                })
                .await
                .unwrap_err()
                .code(),
        ),
    ] {
        assert_eq!(
            code,
            Code::PermissionDenied,
            "{label} on another server's match"
        );
    }

    // Nothing changed: the match is still assigned to its server, with no result.
    let (s, m) = a.get(&format!("/v1/matches/{mid}")).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    assert_eq!(m["status"], "assigned", "{m}");
    assert_eq!(m["server"]["server_id"], server);
    assert!(m.get("result").is_none_or(|r| r.is_null()), "{m}");
    let beat = owner
        .heartbeat(pb::HeartbeatRequest {
            server_id: server.into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        beat.allocations.iter().any(|x| x.match_id == mid),
        "still allocated to {server}"
    );

    // The owner reports; the match completes.
    owner
        .report_result(pb::ReportResultRequest {
            server_id: server.into(),
            match_id: mid.clone(),
            teams: vec![
                pb::TeamResult {
                    team: 0,
                    outcome: pb::Outcome::Win as i32,
                    placement: 0,
                },
                pb::TeamResult {
                    team: 1,
                    outcome: pb::Outcome::Loss as i32,
                    placement: 0,
                },
            ],
            ..Default::default()
        })
        .await
        .expect("the owner reports");
    let (_, m) = a.get(&format!("/v1/matches/{mid}")).await;
    assert_eq!(m["status"], "completed", "{m}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_example_game_server_plays_with_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.toml");
    std::fs::write(&file, CREDENTIALS).unwrap();
    let d = Deployment::embedded_with(&[("FLEET_CREDENTIALS_FILE", file.to_str().unwrap())]).await;
    let spawn = |id: &str, token: &str| {
        let mut cmd = Command::new(BIN);
        cmd.arg("example-game-server")
            .env("SERVER_MANAGER_URL", &d.grpc)
            .env("GAME_SERVER_ID", id)
            .env("GAME_SERVER_REGION", "eu")
            .env("GAME_SERVER_MODES", "rush")
            .env("GAME_SERVER_TOKEN", token)
            .env("MATCH_DURATION", "100ms");
        Proc::spawn(id, cmd, d.logs.path())
    };
    // With another fleet's token it cannot register, and says why.
    let mut wrong = spawn("gs-eu-9", OTHER);
    let deadline = Instant::now() + Duration::from_secs(20);
    while wrong.running() {
        assert!(
            Instant::now() < deadline,
            "registered with another fleet's token"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        wrong.log().contains("may not act for server gs-eu-9"),
        "{}",
        wrong.log()
    );
    let mut gs = spawn("gs-eu-2", EU);
    let (a, b) = (d.client("ga"), d.client("gb"));
    queue_rush(&[&a, &b]).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, m) = a.get("/v1/players/me/matches").await;
        if m["matches"].as_array().is_some_and(|l| !l.is_empty())
            && gs.log().contains("match_finished")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no match completed:\n{}",
            gs.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gs.log().contains("\"reported\":true"), "{}", gs.log());
    // SIGTERM (what an orchestrator sends): it leaves the fleet and exits cleanly.
    assert!(gs.terminate(Duration::from_secs(10)), "{}", gs.log());
    assert!(gs.log().contains("\"left_fleet\""), "{}", gs.log());
}

/// A client of `url` over TLS trusting the test CA, with `identity` as its
/// client certificate; `Err` if it cannot connect.
async fn tls_client(
    url: &str,
    identity: Option<(&[u8], &[u8])>,
    token: Option<&str>,
) -> Result<Client, String> {
    use mm_testkit::keys::tls::CA;
    use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
    let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(CA));
    if let Some((cert, key)) = identity {
        tls = tls.identity(Identity::from_pem(cert, key));
    }
    let channel = Endpoint::from_shared(url.to_string())
        .unwrap()
        .tls_config(tls)
        .map_err(|e| e.to_string())?
        .connect()
        .await
        .map_err(|e| format!("{e:?}"))?;
    Ok(mm_proto::client(channel, Credential::new(token).unwrap()))
}

#[tokio::test(flavor = "multi_thread")]
async fn mutual_tls_admits_only_certificates_from_the_client_ca() {
    use mm_testkit::keys::tls::*;
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (ca, cert, key) = (
        write("ca.pem", CA),
        write("server.pem", SERVER_CERT),
        write("server.key", SERVER_KEY),
    );
    let creds = write("fleet.toml", CREDENTIALS.as_bytes());
    let d = Deployment::embedded_with(&[
        ("FLEET_CREDENTIALS_FILE", &creds),
        ("GRPC_TLS_CERT", &cert),
        ("GRPC_TLS_KEY", &key),
        ("GRPC_CLIENT_CA", &ca),
    ])
    .await;
    let https = d.grpc.replacen("http://", "https://", 1);
    let try_register = |c: Result<Client, String>| async move {
        match c {
            Err(e) => Err(e),
            Ok(mut c) => c
                .register(register("gs-eu-tls"))
                .await
                .map(|_| ())
                .map_err(|s| format!("{:?}: {}", s.code(), s.message())),
        }
    };
    // Plaintext, TLS without a client certificate, and a certificate from
    // another CA: none gets a call through, even with a valid token.
    let plain = tonic::transport::Endpoint::from_shared(d.grpc.clone())
        .unwrap()
        .connect()
        .await
        .map(|ch| mm_proto::client(ch, Credential::new(Some(EU)).unwrap()))
        .map_err(|e| e.to_string());
    assert!(try_register(plain).await.is_err(), "plaintext got through");
    let anonymous = tls_client(&https, None, Some(EU)).await;
    assert!(
        try_register(anonymous).await.is_err(),
        "no client certificate got through"
    );
    let rogue = tls_client(
        &https,
        Some((ROGUE_CLIENT_CERT, ROGUE_CLIENT_KEY)),
        Some(EU),
    )
    .await;
    assert!(
        try_register(rogue).await.is_err(),
        "another CA's certificate got through"
    );
    // The right certificate still needs the token.
    let no_token = tls_client(&https, Some((CLIENT_CERT, CLIENT_KEY)), None).await;
    let err = try_register(no_token).await.unwrap_err();
    assert!(err.starts_with("Unauthenticated"), "{err}");
    let mut good = tls_client(&https, Some((CLIENT_CERT, CLIENT_KEY)), Some(EU))
        .await
        .expect("connects with the right certificate");
    good.register(register("gs-eu-tls"))
        .await
        .expect("certificate and token");
    // Out of the pool again, so the match below goes to the example server.
    good.release(pb::ReleaseRequest {
        server_id: "gs-eu-tls".into(),
        ..Default::default()
    })
    .await
    .unwrap();

    // The example game server over mutual TLS plays a match.
    let (client_cert, client_key) = (
        write("client.pem", CLIENT_CERT),
        write("client.key", CLIENT_KEY),
    );
    let mut cmd = Command::new(BIN);
    cmd.arg("example-game-server")
        .env("SERVER_MANAGER_URL", &https)
        .env("GAME_SERVER_ID", "gs-eu-mtls")
        .env("GAME_SERVER_REGION", "eu")
        .env("GAME_SERVER_MODES", "rush")
        .env("GAME_SERVER_TOKEN", EU)
        .env("GAME_SERVER_TLS_CA", &ca)
        .env("GAME_SERVER_TLS_CERT", &client_cert)
        .env("GAME_SERVER_TLS_KEY", &client_key)
        .env("MATCH_DURATION", "100ms");
    let gs = Proc::spawn("gs-eu-mtls", cmd, d.logs.path());
    let (a, b) = (d.client("ta"), d.client("tb"));
    queue_rush(&[&a, &b]).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while !gs.log().contains("\"reported\":true") {
        assert!(
            Instant::now() < deadline,
            "no match played over mutual TLS:\n{}",
            gs.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
