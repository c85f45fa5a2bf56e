//! Store integration tests: one conformance suite run against both stores (the
//! Redis one on a real redis-server started per test), and the claim races.

mod conformance;
mod races;
mod scripts;

use mm_domain::{PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_store::{MemoryStore, RedisStore, Store};
use mm_testkit::RedisServer;
use std::sync::Arc;

/// A store under test; keeps its redis-server alive.
pub struct Harness {
    pub store: Arc<dyn Store>,
    _redis: Option<RedisServer>,
}

pub fn memory() -> Harness {
    Harness {
        store: Arc::new(MemoryStore::new()),
        _redis: None,
    }
}

pub async fn redis() -> Harness {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.expect("connect");
    Harness {
        store: Arc::new(store),
        _redis: Some(server),
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
