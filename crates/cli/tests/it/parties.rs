//! Parties by invitation through a real `serve` and through Redis processes: no
//! one can be queued without joining the caller's party; invites, joins, leaves,
//! kicks and disbanding with their events; only the leader queues; a member
//! leaving cancels the party's ticket; the size cap; one party per player.

use crate::{Deployment, Socket};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

async fn post(d: &Deployment, who: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    d.client(who).send(Method::POST, path, body).await
}

fn ticket(players: &[&str]) -> Value {
    json!({"mode": "5v5", "players": players, "rating": 1500, "regions": ["eu"]})
}

async fn party_event(ws: &mut Socket, kind: &str, change: Option<&str>) -> Value {
    loop {
        let e = ws
            .next_event(WAIT)
            .await
            .unwrap_or_else(|| panic!("no {kind} {change:?}"));
        if e["type"] == kind && change.is_none_or(|c| e["change"] == c) {
            return e;
        }
    }
}

async fn parties_form_by_invitation_and_only_the_leader_queues(d: &Deployment) {
    let (mut alice_ws, mut bob_ws) = (d.socket("pa-alice").await, d.socket("pa-bob").await);
    // Without a party nobody can be queued along with the caller, and the
    // would-be victim is free to queue on their own.
    let (s, body) = post(
        d,
        "pa-alice",
        "/v1/tickets",
        Some(ticket(&["pa-alice", "pa-bob"])),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "not_in_party");
    let (s, body) = d.client("pa-bob").get("/v1/players/me/matches").await;
    assert_eq!(s, StatusCode::OK, "{body}");

    let (s, party) = post(d, "pa-alice", "/v1/parties", None).await;
    assert_eq!(s, StatusCode::CREATED, "{party}");
    let id = party["id"].as_str().unwrap().to_string();
    assert_eq!(party["leader"], "pa-alice");
    assert_eq!(party["members"], json!(["pa-alice"]));
    // Still not without bob's consent.
    let (s, body) = post(
        d,
        "pa-alice",
        "/v1/tickets",
        Some(ticket(&["pa-alice", "pa-bob"])),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "not_party_member");
    // A stranger cannot see, join or edit the party.
    let (s, _) = d
        .client("pa-mallory")
        .get(&format!("/v1/parties/{id}"))
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = post(d, "pa-mallory", &format!("/v1/parties/{id}/join"), None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = post(
        d,
        "pa-mallory",
        &format!("/v1/parties/{id}/invites"),
        Some(json!({"player_id": "pa-mallory"})),
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    let (s, body) = post(
        d,
        "pa-alice",
        &format!("/v1/parties/{id}/invites"),
        Some(json!({"player_id": "pa-bob"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let invited = party_event(&mut bob_ws, "party.invited", None).await;
    assert_eq!(invited["party"]["id"], id.as_str());
    assert_eq!(invited["by"], "pa-alice");
    let (s, body) = d.client("pa-bob").get(&format!("/v1/parties/{id}")).await;
    assert_eq!(s, StatusCode::OK, "an invitee sees the party: {body}");
    let (s, body) = post(d, "pa-bob", &format!("/v1/parties/{id}/join"), None).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["members"], json!(["pa-alice", "pa-bob"]));
    let joined = party_event(&mut alice_ws, "party.updated", Some("joined")).await;
    assert_eq!(joined["player_id"], "pa-bob");
    let (_, mine) = d.client("pa-bob").get("/v1/players/me/party").await;
    assert_eq!(mine["id"], id.as_str());

    // Only the leader invites and queues.
    let (s, body) = post(
        d,
        "pa-bob",
        &format!("/v1/parties/{id}/invites"),
        Some(json!({"player_id": "pa-carl"})),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "not_party_leader");
    let (s, body) = post(
        d,
        "pa-bob",
        "/v1/tickets",
        Some(ticket(&["pa-bob", "pa-alice"])),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "not_party_leader");
    let (s, t) = post(
        d,
        "pa-alice",
        "/v1/tickets",
        Some(ticket(&["pa-alice", "pa-bob"])),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    let tid = t["id"].as_str().unwrap().to_string();

    // Bob leaves: the party's ticket is cancelled for both, with the reason.
    let (s, body) = post(d, "pa-bob", &format!("/v1/parties/{id}/leave"), None).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["members"], json!(["pa-alice"]));
    // Alice hears of both, the ticket first (it is cancelled before the party
    // changes).
    let (mut left, mut cancelled) = (None, None);
    while left.is_none() || cancelled.is_none() {
        let e = alice_ws
            .next_event(WAIT)
            .await
            .expect("party.updated and ticket.cancelled");
        match e["type"].as_str() {
            Some("ticket.cancelled") => cancelled = Some(e),
            Some("party.updated") if e["change"] == "left" => left = Some(e),
            _ => {}
        }
    }
    assert_eq!(left.unwrap()["player_id"], "pa-bob");
    let cancelled = cancelled.unwrap();
    assert_eq!(cancelled["ticket_id"], tid.as_str());
    assert_eq!(cancelled["reason"], "party_changed");
    let (_, view) = d
        .client("pa-alice")
        .get(&format!("/v1/tickets/{tid}"))
        .await;
    assert_eq!(view["status"], "cancelled");
    assert_eq!(view["reason"], "party_changed");
    let (s, _) = d.client("pa-bob").get("/v1/players/me/party").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, body) = post(
        d,
        "pa-alice",
        "/v1/tickets",
        Some(ticket(&["pa-alice", "pa-bob"])),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
}

async fn the_cap_one_party_each_kicks_and_disbanding(d: &Deployment) {
    let id = d
        .party("cap-0", &["cap-1", "cap-2", "cap-3", "cap-4"])
        .await;
    let (s, _) = post(
        d,
        "cap-0",
        &format!("/v1/parties/{id}/invites"),
        Some(json!({"player_id": "cap-5"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let (s, body) = post(d, "cap-5", &format!("/v1/parties/{id}/join"), None).await;
    assert_eq!(s, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "party_full");
    // One party at a time.
    let (s, body) = post(d, "cap-1", "/v1/parties", None).await;
    assert_eq!(s, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "already_in_party");
    let other = d.party("cap-9", &[]).await;
    post(
        d,
        "cap-9",
        &format!("/v1/parties/{other}/invites"),
        Some(json!({"player_id": "cap-2"})),
    )
    .await;
    let (s, body) = post(d, "cap-2", &format!("/v1/parties/{other}/join"), None).await;
    assert_eq!(s, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "already_in_party");

    // The leader kicks; the kicked player is told and is free.
    let mut kicked_ws = d.socket("cap-4").await;
    let (s, body) = post(
        d,
        "cap-1",
        &format!("/v1/parties/{id}/kick"),
        Some(json!({"player_id": "cap-4"})),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "only the leader kicks: {body}");
    let (s, body) = post(
        d,
        "cap-0",
        &format!("/v1/parties/{id}/kick"),
        Some(json!({"player_id": "cap-4"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert!(
        !body["members"]
            .as_array()
            .unwrap()
            .contains(&json!("cap-4"))
    );
    let e = party_event(&mut kicked_ws, "party.updated", Some("kicked")).await;
    assert_eq!(e["player_id"], "cap-4");
    let (s, _) = d.client("cap-4").get(&format!("/v1/parties/{id}")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // Now there is room for cap-5.
    let (s, body) = post(d, "cap-5", &format!("/v1/parties/{id}/join"), None).await;
    assert_eq!(s, StatusCode::OK, "{body}");

    // Disbanding: members are told, and the party is gone.
    let mut member_ws = d.socket("cap-3").await;
    let (s, _) = d.client("cap-3").delete(&format!("/v1/parties/{id}")).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, body) = d.client("cap-0").delete(&format!("/v1/parties/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let e = party_event(&mut member_ws, "party.updated", Some("disbanded")).await;
    assert_eq!(e["disbanded"], true);
    for who in ["cap-0", "cap-3"] {
        let (s, _) = d.client(who).get(&format!("/v1/parties/{id}")).await;
        assert_eq!(s, StatusCode::NOT_FOUND);
        let (s, _) = d.client(who).get("/v1/players/me/party").await;
        assert_eq!(s, StatusCode::NOT_FOUND);
    }
    // Everyone may form a new party.
    d.party("cap-3", &["cap-0"]).await;
}

/// At most 20 invites pending from one party and to one player: the 21st is
/// `409 too_many_invites`; an invite accepted, or one from a party that
/// disbanded, frees its place.
async fn invites_are_bounded(d: &Deployment) {
    let bounded = |s: StatusCode, body: &Value| {
        assert_eq!(s, StatusCode::CONFLICT, "{body}");
        assert_eq!(body["error"]["code"], "too_many_invites", "{body}");
    };
    let lead = "inv-lead";
    let (s, party) = post(d, lead, "/v1/parties", None).await;
    assert_eq!(s, StatusCode::CREATED, "{party}");
    let invites = format!("/v1/parties/{}/invites", party["id"].as_str().unwrap());
    for i in 0..20 {
        let (s, body) = post(
            d,
            lead,
            &invites,
            Some(json!({"player_id": format!("inv-g{i}")})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    let (s, body) = post(d, lead, &invites, Some(json!({"player_id": "inv-g20"}))).await;
    bounded(s, &body);
    // Inviting someone already invited is not a new invite.
    let (s, body) = post(d, lead, &invites, Some(json!({"player_id": "inv-g3"}))).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    // One accepts: room for one more.
    let join = invites.replace("/invites", "/join");
    let (s, body) = post(d, "inv-g0", &join, None).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (s, body) = post(d, lead, &invites, Some(json!({"player_id": "inv-g20"}))).await;
    assert_eq!(s, StatusCode::OK, "{body}");

    // Twenty parties invite one player; a twenty-first cannot.
    let mut parties = Vec::new();
    for i in 0..21 {
        let leader = format!("inv-l{i}");
        let (s, party) = post(d, &leader, "/v1/parties", None).await;
        assert_eq!(s, StatusCode::CREATED, "{party}");
        let id = party["id"].as_str().unwrap().to_string();
        let (s, body) = post(
            d,
            &leader,
            &format!("/v1/parties/{id}/invites"),
            Some(json!({"player_id": "inv-star"})),
        )
        .await;
        if i < 20 {
            assert_eq!(s, StatusCode::OK, "{body}");
        } else {
            bounded(s, &body);
        }
        parties.push((leader, id));
    }
    // One of the twenty disbands: its invite no longer counts.
    let (leader, id) = &parties[7];
    let (s, body) = d.client(leader).delete(&format!("/v1/parties/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (leader, id) = &parties[20];
    let (s, body) = post(
        d,
        leader,
        &format!("/v1/parties/{id}/invites"),
        Some(json!({"player_id": "inv-star"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_parties_form_by_invitation() {
    let d = Deployment::embedded().await;
    parties_form_by_invitation_and_only_the_leader_queues(&d).await;
    the_cap_one_party_each_kicks_and_disbanding(&d).await;
    invites_are_bounded(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_parties_form_by_invitation() {
    let d = Deployment::redis_processes().await;
    parties_form_by_invitation_and_only_the_leader_queues(&d).await;
    the_cap_one_party_each_kicks_and_disbanding(&d).await;
    invites_are_bounded(&d).await;
}

/// Invites count against a limit of their own (`RATE_LIMIT_INVITES`), not the
/// reads'.
#[tokio::test(flavor = "multi_thread")]
async fn invites_have_their_own_rate_limit() {
    let d = Deployment::embedded_with(&[("RATE_LIMIT_INVITES", "3/1m,off")]).await;
    let (s, party) = post(&d, "rl-lead", "/v1/parties", None).await;
    assert_eq!(s, StatusCode::CREATED, "{party}");
    let invites = format!("/v1/parties/{}/invites", party["id"].as_str().unwrap());
    for i in 0..3 {
        let (s, body) = post(
            &d,
            "rl-lead",
            &invites,
            Some(json!({"player_id": format!("rl-{i}")})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }
    let (s, body) = post(&d, "rl-lead", &invites, Some(json!({"player_id": "rl-3"}))).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["scope"], "player", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invites"),
        "{body}"
    );
    // Reads are not charged to it.
    let (s, _) = d.client("rl-lead").get("/v1/players/me/party").await;
    assert_eq!(s, StatusCode::OK);
}

/// Members are listed in join order even when they join within one
/// millisecond of each other (edit tags carry the ingress's own count).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_are_in_join_order_however_fast_they_join() {
    let d = Deployment::embedded().await;
    for round in 0..10 {
        let leader = format!("jo{round}-lead");
        let (s, party) = post(&d, &leader, "/v1/parties", None).await;
        assert_eq!(s, StatusCode::CREATED, "{party}");
        let id = party["id"].as_str().unwrap().to_string();
        let joiners: Vec<String> = (0..4).map(|i| format!("jo{round}-{}", 4 - i)).collect();
        for j in &joiners {
            let (s, body) = post(
                &d,
                &leader,
                &format!("/v1/parties/{id}/invites"),
                Some(json!({"player_id": j})),
            )
            .await;
            assert_eq!(s, StatusCode::OK, "{body}");
        }
        for j in &joiners {
            let (s, body) = post(&d, j, &format!("/v1/parties/{id}/join"), None).await;
            assert_eq!(s, StatusCode::OK, "{body}");
        }
        let (_, party) = d.client(&leader).get(&format!("/v1/parties/{id}")).await;
        let mut expected = vec![leader.clone()];
        expected.extend(joiners);
        assert_eq!(party["members"], json!(expected), "round {round}");
    }
}
