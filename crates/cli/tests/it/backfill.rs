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

/// A running match's seat is not filled by a player one of its players
/// blocked, nor by one who blocked one of them, in a mode without rules: the
/// third to queue, blocking nobody, takes it, and the two wait on.
async fn a_blocked_player_does_not_fill(d: &Deployment, tag: &str) {
    let _gs = game_server(d, &format!("gs-bb-{tag}"), "30s").await;
    let players: Vec<String> = (1..=4).map(|i| format!("{tag}b{i}")).collect();
    let mut first = d.socket(&players[0]).await;
    for p in &players {
        queue(d, p).await;
    }
    let assigned = first
        .wait_for("match.assigned", Duration::from_secs(15))
        .await;
    let mid = assigned["match_id"].as_str().unwrap().to_string();
    // One of the match's players blocks a stranger; another stranger blocks
    // one of the match's players.
    let (blocked, blocker, free) = (format!("{tag}bx"), format!("{tag}by"), format!("{tag}bz"));
    for (who, whom) in [(&players[0], &blocked), (&blocker, &players[3])] {
        let (status, b) = d
            .client(who)
            .send(Method::PUT, &format!("/v1/players/me/blocks/{whom}"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{b}");
    }
    let path = format!("/v1/matches/{mid}/backfill");
    let (status, b) = d
        .client(SERVICE)
        .send(Method::POST, &path, Some(json!({"open": [1, 1]})))
        .await;
    assert_eq!(status, StatusCode::OK, "{b}");
    // The two queue first; either would take a seat if the blocks were
    // ignored (three players make no 2v2 of their own).
    for p in [&blocked, &blocker] {
        queue(d, p).await;
    }
    let mut ws = d.socket(&free).await;
    queue(d, &free).await;
    let joined = ws.wait_for("match.assigned", Duration::from_secs(10)).await;
    assert_eq!(joined["match"]["backfill"]["match_id"], mid, "{joined}");
    // A second seat is still open, and the two still wait for it.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for p in [&blocked, &blocker] {
        let (status, v) = d.client(p).get("/v1/players/me/assignment").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{p}: {v}");
    }
    let (status, m) = d
        .client(&players[0])
        .get(&format!("/v1/matches/{mid}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    let in_it: Vec<&str> = m["match"]["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["players"].as_array().unwrap().iter())
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !in_it.contains(&blocked.as_str()) && !in_it.contains(&blocker.as_str()),
        "{m}"
    );
    assert!(in_it.contains(&free.as_str()), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_player_does_not_fill_embedded() {
    a_blocked_player_does_not_fill(&Deployment::embedded().await, "e").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_player_does_not_fill_redis_processes() {
    a_blocked_player_does_not_fill(&Deployment::redis_processes().await, "r").await;
}

fn ack(server: &str, mid: &str, fill: &str, accept: bool) -> pb::AckBackfillRequest {
    pb::AckBackfillRequest {
        server_id: server.into(),
        match_id: mid.into(),
        fill_id: fill.into(),
        accept,
    }
}

fn seats(server: &str, mid: &str, open: &[u32]) -> pb::OpenBackfillRequest {
    pb::OpenBackfillRequest {
        server_id: server.into(),
        match_id: mid.into(),
        open: open.to_vec(),
    }
}

/// Registers game server `server` for mode `refill` through `gs`, and keeps
/// it alive with a heartbeat every 200 ms until the task is aborted (the
/// tests' own heartbeats are too rare).
async fn serve_refill(
    gs: &mut mm_proto::Client,
    server: &str,
    address: &str,
) -> tokio::task::JoinHandle<()> {
    gs.register(pb::RegisterRequest {
        server_id: server.into(),
        region: "eu".into(),
        modes: vec!["refill".into()],
        capacity: 2,
        address: address.into(),
    })
    .await
    .unwrap();
    let mut beats = gs.clone();
    let server = server.to_string();
    tokio::spawn(async move {
        loop {
            let _ = beats
                .heartbeat(pb::HeartbeatRequest {
                    server_id: server.clone(),
                })
                .await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
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
    let alive = serve_refill(&mut gs, server, "10.9.9.9:7777").await;
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
    let (_, m) = d.client("g1").get(&format!("/v1/matches/{mid}")).await;
    assert!(
        m["left"][leaver.as_str()].is_u64(),
        "the leaver is recorded: {m}"
    );
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
    let fill = a.filled[0].fill_id.clone();
    gs.ack_backfill(ack(server, &mid, &fill, true))
        .await
        .unwrap();
    let (_, f) = d.client("g5").get(&format!("/v1/matches/{fill}")).await;
    assert_eq!(f["joined"]["acknowledged"], true, "{f}");
    assert_eq!(f["joined"]["notified"], true, "{f}");
    // Acknowledged twice: fine. Refused after that: too late.
    gs.ack_backfill(ack(server, &mid, &fill, true))
        .await
        .unwrap();
    let err = gs
        .ack_backfill(ack(server, &mid, &fill, false))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");

    // A seat the server refuses: the filler goes back to the queue with
    // their wait, and is not in the match.
    gs.open_backfill(seats(server, &mid, &[1, 0]))
        .await
        .unwrap();
    let mut w6 = d.socket("g6").await;
    queue_in(&d, "refill", "g6").await;
    let j6 = w6.wait_for("match.assigned", Duration::from_secs(10)).await;
    let ticket6 = j6["ticket_id"].as_str().unwrap().to_string();
    let (_, before) = d.client("g6").get(&format!("/v1/tickets/{ticket6}")).await;
    let fill6 = j6["match_id"].as_str().unwrap().to_string();
    gs.ack_backfill(ack(server, &mid, &fill6, false))
        .await
        .unwrap();
    let failed = w6.wait_for("match.failed", Duration::from_secs(5)).await;
    assert_eq!(
        (failed["reason"].as_str(), failed["requeued"].as_bool()),
        (Some("backfill_refused"), Some(true)),
        "{failed}"
    );
    let (_, after) = d.client("g6").get(&format!("/v1/tickets/{ticket6}")).await;
    assert_eq!(after["enqueued_at"], before["enqueued_at"], "{after}");
    assert_ne!(after["status"], "matched", "{after}");
    let (_, m) = d.client("g1").get(&format!("/v1/matches/{mid}")).await;
    let names: Vec<&str> = m["match"]["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["players"][0].as_str())
        .collect();
    assert!(!names.contains(&"g6") && names.contains(&"g5"), "{m}");
    let (_, c) = d
        .client("g6")
        .delete(&format!("/v1/tickets/{ticket6}"))
        .await;
    assert_eq!(c["status"], "cancelled", "{c}");

    // A filler the server never acknowledges goes back after the mode's
    // placement timeout (2 s here).
    gs.open_backfill(seats(server, &mid, &[1, 0]))
        .await
        .unwrap();
    let mut w7 = d.socket("g7").await;
    queue_in(&d, "refill", "g7").await;
    w7.wait_for("match.assigned", Duration::from_secs(10)).await;
    let failed = w7.wait_for("match.failed", Duration::from_secs(10)).await;
    assert_eq!(
        (failed["reason"].as_str(), failed["requeued"].as_bool()),
        (Some("backfill_unacknowledged"), Some(true)),
        "{failed}"
    );
    alive.abort();

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

/// The example game server with players leaving (`LEAVE_RATE`) in an auto
/// mode: seats open as they leave, waiting players fill them, the server
/// acknowledges them and reports a result for everyone, the leavers as
/// abandoned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_game_server_refills_its_matches() {
    let d = Deployment::embedded().await;
    let mut cmd = std::process::Command::new(crate::BIN);
    cmd.arg("example-game-server")
        .env("SERVER_MANAGER_URL", &d.grpc)
        .env("GAME_SERVER_ID", "gs-leavers")
        .env("GAME_SERVER_REGION", "eu")
        .env("GAME_SERVER_MODES", "refill")
        .env("GAME_SERVER_CAPACITY", "1")
        .env("GAME_SERVER_ADDRESS", "10.7.7.7:7777")
        .env("MATCH_DURATION", "8s")
        // About 12 leaves in a match: at least two (one per waiting player)
        // all but surely.
        .env("LEAVE_RATE", "90");
    let gs = mm_testkit::Proc::spawn("gs-leavers", cmd, d.logs.path());
    for p in ["l1", "l2", "l3", "l4"] {
        queue_in(&d, "refill", p).await;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while !gs.log().contains("match_started") {
        assert!(Instant::now() < deadline, "{}", gs.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Two players wait to fill seats (too few for a match of their own).
    let mut fillers = Vec::new();
    for p in ["l5", "l6"] {
        fillers.push(d.socket(p).await);
        queue_in(&d, "refill", p).await;
    }
    for ws in &mut fillers {
        let joined = ws.wait_for("match.assigned", Duration::from_secs(20)).await;
        assert_eq!(joined["server"]["address"], "10.7.7.7:7777", "{joined}");
        let done = ws
            .wait_for("match.completed", Duration::from_secs(20))
            .await;
        assert!(done["result"]["teams"].is_array(), "{done}");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gs.log().contains("match_finished") {
        assert!(Instant::now() < deadline, "{}", gs.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = gs.log();
    assert!(log.contains("\"backfill_joined\""), "{log}");
    assert!(log.contains("\"acknowledged\":true"), "{log}");
    let finished: Value = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == "match_finished")
        .unwrap();
    assert_eq!(finished["reported"], true, "{finished}");
    assert!(finished["players"].as_u64().unwrap() >= 6, "{finished}");
    assert!(finished["left"].as_u64().unwrap() >= 2, "{finished}");
}

/// Waits until `p` has stopped at its saga failpoint `n` times.
async fn paused_times(p: &mm_testkit::Proc, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.log().matches("saga paused for good").count() < n {
        assert!(
            Instant::now() < deadline,
            "failpoint not reached {n} times:\n{}",
            p.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// SIGKILL of the worker right after it committed a fill, and right after the
/// fill joined its match: the supervisor finishes the fill's saga, the filler
/// is told the server once, joins the running match once, and the game server
/// acknowledges them. Nobody is lost or placed twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_mid_fill_loses_nobody() {
    for step in ["commit", "join"] {
        let failpoint = format!("saga-pause-after-{step}");
        let mut d = Deployment::redis_processes_with(&[("MATCHMAKER_FAILPOINT", &failpoint)]).await;
        let gs = game_server(&d, &format!("gs-kill-{step}"), "60s").await;
        let players: Vec<String> = (1..=4).map(|i| format!("k{step}{i}")).collect();
        let mut first = d.socket(&players[0]).await;
        for p in &players {
            queue(&d, p).await;
        }
        // With `commit`, the worker also stops on the running match's saga;
        // the supervisor places it.
        let assigned = first
            .wait_for("match.assigned", Duration::from_secs(20))
            .await;
        let mid = assigned["match_id"].as_str().unwrap().to_string();
        let (status, b) = d
            .client(SERVICE)
            .send(
                Method::POST,
                &format!("/v1/matches/{mid}/backfill"),
                Some(json!({"open": [1, 0]})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{b}");
        let filler = format!("k{step}f");
        let mut ws = d.socket(&filler).await;
        queue(&d, &filler).await;
        let worker = d.proc("worker");
        paused_times(worker, if step == "commit" { 2 } else { 1 }).await;
        worker.kill();
        let joined = ws.wait_for("match.assigned", Duration::from_secs(15)).await;
        assert_eq!(joined["match"]["backfill"]["match_id"], mid, "{joined}");
        // Told once: no second assignment follows.
        let again = ws.next_event(Duration::from_millis(500)).await;
        assert!(
            again.as_ref().is_none_or(|e| e["type"] != "match.assigned"),
            "{again:?}"
        );
        let (_, m) = d
            .client(&players[0])
            .get(&format!("/v1/matches/{mid}"))
            .await;
        let tickets = m["match"]["tickets"].as_array().unwrap();
        assert_eq!(tickets.len(), 5, "{m}");
        assert_eq!(m["fills"].as_array().map(Vec::len), Some(1), "{m}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !gs.log().contains("\"acknowledged\":true") {
            assert!(Instant::now() < deadline, "{}", gs.log());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            gs.log().matches("backfill_joined").count(),
            1,
            "{}",
            gs.log()
        );
    }
}

/// A mode with a ready check: the filler gets one of their own
/// (`backfill_ready_check` defaults to the mode's), and joins once they accept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filler_accepts_a_ready_check_first() {
    let d = Deployment::embedded().await;
    let _gs = game_server(&d, "gs-bf-check", "30s").await;
    let (mut wa, mut wb) = (d.socket("ca").await, d.socket("cb").await);
    for p in ["ca", "cb"] {
        queue_in(&d, "fillcheck", p).await;
    }
    for (p, w) in [("ca", &mut wa), ("cb", &mut wb)] {
        let rc = w
            .wait_for("match.ready_check", Duration::from_secs(10))
            .await;
        let (status, m) = d
            .client(p)
            .send(
                Method::POST,
                &format!("/v1/matches/{}/accept", rc["match_id"].as_str().unwrap()),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{m}");
    }
    let assigned = wa.wait_for("match.assigned", Duration::from_secs(10)).await;
    let mid = assigned["match_id"].as_str().unwrap().to_string();
    let (status, b) = d
        .client(SERVICE)
        .send(
            Method::POST,
            &format!("/v1/matches/{mid}/backfill"),
            Some(json!({"open": [0, 1]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{b}");
    let mut wc = d.socket("cc").await;
    queue_in(&d, "fillcheck", "cc").await;
    let rc = wc
        .wait_for("match.ready_check", Duration::from_secs(10))
        .await;
    assert_eq!(rc["match"]["backfill"]["match_id"], mid, "{rc}");
    let fill = rc["match_id"].as_str().unwrap().to_string();
    let (_, m) = d.client("ca").get(&format!("/v1/matches/{mid}")).await;
    assert_eq!(
        m["match"]["tickets"].as_array().unwrap().len(),
        2,
        "not before the accept: {m}"
    );
    let (status, m) = d
        .client("cc")
        .send(Method::POST, &format!("/v1/matches/{fill}/accept"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    let joined = wc.wait_for("match.assigned", Duration::from_secs(10)).await;
    assert_eq!(joined["match_id"], fill.as_str());
    let (_, m) = d.client("ca").get(&format!("/v1/matches/{mid}")).await;
    let tickets = m["match"]["tickets"].as_array().unwrap();
    assert_eq!(tickets.len(), 3, "{m}");
    assert_eq!(tickets[2]["team"], 1, "{m}");
}

/// SIGKILL of the server manager and of the supervisor mid-fill, each started
/// again: a game server heartbeating through the restart keeps its match; a
/// seat opened after it fills; a filler never acknowledged is sent back to the
/// queue by the new supervisor, with their wait; one acknowledged through the
/// new server manager stays. Nobody is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_supervisor_and_server_manager_mid_fill_lose_nobody() {
    let mut d = Deployment::redis_processes_env(&[("*", "SERVER_HEARTBEAT_TIMEOUT", "5s")]).await;
    let mut gs = client(&d, None).await;
    let server = "gs-kill-sm";
    let alive = serve_refill(&mut gs, server, "10.8.8.8:7777").await;
    for p in ["s1", "s2", "s3", "s4"] {
        queue_in(&d, "refill", p).await;
    }
    let a = placed(&mut gs, server).await;
    let mid = a.match_id.clone();

    // The server manager dies and comes back on the same port.
    d.proc("server-manager").kill();
    d.respawn("server-manager", &[("SERVER_HEARTBEAT_TIMEOUT", "5s")])
        .await;
    let mut gs = client(&d, None).await;
    let left = gs
        .player_left(pb::PlayerLeftRequest {
            server_id: server.into(),
            match_id: mid.clone(),
            player_id: a.teams[0].player_ids[0].clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(left.seat_opened);

    // A filler; the supervisor dies and comes back; nobody acknowledges the
    // filler, so the new supervisor sends them back after 2 s.
    let mut w5 = d.socket("s5").await;
    queue_in(&d, "refill", "s5").await;
    let j5 = w5.wait_for("match.assigned", Duration::from_secs(10)).await;
    let ticket5 = j5["ticket_id"].as_str().unwrap().to_string();
    let (_, before) = d.client("s5").get(&format!("/v1/tickets/{ticket5}")).await;
    d.proc("supervisor").kill();
    d.respawn("supervisor", &[("SERVER_HEARTBEAT_TIMEOUT", "5s")])
        .await;
    let failed = w5.wait_for("match.failed", Duration::from_secs(15)).await;
    assert_eq!(
        (failed["reason"].as_str(), failed["requeued"].as_bool()),
        (Some("backfill_unacknowledged"), Some(true)),
        "{failed}"
    );
    let (_, after) = d.client("s5").get(&format!("/v1/tickets/{ticket5}")).await;
    assert_eq!(after["enqueued_at"], before["enqueued_at"], "{after}");
    // Back in the queue, so it fills the seat again (given back: the seat
    // stays closed after an unacknowledged fill, so the server opens it).
    gs.open_backfill(seats(server, &mid, &[1, 0]))
        .await
        .unwrap();
    let again = w5.wait_for("match.assigned", Duration::from_secs(10)).await;
    let fill = again["match_id"].as_str().unwrap().to_string();
    gs.ack_backfill(ack(server, &mid, &fill, true))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (_, m) = d.client("s1").get(&format!("/v1/matches/{mid}")).await;
    assert_eq!(m["status"], "assigned", "{m}");
    let names: Vec<&str> = m["match"]["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["players"][0].as_str())
        .collect();
    assert_eq!(names.iter().filter(|n| **n == "s5").count(), 1, "{m}");
    assert_eq!(names.len(), 5, "{m}");
    alive.abort();
}
