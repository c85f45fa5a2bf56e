//! Rate limits on the memory store, Redis and a Redis Cluster: a key gets its
//! burst and then waits, keys are independent, a limited call is not charged,
//! the allowance comes back with time, concurrent checks (batched on Redis) each
//! get their own verdicts, and two connections (two ingress processes) share one
//! limit. A ticket's activation charged to its owner's limiter counts against the
//! same limiter as a check, and over the limit changes nothing.

use crate::Harness;
use crate::lifecycle::{pid, ticket};
use mm_domain::TicketStatus;
use mm_store::{EnqueueOutcome, Limits, Rate, RateKey, RedisStore, Verdict};
use mm_testkit::RedisServer;
use std::time::Duration;

/// A limiter: `t:a:IP` an address's, `t:p:NAME` (or any other name) a player's.
fn key(name: &str) -> RateKey {
    match name.strip_prefix("t:a:") {
        Some(ip) => RateKey::address("t", ip.parse().unwrap()),
        None => RateKey::player("t", pid(name.strip_prefix("t:p:").unwrap_or(name))),
    }
}

fn checks(name: &str, rate: Rate) -> Vec<(RateKey, Rate)> {
    vec![(key(name), rate)]
}

async fn one(s: &dyn Limits, name: &str, rate: Rate) -> Verdict {
    s.check_rates(&checks(name, rate)).await.unwrap()[0]
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
        .check_rates(&[(key("t:p:alice"), rate), (key("t:p:carol"), rate)])
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
                    key("t:a:10.0.0.1"),
                    Rate {
                        count: 1_000,
                        ..rate
                    },
                ),
                (key(&format!("t:p:player-{}", i % 20)), rate),
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

/// Ticket creations charged with the activation: each counts against the owner's
/// limiter (the one the ingress checks on its own for cancels), whatever the
/// outcome; over the limit the ticket is neither activated nor queued.
async fn a_charged_enqueue_counts_against_the_owners_limiter(h: Harness) {
    let s = &*h.store;
    let rate = Rate {
        count: 2,
        period: Duration::from_secs(60),
    };
    let owner = format!("own-{}", uuid::Uuid::new_v4().simple());
    let mate = format!("mate-{}", uuid::Uuid::new_v4().simple());
    let charge = (key(&owner), rate);
    // Queued, charged.
    let first = ticket(&[&owner], 0);
    assert_eq!(
        s.enqueue_charged(&first, Some(&charge)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    // Refused (the owner has a live ticket for the mode), still charged.
    let second = ticket(&[&owner], 0);
    assert!(matches!(
        s.enqueue_charged(&second, Some(&charge)).await.unwrap(),
        EnqueueOutcome::PlayerBusy(..)
    ));
    // Over the limit: nothing happens, not even for the other player, although
    // the owner is not the ticket's first player (the owner is charged first).
    s.cancel(&pid(&owner), &first.id).await.unwrap();
    let third = ticket(&[&mate, &owner], 0);
    match s.enqueue_charged(&third, Some(&charge)).await.unwrap() {
        EnqueueOutcome::Limited(wait) => assert!(
            wait > Duration::from_secs(20) && wait <= Duration::from_secs(30),
            "{wait:?}"
        ),
        other => panic!("the third creation was {other:?}"),
    }
    assert!(matches!(
        s.activate_charged(&third, Some(&charge)).await.unwrap(),
        Err(EnqueueOutcome::Limited(_))
    ));
    assert!(s.ticket(&pid(&mate), &third.id).await.unwrap().is_none());
    assert!(s.ticket(&pid(&owner), &third.id).await.unwrap().is_none());
    let mates = ticket(&[&mate], 0);
    assert_eq!(s.enqueue(&mates).await.unwrap(), EnqueueOutcome::Queued);
    // The check the ingress makes for a cancel sees the same limiter.
    assert!(matches!(one(s, &owner, rate).await, Verdict::Limited(_)));
    // Uncharged calls are not limited; another player's limiter is untouched.
    let fourth = ticket(&[&owner], 0);
    assert_eq!(s.enqueue(&fourth).await.unwrap(), EnqueueOutcome::Queued);
    assert_eq!(
        s.ticket(&pid(&owner), &fourth.id)
            .await
            .unwrap()
            .map(|v| v.status),
        Some(TicketStatus::Queued)
    );
    assert_eq!(one(s, &mate, rate).await, Verdict::Allowed);
    // A party ticket charged to its owner, who is not its first player.
    let other = format!("own-{}", uuid::Uuid::new_v4().simple());
    let (a, b) = (
        format!("a-{}", uuid::Uuid::new_v4().simple()),
        format!("b-{}", uuid::Uuid::new_v4().simple()),
    );
    let party = ticket(&[&a, &other, &b], 0);
    let charge = (key(&other), Rate { count: 1, ..rate });
    assert_eq!(
        s.enqueue_charged(&party, Some(&charge)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert!(matches!(
        one(s, &other, Rate { count: 1, ..rate }).await,
        Verdict::Limited(_)
    ));
    assert_eq!(
        one(s, &a, Rate { count: 1, ..rate }).await,
        Verdict::Allowed
    );
}

crate::every_deployment!(
    a_key_gets_its_burst_then_waits,
    the_allowance_comes_back_with_time,
    concurrent_checks_count_exactly,
    a_charged_enqueue_counts_against_the_owners_limiter,
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

/// Evalsha calls the server has answered so far.
async fn script_calls(url: &str) -> u64 {
    let mut c = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut c)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// A busy address's calls are answered from leases, calls charged in Redis ahead
/// of their use: two ingresses sharing its limit never let more than its burst
/// through. Called one after the other, each ingress uses up what it took ahead,
/// so exactly the burst passes, with far fewer script calls than calls; once
/// refused, further calls cost Redis nothing until the wait is over. All at once,
/// a lease taken ahead may go unused: at most one lease (an eighth of the burst)
/// per ingress is lost, never a call too many let through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leased_address_calls_never_pass_the_limit_across_processes() {
    let server = RedisServer::start();
    let a = RedisStore::connect(&server.url()).await.unwrap();
    let b = RedisStore::connect(&server.url()).await.unwrap();
    let rate = Rate {
        count: 200,
        period: Duration::from_secs(3600),
    };
    let before = script_calls(&server.url()).await;
    let mut allowed = 0;
    for i in 0..600 {
        let s: &dyn Limits = if i % 3 == 0 { &b } else { &a };
        match one(s, "t:a:10.9.9.9", rate).await {
            Verdict::Allowed => allowed += 1,
            // The next call is an interval (18 s) away at most.
            Verdict::Limited(wait) => assert!(wait <= Duration::from_secs(18), "{wait:?}"),
        }
    }
    assert_eq!(allowed, 200, "the burst, no more, no less");
    let calls = script_calls(&server.url()).await - before;
    assert!(calls < 100, "{calls} script calls for 600 checks");
    // Refused here now: no more script calls.
    let refused = script_calls(&server.url()).await;
    for s in [&a, &b] {
        assert!(matches!(
            one(s, "t:a:10.9.9.9", rate).await,
            Verdict::Limited(_)
        ));
    }
    assert_eq!(script_calls(&server.url()).await, refused);

    // All at once, from both.
    let (a, b) = (std::sync::Arc::new(a), std::sync::Arc::new(b));
    let checks = (0..600).map(|i| {
        let s = if i % 2 == 0 { a.clone() } else { b.clone() };
        tokio::spawn(async move {
            let check = [(key("t:a:10.9.9.10"), rate)];
            s.check_rates(&check).await.unwrap()[0]
        })
    });
    let verdicts = futures_util::future::join_all(checks).await;
    let allowed = verdicts
        .iter()
        .filter(|v| *v.as_ref().unwrap() == Verdict::Allowed)
        .count();
    assert!((200 - 2 * 25..=200).contains(&allowed), "{allowed} allowed");
}
