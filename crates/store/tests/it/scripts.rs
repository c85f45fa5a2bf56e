//! Redis-only behaviour of the scripts: they are called by SHA and reloaded when
//! Redis has forgotten them (restart, failover, SCRIPT FLUSH).

use crate::{pool, ticket};
use mm_store::{RedisStore, Store};
use mm_testkit::RedisServer;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_reload_after_script_flush() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.unwrap();
    store.enqueue(&ticket(1, 1500.0)).await.unwrap();
    let mut admin = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut admin)
        .await
        .unwrap();
    store.enqueue(&ticket(2, 1500.0)).await.unwrap();
    let claimed = store
        .claim("w1", &pool(), 10, 0.0, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(
        stats.contains("cmdstat_evalsha"),
        "scripts are called by SHA:\n{stats}"
    );
}

/// A history holds references to matches archived once per match; members written
/// as whole JSON (before references) are still read, a match listed both ways once,
/// and a reference whose archived match has expired is left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_reads_references_and_old_json() {
    use crate::conformance::make_match;
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.unwrap();
    let mut admin = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let lease = Duration::from_secs(30);
    let (a, b) = (ticket(1, 1500.0), ticket(2, 1510.0));
    store.enqueue(&a).await.unwrap();
    store.enqueue(&b).await.unwrap();
    let claimed = store.claim("w1", &pool(), 10, 0.0, lease).await.unwrap();
    let first = make_match(&[&claimed[0], &claimed[1]]);
    store
        .complete("w1", &pool(), std::slice::from_ref(&first), lease)
        .await
        .unwrap();
    store
        .fan_out(&pool(), std::slice::from_ref(&first))
        .await
        .unwrap();
    let history = format!("mm:{{u:{}}}:hist", a.owner);
    let members: Vec<String> = redis::cmd("ZRANGE")
        .arg(&history)
        .arg(0)
        .arg(-1)
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(members, vec![format!("{}|ranked:eu", first.id)]);
    let archived = format!("mm:{{p:ranked:eu}}:a:{}", first.id);
    let ttl: i64 = redis::cmd("TTL")
        .arg(&archived)
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(
        ttl > 29 * 24 * 3600,
        "archived for the history's life: {ttl}"
    );

    // Older entries written whole, one of them the same match.
    let mut older = first.clone();
    older.id = mm_domain::MatchId::new("m-older").unwrap();
    older.created_at -= 1000;
    let mut same = first.clone();
    same.created_at -= 1;
    for m in [&older, &same] {
        let () = redis::cmd("ZADD")
            .arg(&history)
            .arg(m.created_at)
            .arg(serde_json::to_string(m).unwrap())
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let listed = store.player_matches(&a.owner, 10).await.unwrap();
    assert_eq!(listed, vec![first.clone(), older.clone()]);
    // A whole old entry is found by id too.
    assert_eq!(
        store.history_pool(&a.owner, &older.id).await.unwrap(),
        Some(mm_domain::Pool::new(
            older.mode.clone(),
            older.region.clone()
        ))
    );
    assert_eq!(
        store.player_matches(&a.owner, 1).await.unwrap(),
        vec![first]
    );

    // The archive expired: the reference is skipped (the old whole copy stays).
    let () = redis::cmd("DEL")
        .arg(&archived)
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(
        store.player_matches(&a.owner, 10).await.unwrap(),
        vec![same, older]
    );
    assert!(store.player_matches(&b.owner, 10).await.unwrap().is_empty());
}
