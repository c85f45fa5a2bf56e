//! The supervisors' registry of pools: a pool noted at a time counts as
//! unsupervised only before it; the longest unsupervised come first; a pool
//! is forgotten only if nobody noted it again since it was listed.

use crate::Harness;
use mm_domain::Pool;
use mm_store::Store;
use std::time::Duration;

async fn pools_nobody_supervises_are_listed_and_forgotten(h: Harness) {
    let s: &dyn Store = &*h.store;
    let (a, b, c) = (
        Pool::new("duel", "eu"),
        Pool::new("duel", "na"),
        Pool::new("squads", "eu"),
    );
    assert!(s.unsupervised(u64::MAX, 10).await.unwrap().is_empty());
    s.supervised(&[a.clone(), b.clone()], 1_000).await.unwrap();
    s.supervised(std::slice::from_ref(&c), 2_000).await.unwrap();
    s.supervised(&[], 9_000).await.unwrap();
    assert!(s.unsupervised(1_000, 10).await.unwrap().is_empty());
    let mut early = s.unsupervised(1_001, 10).await.unwrap();
    early.sort_by_key(|(p, _)| p.name());
    assert_eq!(early, vec![(a.clone(), 1_000), (b.clone(), 1_000)]);
    let all = s.unsupervised(5_000, 10).await.unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[2], (c.clone(), 2_000), "the longest unsupervised first");
    assert_eq!(s.unsupervised(5_000, 1).await.unwrap().len(), 1);

    // `a` is served again before it is forgotten: it stays.
    s.supervised(std::slice::from_ref(&a), 6_000).await.unwrap();
    s.forget_pool(&a, 5_000).await.unwrap();
    s.forget_pool(&b, 5_000).await.unwrap();
    let left: Vec<Pool> = s
        .unsupervised(u64::MAX, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(left, vec![c.clone(), a.clone()]);
    // A forgotten pool served again is noted again.
    s.supervised(std::slice::from_ref(&b), 7_000).await.unwrap();
    assert_eq!(s.unsupervised(u64::MAX, 10).await.unwrap().len(), 3);
}

async fn live_workers_are_those_whose_lease_runs(h: Harness) {
    let s: &dyn Store = &*h.store;
    let pool = Pool::new("duel", "eu");
    assert_eq!(s.live_workers(&pool).await.unwrap(), 0);
    s.heartbeat("w-long", &pool, Duration::from_secs(30))
        .await
        .unwrap();
    s.heartbeat("w-short", &pool, Duration::from_millis(1500))
        .await
        .unwrap();
    assert_eq!(s.live_workers(&pool).await.unwrap(), 2);
    assert_eq!(s.live_workers(&Pool::new("duel", "na")).await.unwrap(), 0);
    // Past the short lease (1.5 s; short enough to wait out, long enough
    // that a loaded machine reads both as live above).
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert_eq!(s.live_workers(&pool).await.unwrap(), 1);
}

crate::both_stores!(
    pools_nobody_supervises_are_listed_and_forgotten,
    live_workers_are_those_whose_lease_runs
);
