//! Token locks on the memory store, Redis and a Redis Cluster: a holder whose lock
//! expired and was taken can neither extend nor release it, every taking gets a
//! larger fencing token, contenders get exactly one holder per lock, and seed
//! 002's acquire-with-retry waits out a holder that lets go.

use crate::Harness;
use mm_store::{LOCK_RETRY_PAUSE, LOCK_TRIES, LockName, TokenLock};
use std::time::Duration;

fn unique(name: &str) -> LockName {
    LockName::named(&format!("{name}-{}", uuid::Uuid::new_v4().simple()))
}

async fn an_expired_holder_cannot_extend_or_release_the_next_holders_lock(h: Harness) {
    let s = &*h.store;
    let name = unique("expiry");
    let a = TokenLock::new(name.clone(), Duration::from_millis(200));
    let b = TokenLock::new(name.clone(), Duration::from_secs(30));
    let first = a.acquire(s).await.unwrap().expect("a free lock is taken");
    assert_eq!(b.acquire(s).await.unwrap(), None, "held by a");
    // Nobody else's token extends or frees it; the holder's does.
    assert!(!b.extend(s).await.unwrap());
    assert!(!b.release(s).await.unwrap());
    assert!(a.extend(s).await.unwrap());
    tokio::time::sleep(Duration::from_millis(400)).await;
    let second = b.acquire(s).await.unwrap().expect("a's lock expired");
    assert!(second > first, "fencing tokens grow: {first} then {second}");
    // a lost it: it can neither extend nor release b's lock, and taking it again
    // fails while b holds it.
    assert!(!a.extend(s).await.unwrap());
    assert!(!a.release(s).await.unwrap());
    assert_eq!(a.acquire(s).await.unwrap(), None);
    assert!(b.extend(s).await.unwrap());
    assert!(b.release(s).await.unwrap());
    assert!(!b.release(s).await.unwrap(), "released once");
    let third = a.acquire(s).await.unwrap().expect("b let go");
    assert!(third > second);
}

async fn two_hundred_contenders_for_three_locks_give_three_holders(h: Harness) {
    let names: Vec<LockName> = (0..3).map(|i| unique(&format!("race{i}"))).collect();
    let contenders = (0..200).map(|i| {
        let (store, name) = (h.store.clone(), names[i % 3].clone());
        tokio::spawn(async move {
            let lock = TokenLock::new(name, Duration::from_secs(30));
            (i % 3, lock.acquire(&*store).await.unwrap())
        })
    });
    let mut holders = [0; 3];
    for answer in futures_util::future::join_all(contenders).await {
        let (which, fence) = answer.unwrap();
        if let Some(fence) = fence {
            holders[which] += 1;
            assert_eq!(fence, 1, "the first taking of a lock");
        }
    }
    assert_eq!(holders, [1, 1, 1]);
}

async fn acquire_with_retry_waits_out_a_holder_that_lets_go(h: Harness) {
    let s = &*h.store;
    let name = unique("retry");
    let brief = TokenLock::new(name.clone(), Duration::from_millis(300));
    brief.acquire(s).await.unwrap().unwrap();
    let patient = TokenLock::new(name.clone(), Duration::from_secs(30));
    // Seed 002's settings: the second try, 500 ms later, finds it free.
    let fence = patient
        .acquire_retrying(s, LOCK_TRIES, LOCK_RETRY_PAUSE)
        .await
        .unwrap();
    assert_eq!(fence, Some(2));
    // A holder that keeps it: every try fails.
    let late = TokenLock::new(name, Duration::from_secs(30));
    assert_eq!(
        late.acquire_retrying(s, 3, Duration::from_millis(20))
            .await
            .unwrap(),
        None
    );
}

crate::every_deployment!(
    an_expired_holder_cannot_extend_or_release_the_next_holders_lock,
    two_hundred_contenders_for_three_locks_give_three_holders,
    acquire_with_retry_waits_out_a_holder_that_lets_go,
);
