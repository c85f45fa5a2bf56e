//! The match lifecycle and the game-server fleet, on the memory store, Redis and a
//! Redis Cluster: ready-check answers, compare-and-set transitions, unwinding a
//! match that ended (requeue with the original wait, bans, freed players), and
//! slot allocation (each slot once, lapsed servers skipped).

use crate::Harness;
use crate::several::make_match;
use mm_domain::{
    Answer, Lifecycle, Match, MatchStatus, Millis, Placement, PlayerId, Pool, ServerAssignment,
    Ticket, TicketId, TicketStatus, now_ms, reasons,
};
use mm_store::{
    AllocateOutcome, Allocation, AnswerOutcome, EnqueueOutcome, GameServer, Store, Transition,
};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

pub(crate) fn pool() -> Pool {
    Pool::new("duel", "eu")
}

pub(crate) fn pid(p: &str) -> PlayerId {
    PlayerId::new(p).unwrap()
}

/// A ticket of `players` in the duel pool, queued `waited` ms ago.
pub(crate) fn ticket(players: &[&str], waited: Millis) -> Ticket {
    let players: Vec<PlayerId> = players.iter().map(|p| pid(p)).collect();
    let mut t = Ticket::solo(
        TicketId::new(format!("t-{}", uuid::Uuid::new_v4().simple())).unwrap(),
        players[0].clone(),
        "duel",
        "eu",
        1500.0,
        now_ms() - waited,
    );
    t.player_ratings = vec![1500.0; players.len()];
    t.players = players;
    t
}

pub(crate) fn lifecycle(ready_check: bool, placement: Placement) -> Lifecycle {
    Lifecycle {
        ready_check_ms: ready_check.then_some(30_000),
        decline_ban_ms: 60_000,
        disconnect_grace_ms: 10_000,
        placement,
        placement_timeout_ms: 10_000,
        auto_backfill: None,
    }
}

/// Queues `tickets` in a pool led under `fence` (adopted already), has the
/// leader read them and commits them as one match with `lc`.
pub(crate) async fn commit_led(
    s: &dyn Store,
    fence: u64,
    tickets: &[&Ticket],
    lc: Lifecycle,
) -> Match {
    for t in tickets {
        assert_eq!(s.enqueue(t).await.unwrap(), EnqueueOutcome::Queued);
    }
    let read = s.lead_claim("l", &pool(), fence, 100, LEASE).await.unwrap();
    assert_eq!(read.len(), tickets.len());
    let mut m = make_match(&pool(), tickets);
    m.lifecycle = lc;
    assert_eq!(
        s.lead_complete("l", &pool(), fence, std::slice::from_ref(&m), LEASE)
            .await
            .unwrap(),
        vec![m.id.clone()]
    );
    s.fan_out(&pool(), std::slice::from_ref(&m)).await.unwrap();
    m
}

/// Queues `tickets`, claims them and commits them as one match with `lc`.
pub(crate) async fn commit(s: &dyn Store, tickets: &[&Ticket], lc: Lifecycle) -> Match {
    for t in tickets {
        assert_eq!(s.enqueue(t).await.unwrap(), EnqueueOutcome::Queued);
    }
    let claimed = s.claim("w", &pool(), 100, 0.0, LEASE).await.unwrap();
    assert_eq!(claimed.len(), tickets.len());
    let mut m = make_match(&pool(), tickets);
    m.lifecycle = lc;
    assert_eq!(
        s.complete("w", &pool(), std::slice::from_ref(&m), LEASE)
            .await
            .unwrap(),
        vec![m.id.clone()]
    );
    s.fan_out(&pool(), std::slice::from_ref(&m)).await.unwrap();
    m
}

async fn status(s: &dyn Store, t: &Ticket) -> (TicketStatus, Option<String>, Millis) {
    let v = s
        .ticket(&t.players[0], &t.id)
        .await
        .unwrap()
        .expect("ticket");
    (v.status, v.reason, v.enqueued_at)
}

async fn record(s: &dyn Store, m: &Match) -> mm_domain::MatchRecord {
    s.match_record(&pool(), &m.id).await.unwrap().unwrap().0
}

async fn ready_check_collects_answers(h: Harness) {
    let s = &*h.store;
    let (a, b) = (ticket(&["a1"], 0), ticket(&["b1"], 0));
    let m = commit(s, &[&a, &b], lifecycle(true, Placement::Servers)).await;
    let r = record(s, &m).await;
    assert_eq!(r.status, MatchStatus::RequiresAcceptance);
    assert_eq!(r.deadline, Some(m.created_at + 30_000));
    assert_eq!(status(s, &a).await.0, TicketStatus::RequiresAcceptance);
    // In a match that is not over: no new ticket.
    assert_eq!(
        s.enqueue(&ticket(&["a1"], 0)).await.unwrap(),
        EnqueueOutcome::InMatch(pid("a1"), m.id.clone())
    );
    assert_eq!(
        s.current_match(&pid("b1")).await.unwrap(),
        Some((pool(), m.id.clone()))
    );
    let (pl, mid) = (pool(), m.id.clone());
    let answer = |p: &'static str| {
        let (pl, mid) = (pl.clone(), mid.clone());
        async move { s.answer(&pl, &mid, &pid(p), Answer::Accepted).await }
    };
    assert_eq!(
        answer("a1").await.unwrap(),
        AnswerOutcome::Accepted {
            accepted: 1,
            total: 2
        }
    );
    // Answering twice counts once.
    assert_eq!(
        answer("a1").await.unwrap(),
        AnswerOutcome::Accepted {
            accepted: 1,
            total: 2
        }
    );
    assert_eq!(
        answer("b1").await.unwrap(),
        AnswerOutcome::AllAccepted {
            next: MatchStatus::Placing,
            total: 2
        }
    );
    assert_eq!(
        answer("b1").await.unwrap(),
        AnswerOutcome::Closed(MatchStatus::Placing)
    );
    assert_eq!(status(s, &b).await.0, TicketStatus::Placing);
    // The pivot: assigned to a server, compare-and-set.
    let server = ServerAssignment {
        server_id: "gs-1".into(),
        address: "10.0.0.1:7777".into(),
    };
    let mut t = Transition::new(&[MatchStatus::Placing], MatchStatus::Assigned);
    t.server = Some(server.clone());
    assert!(s.transition(&pool(), &m.id, t.clone()).await.unwrap());
    assert!(!s.transition(&pool(), &m.id, t).await.unwrap());
    let r = record(s, &m).await;
    assert_eq!((r.status, r.server), (MatchStatus::Assigned, Some(server)));
    assert_eq!(status(s, &a).await.0, TicketStatus::Assigned);
}

async fn a_decline_requeues_the_others_and_bans_the_decliner(h: Harness) {
    let s = &*h.store;
    // A party of two waited 5 s; two solos.
    let party = ticket(&["p1", "p2"], 5_000);
    let (c, d) = (ticket(&["c1"], 0), ticket(&["d1"], 0));
    let m = commit(s, &[&party, &c, &d], lifecycle(true, Placement::Servers)).await;
    assert_eq!(
        s.answer(&pool(), &m.id, &pid("p1"), Answer::Accepted)
            .await
            .unwrap(),
        AnswerOutcome::Accepted {
            accepted: 1,
            total: 4
        }
    );
    assert_eq!(
        s.answer(&pool(), &m.id, &pid("c1"), Answer::Declined)
            .await
            .unwrap(),
        AnswerOutcome::Declined
    );
    let r = record(s, &m).await;
    assert_eq!(r.status, MatchStatus::Cancelled);
    assert_eq!(r.reason.as_deref(), Some(reasons::DECLINED));
    assert_eq!(r.at_fault(), vec![pid("c1")]);
    assert_eq!(s.due(&pool(), 10).await.unwrap(), vec![m.id.clone()]);
    // Between the decline and the unwind, the tickets bound back to the queue
    // already read queued with their original wait, and the decliner's reads as
    // it will stay: nothing read now is terminal and later live again.
    let (st, _, enq) = status(s, &party).await;
    assert_eq!((st, enq), (TicketStatus::Queued, party.enqueued_at));
    let v = s.ticket(&pid("p1"), &party.id).await.unwrap().unwrap();
    assert!(v.time_in_queue_ms >= 5_000, "{v:?}");
    assert_eq!((v.match_id, v.reason), (None, None));
    assert_eq!(status(s, &d).await.0, TicketStatus::Queued);
    let (st, reason, _) = status(s, &c).await;
    assert_eq!(
        (st, reason.as_deref()),
        (TicketStatus::Cancelled, Some(reasons::DECLINED))
    );

    let until = now_ms() + 60_000;
    s.unwind(&pool(), &r, until).await.unwrap();
    // Twice is the same as once.
    s.unwind(&pool(), &r, until).await.unwrap();
    assert!(
        s.step_done(&pool(), &m.id, MatchStatus::Cancelled)
            .await
            .unwrap()
    );
    assert!(record(s, &m).await.settled);
    // A driver that raced through the same last step does not settle it again.
    assert!(
        !s.step_done(&pool(), &m.id, MatchStatus::Cancelled)
            .await
            .unwrap()
    );
    // Nor does a step for a status the match is not in.
    assert!(
        !s.step_done(&pool(), &m.id, MatchStatus::Failed)
            .await
            .unwrap()
    );
    assert!(s.due(&pool(), 10).await.unwrap().is_empty());

    // The party and d1 are back in the queue with their original wait.
    let (st, _, enq) = status(s, &party).await;
    assert_eq!((st, enq), (TicketStatus::Searching, party.enqueued_at));
    assert_eq!(status(s, &d).await.0, TicketStatus::Searching);
    let again = s.claim("w", &pool(), 100, 0.0, LEASE).await.unwrap();
    let mut back: Vec<TicketId> = again.iter().map(|c| c.ticket.id.clone()).collect();
    back.sort();
    let mut want = vec![party.id.clone(), d.id.clone()];
    want.sort();
    assert_eq!(back, want);
    // Requeued tickets are the players' live tickets again.
    assert!(matches!(
        s.enqueue(&ticket(&["p2"], 0)).await.unwrap(),
        EnqueueOutcome::PlayerBusy(_, t) if t == party.id
    ));
    // The decliner's ticket ended, and the decliner is banned.
    let (st, reason, _) = status(s, &c).await;
    assert_eq!(
        (st, reason.as_deref()),
        (TicketStatus::Cancelled, Some(reasons::DECLINED))
    );
    assert_eq!(
        s.enqueue(&ticket(&["c1"], 0)).await.unwrap(),
        EnqueueOutcome::Banned(pid("c1"), until)
    );
    assert_eq!(s.current_match(&pid("d1")).await.unwrap(), None);

    // Purged, the match takes the ticket it ended along, not those it handed back.
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(s.purge(&pool(), Duration::ZERO).await.unwrap() >= 2);
    assert!(s.match_record(&pool(), &m.id).await.unwrap().is_none());
    assert!(s.ticket(&pid("c1"), &c.id).await.unwrap().is_none());
    assert_eq!(status(s, &party).await.0, TicketStatus::Searching);
    assert_eq!(status(s, &d).await.0, TicketStatus::Searching);
}

async fn a_timeout_ends_the_silent_and_requeues_the_accepters(h: Harness) {
    let s = &*h.store;
    let (a, b) = (ticket(&["a2"], 2_000), ticket(&["b2"], 0));
    let m = commit(s, &[&a, &b], lifecycle(true, Placement::None)).await;
    s.answer(&pool(), &m.id, &pid("a2"), Answer::Accepted)
        .await
        .unwrap();
    let t = Transition::new(&[MatchStatus::RequiresAcceptance], MatchStatus::TimedOut)
        .reason(reasons::READY_CHECK_EXPIRED)
        .due(now_ms());
    assert!(s.transition(&pool(), &m.id, t).await.unwrap());
    // A late answer is refused.
    assert_eq!(
        s.answer(&pool(), &m.id, &pid("b2"), Answer::Accepted)
            .await
            .unwrap(),
        AnswerOutcome::Closed(MatchStatus::TimedOut)
    );
    let r = record(s, &m).await;
    assert_eq!(r.at_fault(), vec![pid("b2")]);
    // Before the unwind: the accepter is queued again, the silent one timed out.
    assert_eq!(status(s, &a).await.0, TicketStatus::Queued);
    assert_eq!(status(s, &b).await.0, TicketStatus::TimedOut);
    s.unwind(&pool(), &r, now_ms() + 60_000).await.unwrap();
    assert_eq!(status(s, &a).await.0, TicketStatus::Searching);
    let (st, reason, _) = status(s, &b).await;
    assert_eq!(
        (st, reason.as_deref()),
        (TicketStatus::TimedOut, Some(reasons::READY_CHECK_EXPIRED))
    );
    assert!(matches!(
        s.enqueue(&ticket(&["b2"], 0)).await.unwrap(),
        EnqueueOutcome::Banned(..)
    ));
}

async fn a_lost_server_fails_the_match_and_frees_its_players(h: Harness) {
    let s = &*h.store;
    let (a, b) = (ticket(&["a3"], 0), ticket(&["b3"], 0));
    let m = commit(s, &[&a, &b], lifecycle(false, Placement::Servers)).await;
    assert_eq!(record(s, &m).await.status, MatchStatus::Placing);
    let mut t = Transition::new(&[MatchStatus::Placing], MatchStatus::Assigned);
    t.server = Some(ServerAssignment {
        server_id: "gs".into(),
        address: "x:1".into(),
    });
    assert!(s.transition(&pool(), &m.id, t).await.unwrap());
    let t = Transition::new(&[MatchStatus::Assigned], MatchStatus::Failed)
        .reason(reasons::SERVER_LOST)
        .due(now_ms());
    assert!(s.transition(&pool(), &m.id, t).await.unwrap());
    let r = record(s, &m).await;
    assert!(r.at_fault().is_empty());
    s.unwind(&pool(), &r, now_ms()).await.unwrap();
    s.step_done(&pool(), &m.id, MatchStatus::Failed)
        .await
        .unwrap();
    // The tickets stay with the failed match; the players may queue again.
    let (st, reason, _) = status(s, &a).await;
    assert_eq!(
        (st, reason.as_deref()),
        (TicketStatus::Failed, Some(reasons::SERVER_LOST))
    );
    assert_eq!(s.current_match(&pid("a3")).await.unwrap(), None);
    assert_eq!(
        s.enqueue(&ticket(&["a3"], 0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
}

async fn a_dropped_player_makes_the_match_due_at_the_grace(h: Harness) {
    let s = &*h.store;
    let (a, b) = (ticket(&["a4"], 0), ticket(&["b4"], 0));
    let mut lc = lifecycle(true, Placement::Servers);
    lc.disconnect_grace_ms = 0;
    let m = commit(s, &[&a, &b], lc).await;
    assert!(s.due(&pool(), 10).await.unwrap().is_empty());
    s.presence(&pool(), &m.id, &pid("a4"), false).await.unwrap();
    let r = record(s, &m).await;
    assert!(r.disconnected.contains_key(&pid("a4")));
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(r.gone(now_ms()), vec![pid("a4")]);
    assert_eq!(s.due(&pool(), 10).await.unwrap(), vec![m.id.clone()]);
    // Back in time: no longer counted as gone.
    s.presence(&pool(), &m.id, &pid("a4"), true).await.unwrap();
    assert!(record(s, &m).await.disconnected.is_empty());
}

fn server(id: &str, capacity: u32) -> GameServer {
    GameServer {
        id: id.into(),
        region: "eu".into(),
        modes: vec!["duel".into(), "rush".into()],
        capacity,
        address: format!("{id}.example:7777"),
    }
}

fn request(id: &str) -> Allocation {
    Allocation {
        id: id.into(),
        server: Default::default(),
        region: "eu".into(),
        mode: "duel".into(),
        pool: Some(pool().name()),
        teams: vec![vec!["a".into()], vec!["b".into()]],
        allocated_at: 0,
        decided: Default::default(),
    }
}

async fn allocated_to(s: &dyn Store, id: &str) -> Option<String> {
    match s.allocate(&request(id)).await.unwrap() {
        AllocateOutcome::Allocated(a) => {
            assert_eq!(a.id, id);
            assert_eq!(
                a.server.address,
                format!("{}.example:7777", a.server.server_id)
            );
            Some(a.server.server_id)
        }
        AllocateOutcome::NoCapacity => None,
    }
}

async fn slots_go_out_once_and_fill_servers_first(h: Harness) {
    let s = &*h.store;
    let t = Duration::from_secs(30);
    s.register_server(&server("big", 2), t).await.unwrap();
    s.register_server(&server("small", 1), t).await.unwrap();
    // The server with the fewest free slots fills first.
    assert_eq!(allocated_to(s, "m-1").await.as_deref(), Some("small"));
    assert_eq!(allocated_to(s, "m-2").await.as_deref(), Some("big"));
    assert_eq!(allocated_to(s, "m-3").await.as_deref(), Some("big"));
    assert_eq!(allocated_to(s, "m-4").await, None);
    // Idempotent by id.
    assert_eq!(allocated_to(s, "m-2").await.as_deref(), Some("big"));
    // Another mode the servers do not host, or another region: nothing.
    let mut other = request("m-5");
    other.mode = "br100".into();
    assert_eq!(
        s.allocate(&other).await.unwrap(),
        AllocateOutcome::NoCapacity
    );
    // The heartbeat lists the server's allocations.
    let mut held: Vec<String> = s
        .server_heartbeat("big", t)
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|a| a.id)
        .collect();
    held.sort();
    assert_eq!(held, ["m-2", "m-3"]);
    // Releasing frees the slot once.
    assert!(s.release_slot("big", "m-2").await.unwrap());
    assert!(!s.release_slot("big", "m-2").await.unwrap());
    assert_eq!(allocated_to(s, "m-6").await.as_deref(), Some("big"));
    // A server that leaves gets nothing new but keeps what it has.
    assert!(s.release_slot("big", "m-6").await.unwrap());
    assert!(s.leave("big").await.unwrap());
    assert_eq!(allocated_to(s, "m-7").await, None);
    assert_eq!(
        s.allocation("m-3").await.unwrap().unwrap().server.server_id,
        "big"
    );
    // Registering again brings it back.
    s.register_server(&server("big", 2), t).await.unwrap();
    assert_eq!(allocated_to(s, "m-7").await.as_deref(), Some("big"));
}

async fn a_lapsed_server_gets_nothing_and_is_removed(h: Harness) {
    let s = &*h.store;
    s.register_server(&server("flaky", 3), Duration::from_millis(300))
        .await
        .unwrap();
    assert_eq!(allocated_to(s, "m-a").await.as_deref(), Some("flaky"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(allocated_to(s, "m-b").await, None);
    assert_eq!(s.lapsed_servers().await.unwrap(), vec!["flaky".to_string()]);
    let gone = s.remove_lapsed("flaky").await.unwrap().expect("removed");
    assert_eq!(
        gone.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        ["m-a"]
    );
    assert_eq!(gone[0].pool.as_deref(), Some("duel:eu"));
    assert_eq!(
        gone[0].teams,
        vec![vec!["a".to_string()], vec!["b".to_string()]]
    );
    assert_eq!(s.remove_lapsed("flaky").await.unwrap(), None);
    assert_eq!(
        s.server_heartbeat("flaky", Duration::from_secs(1))
            .await
            .unwrap(),
        None
    );
    assert_eq!(s.allocation("m-a").await.unwrap(), None);
}

/// Seed 001's contention test in store terms: 200 concurrent requests race for 3
/// free slots; exactly 3 win, the rest get a clean "no capacity", none an error.
async fn contention_exactly_the_free_slots_win(h: Harness) {
    let t = Duration::from_secs(30);
    h.store.register_server(&server("one", 1), t).await.unwrap();
    h.store.register_server(&server("two", 2), t).await.unwrap();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..200 {
        let s = h.store.clone();
        set.spawn(async move { s.allocate(&request(&format!("c-{i}"))).await });
    }
    let (mut won, mut refused) = (Vec::new(), 0);
    while let Some(r) = set.join_next().await {
        match r.unwrap().expect("no store error") {
            AllocateOutcome::Allocated(a) => won.push(a.server.server_id),
            AllocateOutcome::NoCapacity => refused += 1,
        }
    }
    won.sort();
    assert_eq!(won, ["one", "two", "two"]);
    assert_eq!(refused, 197);
}

crate::every_deployment!(
    ready_check_collects_answers,
    a_decline_requeues_the_others_and_bans_the_decliner,
    a_timeout_ends_the_silent_and_requeues_the_accepters,
    a_lost_server_fails_the_match_and_frees_its_players,
    a_dropped_player_makes_the_match_due_at_the_grace,
);

mod fleet {
    use super::*;
    crate::every_deployment!(
        slots_go_out_once_and_fill_servers_first,
        a_lapsed_server_gets_nothing_and_is_removed,
        contention_exactly_the_free_slots_win,
    );
}
