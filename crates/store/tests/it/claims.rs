//! Claims past a worker's batch (`claim_part`), on the memory store, Redis and
//! a Redis Cluster: at most half the queue, or the floor if that is more.

use crate::{Harness, pool, ticket};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

async fn a_claim_past_the_batch_takes_at_most_half_the_queue(h: Harness) {
    for i in 0..100 {
        h.store
            .enqueue(&ticket(i, 1000.0 + i as f64))
            .await
            .unwrap();
    }
    let p = pool();
    let part = |max, floor| h.store.claim_part("w1", &p, max, floor, 0.5, LEASE);
    // Half of 100.
    assert_eq!(part(80, 10).await.unwrap().len(), 50);
    // Half of the 50 left is below the floor: the floor.
    assert_eq!(part(80, 30).await.unwrap().len(), 30);
    // Fewer than the floor left: all of them.
    assert_eq!(part(80, 30).await.unwrap().len(), 20);
    let depths = h.store.depths(&pool()).await.unwrap();
    assert_eq!((depths.queued, depths.processing), (0, 100));
    // A claim up to the floor is a plain claim.
    let released = h.store.release("w1", &pool(), None).await.unwrap();
    assert_eq!(released, 100);
    assert_eq!(part(90, 90).await.unwrap().len(), 90);
}

crate::every_deployment!(a_claim_past_the_batch_takes_at_most_half_the_queue);
