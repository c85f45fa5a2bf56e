//! Block lists through real deployments: kept, listed, bounded to the
//! caller's own; two players of whom one blocked the other never meet, nor
//! do two who wait when the block is made. Under load: players queue for a 2v2
//! again and again while they block each other at random, most blocks
//! between players who wait (held by a worker or the pool's leader, or in a
//! match being formed), and now and then undo one. No match formed after a
//! block was answered, and before it was undone, holds the two players.

use crate::Deployment;
use crate::rules::{matched, queue, ruled_modes};
use rand::{Rng, SeedableRng};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Players who queue.
const PLAYERS: usize = 24;
/// How long they keep queueing.
const PLAY_FOR: Duration = Duration::from_secs(8);
/// Blocks made, one every [`BLOCK_EVERY`].
const BLOCKS: usize = 24;
const BLOCK_EVERY: Duration = Duration::from_millis(150);
/// Of the calls the blocker makes while some block is in force, one in this
/// many undoes one of them.
const UNBLOCK_ONE_IN: u32 = 4;

fn name(i: usize) -> String {
    format!("bs-{i:02}")
}

fn now_ms() -> u64 {
    mm_domain::now_ms()
}

/// A match a player saw: when it was formed, and its players.
type Seen = (String, u64, Vec<String>);

/// Who waits now (players by number).
type Waiting = Arc<Mutex<HashSet<usize>>>;

/// (blocker, blocked) -> the times the block held: from the block's answer
/// (ms) to the unblock's call, if any.
type Held = HashMap<(usize, usize), Vec<(u64, Option<u64>)>>;

/// Player `i`: queues, waits for a match (or the end), records it, again.
async fn play(
    d: &Deployment,
    i: usize,
    until: Instant,
    seen: Arc<Mutex<Vec<Seen>>>,
    waiting: Waiting,
) {
    let me = name(i);
    // Ratings 20 apart: a match waits about a second for its windows (50
    // wide, 10 more a second) to take in four.
    let body = json!({"mode": "ruled", "players": [me], "regions": ["eu"],
        "rating": 1500 + 20 * i, "attributes": {"build": "bs", "maps": ["dust"]}});
    while Instant::now() < until {
        let (s, t) = d
            .client(&me)
            .send(Method::POST, "/v1/tickets", Some(body.clone()))
            .await;
        assert_eq!(s, StatusCode::CREATED, "{t}");
        let id = t["id"].as_str().unwrap().to_string();
        waiting.lock().unwrap().insert(i);
        loop {
            let (s, v) = d.client(&me).get(&format!("/v1/tickets/{id}")).await;
            assert_eq!(s, StatusCode::OK, "{v}");
            if let Some(m) = v["match_id"].as_str() {
                let (s, view) = d.client(&me).get(&format!("/v1/matches/{m}")).await;
                assert_eq!(s, StatusCode::OK, "{view}");
                waiting.lock().unwrap().remove(&i);
                seen.lock().unwrap().push(players_of(&view));
                break;
            }
            if Instant::now() >= until {
                let (s, b) = d
                    .client(&me)
                    .send(Method::DELETE, &format!("/v1/tickets/{id}"), None)
                    .await;
                // Matched meanwhile: then its match is read above next time round.
                if s.is_success() {
                    return;
                }
                assert_eq!(s, StatusCode::CONFLICT, "{b}");
                continue;
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }
}

fn players_of(view: &Value) -> Seen {
    let m = &view["match"];
    let players = m["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["players"].as_array().unwrap().iter())
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    (
        m["id"].as_str().unwrap().to_string(),
        m["created_at"].as_u64().unwrap(),
        players,
    )
}

async fn blocked_players_never_meet_under_load(d: &Deployment) {
    let until = Instant::now() + PLAY_FOR;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let waiting = Waiting::default();
    let players = (0..PLAYERS).map(|i| play(d, i, until, seen.clone(), waiting.clone()));
    let blocker = async {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut held: Held = HashMap::new();
        let (mut blocks, mut unblocks) = (0, 0);
        while blocks < BLOCKS {
            tokio::time::sleep(BLOCK_EVERY).await;
            // Now and then a block in force is undone (the two may meet
            // again, their waiting tickets too), else a new one.
            let in_force: Vec<(usize, usize)> = held
                .iter()
                .filter(|(_, spans)| spans.last().is_some_and(|(_, end)| end.is_none()))
                .map(|(pair, _)| *pair)
                .collect();
            if !in_force.is_empty() && rng.random_range(0..UNBLOCK_ONE_IN) == 0 {
                let (a, b) = in_force[rng.random_range(0..in_force.len())];
                let sent = now_ms();
                let (s, v) = d
                    .client(&name(a))
                    .send(
                        Method::DELETE,
                        &format!("/v1/players/me/blocks/{}", name(b)),
                        None,
                    )
                    .await;
                assert_eq!(s, StatusCode::OK, "{v}");
                let span = held.get_mut(&(a, b)).unwrap().last_mut().unwrap();
                span.1 = Some(sent);
                unblocks += 1;
                continue;
            }
            // Mostly two players who wait now (as far as their loops know),
            // else any two.
            let now: Vec<usize> = waiting.lock().unwrap().iter().copied().collect();
            let pick = |rng: &mut rand::rngs::StdRng| match now.len() {
                0 | 1 => rng.random_range(0..PLAYERS),
                n => now[rng.random_range(0..n)],
            };
            let (a, b) = (pick(&mut rng), pick(&mut rng));
            if a == b || in_force.contains(&(a, b)) {
                continue;
            }
            let (s, v) = d
                .client(&name(a))
                .send(
                    Method::PUT,
                    &format!("/v1/players/me/blocks/{}", name(b)),
                    None,
                )
                .await;
            assert_eq!(s, StatusCode::OK, "{v}");
            held.entry((a, b)).or_default().push((now_ms(), None));
            blocks += 1;
        }
        (held, unblocks)
    };
    let (_, (held, unblocks)) = tokio::join!(futures_util::future::join_all(players), blocker);
    let mut matches: HashMap<String, (u64, Vec<String>)> = HashMap::new();
    for (id, at, players) in seen.lock().unwrap().drain(..) {
        matches.insert(id, (at, players));
    }
    let mut broken = Vec::new();
    for (id, (at, players)) in &matches {
        for (&(a, b), spans) in &held {
            if !(players.contains(&name(a)) && players.contains(&name(b))) {
                continue;
            }
            for &(from, to) in spans {
                if from < *at && to.is_none_or(|to| *at < to) {
                    broken.push(format!(
                        "{id}: {} blocked {} from {from} to {to:?}, formed at {at}",
                        name(a),
                        name(b)
                    ));
                }
            }
        }
    }
    eprintln!(
        "{} matches, {} pairs blocked, {unblocks} unblocked",
        matches.len(),
        held.len()
    );
    assert!(broken.is_empty(), "{broken:#?}");
    // About 12-16 matches form here in the time (the blocks keep some
    // players' neighbours in rating away); too few would prove nothing.
    assert!(
        matches.len() >= 6,
        "too few matches to tell: {}",
        matches.len()
    );
    assert!(unblocks >= 3, "too few unblocks to tell: {unblocks}");
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_blocks_under_load() {
    let d = Deployment::embedded_with(&[("MODES_FILE", &ruled_modes())]).await;
    blocked_players_never_meet_under_load(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_blocks_under_load() {
    let d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &ruled_modes())]).await;
    blocked_players_never_meet_under_load(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_leader_blocks_under_load() {
    let d = Deployment::redis_processes_env(&[
        ("*", "MODES_FILE", &ruled_modes()),
        ("worker", "COORDINATION", "leader"),
    ])
    .await;
    blocked_players_never_meet_under_load(&d).await;
}

/// Block lists through the API: kept, listed, bounded to the caller's own; two
/// players of whom one blocked the other are never matched, while a third
/// player is.
pub(crate) async fn blocked_players_never_meet(d: &Deployment) {
    let ann = d.client("bl-ann");
    let (s, b) = ann
        .send(Method::PUT, "/v1/players/me/blocks/bl-bob", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["blocks"], json!(["bl-bob"]), "{b}");
    let (s, b) = ann.get("/v1/players/me/blocks").await;
    assert_eq!(
        (s, &b["blocks"]),
        (StatusCode::OK, &json!(["bl-bob"])),
        "{b}"
    );
    // Not someone else's list, not oneself.
    let (s, _) = d.client("bl-bob").get("/v1/players/bl-ann/blocks").await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, b) = ann
        .send(Method::PUT, "/v1/players/me/blocks/bl-ann", None)
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{b}");
    // Bob queues first, then Ann: they never meet. Cy joins: Ann or Bob meets Cy.
    let bob_t = queue(d, "arena", "bl-bob", json!({"maps": ["dust"]})).await;
    let ann_t = queue(d, "arena", "bl-ann", json!({"maps": ["dust"]})).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (p, t) in [("bl-bob", &bob_t), ("bl-ann", &ann_t)] {
        let (_, v) = d.client(p).get(&format!("/v1/tickets/{t}")).await;
        assert!(v["match_id"].is_null(), "{p} was matched: {v}");
    }
    let cy_t = queue(d, "arena", "bl-cy", json!({"maps": ["dust"]})).await;
    let view = matched(d, "bl-cy", &cy_t).await;
    let players = view["match"]["tickets"].to_string();
    assert!(
        players.contains("bl-ann") != players.contains("bl-bob"),
        "{view}"
    );
    let (s, b) = ann
        .send(Method::DELETE, "/v1/players/me/blocks/bl-bob", None)
        .await;
    assert_eq!((s, &b["blocks"]), (StatusCode::OK, &json!([])), "{b}");
    a_block_made_while_both_wait_keeps_them_apart(d).await;
    an_unblock_lets_waiting_players_meet(d).await;
}

/// Two players wait apart, one having blocked the other; the unblock reaches
/// their waiting tickets: they meet without queueing again.
async fn an_unblock_lets_waiting_players_meet(d: &Deployment) {
    let (s, b) = d
        .client("ub-ann")
        .send(Method::PUT, "/v1/players/me/blocks/ub-bob", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let bob = queue(d, "arena", "ub-bob", json!({"maps": ["mill"]})).await;
    let ann = queue(d, "arena", "ub-ann", json!({"maps": ["mill"]})).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (p, t) in [("ub-bob", &bob), ("ub-ann", &ann)] {
        let (_, v) = d.client(p).get(&format!("/v1/tickets/{t}")).await;
        assert!(v["match_id"].is_null(), "{p} was matched: {v}");
    }
    let (s, b) = d
        .client("ub-ann")
        .send(Method::DELETE, "/v1/players/me/blocks/ub-bob", None)
        .await;
    assert_eq!((s, &b["blocks"]), (StatusCode::OK, &json!([])), "{b}");
    let view = matched(d, "ub-bob", &bob).await;
    let players = view["match"]["tickets"].to_string();
    assert!(players.contains("ub-ann"), "{view}");
}

/// Three players wait for a 2v2 (held by a worker or the pool's leader) when
/// one blocks another: the fourth who comes makes no match of the four, the
/// fifth makes one with one of the two.
async fn a_block_made_while_both_wait_keeps_them_apart(d: &Deployment) {
    let attributes = json!({"build": "lb", "maps": ["dust"]});
    let mut waiting = Vec::new();
    for p in ["lb-ann", "lb-bob", "lb-cy"] {
        waiting.push((p, queue(d, "ruled", p, attributes.clone()).await));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (s, b) = d
        .client("lb-bob")
        .send(Method::PUT, "/v1/players/me/blocks/lb-ann", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let dan = queue(d, "ruled", "lb-dan", attributes.clone()).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    waiting.push(("lb-dan", dan));
    for (p, t) in &waiting {
        let (_, v) = d.client(p).get(&format!("/v1/tickets/{t}")).await;
        assert!(v["match_id"].is_null(), "{p} was matched: {v}");
    }
    let eve = queue(d, "ruled", "lb-eve", attributes).await;
    let view = matched(d, "lb-eve", &eve).await;
    let players = view["match"]["tickets"].to_string();
    assert!(
        players.contains("lb-ann") != players.contains("lb-bob"),
        "{view}"
    );
    // The one left waits on, still kept apart; it goes.
    for (p, t) in &waiting[..2] {
        if !players.contains(p) {
            let (s, b) = d
                .client(p)
                .send(Method::DELETE, &format!("/v1/tickets/{t}"), None)
                .await;
            assert!(s.is_success(), "{b}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_block_lists() {
    let d = Deployment::embedded_with(&[("MODES_FILE", &ruled_modes())]).await;
    blocked_players_never_meet(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_block_lists() {
    let d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &ruled_modes())]).await;
    blocked_players_never_meet(&d).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_leader_block_lists() {
    let d = Deployment::redis_processes_env(&[
        ("*", "MODES_FILE", &ruled_modes()),
        ("worker", "COORDINATION", "leader"),
    ])
    .await;
    blocked_players_never_meet(&d).await;
}
