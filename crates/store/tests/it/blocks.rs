//! Block lists on the memory store, Redis and a Redis Cluster: a block is kept
//! with the blocker and seen from both sides, bounded at 200, idempotent, and
//! undone by an unblock.

use crate::Harness;
use mm_domain::PlayerId;
use mm_store::{Blocked, MAX_BLOCKS, Store};

fn p(s: &str) -> PlayerId {
    PlayerId::new(s).unwrap()
}

async fn blocks_are_seen_both_ways_and_bounded(h: Harness) {
    let s: &dyn Store = &*h.store;
    assert_eq!(s.block(&p("ann"), &p("bob")).await.unwrap(), Blocked::Done);
    assert_eq!(s.block(&p("ann"), &p("bob")).await.unwrap(), Blocked::Done);
    assert_eq!(s.block(&p("cy"), &p("ann")).await.unwrap(), Blocked::Done);
    assert_eq!(s.blocks(&p("ann")).await.unwrap(), vec![p("bob")]);
    // Ann may not meet whom she blocked nor who blocked her; Bob may not meet
    // Ann; a party of Bob and Dee carries Bob's.
    assert_eq!(
        s.kept_apart(&[p("ann")]).await.unwrap(),
        vec![p("bob"), p("cy")]
    );
    assert_eq!(
        s.kept_apart(&[p("bob"), p("dee")]).await.unwrap(),
        vec![p("ann")]
    );
    assert!(s.kept_apart(&[p("dee")]).await.unwrap().is_empty());
    assert!(s.unblock(&p("ann"), &p("bob")).await.unwrap());
    assert!(!s.unblock(&p("ann"), &p("bob")).await.unwrap());
    assert_eq!(
        s.kept_apart(&[p("bob")]).await.unwrap(),
        Vec::<PlayerId>::new()
    );
    // At most MAX_BLOCKS; one already there may be blocked again.
    for i in 0..MAX_BLOCKS {
        assert_eq!(
            s.block(&p("eve"), &p(&format!("x{i}"))).await.unwrap(),
            Blocked::Done
        );
    }
    assert_eq!(
        s.block(&p("eve"), &p("one-more")).await.unwrap(),
        Blocked::Full
    );
    assert_eq!(s.block(&p("eve"), &p("x7")).await.unwrap(), Blocked::Done);
    assert_eq!(s.blocks(&p("eve")).await.unwrap().len(), MAX_BLOCKS);
    assert!(s.kept_apart(&[p("one-more")]).await.unwrap().is_empty());
}

crate::every_deployment!(blocks_are_seen_both_ways_and_bounded);
