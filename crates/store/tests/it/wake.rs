//! Wake-ups: a ticket queued after a claim (or returned to the queue by a reclaim)
//! wakes the pool's workers in every process (on Redis, one message per claim however many tickets follow), and a
//! subscription killed by the server (`CLIENT KILL`) comes back by itself, waking
//! everyone once so that nothing queued meanwhile waits for a poll.

use crate::{Harness, pool, ticket};
use mm_store::{RedisStore, Store, Wake, WakeUps};
use mm_testkit::RedisServer;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

/// The next wake-up within `within`, if any.
async fn next(ups: &mut WakeUps, within: Duration) -> Option<Wake> {
    tokio::time::timeout(within, ups.next())
        .await
        .ok()
        .flatten()
}

async fn a_ticket_after_a_claim_wakes_the_pool(h: Harness) {
    let s = &*h.store;
    let mut ups = s.wake_ups().await.unwrap();
    assert!(
        s.claim("w", &pool(), 10, 0.0, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    s.enqueue(&ticket(1, 1500.0)).await.unwrap();
    assert_eq!(
        next(&mut ups, Duration::from_secs(5)).await,
        Some(Wake::Pool(pool().name()))
    );
}

async fn on_redis_one_wake_up_per_claim(h: Harness) {
    let s = &*h.store;
    let mut ups = s.wake_ups().await.unwrap();
    s.claim("w", &pool(), 10, 0.0, LEASE).await.unwrap();
    for i in 0..20 {
        s.enqueue(&ticket(i, 1500.0)).await.unwrap();
    }
    let one = Some(Wake::Pool(pool().name()));
    assert_eq!(next(&mut ups, Duration::from_secs(5)).await, one);
    assert_eq!(next(&mut ups, Duration::from_millis(300)).await, None);
    // The next claim arms the pool again.
    s.claim("w", &pool(), 30, 0.0, LEASE).await.unwrap();
    s.enqueue(&ticket(20, 1500.0)).await.unwrap();
    assert_eq!(next(&mut ups, Duration::from_secs(5)).await, one);
}

async fn a_reclaim_wakes_the_pool(h: Harness) {
    let s = &*h.store;
    for i in 0..2 {
        s.enqueue(&ticket(i, 1500.0)).await.unwrap();
    }
    let held = s
        .claim("dead", &pool(), 10, 0.0, Duration::from_millis(100))
        .await
        .unwrap();
    assert_eq!(held.len(), 2);
    let mut ups = s.wake_ups().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.reclaim("dead", &pool()).await.unwrap(), Some(2));
    assert_eq!(
        next(&mut ups, Duration::from_secs(5)).await,
        Some(Wake::Pool(pool().name()))
    );
}

crate::every_deployment!(
    a_ticket_after_a_claim_wakes_the_pool,
    a_reclaim_wakes_the_pool
);

mod one_wake_up_per_claim {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_store() {
        super::on_redis_one_wake_up_per_claim(crate::redis().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_cluster() {
        super::on_redis_one_wake_up_per_claim(crate::redis_cluster().await).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_subscription_comes_back_and_wakes_everyone() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.unwrap();
    let mut ups = store.wake_ups().await.unwrap();
    let mut admin = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let killed: u64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(killed, 1, "the store's one subscription");
    // Lost, then restored: each time every worker is woken (tickets may have
    // arrived unannounced).
    assert_eq!(
        next(&mut ups, Duration::from_secs(5)).await,
        Some(Wake::Any)
    );
    assert_eq!(
        next(&mut ups, Duration::from_secs(5)).await,
        Some(Wake::Any)
    );
    // And wake-ups flow again.
    store.claim("w", &pool(), 10, 0.0, LEASE).await.unwrap();
    store.enqueue(&ticket(1, 1500.0)).await.unwrap();
    assert_eq!(
        next(&mut ups, Duration::from_secs(5)).await,
        Some(Wake::Pool(pool().name()))
    );
}
