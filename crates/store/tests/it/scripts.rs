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
