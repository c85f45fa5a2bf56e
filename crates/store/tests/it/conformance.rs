//! The store contract, checked the same way on both implementations.

use crate::{Harness, pool, ticket};
use mm_domain::{
    Event, Match, MatchId, MatchTicket, PlayerId, Ticket, TicketId, TicketStatus, now_ms,
};
use mm_store::{CancelOutcome, Claimed, EnqueueOutcome};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

pub(crate) fn make_match(claimed: &[&Claimed]) -> Match {
    Match {
        id: MatchId::new(format!("m-{}", uuid::Uuid::new_v4().simple())).unwrap(),
        mode: "ranked".into(),
        region: "eu".into(),
        tickets: claimed
            .iter()
            .map(|c| MatchTicket {
                ticket_id: c.ticket.id.clone(),
                players: c.ticket.players.clone(),
                rating: c.ticket.rating,
                enqueued_at: c.ticket.enqueued_at,
                team: 0,
                skills: Vec::new(),
                attributes: Default::default(),
                player_attributes: Vec::new(),
            })
            .collect(),
        created_at: now_ms(),
        lifecycle: Default::default(),
        decided: Default::default(),
    }
}

async fn enqueue_then_read_back(h: Harness) {
    let t = ticket(1, 1500.0);
    assert_eq!(h.store.enqueue(&t).await.unwrap(), EnqueueOutcome::Queued);
    let v = h
        .store
        .ticket(&t.owner, &t.id)
        .await
        .unwrap()
        .expect("ticket");
    assert_eq!(v.status, TicketStatus::Queued);
    assert_eq!(v.rating, 1500.0);
    assert_eq!(v.enqueued_at, t.enqueued_at);
    assert!(v.match_id.is_none());
    // Another player cannot see it.
    let other = PlayerId::new("someone-else").unwrap();
    assert!(h.store.ticket(&other, &t.id).await.unwrap().is_none());
    assert!(
        h.store
            .ticket(&t.owner, &TicketId::new("t-nope").unwrap())
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(h.store.depths(&pool()).await.unwrap().queued, 1);
}

async fn claim_complete_release(h: Harness) {
    assert_eq!(
        h.store.depths(&pool()).await.unwrap().oldest_enqueued_at,
        None
    );
    // Enqueued a second apart, oldest first, at ratings in the opposite order (the
    // queue is by rating, the oldest wait by time).
    let base = now_ms() - 10_000;
    let ts: Vec<_> = (0..4)
        .map(|i| {
            let mut t = ticket(i, 1500.0 - i as f64);
            t.enqueued_at = base + 1000 * i as u64;
            t
        })
        .collect();
    for t in &ts {
        h.store.enqueue(t).await.unwrap();
    }
    assert_eq!(
        h.store.depths(&pool()).await.unwrap().oldest_enqueued_at,
        Some(base)
    );
    let claimed = h.store.claim("w1", &pool(), 10, 0.0, LEASE).await.unwrap();
    assert_eq!(claimed.len(), 4);
    assert!(claimed.iter().all(|c| c.first_claim));
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!((d.queued, d.processing), (0, 4));
    assert_eq!(d.oldest_enqueued_at, Some(base), "held tickets still wait");
    // Match the two oldest; the others wait on.
    let claimed: Vec<Claimed> = {
        let mut c = claimed;
        c.sort_by_key(|c| c.ticket.enqueued_at);
        c
    };

    let m = make_match(&[&claimed[0], &claimed[1]]);
    let committed = complete_one(&h, "w1", &m).await;
    assert_eq!(committed, vec![m.id.clone()]);
    let rest: Vec<TicketId> = claimed[2..].iter().map(|c| c.ticket.id.clone()).collect();
    assert_eq!(
        h.store.release("w1", &pool(), Some(&rest)).await.unwrap(),
        2
    );
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!((d.queued, d.processing), (2, 0));
    assert_eq!(d.oldest_enqueued_at, Some(base + 2000));

    let t0 = &claimed[0].ticket;
    let v = h.store.ticket(&t0.owner, &t0.id).await.unwrap().unwrap();
    assert_eq!(v.status, TicketStatus::Completed);
    assert_eq!(v.match_id, Some(m.id.clone()));
    assert_eq!(v.co_players, Some(claimed[1].ticket.players.clone()));
    let t2 = &claimed[2].ticket;
    let v = h.store.ticket(&t2.owner, &t2.id).await.unwrap().unwrap();
    assert_eq!(v.status, TicketStatus::Searching);

    // Released tickets are claimed again with their original enqueue time.
    let again = h.store.claim("w2", &pool(), 10, 0.5, LEASE).await.unwrap();
    assert_eq!(again.len(), 2);
    assert!(again.iter().all(|c| !c.first_claim));
    for c in &again {
        let orig = ts.iter().find(|t| t.id == c.ticket.id).unwrap();
        assert_eq!(c.ticket.enqueued_at, orig.enqueued_at);
    }
    // Completing the same match twice, or another worker's tickets, commits nothing.
    assert!(complete_one(&h, "w1", &m).await.is_empty());
    let foreign = make_match(&[&again[0], &again[1]]);
    assert!(complete_one(&h, "w1", &foreign).await.is_empty());
}

async fn cancel_queued_is_never_claimed(h: Harness) {
    let t = ticket(1, 1500.0);
    h.store.enqueue(&t).await.unwrap();
    assert_eq!(
        h.store.cancel(&t.owner, &t.id).await.unwrap(),
        CancelOutcome::Cancelled
    );
    assert_eq!(
        h.store.cancel(&t.owner, &t.id).await.unwrap(),
        CancelOutcome::AlreadyCancelled
    );
    assert!(
        h.store
            .claim("w1", &pool(), 10, 0.0, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    let v = h.store.ticket(&t.owner, &t.id).await.unwrap().unwrap();
    assert_eq!(v.status, TicketStatus::Cancelled);
    let other = PlayerId::new("mallory").unwrap();
    assert_eq!(
        h.store.cancel(&other, &t.id).await.unwrap(),
        CancelOutcome::NotFound
    );
}

async fn cancel_while_held_blocks_the_match(h: Harness) {
    let a = ticket(1, 1500.0);
    let b = ticket(2, 1500.0);
    h.store.enqueue(&a).await.unwrap();
    h.store.enqueue(&b).await.unwrap();
    let claimed = h.store.claim("w1", &pool(), 10, 0.0, LEASE).await.unwrap();
    assert_eq!(
        h.store.cancel(&a.owner, &a.id).await.unwrap(),
        CancelOutcome::Cancelled
    );
    let m = make_match(&[&claimed[0], &claimed[1]]);
    assert!(complete_one(&h, "w1", &m).await.is_empty());
    // Releasing both requeues only the one not cancelled.
    assert_eq!(h.store.release("w1", &pool(), None).await.unwrap(), 1);
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!((d.queued, d.processing), (1, 0));
    assert_eq!(
        h.store
            .ticket(&a.owner, &a.id)
            .await
            .unwrap()
            .unwrap()
            .status,
        TicketStatus::Cancelled
    );
    assert_eq!(
        h.store
            .ticket(&b.owner, &b.id)
            .await
            .unwrap()
            .unwrap()
            .status,
        TicketStatus::Searching
    );
}

/// A release names tickets; only those the releasing worker holds go back to
/// the queue: another worker's stay with it, a ticket no one holds stays put.
async fn a_release_returns_only_what_the_worker_holds(h: Harness) {
    let ts: Vec<Ticket> = (0..3).map(|i| ticket(i, 1500.0 + i as f64)).collect();
    for t in &ts {
        h.store.enqueue(t).await.unwrap();
    }
    let mine = h.store.claim("w1", &pool(), 1, 0.0, LEASE).await.unwrap();
    let theirs = h.store.claim("w2", &pool(), 1, 0.0, LEASE).await.unwrap();
    assert_eq!((mine.len(), theirs.len()), (1, 1));
    let queued = ts
        .iter()
        .find(|t| t.id != mine[0].ticket.id && t.id != theirs[0].ticket.id)
        .unwrap();
    let named = [
        theirs[0].ticket.id.clone(),
        queued.id.clone(),
        mine[0].ticket.id.clone(),
    ];
    assert_eq!(
        h.store.release("w1", &pool(), Some(&named)).await.unwrap(),
        1
    );
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!(
        (d.queued, d.processing),
        (2, 1),
        "w2's ticket is still held"
    );
    // Its own release finds it still held, once.
    assert_eq!(h.store.release("w2", &pool(), None).await.unwrap(), 1);
    assert_eq!(h.store.release("w2", &pool(), None).await.unwrap(), 0);
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!((d.queued, d.processing), (3, 0));
}

/// What `worker` commits of the one match `m`: its id, or nothing.
async fn complete_one(h: &Harness, worker: &str, m: &Match) -> Vec<MatchId> {
    h.store
        .complete(worker, &pool(), std::slice::from_ref(m), LEASE)
        .await
        .unwrap()
}

/// Two tickets queued, claimed and committed as one match.
async fn commit_pair(h: &Harness) -> (Ticket, Ticket, Match) {
    let a = ticket(1, 1500.0);
    let b = ticket(2, 1500.0);
    h.store.enqueue(&a).await.unwrap();
    h.store.enqueue(&b).await.unwrap();
    let claimed = h.store.claim("w1", &pool(), 10, 0.0, LEASE).await.unwrap();
    let m = make_match(&[&claimed[0], &claimed[1]]);
    complete_one(h, "w1", &m).await;
    (a, b, m)
}

async fn cancel_matched_is_refused(h: Harness) {
    let (a, _, m) = commit_pair(&h).await;
    assert_eq!(
        h.store.cancel(&a.owner, &a.id).await.unwrap(),
        CancelOutcome::Matched(m.id.clone())
    );
    assert_eq!(
        h.store
            .ticket(&a.owner, &a.id)
            .await
            .unwrap()
            .unwrap()
            .status,
        TicketStatus::Completed
    );
}

/// A matched ticket's time in queue stops when it joins its match.
async fn a_matched_tickets_wait_stops_at_its_match(h: Harness) {
    let (a, _, m) = commit_pair(&h).await;
    let first = h.store.ticket(&a.owner, &a.id).await.unwrap().unwrap();
    assert_eq!(first.match_id.as_ref(), Some(&m.id));
    tokio::time::sleep(Duration::from_millis(30)).await;
    let later = h.store.ticket(&a.owner, &a.id).await.unwrap().unwrap();
    assert_eq!(later.time_in_queue_ms, first.time_in_queue_ms);
}

/// A player's history lists their newest matches, newest first, and no more than
/// its length however often they play.
async fn a_history_keeps_the_newest_matches(h: Harness) {
    let mut played = Vec::new();
    for _ in 0..mm_store::HISTORY_LEN + 12 {
        let t = ticket(1, 1500.0);
        h.store.enqueue(&t).await.unwrap();
        let claimed = h.store.claim("w1", &pool(), 10, 0.0, LEASE).await.unwrap();
        let mut m = make_match(&[&claimed[0]]);
        // Distinct creation times: the history is ordered by them.
        m.created_at = now_ms() + played.len() as u64;
        complete_one(&h, "w1", &m).await;
        h.store
            .fan_out(&pool(), std::slice::from_ref(&m))
            .await
            .unwrap();
        played.push(m.id);
    }
    let owner = PlayerId::new("p1").unwrap();
    let listed: Vec<MatchId> = h
        .store
        .player_matches(&owner, 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    let newest: Vec<MatchId> = played
        .iter()
        .rev()
        .take(mm_store::HISTORY_LEN)
        .cloned()
        .collect();
    assert_eq!(listed, newest);
}

/// The oldest wait looks past the tickets that left: hundreds cancelled in the
/// same second as one that waits, then that one too. (The Redis store gives the
/// earliest enqueue time its index saw in that second, so up to a second early.)
async fn the_oldest_wait_looks_past_tickets_that_left(h: Harness) {
    let base = (now_ms() - 20_000) / 1000 * 1000;
    let ts: Vec<_> = (0..250)
        .map(|i| {
            let mut t = ticket(i, 1500.0);
            t.enqueued_at = base + i as u64;
            t
        })
        .collect();
    for t in &ts {
        h.store.enqueue(t).await.unwrap();
    }
    let live = &ts[200];
    for t in ts.iter().filter(|t| t.id != live.id) {
        h.store.cancel(&t.owner, &t.id).await.unwrap();
    }
    let oldest = h.store.depths(&pool()).await.unwrap().oldest_enqueued_at;
    assert!(
        oldest.is_some_and(|o| o >= base && o <= live.enqueued_at),
        "{oldest:?}"
    );
    h.store.cancel(&live.owner, &live.id).await.unwrap();
    assert_eq!(
        h.store.depths(&pool()).await.unwrap().oldest_enqueued_at,
        None
    );
}

async fn one_active_ticket_per_player(h: Harness) {
    let a = ticket(1, 1500.0);
    h.store.enqueue(&a).await.unwrap();
    let mut again = ticket(1, 1600.0);
    again.owner = a.owner.clone();
    assert_eq!(
        h.store.enqueue(&again).await.unwrap(),
        EnqueueOutcome::PlayerBusy(a.owner.clone(), a.id.clone())
    );
    h.store.cancel(&a.owner, &a.id).await.unwrap();
    assert_eq!(
        h.store.enqueue(&again).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert_eq!(h.store.depths(&pool()).await.unwrap().queued, 1);
}

async fn expired_lease_is_reclaimed(h: Harness) {
    for i in 0..3 {
        h.store.enqueue(&ticket(i, 1500.0)).await.unwrap();
    }
    let claimed = h
        .store
        .claim("dead", &pool(), 10, 0.0, Duration::from_millis(800))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 3);
    // A live lease is not reclaimed.
    assert_eq!(h.store.reclaim("dead", &pool()).await.unwrap(), None);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        h.store.expired_workers(&pool()).await.unwrap(),
        vec!["dead".to_string()]
    );
    assert_eq!(h.store.reclaim("dead", &pool()).await.unwrap(), Some(3));
    // Idempotent: a second supervisor finds nothing left.
    assert_eq!(h.store.reclaim("dead", &pool()).await.unwrap(), Some(0));
    assert!(h.store.expired_workers(&pool()).await.unwrap().is_empty());
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!((d.queued, d.processing), (3, 0));
    // The dead worker waking up cannot commit what it lost.
    let m = make_match(&[&claimed[0], &claimed[1]]);
    assert!(complete_one(&h, "dead", &m).await.is_empty());
    let t = &claimed[0].ticket;
    let v = h.store.ticket(&t.owner, &t.id).await.unwrap().unwrap();
    assert_eq!(v.status, TicketStatus::Searching);
    assert_eq!(v.enqueued_at, t.enqueued_at);
    // Nor once another worker holds them: held, but not by the dead worker.
    let again = h
        .store
        .claim("live", &pool(), 10, 0.0, LEASE)
        .await
        .unwrap();
    assert_eq!(again.len(), 3);
    let m = make_match(&[&claimed[0], &claimed[1]]);
    assert!(complete_one(&h, "dead", &m).await.is_empty());
    let m = make_match(&[&again[0], &again[1]]);
    assert_eq!(complete_one(&h, "live", &m).await, vec![m.id.clone()]);
}

async fn heartbeat_keeps_the_lease(h: Harness) {
    h.store.enqueue(&ticket(1, 1500.0)).await.unwrap();
    h.store
        .claim("w1", &pool(), 10, 0.0, Duration::from_millis(100))
        .await
        .unwrap();
    assert_eq!(
        h.store
            .heartbeat("w1", &pool(), Duration::from_secs(10))
            .await
            .unwrap(),
        1
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(h.store.expired_workers(&pool()).await.unwrap().is_empty());
    assert_eq!(h.store.reclaim("w1", &pool()).await.unwrap(), None);
}

async fn fan_out_reaches_history_and_subscribers(h: Harness) {
    let a = ticket(1, 1500.0);
    let b = ticket(2, 1510.0);
    let mut rx = h.store.subscribe(&a.owner).await.unwrap();
    h.store.enqueue(&a).await.unwrap();
    h.store.enqueue(&b).await.unwrap();
    let claimed = h.store.claim("w1", &pool(), 10, 0.0, LEASE).await.unwrap();
    let m = make_match(&[&claimed[0], &claimed[1]]);
    complete_one(&h, "w1", &m).await;
    assert_eq!(
        h.store.stale_outbox(&pool(), Duration::ZERO).await.unwrap(),
        vec![m.clone()]
    );
    h.store
        .fan_out(&pool(), std::slice::from_ref(&m))
        .await
        .unwrap();
    h.store
        .fan_out(&pool(), std::slice::from_ref(&m))
        .await
        .unwrap();
    assert!(
        h.store
            .stale_outbox(&pool(), Duration::ZERO)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        h.store.player_matches(&a.owner, 10).await.unwrap(),
        vec![m.clone()]
    );
    assert_eq!(
        h.store.player_matches(&b.owner, 10).await.unwrap(),
        vec![m.clone()]
    );
    // Found in a player's history by id alone; not in another's, nor made up.
    assert_eq!(
        h.store.history_pool(&a.owner, &m.id).await.unwrap(),
        Some(pool())
    );
    let stranger = PlayerId::new("stranger").unwrap();
    assert_eq!(h.store.history_pool(&stranger, &m.id).await.unwrap(), None);
    let made_up = MatchId::new("m-made-up").unwrap();
    assert_eq!(
        h.store.history_pool(&a.owner, &made_up).await.unwrap(),
        None
    );
    let ev = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap();
    match *ev {
        Event::Completed {
            ticket_id,
            match_id,
            ..
        } => {
            assert_eq!(ticket_id, a.id);
            assert_eq!(match_id, m.id);
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// A match formed by the cycle that first claimed one of its tickets: that
/// ticket's player hears `ticket.searching` just before the match; the other
/// player, claimed before, hears the match alone.
async fn a_first_claimed_ticket_hears_searching_with_its_match(h: Harness) {
    let a = ticket(1, 1500.0);
    let b = ticket(2, 1510.0);
    let mut heard_a = h.store.subscribe(&a.owner).await.unwrap();
    let mut heard_b = h.store.subscribe(&b.owner).await.unwrap();
    h.store.enqueue(&a).await.unwrap();
    h.store.enqueue(&b).await.unwrap();
    let claimed = h.store.claim("w1", &pool(), 10, 0.0, LEASE).await.unwrap();
    let m = make_match(&[&claimed[0], &claimed[1]]);
    complete_one(&h, "w1", &m).await;
    let first = std::collections::HashSet::from([a.id.clone()]);
    h.store
        .fan_out_first(&pool(), std::slice::from_ref(&m), &first)
        .await
        .unwrap();
    assert_eq!(
        heard(&mut heard_a).await,
        Event::Searching {
            ticket_id: a.id.clone()
        }
    );
    let matched = heard(&mut heard_a).await;
    assert!(matches!(&matched, Event::Completed { match_id, .. } if *match_id == m.id));
    let matched = heard(&mut heard_b).await;
    assert!(matches!(&matched, Event::Completed { match_id, .. } if *match_id == m.id));
    // Nothing more for either: one searching, one match each.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(heard_a.try_recv().is_err());
    assert!(heard_b.try_recv().is_err());
}

/// The next event a subscriber hears, within 5 s.
async fn heard(rx: &mut mm_store::Events) -> Event {
    *tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event within 5 s")
        .expect("the subscription is open")
}

async fn purge_forgets_finished_tickets(h: Harness) {
    let a = ticket(1, 1500.0);
    let b = ticket(2, 1500.0);
    h.store.enqueue(&a).await.unwrap();
    h.store.enqueue(&b).await.unwrap();
    h.store.cancel(&b.owner, &b.id).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(h.store.purge(&pool(), Duration::ZERO).await.unwrap(), 1);
    assert!(h.store.ticket(&b.owner, &b.id).await.unwrap().is_none());
    assert!(h.store.ticket(&a.owner, &a.id).await.unwrap().is_some());
}

/// A player's history outlives the pool's retention: the match is purged from the
/// pool (its record is gone) but both players still list it.
async fn history_outlives_the_purge(h: Harness) {
    let (a, b, m) = commit_pair(&h).await;
    h.store
        .fan_out(&pool(), std::slice::from_ref(&m))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(h.store.purge(&pool(), Duration::ZERO).await.unwrap() >= 3);
    assert!(
        h.store
            .match_record(&pool(), &m.id)
            .await
            .unwrap()
            .is_none()
    );
    // The matched tickets are forgotten with their match.
    for t in [&a, &b] {
        assert!(h.store.ticket(&t.owner, &t.id).await.unwrap().is_none());
    }
    for owner in [&a.owner, &b.owner] {
        assert_eq!(
            h.store.player_matches(owner, 10).await.unwrap(),
            vec![m.clone()]
        );
    }
}

/// A party whose member is busy is refused whole: the members taken before the busy
/// one are given back, and every member can read and cancel a queued party ticket.
async fn party_tickets_claim_every_member_or_none(h: Harness) {
    let busy = ticket(2, 1500.0);
    h.store.enqueue(&busy).await.unwrap();
    let (a, b, c) = (
        PlayerId::new("p1").unwrap(),
        PlayerId::new("p2").unwrap(),
        PlayerId::new("p3").unwrap(),
    );
    let mut party = ticket(1, 1500.0);
    party.players = vec![a.clone(), b.clone(), c.clone()];
    party.player_ratings = vec![1500.0, 1400.0, 1450.0];
    assert_eq!(busy.owner, b);
    assert_eq!(
        h.store.enqueue(&party).await.unwrap(),
        EnqueueOutcome::PlayerBusy(b.clone(), busy.id.clone())
    );
    assert!(h.store.ticket(&a, &party.id).await.unwrap().is_none());
    // p1 was given back: it can queue alone.
    let solo = ticket(1, 1500.0);
    assert_eq!(
        h.store.enqueue(&solo).await.unwrap(),
        EnqueueOutcome::Queued
    );
    h.store.cancel(&a, &solo.id).await.unwrap();
    h.store.cancel(&b, &busy.id).await.unwrap();
    // Now the party goes in, and each member sees it.
    assert_eq!(
        h.store.enqueue(&party).await.unwrap(),
        EnqueueOutcome::Queued
    );
    for p in [&a, &b, &c] {
        let v = h.store.ticket(p, &party.id).await.unwrap().unwrap();
        assert_eq!(v.players.len(), 3);
    }
    assert_eq!(
        h.store.cancel(&c, &party.id).await.unwrap(),
        CancelOutcome::Cancelled
    );
    let v = h.store.ticket(&a, &party.id).await.unwrap().unwrap();
    assert_eq!(v.status, TicketStatus::Cancelled);
}

/// A claim asking for more tickets than one script call can take (Lua's
/// `unpack` stops near 8,000 values; a held set's ZADD takes two per ticket)
/// takes what it can and loses none: every ticket is queued or held after it,
/// and what it returned is what is held.
async fn a_claim_too_big_for_one_call_loses_nothing(h: Harness) {
    const N: u64 = 4_500;
    let ts: Vec<Ticket> = (0..N as usize)
        .map(|i| ticket(i, 1000.0 + i as f64))
        .collect();
    let enqueued = futures_util::future::join_all(ts.iter().map(|t| h.store.enqueue(t))).await;
    assert!(
        enqueued
            .into_iter()
            .all(|e| e.unwrap() == EnqueueOutcome::Queued)
    );
    let claimed = h
        .store
        .claim("w1", &pool(), 10_000, 0.0, LEASE)
        .await
        .unwrap();
    assert!(!claimed.is_empty());
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!(
        d.processing,
        claimed.len() as u64,
        "what was returned is held"
    );
    assert_eq!(d.queued + d.processing, N, "no ticket lost");
    let again = h
        .store
        .claim("w2", &pool(), 10_000, 0.0, LEASE)
        .await
        .unwrap();
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!(d.processing, (claimed.len() + again.len()) as u64);
    assert_eq!(d.queued + d.processing, N, "no ticket lost");
}

crate::both_stores!(
    a_release_returns_only_what_the_worker_holds,
    a_claim_too_big_for_one_call_loses_nothing,
    party_tickets_claim_every_member_or_none,
    enqueue_then_read_back,
    claim_complete_release,
    cancel_queued_is_never_claimed,
    cancel_while_held_blocks_the_match,
    cancel_matched_is_refused,
    a_matched_tickets_wait_stops_at_its_match,
    a_history_keeps_the_newest_matches,
    the_oldest_wait_looks_past_tickets_that_left,
    one_active_ticket_per_player,
    expired_lease_is_reclaimed,
    heartbeat_keeps_the_lease,
    fan_out_reaches_history_and_subscribers,
    a_first_claimed_ticket_hears_searching_with_its_match,
    purge_forgets_finished_tickets,
    history_outlives_the_purge,
);
