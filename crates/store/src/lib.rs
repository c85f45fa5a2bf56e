//! Matchmaker state: the [`Store`] trait that every component talks to, and its two
//! implementations with the same semantics:
//!
//! - [`RedisStore`]: shared state for many processes. Every atomic step is one Lua
//!   script (in `src/lua/`) touching keys of one hash slot (see [`keys`]).
//! - [`MemoryStore`]: in-process state for the embedded `serve` default.
//!
//! Ticket life in the store: `enqueue` puts a ticket in its pool's queue,
//! ordered by lane (builds kept apart: [`mm_domain::Ticket::lane`]), then rating; `claim` moves a batch into a worker's held set under a lease; `complete`
//! commits matches, `release` returns the rest; `heartbeat` extends the lease and
//! `reclaim` returns the tickets of a worker whose lease expired. `cancel` ends a
//! ticket that is not in a match. Committed matches sit in an outbox until
//! `fan_out` has written them to each player's history and published the events.
//!
//! After that a match lives on through the [`Lifecycle`] steps (ready check,
//! placement, result) that `mm_server::saga` drives, and game servers and their
//! slots are kept through [`Fleet`]. Results wait for the rating service, and
//! players' rating freshness is marked, through [`Results`]. Rate limits shared by
//! every ingress are counted through [`Limits`], parties are kept through
//! [`Parties`], block lists through [`Blocks`], token locks with fencing tokens through [`Locks`], and pool
//! leaders' fenced writes through [`Leading`]. Which players have an event
//! socket open is noted through [`Online`]. Running matches' open seats are
//! kept through [`Backfills`] (in progress).

mod api;
mod backfill;
mod blocks;
mod error;
mod fleet;
mod giveup;
mod hub;
pub mod keys;
mod leading;
mod lifecycle;
mod limits;
mod locks;
mod memory;
mod online;
pub mod outage;
mod parties;
mod redis_store;
mod registry;
mod results;
mod scripts;
mod wake;

pub use api::{
    Activated, CancelOutcome, Claimed, Depths, EnqueueOutcome, MATCHED_ELSEWHERE, RECENT_MATCHES,
    Store, searching,
};
pub use backfill::{
    Backfill, BackfillOutcome, Backfills, FillMark, JoinOutcome, MAX_BACKFILL_TEAMS, UnjoinOutcome,
};
pub use blocks::{Blocked, Blocks, MAX_BLOCKS, MemoryBlocks};
pub use error::StoreError;
pub use fleet::{AllocateOutcome, Allocation, Fleet, GameServer, RegionCensus};
pub use giveup::GiveUp;
pub use hub::{Events, Hub};
pub use leading::Leading;
pub use lifecycle::{AnswerOutcome, Lifecycle, Transition};
pub use limits::{Limits, MemoryLimits, Rate, RateCheck, RateKey, Verdict, Who};
pub use locks::{LOCK_RETRY_PAUSE, LOCK_TRIES, LockName, Locks, MemoryLocks, TokenLock};
pub use memory::MemoryStore;
pub use online::{ONLINE_KEPT, OPEN_KEPT, Online};
pub use parties::{MemoryParties, PARTY_TTL, Parties, PartyLimits, PartyMerge};
pub use redis_store::{RedisEviction, RedisPrimary, RedisStore, RedisTls, events};
pub use registry::Registry;
pub use results::Results;
pub use wake::{Wake, WakeUps, Wakes};

/// How many matches a player's history keeps.
pub const HISTORY_LEN: usize = 100;
/// How long a match stays in its players' histories.
pub const HISTORY_TTL: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);
