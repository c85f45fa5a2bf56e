//! Commits of many matches in one call, on the memory store, Redis and a Redis
//! Cluster: a ticket is used once whatever a call holds, and a call of a whole
//! claim commits every match.

use crate::conformance::make_match;
use crate::{Harness, pool, ticket};
use mm_domain::{Match, Ticket};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

/// One commit of many matches: a later match sees what an earlier one of the
/// same call took or decided, so a ticket in two of them, or a match sent
/// twice, commits once; and a call of 2,000 tickets (a claim's most) commits
/// every match.
async fn one_commit_never_uses_a_ticket_twice(h: Harness) {
    let ts: Vec<Ticket> = (0..4).map(|i| ticket(i, 1500.0 + i as f64)).collect();
    for t in &ts {
        h.store.enqueue(t).await.unwrap();
    }
    let c = h.store.claim("w1", &pool(), 10, 0.0, LEASE).await.unwrap();
    assert_eq!(c.len(), 4);
    let a = make_match(&[&c[0], &c[1]]);
    let b = make_match(&[&c[1], &c[2]]);
    let d = make_match(&[&c[2], &c[3]]);
    let committed = h
        .store
        .complete(
            "w1",
            &pool(),
            &[a.clone(), b.clone(), a.clone(), d.clone()],
            LEASE,
        )
        .await
        .unwrap();
    // Which of the overlapping matches wins is the store's (a single node
    // takes them in order; a cluster's reservations may let the middle one in
    // first), but no ticket is in two and the repeated match counts once.
    let mut ids = committed.clone();
    ids.dedup();
    assert_eq!(ids.len(), committed.len(), "a match committed twice");
    let won: Vec<&Match> = [&a, &b, &d]
        .into_iter()
        .filter(|m| committed.contains(&m.id))
        .collect();
    assert_eq!(won.len(), committed.len());
    assert!(!won.is_empty());
    for (k, claimed) in c.iter().enumerate() {
        let t = &claimed.ticket;
        let holders: Vec<&&Match> = won
            .iter()
            .filter(|m| m.tickets.iter().any(|x| x.ticket_id == t.id))
            .collect();
        assert!(holders.len() <= 1, "ticket {k} in two committed matches");
        let v = h.store.ticket(&t.owner, &t.id).await.unwrap().unwrap();
        assert_eq!(
            v.match_id.as_ref(),
            holders.first().map(|m| &m.id),
            "ticket {k}"
        );
    }
    let depths = h.store.depths(&pool()).await.unwrap();
    assert_eq!(depths.processing, 4 - 2 * won.len() as u64);
    let released = h.store.release("w1", &pool(), None).await.unwrap();

    const N: usize = 2_000;
    let ts: Vec<Ticket> = (10..10 + N).map(|i| ticket(i, 1000.0 + i as f64)).collect();
    futures_util::future::join_all(ts.iter().map(|t| h.store.enqueue(t))).await;
    let c = h.store.claim("w1", &pool(), N, 0.0, LEASE).await.unwrap();
    assert_eq!(c.len(), N);
    let matches: Vec<Match> = c.chunks(2).map(|p| make_match(&[&p[0], &p[1]])).collect();
    let committed = h
        .store
        .complete("w1", &pool(), &matches, LEASE)
        .await
        .unwrap();
    assert_eq!(committed.len(), N / 2);
    let depths = h.store.depths(&pool()).await.unwrap();
    // The claim took N of the N + `released` queued.
    assert_eq!((depths.queued, depths.processing), (released as u64, 0));
    let last = &c[N - 1].ticket;
    let v = h
        .store
        .ticket(&last.owner, &last.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(v.match_id.as_ref(), Some(&matches[N / 2 - 1].id));
}

crate::every_deployment!(one_commit_never_uses_a_ticket_twice);
