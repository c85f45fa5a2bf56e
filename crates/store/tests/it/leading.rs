//! Pool leaders' fenced writes on the memory store, Redis and a Redis Cluster: a
//! leader whose lock was taken by a later one can write nothing to the pool, the
//! new leader has what the old one had, a leader hears which of its tickets
//! ended meanwhile, a whole pool (more than one script's unpack) moves at once, and
//! a plain worker's claim leaves a led pool alone, a leader whose lock lapsed
//! commits nothing, and only workers that register are candidates to lead.
//!
//! A leader's tickets count as queued or processing (the Redis store leaves
//! them in the queue until their match commits, the memory store holds them):
//! the depths are checked as their sum.

use crate::conformance::make_match;
use crate::{Harness, pool, ticket};
use mm_store::{LockName, StoreError, TokenLock};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

fn fenced<T: std::fmt::Debug>(r: Result<T, StoreError>) {
    assert!(
        matches!(r, Err(StoreError::Fenced(_))),
        "expected fenced off, got {r:?}"
    );
}

async fn a_deposed_leader_cannot_write_a_thing(h: Harness) {
    let (s, pool) = (&*h.store, pool());
    for i in 0..4 {
        s.enqueue(&ticket(i, 1500.0 + i as f64)).await.unwrap();
    }
    let old = TokenLock::new(LockName::pool_leader(&pool), Duration::from_millis(200));
    let first = old.acquire(s).await.unwrap().expect("a free pool");
    s.adopt("old", &pool, first).await.unwrap();
    let held = s.lead_claim("old", &pool, first, 100, LEASE).await.unwrap();
    assert_eq!(held.len(), 4);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let new = TokenLock::new(LockName::pool_leader(&pool), LEASE);
    let second = new
        .acquire(s)
        .await
        .unwrap()
        .expect("the old lease ran out");
    assert!(second > first);

    // The old leader comes back: every write is refused and changes nothing.
    let m = make_match(&[&held[0], &held[1]]);
    fenced(
        s.lead_complete("old", &pool, first, std::slice::from_ref(&m), LEASE)
            .await,
    );
    fenced(s.lead_claim("old", &pool, first, 100, LEASE).await);
    fenced(s.lead_release("old", &pool, first, None).await);
    fenced(s.lead_heartbeat("old", &pool, first, LEASE).await);
    fenced(s.lead_prune("old", &pool, first, &[]).await);
    fenced(s.adopt("old", &pool, first).await);
    assert!(s.recent_matches(&pool, 10).await.unwrap().is_empty());
    let d = s.depths(&pool).await.unwrap();
    assert_eq!(d.queued + d.processing, 4, "all four still there");

    // The new leader has the old one's tickets and matches them.
    s.adopt("new", &pool, second).await.unwrap();
    let mine = s
        .lead_claim("new", &pool, second, 100, LEASE)
        .await
        .unwrap();
    assert_eq!(mine.len(), 4);
    assert!(
        mine.iter().all(|c| !c.first_claim),
        "searching was said once"
    );
    let m = make_match(&[&mine[0], &mine[1]]);
    let done = s
        .lead_complete("new", &pool, second, std::slice::from_ref(&m), LEASE)
        .await;
    assert_eq!(done.unwrap(), vec![m.id.clone()]);
    s.lead_heartbeat("new", &pool, second, LEASE).await.unwrap();
    // The old leader's match never happened; the new one's did, once.
    fenced(
        s.lead_complete(
            "old",
            &pool,
            first,
            &[make_match(&[&held[2], &held[3]])],
            LEASE,
        )
        .await,
    );
    let recent = s.recent_matches(&pool, 10).await.unwrap();
    assert_eq!(recent.iter().map(|m| &m.id).collect::<Vec<_>>(), [&m.id]);
    s.lead_release("new", &pool, second, None).await.unwrap();
    let d = s.depths(&pool).await.unwrap();
    assert_eq!((d.queued, d.processing), (2, 0));
}

async fn a_leader_hears_which_of_its_tickets_ended(h: Harness) {
    let (s, pool) = (&*h.store, pool());
    let tickets: Vec<_> = (0..3).map(|i| ticket(i, 1500.0)).collect();
    for t in &tickets {
        s.enqueue(t).await.unwrap();
    }
    let lock = TokenLock::new(LockName::pool_leader(&pool), LEASE);
    let fence = lock.acquire(s).await.unwrap().unwrap();
    s.adopt("l", &pool, fence).await.unwrap();
    assert_eq!(
        s.lead_claim("l", &pool, fence, 100, LEASE)
            .await
            .unwrap()
            .len(),
        3
    );
    s.cancel(&tickets[1].owner, &tickets[1].id).await.unwrap();
    let all: Vec<_> = tickets.iter().map(|t| t.id.clone()).collect();
    let gone = s.lead_prune("l", &pool, fence, &all).await.unwrap();
    assert_eq!(gone, vec![tickets[1].id.clone()]);
    let left = [tickets[0].id.clone(), tickets[2].id.clone()];
    assert!(
        s.lead_prune("l", &pool, fence, &left)
            .await
            .unwrap()
            .is_empty()
    );
    // Asking about some ids only looks at those.
    s.cancel(&tickets[0].owner, &tickets[0].id).await.unwrap();
    let some = [tickets[2].id.clone()];
    assert!(
        s.lead_prune("l", &pool, fence, &some)
            .await
            .unwrap()
            .is_empty()
    );
    // Nothing is handed over twice.
    assert!(
        s.lead_claim("l", &pool, fence, 100, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Only workers that register are candidates to lead a pool; a claim worker's
/// lease does not make it one. A candidacy runs out with its lease, and a worker
/// that stops withdraws at once.
async fn candidates_to_lead_are_the_workers_that_register(h: Harness) {
    let (s, pool) = (&*h.store, pool());
    s.enqueue(&ticket(0, 1500.0)).await.unwrap();
    // A claim worker: live in the pool, not a candidate.
    s.claim("plain", &pool, 10, 0.0, LEASE).await.unwrap();
    let short = Duration::from_millis(300);
    assert_eq!(s.candidates("b", &pool, LEASE).await.unwrap(), vec!["b"]);
    assert_eq!(
        s.candidates("a", &pool, short).await.unwrap(),
        vec!["a", "b"]
    );
    assert_eq!(
        s.candidates("c", &pool, LEASE).await.unwrap(),
        vec!["a", "b", "c"]
    );
    // b stops: it withdraws and is gone at once.
    assert_eq!(
        s.candidates("b", &pool, Duration::ZERO).await.unwrap(),
        vec!["a", "c"]
    );
    // a stops renewing: gone once its lease ran out.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.candidates("c", &pool, LEASE).await.unwrap(), vec!["c"]);
}

async fn a_whole_pool_changes_leader_at_once(h: Harness) {
    let (s, pool) = (&*h.store, pool());
    const N: usize = 5_000;
    let tickets: Vec<_> = (0..N).map(|i| ticket(i, 1000.0 + i as f64)).collect();
    let mut set = tokio::task::JoinSet::new();
    for chunk in tickets.chunks(N / 8) {
        let (store, chunk) = (h.store.clone(), chunk.to_vec());
        set.spawn(async move {
            for t in &chunk {
                store.enqueue(t).await.unwrap();
            }
        });
    }
    set.join_all().await;
    let old = TokenLock::new(LockName::pool_leader(&pool), Duration::from_millis(200));
    let first = old.acquire(s).await.unwrap().unwrap();
    s.adopt("old", &pool, first).await.unwrap();
    let mut claimed = 0;
    loop {
        let got = s
            .lead_claim("old", &pool, first, 2000, LEASE)
            .await
            .unwrap();
        if got.is_empty() {
            break;
        }
        claimed += got.len();
    }
    assert_eq!(claimed, N);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let new = TokenLock::new(LockName::pool_leader(&pool), LEASE);
    let second = new.acquire(s).await.unwrap().unwrap();
    s.adopt("new", &pool, second).await.unwrap();
    let d = s.depths(&pool).await.unwrap();
    assert_eq!((d.queued, d.processing), (N as u64, 0));
    // Lowest rating first, in order, and every one once.
    let got = s.lead_claim("new", &pool, second, 10, LEASE).await.unwrap();
    let ratings: Vec<f64> = got.iter().map(|c| c.ticket.rating).collect();
    assert_eq!(
        ratings,
        (0..10).map(|i| 1000.0 + i as f64).collect::<Vec<_>>()
    );
    let mut ids: std::collections::HashSet<_> = got.into_iter().map(|c| c.ticket.id).collect();
    loop {
        let got = s
            .lead_claim("new", &pool, second, 2000, LEASE)
            .await
            .unwrap();
        if got.is_empty() {
            break;
        }
        for c in got {
            assert!(ids.insert(c.ticket.id), "handed over twice");
        }
    }
    assert_eq!(ids.len(), N);
    // A look over the whole pool (more than one prune call's worth) finds the
    // tickets cancelled, wherever they are.
    let cancelled: Vec<_> = [7, 2_500, N - 1].iter().map(|&i| &tickets[i]).collect();
    for t in &cancelled {
        s.cancel(&t.owner, &t.id).await.unwrap();
    }
    let all: Vec<_> = tickets.iter().map(|t| t.id.clone()).collect();
    let mut gone = s.lead_prune("new", &pool, second, &all).await.unwrap();
    gone.sort();
    let mut want: Vec<_> = cancelled.iter().map(|t| t.id.clone()).collect();
    want.sort();
    assert_eq!(gone, want);
}

/// A plain worker (`COORDINATION=claim`) sharing the store with a pool leader
/// claims nothing from the led pool and is told why; once the lock is free it
/// claims again, and a pool without a leader was never affected.
async fn a_claim_worker_leaves_a_led_pool_to_its_leader(h: Harness) {
    let (s, pool) = (&*h.store, pool());
    for i in 0..4 {
        s.enqueue(&ticket(i, 1500.0 + i as f64)).await.unwrap();
    }
    let lock = TokenLock::new(LockName::pool_leader(&pool), LEASE);
    let fence = lock.acquire(s).await.unwrap().expect("a free pool");
    s.adopt("l", &pool, fence).await.unwrap();
    let r = s.claim("plain", &pool, 100, 0.0, LEASE).await;
    assert!(matches!(r, Err(StoreError::Led(_))), "got {r:?}");
    // Nothing moved: the leader claims all four.
    let d = s.depths(&pool).await.unwrap();
    assert_eq!((d.queued, d.processing), (4, 0));
    let mine = s.lead_claim("l", &pool, fence, 2, LEASE).await.unwrap();
    assert_eq!(mine.len(), 2);
    // The leader hands the pool back (no leader any more): plain claims work.
    s.lead_release("l", &pool, fence, None).await.unwrap();
    let d = s.depths(&pool).await.unwrap();
    assert_eq!((d.queued, d.processing), (4, 0));
    assert!(lock.release(s).await.unwrap());
    let got = s.claim("plain", &pool, 100, 0.0, LEASE).await.unwrap();
    assert_eq!(got.len(), 4);
}

/// A leader whose lock lapsed commits nothing, even though no one has taken
/// the lock since (its fencing token is still the latest): a claim worker may
/// claim the pool's tickets as soon as the lock is free, so a leader's commit
/// relies on the lock held without a break, not on its token alone. Its tickets
/// stay held for whoever comes next; while the lock is held, a held ticket of
/// the leader's commits, and one that ended (cancelled) does not.
async fn a_leader_whose_lock_lapsed_commits_nothing_and_starts_over(h: Harness) {
    let (s, pool) = (&*h.store, pool());
    for i in 0..6 {
        s.enqueue(&ticket(i, 1500.0 + i as f64)).await.unwrap();
    }
    let lock = TokenLock::new(LockName::pool_leader(&pool), Duration::from_millis(300));
    let fence = lock.acquire(s).await.unwrap().expect("a free pool");
    s.adopt("l", &pool, fence).await.unwrap();
    let held = s.lead_claim("l", &pool, fence, 100, LEASE).await.unwrap();
    assert_eq!(held.len(), 6);
    let first = make_match(&[&held[0], &held[1]]);
    assert_eq!(
        s.lead_complete("l", &pool, fence, std::slice::from_ref(&first), LEASE)
            .await
            .unwrap(),
        vec![first.id.clone()]
    );
    // A cancelled ticket aborts its match, though the leader holds the lock.
    let gone = &held[2].ticket;
    s.cancel(&gone.owner, &gone.id).await.unwrap();
    let ended = make_match(&[&held[2], &held[3]]);
    assert!(
        s.lead_complete("l", &pool, fence, std::slice::from_ref(&ended), LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    let mine: Vec<_> = held[2..].iter().map(|c| c.ticket.id.clone()).collect();
    let pruned = s.lead_prune("l", &pool, fence, &mine).await.unwrap();
    assert_eq!(pruned, vec![gone.id.clone()]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The lock lapsed; no one took it, so the token is still the latest.
    let late = make_match(&[&held[4], &held[5]]);
    fenced(
        s.lead_complete("l", &pool, fence, std::slice::from_ref(&late), LEASE)
            .await,
    );
    let recent = s.recent_matches(&pool, 10).await.unwrap();
    assert_eq!(
        recent.iter().map(|m| &m.id).collect::<Vec<_>>(),
        [&first.id]
    );
    let d = s.depths(&pool).await.unwrap();
    assert_eq!(
        d.queued + d.processing,
        3,
        "the uncommitted tickets stay for whoever comes next"
    );
    // Taken again (a new token), the leader starts over as any new leader
    // does: adopts what is held, claims it and commits.
    let again = lock.acquire(s).await.unwrap().expect("the lock is free");
    assert!(again > fence);
    s.adopt("l", &pool, again).await.unwrap();
    let mine = s.lead_claim("l", &pool, again, 100, LEASE).await.unwrap();
    assert_eq!(mine.len(), 3);
    let now = make_match(&[&mine[0], &mine[1], &mine[2]]);
    assert_eq!(
        s.lead_complete("l", &pool, again, std::slice::from_ref(&now), LEASE)
            .await
            .unwrap(),
        vec![now.id.clone()]
    );
}

/// Every way a ticket gets into a led pool's queue hands it to the leader, once:
/// a new ticket (one call on a single node or the long way), and a ticket whose
/// match was declined going back. What the leader has from before stays had.
async fn a_leader_has_each_ticket_queued_while_it_leads_once(h: Harness) {
    use crate::lifecycle::{commit_led, lifecycle, pid, pool, ticket};
    use mm_domain::{Answer, Placement};
    let s = &*h.store;
    let p = pool();
    let lock = TokenLock::new(LockName::pool_leader(&p), LEASE);
    let fence = lock.acquire(s).await.unwrap().expect("a free pool");
    s.adopt("l", &p, fence).await.unwrap();
    assert!(
        s.lead_claim("l", &p, fence, 100, LEASE)
            .await
            .unwrap()
            .is_empty()
    );

    let mut a = ticket(&["a1"], 0);
    s.enqueue_new(&mut a, None).await.unwrap();
    let got = s.lead_claim("l", &p, fence, 100, LEASE).await.unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].first_claim && got[0].ticket.id == a.id);

    // Two more, matched with a ready check; one declines, the other goes back
    // to the queue and to the leader, not as new.
    let (b, c) = (ticket(&["b1"], 0), ticket(&["c1"], 0));
    let m = commit_led(s, fence, &[&b, &c], lifecycle(true, Placement::Servers)).await;
    assert!(
        s.lead_claim("l", &p, fence, 100, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    s.answer(&p, &m.id, &pid("b1"), Answer::Declined)
        .await
        .unwrap();
    let (r, _) = s.match_record(&p, &m.id).await.unwrap().expect("recorded");
    s.unwind(&p, &r, mm_domain::now_ms() + 60_000)
        .await
        .unwrap();
    let got = s.lead_claim("l", &p, fence, 100, LEASE).await.unwrap();
    assert_eq!(
        got.iter()
            .map(|c| (&c.ticket.id, c.first_claim))
            .collect::<Vec<_>>(),
        [(&c.id, false)]
    );
    // The first ticket is still the leader's: it commits.
    let d = s.lead_claim("l", &p, fence, 100, LEASE).await.unwrap();
    assert!(d.is_empty(), "nothing twice");
    let done = crate::several::make_match(&p, &[&a, &c]);
    assert_eq!(
        s.lead_complete("l", &p, fence, std::slice::from_ref(&done), LEASE)
            .await
            .unwrap(),
        vec![done.id.clone()]
    );
    let depth = s.depths(&p).await.unwrap();
    assert_eq!((depth.queued, depth.processing), (0, 0));
}

crate::every_deployment!(
    a_leader_has_each_ticket_queued_while_it_leads_once,
    a_leader_whose_lock_lapsed_commits_nothing_and_starts_over,
    a_claim_worker_leaves_a_led_pool_to_its_leader,
    candidates_to_lead_are_the_workers_that_register,
    a_deposed_leader_cannot_write_a_thing,
    a_leader_hears_which_of_its_tickets_ended,
    a_whole_pool_changes_leader_at_once,
);
