//! The store contract for game servers (the server manager's state): registration,
//! liveness, and atomic allocation of match slots. One slot never goes to two
//! allocations; a server whose heartbeat lapsed gets none.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{Decided, Millis, ServerAssignment};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A registered game server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameServer {
    pub id: String,
    pub region: String,
    /// Modes it hosts.
    pub modes: Vec<String>,
    /// Matches it hosts at once.
    pub capacity: u32,
    /// Where players connect.
    pub address: String,
}

/// A slot given out: to a match of the matchmaker, or to an outside caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allocation {
    /// The match id, or the caller's allocation id.
    pub id: String,
    pub server: ServerAssignment,
    pub region: String,
    pub mode: String,
    /// The match's pool (`mode:region`) when the matchmaker allocated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// Teams of player ids, when the matchmaker allocated it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<Vec<String>>,
    /// What the mode's rules decided for the match (a map, roles).
    #[serde(default, skip_serializing_if = "Decided::is_empty")]
    pub decided: Decided,
    pub allocated_at: Millis,
}

/// One region's game servers, as counted by [`Fleet::census`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RegionCensus {
    pub region: String,
    /// Live servers (heartbeat not lapsed).
    pub servers: u64,
    /// Slots a new match could take (none on a server that is leaving).
    pub free_slots: u64,
    /// Slots holding an allocation.
    pub used_slots: u64,
}

/// How an allocation request ended. (Returned once per allocation and read at
/// once: the size of the allocation in it costs nothing worth a box.)
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum AllocateOutcome {
    /// A slot (the same one again if this id was allocated before).
    Allocated(Allocation),
    /// No live server of the region and mode has a free slot.
    NoCapacity,
}

/// Game servers and their slots.
#[async_trait]
pub trait Fleet: Send + Sync {
    /// Adds or updates a server; it is live for `timeout` from now.
    async fn register_server(
        &self,
        server: &GameServer,
        timeout: Duration,
    ) -> Result<(), StoreError>;

    /// Keeps a server live for `timeout` more; returns its allocations, or `None`
    /// if the server is unknown (never registered, or removed as dead).
    async fn server_heartbeat(
        &self,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<Vec<Allocation>>, StoreError>;

    /// Takes a free slot on a live server of `region` hosting `mode` (the one with
    /// the fewest free slots: servers fill up before new ones are used). Idempotent
    /// by `request.id`.
    async fn allocate(&self, request: &Allocation) -> Result<AllocateOutcome, StoreError>;

    /// The allocation with this id, if it holds a slot.
    async fn allocation(&self, id: &str) -> Result<Option<Allocation>, StoreError>;

    /// Frees the slot of allocation `id` on `server`. Returns false if it held none.
    async fn release_slot(&self, server: &str, id: &str) -> Result<bool, StoreError>;

    /// The server gets no new allocations; its current ones stay.
    async fn leave(&self, server: &str) -> Result<bool, StoreError>;

    /// Servers whose heartbeat lapsed.
    async fn lapsed_servers(&self) -> Result<Vec<String>, StoreError>;

    /// Removes a server whose heartbeat lapsed (nothing if it heartbeated
    /// meanwhile) and returns the allocations it held, now freed.
    async fn remove_lapsed(&self, server: &str) -> Result<Option<Vec<Allocation>>, StoreError>;

    /// Live servers and their free and used slots, by region (sorted by region).
    async fn census(&self) -> Result<Vec<RegionCensus>, StoreError>;
}
