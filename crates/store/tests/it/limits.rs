//! Rate limits on the memory store, Redis and a Redis Cluster: a key gets its
//! burst and then waits, keys are independent, a limited call is not charged,
//! the allowance comes back with time, concurrent checks (batched on Redis) each
//! get their own verdicts, and two connections (two ingress processes) share one
//! limit.

use crate::Harness;
use mm_store::{Limits, Rate, RedisStore, Verdict};
use mm_testkit::RedisServer;
use std::time::Duration;

fn checks(key: &str, rate: Rate) -> Vec<(String, Rate)> {
    vec![(key.to_string(), rate)]
}

async fn one(s: &dyn Limits, key: &str, rate: Rate) -> Verdict {
    s.check_rates(&checks(key, rate)).await.unwrap()[0]
}

async fn a_key_gets_its_burst_then_waits(h: Harness) {
    let s = &*h.store;
    let rate = Rate {
        count: 5,
        period: Duration::from_secs(60),
    };
    for i in 0..5 {
        assert_eq!(
            one(s, "t:p:alice", rate).await,
            Verdict::Allowed,
            "call {i}"
        );
    }
    for _ in 0..3 {
        match one(s, "t:p:alice", rate).await {
            // The next call is one interval (12 s) away, less the time spent.
            Verdict::Limited(wait) => assert!(
                wait > Duration::from_secs(5) && wait <= Duration::from_secs(12),
                "{wait:?}"
            ),
            v => panic!("the sixth call was {v:?}"),
        }
    }
    // Another key, and the same key under another rate, are untouched.
    assert_eq!(one(s, "t:p:bob", rate).await, Verdict::Allowed);
    assert_eq!(one(s, "t:a:127.0.0.1", rate).await, Verdict::Allowed);
    // Several checks at once answer each.
    let both = s
        .check_rates(&[
            ("t:p:alice".to_string(), rate),
            ("t:p:carol".to_string(), rate),
        ])
        .await
        .unwrap();
    assert!(matches!(both[0], Verdict::Limited(_)));
    assert_eq!(both[1], Verdict::Allowed);
}

async fn the_allowance_comes_back_with_time(h: Harness) {
    let s = &*h.store;
    let rate = Rate {
        count: 2,
        period: Duration::from_millis(200),
    };
    assert_eq!(one(s, "k", rate).await, Verdict::Allowed);
    assert_eq!(one(s, "k", rate).await, Verdict::Allowed);
    let Verdict::Limited(wait) = one(s, "k", rate).await else {
        panic!("a third call at once was allowed");
    };
    assert!(wait <= Duration::from_millis(100), "{wait:?}");
    tokio::time::sleep(wait + Duration::from_millis(20)).await;
    assert_eq!(one(s, "k", rate).await, Verdict::Allowed);
    // A high rate (well under a millisecond per call) still counts exactly.
    let fast = Rate {
        count: 1_000,
        period: Duration::from_secs(3600),
    };
    for _ in 0..1_000 {
        assert_eq!(one(s, "fast", fast).await, Verdict::Allowed);
    }
    assert!(matches!(one(s, "fast", fast).await, Verdict::Limited(_)));
}

/// Many requests at once (which the Redis store batches into shared calls, a key
/// possibly several times in one call): each gets its own verdicts, and every key
/// allows exactly its burst.
async fn concurrent_checks_count_exactly(h: Harness) {
    let rate = Rate {
        count: 10,
        period: Duration::from_secs(600),
    };
    let requests = (0..400).map(|i| {
        let store = h.store.clone();
        tokio::spawn(async move {
            // A shared key (an address) and one of 20 players' keys.
            let checks = vec![
                (
                    "t:a:10.0.0.1".to_string(),
                    Rate {
                        count: 1_000,
                        ..rate
                    },
                ),
                (format!("t:p:player-{}", i % 20), rate),
            ];
            let verdicts = store.check_rates(&checks).await.unwrap();
            assert_eq!(verdicts.len(), 2);
            (i % 20, verdicts)
        })
    });
    let mut allowed = [0; 20];
    let mut address_allowed = 0;
    for answer in futures_util::future::join_all(requests).await {
        let (player, verdicts) = answer.unwrap();
        if verdicts[0] == Verdict::Allowed {
            address_allowed += 1;
        }
        if verdicts[1] == Verdict::Allowed {
            allowed[player] += 1;
        }
    }
    assert_eq!(allowed, [10; 20], "each player's burst, no more, no less");
    assert_eq!(address_allowed, 400, "the address is under its limit");
    // The keys are charged: each player is now limited, the address is not.
    for p in 0..20 {
        let v = one(&*h.store, &format!("t:p:player-{p}"), rate).await;
        assert!(matches!(v, Verdict::Limited(_)), "player-{p}: {v:?}");
    }
}

crate::every_deployment!(
    a_key_gets_its_burst_then_waits,
    the_allowance_comes_back_with_time,
    concurrent_checks_count_exactly,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_one_limit() {
    let server = RedisServer::start();
    let a = RedisStore::connect(&server.url()).await.unwrap();
    let b = RedisStore::connect(&server.url()).await.unwrap();
    let rate = Rate {
        count: 10,
        period: Duration::from_secs(60),
    };
    for i in 0..10 {
        let s: &dyn Limits = if i % 2 == 0 { &a } else { &b };
        assert_eq!(one(s, "shared", rate).await, Verdict::Allowed);
    }
    assert!(matches!(one(&a, "shared", rate).await, Verdict::Limited(_)));
    assert!(matches!(one(&b, "shared", rate).await, Verdict::Limited(_)));
}
