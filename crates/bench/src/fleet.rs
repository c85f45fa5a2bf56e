//! The game-server fleet the allocation benches share: numbered servers in one
//! region hosting the bench mode, and allocation requests from outside callers (as
//! gRPC `Allocate` makes them).

use mm_store::{AllocateOutcome, Allocation, GameServer, Store, StoreError};
use std::time::Duration;

pub const REGION: &str = "eu";
pub const MODE: &str = "bench";

/// Server `i`'s id.
pub fn server_id(i: usize) -> String {
    format!("gs-{i}")
}

/// Registers `servers` servers of `capacity` slots, live for `ttl` (the benches
/// send no heartbeats).
pub async fn register(
    store: &dyn Store,
    servers: usize,
    capacity: u32,
    ttl: Duration,
) -> Result<(), StoreError> {
    for i in 0..servers {
        let server = GameServer {
            id: server_id(i),
            region: REGION.into(),
            modes: vec![MODE.into()],
            capacity,
            address: format!("10.0.{}.{}:7777", i / 250, i % 250),
        };
        store.register_server(&server, ttl).await?;
    }
    Ok(())
}

/// Allocates a slot for `id`; the server's id, or `None` for no capacity.
pub async fn allocate(store: &dyn Store, id: &str) -> Result<Option<String>, StoreError> {
    let request = Allocation {
        id: id.to_string(),
        server: Default::default(),
        region: REGION.into(),
        mode: MODE.into(),
        pool: None,
        teams: Vec::new(),
        allocated_at: 0,
        decided: Default::default(),
    };
    Ok(match store.allocate(&request).await? {
        AllocateOutcome::Allocated(a) => Some(a.server.server_id),
        AllocateOutcome::NoCapacity => None,
    })
}
