//! Backfill through real processes (issue 34): a 2v2 on the example game
//! server; a trusted backend opens a seat over HTTP; the next player queued
//! fills it, is told the same server, and appears in the running match; the
//! filler ends with the match and its result. The endpoints refuse players,
//! bad seats and unknown matches with JSON errors. Embedded and on Redis.
//! Then the game server's own calls over gRPC, in a `backfill = "auto"` mode:
//! seats opened, changed and closed, a player leaving opens one, the filler
//! shows in the server's heartbeat. (Another server's credential on these
//! calls: `fleet_auth`.)

use crate::fleet_auth::client;
use crate::lifecycle::game_server;
use crate::{Deployment, Socket};
use mm_proto::v1 as pb;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tonic::Code;

const SERVICE: &str = "service:backend";

/// Queues `player` alone in mode `fill`.
async fn queue(d: &Deployment, player: &str) {
    queue_in(d, "fill", player).await;
}

async fn queue_in(d: &Deployment, mode: &str, player: &str) {
    let (status, t) = d
        .client(player)
        .send(
            Method::POST,
            "/v1/tickets",
            Some(json!({"mode": mode, "players": [player], "rating": 1500, "regions": ["eu"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
}

async fn fills_a_seat(d: &Deployment, tag: &str) {
    let _gs = game_server(d, &format!("gs-bf-{tag}"), "6s").await;
    let players: Vec<String> = (1..=4).map(|i| format!("{tag}p{i}")).collect();
    let mut sockets: Vec<Socket> = Vec::new();
    for p in &players {
        sockets.push(d.socket(p).await);
        queue(d, p).await;
    }
    let assigned = sockets[0]
        .wait_for("match.assigned", Duration::from_secs(15))
        .await;
    let mid = assigned["match_id"].as_str().unwrap().to_string();
    let address = assigned["server"]["address"].clone();
    let path = format!("/v1/matches/{mid}/backfill");
    let service = d.client(SERVICE);

    // Only a trusted backend; sensible seats; a match that exists.
    let (status, err) = d
        .client(&players[0])
        .send(Method::POST, &path, Some(json!({"open": [1, 0]})))
        .await;
    assert_eq!(
        (status, err["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden")),
        "{err}"
    );
    for (body, code) in [
        (json!({"open": []}), "invalid_seats"),
        (json!({"open": [1, 0, 0]}), "invalid_seats"),
        (json!({"open": [3, 0]}), "invalid_seats"),
        (json!({"seats": [1]}), "invalid_request"),
    ] {
        let (status, err) = service.send(Method::POST, &path, Some(body.clone())).await;
        assert_eq!(status.as_u16() / 100, 4, "{body}: {err}");
        assert_eq!(err["error"]["code"], code, "{body}: {err}");
    }
    let (status, err) = service
        .send(
            Method::POST,
            "/v1/matches/m-nosuchmatch/backfill",
            Some(json!({"open": [1, 0]})),
        )
        .await;
    assert_eq!(
        (status, err["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("match_not_found"))
    );
    let (status, err) = service.get(&path).await;
    assert_eq!(
        (status, err["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("backfill_not_found"))
    );

    // Open one seat on team 0; the next player fills it.
    let (status, b) = service
        .send(Method::POST, &path, Some(json!({"open": [1, 0]})))
        .await;
    assert_eq!(status, StatusCode::OK, "{b}");
    assert_eq!(
        (b["open"].clone(), b["generation"].as_u64()),
        (json!([1, 0]), Some(1))
    );
    let filler = format!("{tag}p5");
    let mut ws = d.socket(&filler).await;
    queue(d, &filler).await;
    let joined = ws.wait_for("match.assigned", Duration::from_secs(10)).await;
    assert_eq!(joined["server"]["address"], address, "{joined}");
    assert_eq!(joined["match"]["backfill"]["match_id"], mid, "{joined}");
    assert_eq!(joined["match"]["tickets"][0]["team"], 0, "{joined}");
    // The running match now has the filler on team 0; the seat is taken.
    let (status, m) = d
        .client(&players[0])
        .get(&format!("/v1/matches/{mid}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    let tickets = m["match"]["tickets"].as_array().unwrap();
    assert_eq!(tickets.len(), 5, "{m}");
    let added: Vec<&Value> = tickets
        .iter()
        .filter(|t| t["players"][0] == filler.as_str())
        .collect();
    assert_eq!(added.len(), 1, "{m}");
    assert_eq!(added[0]["team"], 0);
    assert_eq!(m["fills"][0], joined["match_id"], "{m}");
    let (status, b) = service.get(&path).await;
    assert_eq!(status, StatusCode::OK, "{b}");
    assert_eq!(
        (b["open"].clone(), b["generation"].as_u64()),
        (json!([0, 0]), Some(2))
    );
    let (status, a) = d.client(&filler).get("/v1/players/me/assignment").await;
    assert_eq!(status, StatusCode::OK, "{a}");
    assert_eq!(a["server"]["address"], address, "{a}");
    // Closed by the backend: gone.
    let (status, _) = service.send(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = service.get(&path).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The match ends: the filler's match ends with it, with its result.
    let done = ws
        .wait_for("match.completed", Duration::from_secs(20))
        .await;
    assert_eq!(
        done["result"]["teams"].as_array().map(Vec::len),
        Some(2),
        "{done}"
    );
    sockets[0]
        .wait_for("match.completed", Duration::from_secs(5))
        .await;
    let (status, _) = d.client(&filler).get("/v1/players/me/assignment").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Free to queue again.
    let (status, t) = d.client(&filler).create(1500.0).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_is_filled_embedded() {
    fills_a_seat(&Deployment::embedded().await, "e").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_is_filled_redis_processes() {
    fills_a_seat(&Deployment::redis_processes().await, "r").await;
}

fn seats(server: &str, mid: &str, open: &[u32]) -> pb::OpenBackfillRequest {
    pb::OpenBackfillRequest {
        server_id: server.into(),
        match_id: mid.into(),
        open: open.to_vec(),
    }
}

/// The allocation of the first match placed on `server`, from its heartbeats.
async fn placed(c: &mut mm_proto::Client, server: &str) -> pb::Allocation {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let beat = c
            .heartbeat(pb::HeartbeatRequest {
                server_id: server.into(),
            })
            .await
            .unwrap()
            .into_inner();
        if let Some(a) = beat.allocations.into_iter().next() {
            return a;
        }
        assert!(Instant::now() < deadline, "no match was placed on {server}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_server_manages_its_backfill_over_grpc() {
    let d = Deployment::embedded().await;
    let mut gs = client(&d, None).await;
    let server = "gs-grpc-bf";
    gs.register(pb::RegisterRequest {
        server_id: server.into(),
        region: "eu".into(),
        modes: vec!["refill".into()],
        capacity: 2,
        address: "10.9.9.9:7777".into(),
    })
    .await
    .unwrap();
    for p in ["g1", "g2", "g3", "g4"] {
        queue_in(&d, "refill", p).await;
    }
    let a = placed(&mut gs, server).await;
    let mid = a.match_id.clone();
    assert!(a.filled.is_empty());

    // Seats the mode cannot have; then open, change, read back.
    let err = gs
        .open_backfill(seats(server, &mid, &[3, 0]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    let b = gs
        .open_backfill(seats(server, &mid, &[1, 0]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((b.open.clone(), b.generation), (vec![1, 0], 1));
    let b = gs
        .update_backfill(seats(server, &mid, &[0, 0]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((b.open.clone(), b.generation), (vec![0, 0], 2));

    // A player leaves: in an auto mode, a seat opens on their team.
    let leaver = a.teams[1].player_ids[0].clone();
    let left = gs
        .player_left(pb::PlayerLeftRequest {
            server_id: server.into(),
            match_id: mid.clone(),
            player_id: leaver.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(left.seat_opened);
    let b = left.backfill.unwrap();
    assert_eq!((b.open, b.generation), (vec![0, 1], 3));
    let err = gs
        .player_left(pb::PlayerLeftRequest {
            server_id: server.into(),
            match_id: mid.clone(),
            player_id: "nobody-here".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    // The next player fills it; the server's heartbeat names them.
    let mut ws = d.socket("g5").await;
    queue_in(&d, "refill", "g5").await;
    let joined = ws.wait_for("match.assigned", Duration::from_secs(10)).await;
    assert_eq!(joined["server"]["address"], "10.9.9.9:7777", "{joined}");
    let beat = gs
        .heartbeat(pb::HeartbeatRequest {
            server_id: server.into(),
        })
        .await
        .unwrap()
        .into_inner();
    let a = beat.allocations.iter().find(|x| x.match_id == mid).unwrap();
    assert_eq!(a.filled.len(), 1, "{a:?}");
    assert_eq!(
        (a.filled[0].player_id.as_str(), a.filled[0].team),
        ("g5", 1)
    );
    assert_eq!(a.filled[0].fill_id, joined["match_id"].as_str().unwrap());

    // Closed: no update until it is opened again.
    gs.close_backfill(pb::CloseBackfillRequest {
        server_id: server.into(),
        match_id: mid.clone(),
    })
    .await
    .unwrap();
    let err = gs
        .update_backfill(seats(server, &mid, &[1, 0]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");
}
