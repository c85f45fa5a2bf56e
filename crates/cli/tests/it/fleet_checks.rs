//! What a game server may report and touch, against a real `serve`: a result that
//! cannot be the match's (a team twice or missing, two winners, a winning team
//! whose players are reported winning on the other side, an empty result,
//! players or abandoners not in the match) is `INVALID_ARGUMENT` naming the
//! problem and changes nothing; `ReportResult` and `Release` of a match that is
//! not on the calling server answer `PERMISSION_DENIED` whether the match exists
//! (still in its ready check) or not; an `Allocate` whose id equals a live match's
//! id gets a slot of its own, never that match's server.

use crate::Deployment;
use crate::lifecycle::pair;
use mm_proto::Client;
use mm_proto::v1 as pb;
use reqwest::StatusCode;
use std::time::{Duration, Instant};
use tonic::Code;

/// A gRPC client of the dev-mode (open) control plane.
async fn client(d: &Deployment) -> Client {
    crate::fleet_auth::client(d, None).await
}

/// Registers `server` for `modes` in eu with room for `capacity` matches.
async fn register(c: &mut Client, server: &str, modes: &[&str], capacity: u32) {
    c.register(pb::RegisterRequest {
        server_id: server.into(),
        region: "eu".into(),
        modes: modes.iter().map(|m| m.to_string()).collect(),
        capacity,
        address: format!("{server}.example:7777"),
    })
    .await
    .expect("register");
}

/// The match allocated to `server`, once it is.
async fn placed(c: &mut Client, server: &str) -> pb::Allocation {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let beat = c
            .heartbeat(pb::HeartbeatRequest {
                server_id: server.into(),
            })
            .await
            .unwrap()
            .into_inner();
        if let Some(a) = beat
            .allocations
            .into_iter()
            .find(|a| !a.match_id.is_empty())
        {
            return a;
        }
        assert!(Instant::now() < deadline, "no match placed on {server}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn team(team: u32, outcome: pb::Outcome) -> pb::TeamResult {
    pb::TeamResult {
        team,
        outcome: outcome as i32,
        placement: 0,
    }
}

fn player(id: &str, outcome: pb::Outcome) -> pb::PlayerResult {
    pb::PlayerResult {
        player_id: id.into(),
        outcome: outcome as i32,
        placement: 0,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn results_that_cannot_be_the_matchs_are_refused_and_change_nothing() {
    use pb::Outcome::{Draw, Loss, Win};
    let d = Deployment::embedded().await;
    let mut gs = client(&d).await;
    register(&mut gs, "gs-check", &["rush"], 2).await;
    let (_wa, _wb, _) = pair(&d, "rush", "ra", "rb", "match.assigned").await;
    let a = placed(&mut gs, "gs-check").await;
    let mid = a.match_id.clone();
    let who = |team: usize| a.teams[team].player_ids[0].clone();
    let report =
        |teams: Vec<pb::TeamResult>, players: Vec<pb::PlayerResult>, abandoned: Vec<String>| {
            pb::ReportResultRequest {
                server_id: "gs-check".into(),
                match_id: mid.clone(),
                teams,
                players,
                abandoned,
            }
        };
    let bad = [
        (
            report(vec![team(0, Win), team(0, Loss)], vec![], vec![]),
            "team 0 is reported twice",
        ),
        (
            report(vec![team(0, Win), team(1, Win)], vec![], vec![]),
            "WIN and WIN are inconsistent",
        ),
        (
            report(
                vec![team(0, Win), team(1, Loss)],
                vec![player(&who(1), Win)],
                vec![],
            ),
            "is reported WIN but their team 1 LOSS",
        ),
        (report(vec![], vec![], vec![]), "the result is empty"),
        (
            report(vec![team(0, Win)], vec![], vec![]),
            "team 1 of the match is not reported",
        ),
        (
            report(vec![team(0, Win), team(1, Draw)], vec![], vec![]),
            "inconsistent",
        ),
        (
            report(
                vec![team(0, Win), team(1, Loss)],
                vec![player("someone-else", Win)],
                vec![],
            ),
            "player someone-else is not in the match",
        ),
        (
            report(
                vec![team(0, Win), team(1, Loss)],
                vec![],
                vec!["someone-else".into()],
            ),
            "abandoning player someone-else is not in the match",
        ),
        (
            report(vec![team(0, Win), team(3, Loss)], vec![], vec![]),
            "team 3 is not in the match",
        ),
    ];
    for (request, says) in bad {
        let err = gs.report_result(request.clone()).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{request:?}: {err:?}");
        assert!(
            err.message().contains(says),
            "{:?} should say {says:?}",
            err.message()
        );
    }
    // Nothing was recorded or rated: the match is still assigned.
    let (s, m) = d.client("ra").get(&format!("/v1/matches/{mid}")).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    assert_eq!(m["status"], "assigned", "{m}");
    assert!(m.get("result").is_none_or(|r| r.is_null()), "{m}");
    // A draw for both teams is a result.
    let ok = gs
        .report_result(report(vec![team(0, Draw), team(1, Draw)], vec![], vec![]))
        .await
        .expect("a draw is a result")
        .into_inner();
    assert!(ok.recorded);
    let (_, m) = d.client("ra").get(&format!("/v1/matches/{mid}")).await;
    assert_eq!(m["status"], "completed", "{m}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_match_not_on_the_server_is_permission_denied_whether_or_not_it_exists() {
    let d = Deployment::embedded().await;
    let mut gs = client(&d).await;
    register(&mut gs, "gs-rc", &["duel"], 1).await;
    // A match in its ready check: it exists, but is on no server yet.
    let (_wa, _wb, ev) = pair(&d, "duel", "da", "db", "match.ready_check").await;
    let live = ev["match_id"].as_str().unwrap().to_string();
    let mut answers = Vec::new();
    for mid in [live.as_str(), "m-0000000000000000000000000000000", "m-nope"] {
        let reported = gs
            .report_result(pb::ReportResultRequest {
                server_id: "gs-rc".into(),
                match_id: mid.into(),
                teams: vec![team(0, pb::Outcome::Win), team(1, pb::Outcome::Loss)],
                ..Default::default()
            })
            .await
            .unwrap_err();
        let released = gs
            .release(pb::ReleaseRequest {
                server_id: "gs-rc".into(),
                match_id: mid.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        for e in [&reported, &released] {
            assert_eq!(e.code(), Code::PermissionDenied, "{mid}: {e:?}");
            answers.push(e.message().replace(mid, "ID"));
        }
    }
    // The same words whether the match exists or not.
    answers.sort();
    answers.dedup();
    assert_eq!(answers.len(), 1, "{answers:?}");
    // The ready check is untouched.
    let (_, m) = d.client("da").get(&format!("/v1/matches/{live}")).await;
    assert_eq!(m["status"], "requires_acceptance", "{m}");
}

#[tokio::test(flavor = "multi_thread")]
async fn allocation_ids_never_name_a_match() {
    let d = Deployment::embedded().await;
    let mut gs = client(&d).await;
    // One slot: the match takes it.
    register(&mut gs, "gs-one", &["rush"], 1).await;
    let (_wa, _wb, _) = pair(&d, "rush", "xa", "xb", "match.assigned").await;
    let a = placed(&mut gs, "gs-one").await;
    // An allocation named like the match gets no slot (the server is full), not
    // the match's server.
    let err = gs
        .allocate(pb::AllocateRequest {
            region: "eu".into(),
            mode: "rush".into(),
            allocation_id: a.match_id.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    // With a second server it gets a slot there, under its own name.
    register(&mut gs, "gs-two", &["rush"], 1).await;
    let got = gs
        .allocate(pb::AllocateRequest {
            region: "eu".into(),
            mode: "rush".into(),
            allocation_id: a.match_id.clone(),
        })
        .await
        .expect("a slot on the free server")
        .into_inner();
    assert_eq!(got.server_id, "gs-two");
    let beat = gs
        .heartbeat(pb::HeartbeatRequest {
            server_id: "gs-two".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(beat.allocations.len(), 1);
    assert_eq!(beat.allocations[0].allocation_id, a.match_id);
    assert_eq!(beat.allocations[0].match_id, "");
    // Released by its allocation id; the match keeps its own slot.
    gs.release(pb::ReleaseRequest {
        server_id: "gs-two".into(),
        allocation_id: a.match_id.clone(),
        ..Default::default()
    })
    .await
    .expect("release the outside allocation");
    let err = gs
        .release(pb::ReleaseRequest {
            server_id: "gs-two".into(),
            allocation_id: a.match_id.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Code::PermissionDenied,
        "released twice: {err:?}"
    );
    let (_, m) = d
        .client("xa")
        .get(&format!("/v1/matches/{}", a.match_id))
        .await;
    assert_eq!(m["status"], "assigned", "{m}");
    assert_eq!(m["server"]["server_id"], "gs-one", "{m}");
}
