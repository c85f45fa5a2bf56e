//! Store integration tests: one conformance suite run against both stores (the
//! Redis one on a real redis-server started per test), and the claim races.

mod backfills;
mod blocks;
mod claims;
mod commits;
mod conformance;
mod giveup;
mod lanes;
mod leading;
mod lifecycle;
mod limits;
mod locks;
mod online;
mod parties;
mod races;
mod registry;
mod reservations;
mod results;
mod scripts;
mod several;
mod wake;

use mm_domain::{PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_store::{MemoryStore, RedisStore, Store};
use mm_testkit::{RedisCluster, RedisServer};
use std::sync::Arc;

/// A store under test; keeps its redis-server alive.
pub struct Harness {
    pub store: Arc<dyn Store>,
    _redis: Option<RedisServer>,
    _cluster: Option<RedisCluster>,
}

pub fn memory() -> Harness {
    Harness {
        store: Arc::new(MemoryStore::new()),
        _redis: None,
        _cluster: None,
    }
}

pub async fn redis() -> Harness {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.expect("connect");
    Harness {
        store: Arc::new(store),
        _redis: Some(server),
        _cluster: None,
    }
}

pub async fn redis_cluster() -> Harness {
    let cluster = RedisCluster::start();
    let store = RedisStore::connect_cluster(&cluster.urls())
        .await
        .expect("connect to the cluster");
    Harness {
        store: Arc::new(store),
        _redis: None,
        _cluster: Some(cluster),
    }
}

pub fn pool() -> Pool {
    Pool::new("ranked", "eu")
}

pub fn ticket(n: usize, rating: f64) -> Ticket {
    let player = PlayerId::new(format!("p{n}")).unwrap();
    Ticket::solo(
        TicketId::new(format!("t-{n}-{}", uuid::Uuid::new_v4().simple())).unwrap(),
        player,
        "ranked",
        "eu",
        rating,
        now_ms(),
    )
}

/// Runs each named suite function against both stores.
#[macro_export]
macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {
        mod memory_store {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::memory()).await;
                }
            )*
        }
        mod redis_store {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::redis().await).await;
                }
            )*
        }
    };
}

/// Runs each named suite function against the memory store, Redis, and a six-node
/// Redis Cluster (for what crosses hash slots).
#[macro_export]
macro_rules! every_deployment {
    ($($name:ident),* $(,)?) => {
        $crate::both_stores!($($name),*);
        mod redis_cluster {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::redis_cluster().await).await;
                }
            )*
        }
    };
}
