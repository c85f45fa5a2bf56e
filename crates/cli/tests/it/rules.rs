//! Rules through real deployments: tickets carry attributes (checked, each
//! mistake a 400 naming the attribute), per ticket and per player; attributes a
//! mode takes from the token are refused from the client and filled from the
//! caller's verified claims, or a party member's own claims from when they
//! joined; the players of one ticket must agree on a hard `equal` attribute,
//! and a ticket the rules could never match is refused.

use crate::Deployment;
use mm_auth::TokenSigner;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

/// A 2v2 mode with rules, for these tests only.
pub const RULED: &str = r#"
[modes.ruled]
teams = 2
team_size = 2
ready_check = false
placement = "none"
from_claims = ["platform"]

[[modes.ruled.rules]]
kind = "equal"
attribute = "build"

[[modes.ruled.rules]]
kind = "intersect"
attribute = "maps"
relax = [{ after = "30s", off = true }]

[modes.arena]
teams = 2
team_size = 1
ready_check = false

[[modes.arena.rules]]
kind = "intersect"
attribute = "maps"

[modes.patient]
teams = 2
team_size = 1
ready_check = false
placement = "none"
give_up_after = "2s"

[modes.squads]
teams = 2
team_size = 2
ready_check = false
placement = "none"

[[modes.squads.rules]]
kind = "roles"
attribute = "roles"
need = { tank = 1, damage = 1 }
"#;

/// The modes file of these tests, written once per test process.
pub fn ruled_modes() -> String {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| crate::shared_file("ruled-modes", RULED))
        .clone()
}

async fn create(d: &Deployment, token: &str, body: Value) -> (StatusCode, Value) {
    d.client(token)
        .send(Method::POST, "/v1/tickets", Some(body))
        .await
}

async fn attributes_are_kept_and_checked(d: &Deployment) {
    let (s, t) = create(
        d,
        "at-ann",
        json!({"mode": "ruled", "players": ["at-ann"], "regions": ["eu"], "rating": 1500,
               "attributes": {"build": "1.4.2", "maps": ["dust", "harbor"], "level": 37}}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    assert_eq!(t["attributes"]["build"], "1.4.2", "{t}");
    let id = t["id"].as_str().unwrap();
    let (s, v) = d.client("at-ann").get(&format!("/v1/tickets/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["attributes"]["maps"], json!(["dust", "harbor"]), "{v}");
    assert_eq!(v["attributes"]["level"], 37.0, "{v}");

    let long = "x".repeat(65);
    let many: Vec<String> = (0..33).map(|i| format!("m{i}")).collect();
    let lots: serde_json::Map<String, Value> =
        (0..33).map(|i| (format!("a{i}"), json!(1))).collect();
    let bad = [
        (json!({"Build": "1"}), Some("Build")),
        (json!({"build": long}), Some("build")),
        (json!({"maps": many}), Some("maps")),
        (json!({"maps": ["dust", 3]}), Some("maps")),
        (json!({"extra": {"nested": true}}), Some("extra")),
        (json!({"flag": true}), Some("flag")),
        (Value::Object(lots), None),
    ];
    for (attributes, name) in bad {
        let (s, b) = create(
            d,
            "at-bob",
            json!({"mode": "ruled", "players": ["at-bob"], "regions": ["eu"], "rating": 1500,
                   "attributes": attributes}),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{b}");
        assert_eq!(b["error"]["code"], "invalid_attribute", "{b}");
        if let Some(name) = name {
            assert_eq!(b["error"]["attribute"], name, "{b}");
            assert!(
                b["error"]["message"].as_str().unwrap().contains(name),
                "{b}"
            );
        }
    }
    // A player's own attributes are checked as well.
    let (s, b) = create(
        d,
        "at-bob",
        json!({"mode": "ruled", "regions": ["eu"], "rating": 1500,
               "players": [{"id": "at-bob", "attributes": {"roles": [long]}}]}),
    )
    .await;
    assert_eq!(
        (s, &b["error"]["attribute"]),
        (StatusCode::BAD_REQUEST, &json!("roles")),
        "{b}"
    );
    // The client may not set what the mode takes from the token.
    for body in [
        json!({"mode": "ruled", "players": ["at-bob"], "regions": ["eu"], "rating": 1500,
               "attributes": {"platform": "pc"}}),
        json!({"mode": "ruled", "regions": ["eu"], "rating": 1500,
               "players": [{"id": "at-bob", "attributes": {"platform": "pc"}}]}),
    ] {
        let (s, b) = create(d, "at-bob", body).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{b}");
        assert_eq!(b["error"]["code"], "attribute_from_token", "{b}");
        assert_eq!(b["error"]["attribute"], "platform", "{b}");
    }
}

async fn a_party_agrees_on_hard_equal_attributes(d: &Deployment) {
    d.party("ag-lead", &["ag-mate"]).await;
    let (s, b) = create(
        d,
        "ag-lead",
        json!({"mode": "ruled", "regions": ["eu"], "rating": 1500,
               "attributes": {"build": "1.4.2"},
               "players": ["ag-lead", {"id": "ag-mate", "attributes": {"build": "1.3.9"}}]}),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{b}");
    assert_eq!(b["error"]["code"], "attributes_disagree", "{b}");
    assert_eq!(b["error"]["attribute"], "build", "{b}");
    let (s, t) = create(
        d,
        "ag-lead",
        json!({"mode": "ruled", "regions": ["eu"], "rating": 1500,
               "attributes": {"build": "1.4.2", "maps": ["dust"]},
               "players": ["ag-lead", {"id": "ag-mate", "attributes": {"maps": ["dust", "port"]}}]}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    assert_eq!(
        t["player_attributes"][1]["maps"],
        json!(["dust", "port"]),
        "{t}"
    );
}

/// A ticket the mode's rules could never match is refused naming the
/// attribute, and queues once put right; a build sent as a number meets the
/// same build sent as text.
async fn tickets_the_rules_could_never_match_are_refused(d: &Deployment) {
    d.party("nv-lead", &["nv-mate"]).await;
    let solo = |mode: &str, attributes: Value| {
        json!({"mode": mode, "players": ["nv-ann"], "regions": ["eu"], "rating": 1500,
               "attributes": attributes})
    };
    let cases = [
        // A hard intersect (arena's maps) needs the list.
        (
            "nv-ann",
            solo("arena", json!({})),
            "attribute_required",
            "maps",
        ),
        (
            "nv-ann",
            solo("arena", json!({"maps": 3})),
            "invalid_attribute",
            "maps",
        ),
        (
            "nv-ann",
            solo("arena", json!({"maps": []})),
            "invalid_attribute",
            "maps",
        ),
        // An equal rule reads one value.
        (
            "nv-ann",
            solo("ruled", json!({"build": ["1.4", "1.5"]})),
            "invalid_attribute",
            "build",
        ),
        // A hard roles rule: no role it needs, or a party that cannot all play
        // in one team (two tanks, one tank's place).
        (
            "nv-ann",
            solo("squads", json!({"roles": ["healer"]})),
            "invalid_attribute",
            "roles",
        ),
        (
            "nv-lead",
            json!({"mode": "squads", "players": ["nv-lead", "nv-mate"], "regions": ["eu"],
                   "rating": 1500, "attributes": {"roles": ["tank"]}}),
            "attributes_disagree",
            "roles",
        ),
    ];
    for (who, body, code, attribute) in cases {
        let (s, b) = create(d, who, body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {b}");
        assert_eq!(b["error"]["code"], code, "{body}: {b}");
        assert_eq!(b["error"]["attribute"], attribute, "{body}: {b}");
        assert!(
            b["error"]["message"].as_str().unwrap().contains(attribute),
            "{b}"
        );
    }
    // Nothing of a refused ticket was kept: the same players queue when it is
    // put right, and a rule that turns off in the end needs nothing.
    let (s, t) = create(d, "nv-ann", solo("arena", json!({"maps": ["dust"]}))).await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    let mut queued = vec![("nv-ann", t["id"].as_str().unwrap().to_string())];
    let (s, t) = create(
        d,
        "nv-lead",
        json!({"mode": "squads", "regions": ["eu"], "rating": 1500,
               "players": [{"id": "nv-lead", "attributes": {"roles": ["tank"]}},
                           {"id": "nv-mate", "attributes": {"roles": ["tank", "damage"]}}]}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    queued.push(("nv-lead", t["id"].as_str().unwrap().to_string()));
    // Out of the way of the tests after this one.
    for (p, id) in queued {
        let (s, b) = d
            .client(p)
            .send(Method::DELETE, &format!("/v1/tickets/{id}"), None)
            .await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
    let mut ids = Vec::new();
    for (p, build) in [
        ("nv-n1", json!(7)),
        ("nv-t1", json!("7")),
        ("nv-n2", json!(7)),
        ("nv-t2", json!("7")),
    ] {
        let attributes = json!({"build": build, "maps": ["dust"]});
        ids.push((p, queue(d, "ruled", p, attributes).await));
    }
    let view = matched(d, ids[0].0, &ids[0].1).await;
    let tickets = view["match"]["tickets"].as_array().unwrap();
    assert_eq!(tickets.len(), 4, "{view}");
}

/// Queues `player` for `mode` with `attributes`; returns the ticket id.
pub(crate) async fn queue(d: &Deployment, mode: &str, player: &str, attributes: Value) -> String {
    let (s, t) = create(
        d,
        player,
        json!({"mode": mode, "players": [player], "regions": ["eu"], "rating": 1500,
               "attributes": attributes}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    t["id"].as_str().unwrap().to_string()
}

/// Waits for `player`'s ticket `id` to be matched; returns the match view.
pub(crate) async fn matched(d: &Deployment, player: &str, id: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, v) = d.client(player).get(&format!("/v1/tickets/{id}")).await;
        if let Some(m) = v["match_id"].as_str() {
            let (s, view) = d.client(player).get(&format!("/v1/matches/{m}")).await;
            assert_eq!(s, StatusCode::OK, "{view}");
            return view;
        }
        assert!(std::time::Instant::now() < deadline, "never matched: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The README's walk-through: two builds kept apart, a map chosen from the
/// players' picks, roles assigned.
async fn rules_shape_the_match(d: &Deployment) {
    let mut ws = d.socket("rs-a1").await;
    let old = queue(
        d,
        "ruled",
        "rs-old",
        json!({"build": "1.3", "maps": ["dust"]}),
    )
    .await;
    let mut ids = Vec::new();
    for (p, maps) in [
        ("rs-a1", json!(["harbor", "dust"])),
        ("rs-a2", json!(["dust", "canal"])),
        ("rs-a3", json!(["dust"])),
        ("rs-a4", json!(["canal", "dust", "harbor"])),
    ] {
        ids.push((
            p,
            queue(d, "ruled", p, json!({"build": "1.4", "maps": maps})).await,
        ));
    }
    let view = matched(d, ids[0].0, &ids[0].1).await;
    let m = &view["match"];
    assert_eq!(m["chosen"]["maps"], "dust", "{view}");
    let players: Vec<&str> = m["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            t["players"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap())
        })
        .collect();
    assert!(
        !players.contains(&"rs-old"),
        "another build joined: {players:?}"
    );
    assert_eq!(m["rules"][0]["rule"], "equal:build", "{view}");
    // The match event carries the choice too.
    let ev = ws
        .wait_for("match.completed", Duration::from_secs(10))
        .await;
    assert_eq!(ev["match"]["chosen"]["maps"], "dust", "{ev}");
    // The other build still waits.
    let (_, v) = d.client("rs-old").get(&format!("/v1/tickets/{old}")).await;
    assert!(v["match_id"].is_null(), "{v}");

    let mut squad = Vec::new();
    for (p, roles) in [
        ("rs-t1", json!(["tank"])),
        ("rs-d1", json!(["damage"])),
        ("rs-t2", json!(["tank", "damage"])),
        ("rs-d2", json!(["damage"])),
    ] {
        squad.push((p, queue(d, "squads", p, json!({"roles": roles})).await));
    }
    let view = matched(d, squad[0].0, &squad[0].1).await;
    let roles = &view["match"]["roles"];
    assert_eq!(roles["rs-t1"], "tank", "{view}");
    assert_eq!(roles["rs-t2"], "tank", "{view}");
    assert_eq!(roles["rs-d1"], "damage", "{view}");
    // One tank a team.
    let team_of = |p: &str| {
        view["match"]["tickets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["players"][0] == p)
            .map(|t| t["team"].as_u64().unwrap())
            .unwrap()
    };
    assert_ne!(team_of("rs-t1"), team_of("rs-t2"), "{view}");
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_tickets_carry_attributes() {
    let d = Deployment::embedded_with(&[("MODES_FILE", &ruled_modes())]).await;
    attributes_are_kept_and_checked(&d).await;
    a_party_agrees_on_hard_equal_attributes(&d).await;
    tickets_the_rules_could_never_match_are_refused(&d).await;
    rules_shape_the_match(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_tickets_carry_attributes() {
    let d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &ruled_modes())]).await;
    attributes_are_kept_and_checked(&d).await;
    a_party_agrees_on_hard_equal_attributes(&d).await;
    tickets_the_rules_could_never_match_are_refused(&d).await;
    rules_shape_the_match(&d).await;
    builds_wait_in_lanes_of_their_own(&d).await;
}

/// Two builds the mode keeps apart for good wait in lanes of their own: the
/// queue's scores put each build's tickets together (`Ticket::lane`), so a
/// claim worker's run of neighbours is one build's.
async fn builds_wait_in_lanes_of_their_own(d: &Deployment) {
    let a = queue(
        d,
        "ruled",
        "ln-a",
        json!({"build": "2.0", "maps": ["dust"]}),
    )
    .await;
    let b = queue(
        d,
        "ruled",
        "ln-b",
        json!({"build": "2.1", "maps": ["dust"]}),
    )
    .await;
    let redis = d.redis.as_ref().expect("a Redis deployment");
    let mut conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let queue_key = "mm:{p:ruled:eu}:q";
    // A claim worker may hold the ticket for a cycle (off the queue, in its
    // held set) when it is read: it comes back unmatched, with its score.
    let mut score = async |id: &str| -> f64 {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let s: Option<f64> = redis::cmd("ZSCORE")
                .arg(queue_key)
                .arg(id)
                .query_async(&mut conn)
                .await
                .unwrap();
            match s {
                Some(s) => return s,
                None if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                None => panic!("{id} never back in the queue"),
            }
        }
    };
    let (sa, sb) = (score(&a).await, score(&b).await);
    let lane = |s: f64| (s / mm_domain::LANE_SPAN).floor();
    assert!(lane(sa) >= 1.0 && lane(sb) >= 1.0, "{sa} {sb}");
    assert_ne!(lane(sa), lane(sb), "{sa} {sb}");
    // Within its lane, the ticket sits at its rating.
    assert_eq!(sa - lane(sa) * mm_domain::LANE_SPAN, 1500.0);
    for (p, id) in [("ln-a", a), ("ln-b", b)] {
        let (s, v) = d.client(p).delete(&format!("/v1/tickets/{id}")).await;
        assert_eq!(s, StatusCode::OK, "{v}");
    }
}

/// With signed tokens, an attribute the mode takes from the token comes from
/// the caller's claims, and a party member's from the claims their own token
/// carried when they joined; a lie in the request is refused.
#[tokio::test(flavor = "multi_thread")]
async fn attributes_from_tokens() {
    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef-claims";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secret");
    std::fs::write(&file, SECRET).unwrap();
    let d = Deployment::embedded_with(&[
        ("MODES_FILE", &ruled_modes()),
        ("AUTH", "jwt"),
        ("ALLOW_CLIENT_RATINGS", "false"),
        ("JWT_SECRET_FILE", file.to_str().unwrap()),
    ])
    .await;
    let signer = TokenSigner::hs256(SECRET, "matchmaker", "matchmaker").unwrap();
    let token = |player: &str, platform: &str| {
        let mut claims = signer.claims(player, Duration::from_secs(3600));
        claims["platform"] = json!(platform);
        signer.sign_claims(&claims).unwrap()
    };
    let (lead, mate) = (token("tk-lead", "pc"), token("tk-mate", "xbox"));
    let call = |token: &str, method: Method, path: &str, body: Option<Value>| {
        let req = reqwest::Client::new()
            .request(method, format!("http://{}{path}", d.addr))
            .bearer_auth(token);
        let req = match body {
            Some(b) => req.json(&b),
            None => req,
        };
        async move {
            let r = req.send().await.unwrap();
            let status = r.status();
            (status, r.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let (s, t) = call(
        &lead,
        Method::POST,
        "/v1/tickets",
        Some(json!({"mode": "ruled", "players": ["tk-lead"], "regions": ["eu"]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    assert_eq!(t["player_attributes"][0]["platform"], "pc", "{t}");
    let id = t["id"].as_str().unwrap().to_string();
    let (s, _) = call(&lead, Method::DELETE, &format!("/v1/tickets/{id}"), None).await;
    assert_eq!(s, StatusCode::OK);
    // A party: the member's platform is the one their own token said.
    let (s, party) = call(&lead, Method::POST, "/v1/parties", None).await;
    assert_eq!(s, StatusCode::CREATED, "{party}");
    let pid = party["id"].as_str().unwrap();
    let (s, b) = call(
        &lead,
        Method::POST,
        &format!("/v1/parties/{pid}/invites"),
        Some(json!({"player_id": "tk-mate"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, b) = call(
        &mate,
        Method::POST,
        &format!("/v1/parties/{pid}/join"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, t) = call(
        &lead,
        Method::POST,
        "/v1/tickets",
        Some(json!({"mode": "ruled", "players": ["tk-lead", "tk-mate"], "regions": ["eu"]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    let platforms: Vec<&str> = (0..2)
        .map(|i| t["player_attributes"][i]["platform"].as_str().unwrap())
        .collect();
    assert_eq!(platforms, ["pc", "xbox"], "{t}");
    // Claiming another platform in the request is refused.
    let (s, b) = call(
        &mate,
        Method::POST,
        "/v1/tickets",
        Some(
            json!({"mode": "ruled", "players": ["tk-mate"], "regions": ["eu"],
                    "attributes": {"platform": "pc"}}),
        ),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{b}");
}

/// The game server hosting a match learns what the rules chose in its
/// allocation.
#[tokio::test(flavor = "multi_thread")]
async fn the_game_server_gets_the_chosen_map() {
    use mm_proto::v1 as pb;
    let d = Deployment::embedded_with(&[("MODES_FILE", &ruled_modes())]).await;
    let mut gs = crate::fleet_auth::client(&d, None).await;
    gs.register(pb::RegisterRequest {
        server_id: "gs-map".into(),
        region: "eu".into(),
        modes: vec!["arena".into()],
        capacity: 1,
        address: "10.0.0.9:7777".into(),
    })
    .await
    .unwrap();
    queue(&d, "arena", "gm-a", json!({"maps": ["canal", "harbor"]})).await;
    queue(&d, "arena", "gm-b", json!({"maps": ["harbor"]})).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let a = loop {
        let beat = gs
            .heartbeat(pb::HeartbeatRequest {
                server_id: "gs-map".into(),
            })
            .await
            .unwrap()
            .into_inner();
        if let Some(a) = beat.allocations.into_iter().next() {
            break a;
        }
        assert!(std::time::Instant::now() < deadline, "no allocation");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        a.chosen.get("maps").map(String::as_str),
        Some("harbor"),
        "{a:?}"
    );
}

/// A pool leader keeps what the rules read of its tickets from cycle to
/// cycle: two players who blocked each other wait held across cycles, read
/// once, and a third read later (in the same numbering) meets one of them;
/// maps and roles shape its matches as a claim worker's.
#[tokio::test(flavor = "multi_thread")]
async fn redis_leader_rules_and_block_lists() {
    let d = Deployment::redis_processes_env(&[
        ("*", "MODES_FILE", &ruled_modes()),
        ("worker", "COORDINATION", "leader"),
    ])
    .await;
    crate::blocks::blocked_players_never_meet(&d).await;
    rules_shape_the_match(&d).await;
}

/// A ticket that waits its mode's `give_up_after` ends `timed_out` with reason
/// `no_match_found`, and its player hears `ticket.timed_out`.
async fn a_hopeless_ticket_gives_up(d: &Deployment) {
    let mut ws = d.socket("gu-alone").await;
    let id = queue(d, "patient", "gu-alone", json!({})).await;
    let ev = ws
        .wait_for("ticket.timed_out", Duration::from_secs(15))
        .await;
    assert_eq!(ev["ticket_id"], id.as_str(), "{ev}");
    assert_eq!(ev["reason"], "no_match_found", "{ev}");
    let (_, v) = d.client("gu-alone").get(&format!("/v1/tickets/{id}")).await;
    assert_eq!(v["status"], "timed_out", "{v}");
    assert_eq!(v["reason"], "no_match_found", "{v}");
    let waited = v["time_in_queue_ms"].as_u64().unwrap();
    assert!((2_000..10_000).contains(&waited), "{v}");
    // The player may queue again at once.
    queue(d, "patient", "gu-alone", json!({})).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_give_up() {
    let d = Deployment::embedded_with(&[("MODES_FILE", &ruled_modes())]).await;
    a_hopeless_ticket_gives_up(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_give_up() {
    let d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &ruled_modes())]).await;
    a_hopeless_ticket_gives_up(&d).await;
}
