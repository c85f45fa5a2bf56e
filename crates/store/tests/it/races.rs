//! Concurrent claimers on one pool: no ticket is ever held by two claimers, and at
//! the end every ticket is in exactly one place.

use crate::{Harness, pool, ticket};
use mm_domain::{Match, MatchId, MatchTicket, Ticket, TicketId, TicketStatus, now_ms};
use mm_store::{CancelOutcome, Claimed, Store};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinSet;

const LEASE: Duration = Duration::from_secs(60);

async fn enqueue_all(store: &Arc<dyn Store>, tickets: &[Ticket]) {
    let mut set = JoinSet::new();
    for chunk in tickets.chunks(tickets.len().div_ceil(32).max(1)) {
        let store = store.clone();
        let chunk = chunk.to_vec();
        set.spawn(async move {
            for t in &chunk {
                store.enqueue(t).await.unwrap();
            }
        });
    }
    while set.join_next().await.is_some() {}
}

fn pair_matches(claimed: &[Claimed]) -> Vec<Match> {
    claimed
        .chunks_exact(2)
        .map(|pair| Match {
            id: MatchId::new(format!("m-{}", uuid::Uuid::new_v4().simple())).unwrap(),
            mode: "ranked".into(),
            region: "eu".into(),
            tickets: pair
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
        })
        .collect()
}

/// Seed 000's TestClaim_NoDoubleBooking: 20 tickets, 4 workers with fresh ids,
/// 3 claims each of up to 10.
async fn seed_race_no_double_claim(h: Harness) {
    let tickets: Vec<_> = (0..20).map(|i| ticket(i, 1500.0)).collect();
    enqueue_all(&h.store, &tickets).await;
    let claims = Arc::new(Mutex::new(HashMap::<TicketId, usize>::new()));
    let mut set = JoinSet::new();
    for _ in 0..4 {
        let store = h.store.clone();
        let claims = claims.clone();
        let worker = uuid::Uuid::new_v4().to_string();
        set.spawn(async move {
            for i in 0..3 {
                let got = store
                    .claim(&worker, &pool(), 10, i as f64 / 3.0, LEASE)
                    .await
                    .unwrap();
                let mut c = claims.lock().unwrap();
                for t in got {
                    *c.entry(t.ticket.id).or_default() += 1;
                }
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
    let claims = claims.lock().unwrap();
    assert_eq!(claims.len(), 20, "every ticket claimed once");
    assert!(
        claims.values().all(|&n| n == 1),
        "a ticket was claimed twice: {claims:?}"
    );
}

/// 8 claimers race over 100,000 tickets, completing pairs and releasing the rest
/// (with deliberate churn), until the queue is empty.
async fn heavy_race_every_ticket_in_one_place(h: Harness) {
    const N: usize = 100_000;
    let tickets: Vec<_> = (0..N)
        .map(|i| ticket(i, 1000.0 + (i % 1000) as f64))
        .collect();
    enqueue_all(&h.store, &tickets).await;

    let held = Arc::new(Mutex::new(HashSet::<TicketId>::new()));
    let committed = Arc::new(Mutex::new(Vec::<Match>::new()));
    let mut set = JoinSet::new();
    for w in 0..8 {
        let store = h.store.clone();
        let held = held.clone();
        let committed = committed.clone();
        set.spawn(async move {
            let worker = format!("w{w}");
            let mut round = 0u64;
            loop {
                round += 1;
                let start = ((round * 7919 + w as u64 * 104_729) % 1000) as f64 / 1000.0;
                let got = store
                    .claim(&worker, &pool(), 100, start, LEASE)
                    .await
                    .unwrap();
                if got.is_empty() {
                    if store.depths(&pool()).await.unwrap().queued == 0 {
                        return;
                    }
                    continue;
                }
                {
                    let mut held = held.lock().unwrap();
                    for c in &got {
                        assert!(
                            held.insert(c.ticket.id.clone()),
                            "{} held twice",
                            c.ticket.id
                        );
                    }
                }
                // Every fifth round hand everything back, to churn.
                let (to_match, to_release): (Vec<_>, Vec<_>) = if round.is_multiple_of(5) {
                    (Vec::new(), got)
                } else {
                    let k = got.len() & !1;
                    let mut got = got;
                    let rest = got.split_off(k);
                    (got, rest)
                };
                let matches = pair_matches(&to_match);
                {
                    let mut held = held.lock().unwrap();
                    for c in to_match.iter().chain(&to_release) {
                        held.remove(&c.ticket.id);
                    }
                }
                let ok = store
                    .complete(&worker, &pool(), &matches, LEASE)
                    .await
                    .unwrap();
                assert_eq!(ok.len(), matches.len(), "own held tickets must commit");
                let ids: Vec<TicketId> = to_release.iter().map(|c| c.ticket.id.clone()).collect();
                store.release(&worker, &pool(), Some(&ids)).await.unwrap();
                committed.lock().unwrap().extend(matches);
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }

    let committed = std::mem::take(&mut *committed.lock().unwrap());
    let mut in_match = HashMap::<TicketId, MatchId>::new();
    for m in committed.iter() {
        for t in &m.tickets {
            assert!(
                in_match.insert(t.ticket_id.clone(), m.id.clone()).is_none(),
                "{} in two matches",
                t.ticket_id
            );
        }
    }
    let d = h.store.depths(&pool()).await.unwrap();
    assert_eq!(d.processing, 0, "nothing left held");
    assert_eq!(
        in_match.len() + d.queued as usize,
        N,
        "every ticket matched or queued"
    );
    // Each ticket's own status agrees with where the audit found it.
    let store = h.store.clone();
    let in_match = Arc::new(in_match);
    let mut set = JoinSet::new();
    for chunk in tickets.chunks(N / 16) {
        let (store, in_match, chunk) = (store.clone(), in_match.clone(), chunk.to_vec());
        set.spawn(async move {
            for t in chunk {
                let v = store.ticket(&t.owner, &t.id).await.unwrap().unwrap();
                match in_match.get(&t.id) {
                    Some(mid) => assert_eq!(v.match_id.as_ref(), Some(mid)),
                    None => assert_eq!(v.status, TicketStatus::Searching),
                }
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
}

/// Owners cancel while workers claim and match: every ticket ends cancelled or
/// matched, never both.
async fn cancel_racing_claim(h: Harness) {
    const N: usize = 2_000;
    let tickets: Vec<_> = (0..N).map(|i| ticket(i, 1500.0)).collect();
    enqueue_all(&h.store, &tickets).await;
    let committed = Arc::new(Mutex::new(Vec::<Match>::new()));
    let cancelled = Arc::new(Mutex::new(HashSet::<TicketId>::new()));
    let mut set = JoinSet::new();
    for w in 0..4 {
        let (store, committed) = (h.store.clone(), committed.clone());
        set.spawn(async move {
            let worker = format!("w{w}");
            let mut idle = 0;
            while idle < 20 {
                let got = store
                    .claim(&worker, &pool(), 16, (w as f64) / 4.0, LEASE)
                    .await
                    .unwrap();
                if got.is_empty() {
                    idle += 1;
                    tokio::task::yield_now().await;
                    continue;
                }
                tokio::task::yield_now().await;
                let matches = pair_matches(&got);
                let ok: HashSet<MatchId> = store
                    .complete(&worker, &pool(), &matches, LEASE)
                    .await
                    .unwrap()
                    .into_iter()
                    .collect();
                store.release(&worker, &pool(), None).await.unwrap();
                // A lone leftover ticket would be claimed and released forever:
                // a round that commits nothing counts as idle.
                if ok.is_empty() {
                    idle += 1;
                } else {
                    idle = 0;
                }
                committed
                    .lock()
                    .unwrap()
                    .extend(matches.into_iter().filter(|m| ok.contains(&m.id)));
            }
        });
    }
    for part in 0..2 {
        let (store, cancelled) = (h.store.clone(), cancelled.clone());
        let mine: Vec<Ticket> = tickets.iter().skip(part).step_by(3).cloned().collect();
        set.spawn(async move {
            for t in mine {
                match store.cancel(&t.owner, &t.id).await.unwrap() {
                    CancelOutcome::Cancelled => {
                        cancelled.lock().unwrap().insert(t.id.clone());
                    }
                    CancelOutcome::Matched(_) => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
    let cancelled = std::mem::take(&mut *cancelled.lock().unwrap());
    let committed = std::mem::take(&mut *committed.lock().unwrap());
    let mut seen = HashSet::new();
    for m in committed.iter() {
        for t in &m.tickets {
            assert!(
                !cancelled.contains(&t.ticket_id),
                "{} cancelled and matched",
                t.ticket_id
            );
            assert!(
                seen.insert(t.ticket_id.clone()),
                "{} matched twice",
                t.ticket_id
            );
        }
    }
    for t in &tickets {
        let v = h.store.ticket(&t.owner, &t.id).await.unwrap().unwrap();
        if cancelled.contains(&t.id) {
            assert_eq!(v.status, TicketStatus::Cancelled);
        } else if seen.contains(&t.id) {
            assert_eq!(v.status, TicketStatus::Completed);
        }
    }
    assert_eq!(h.store.depths(&pool()).await.unwrap().processing, 0);
}

crate::both_stores!(
    seed_race_no_double_claim,
    heavy_race_every_ticket_in_one_place,
    cancel_racing_claim
);
