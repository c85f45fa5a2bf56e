//! Block lists on the memory store, Redis and a Redis Cluster: a block is kept
//! with the blocker and seen from both sides, bounded at 200, idempotent, and
//! undone by an unblock; a new ticket carries its players' (Redis on one node
//! reads them, activates and queues a solo ticket in one call).

use crate::Harness;
use crate::lifecycle::{pool, ticket};
use mm_domain::PlayerId;
use mm_store::{Blocked, EnqueueOutcome, MAX_BLOCKS, Rate, RateKey, Store};
use std::time::Duration;

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

/// What a worker claiming the duel pool finds of each queued ticket: its id
/// and the players it is kept apart from.
async fn queued(s: &dyn Store) -> Vec<(String, Vec<PlayerId>)> {
    let claimed = s
        .claim("w", &pool(), 100, 0.0, Duration::from_secs(30))
        .await
        .unwrap();
    let out = claimed
        .iter()
        .map(|c| (c.ticket.id.to_string(), c.ticket.blocks.clone()))
        .collect();
    s.release("w", &pool(), None).await.unwrap();
    out
}

async fn a_new_ticket_carries_its_players_blocks(h: Harness) {
    let s: &dyn Store = &*h.store;
    let limiter = RateKey::player("tickets", p("fay"));
    let rate = Rate {
        count: 3,
        period: Duration::from_secs(60),
    };
    let charge = (limiter, rate);
    // Nobody blocked: queued, kept apart from nobody.
    let mut first = ticket(&["fay"], 0);
    assert_eq!(
        s.enqueue_new(&mut first, Some(&charge)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert_eq!(queued(s).await, vec![(first.id.to_string(), vec![])]);
    // A second ticket for the mode: refused, and charged all the same.
    let mut second = ticket(&["fay"], 0);
    assert!(matches!(
        s.enqueue_new(&mut second, Some(&charge)).await.unwrap(),
        EnqueueOutcome::PlayerBusy(_, id) if id == first.id
    ));
    // Once the first is over, blocked by gus: the new one takes its place and
    // carries the block, in the pool too.
    assert_eq!(
        s.cancel(&p("fay"), &first.id).await.unwrap(),
        mm_store::CancelOutcome::Cancelled
    );
    assert_eq!(s.block(&p("gus"), &p("fay")).await.unwrap(), Blocked::Done);
    let mut third = ticket(&["fay"], 0);
    assert_eq!(
        s.enqueue_new(&mut third, Some(&charge)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert_eq!(third.blocks, vec![p("gus")]);
    assert_eq!(
        queued(s).await,
        vec![(third.id.to_string(), vec![p("gus")])]
    );
    // Three calls charged: the fourth is over the limit and changes nothing.
    assert_eq!(
        s.cancel(&p("fay"), &third.id).await.unwrap(),
        mm_store::CancelOutcome::Cancelled
    );
    let mut fourth = ticket(&["fay"], 0);
    assert!(matches!(
        s.enqueue_new(&mut fourth, Some(&charge)).await.unwrap(),
        EnqueueOutcome::Limited(_)
    ));
    assert!(queued(s).await.is_empty());
    // Unlimited, it is queued.
    assert_eq!(
        s.enqueue_new(&mut fourth, None).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert_eq!(queued(s).await.len(), 1);
}

crate::every_deployment!(
    blocks_are_seen_both_ways_and_bounded,
    a_new_ticket_carries_its_players_blocks
);
