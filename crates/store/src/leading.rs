//! Pool leaders (seeds 003 and 004): what the store gives `COORDINATION=leader`.
//!
//! A pool's leader is the worker holding the pool's token lock
//! ([`crate::LockName::pool_leader`]). Taking the lock returns a fencing token, one
//! more than the last leader's, and every write the leader makes to its pool
//! carries it: once a later leader has taken the lock, the store refuses the old
//! one's writes with [`StoreError::Fenced`] and changes nothing. A leader that
//! stalled past its lease (a long pause, SIGSTOP, a partition) and comes back can
//! therefore not claim, commit, release or extend a thing.
//!
//! The leader claims everything queued in its pool and keeps it: its held set is
//! the whole pool, mirrored in its memory, and it forms matches over all of it. A
//! new leader first [`Leading::adopt`]s: whatever is still held in the pool (the
//! old leader's tickets, or its own from an earlier term) goes back to the queue,
//! and it claims the lot.

use crate::{Claimed, StoreError};
use async_trait::async_trait;
use mm_domain::{Match, MatchId, Pool, TicketId};
use std::time::Duration;

/// A pool leader's fenced writes. `fence` is the token its lock gave it.
#[async_trait]
pub trait Leading {
    /// Claims up to `max` queued tickets of `pool`, lowest rating first, into the
    /// leader's held set, and sets its lease (as [`crate::Store::claim`]).
    async fn lead_claim(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        max: usize,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError>;

    /// [`crate::Store::complete`], fenced, and refused whole
    /// ([`StoreError::Fenced`]) while the pool's lock is not held: a leader
    /// commits only while it has held the lock without a break since it took
    /// it, so only its own claims took tickets meanwhile (a plain worker's claim
    /// is refused in a led pool) and a ticket still held is held by it. So
    /// `matches` may hold only tickets claimed under this `fence` (a leader
    /// that takes the lock again starts over from [`Leading::adopt`]).
    async fn lead_complete(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        matches: &[Match],
        lease: Duration,
    ) -> Result<Vec<MatchId>, StoreError>;

    /// [`crate::Store::release`], fenced: a leader handing its pool over.
    async fn lead_release(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        ids: Option<&[TicketId]>,
    ) -> Result<usize, StoreError>;

    /// [`crate::Store::heartbeat`], fenced.
    async fn lead_heartbeat(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        lease: Duration,
    ) -> Result<usize, StoreError>;

    /// Drops from the leader's held set the tickets (of `ids`, or all it holds)
    /// that are no longer searching: cancelled, withdrawn, matched through another
    /// pool. Returns their ids, for the leader to forget them too.
    async fn lead_prune(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        ids: Option<&[TicketId]>,
    ) -> Result<Vec<TicketId>, StoreError>;

    /// Returns every ticket held in `pool` to the queue (waking the pool): other
    /// workers' and `worker`'s own from an earlier term (a leader whose lock
    /// lapsed and that took it again knows none of them any more); the new
    /// leader's first step. How many.
    async fn adopt(&self, worker: &str, pool: &Pool, fence: u64) -> Result<usize, StoreError>;

    /// Registers `worker` as a candidate to lead `pool` until `lease` from now
    /// (`Duration::ZERO` withdraws it) and returns the live candidates, `worker`
    /// included while registered. Only workers running `COORDINATION=leader`
    /// register: a pool's owner is chosen among them, never a worker that only
    /// claims (and would not lead it).
    async fn candidates(
        &self,
        worker: &str,
        pool: &Pool,
        lease: Duration,
    ) -> Result<Vec<String>, StoreError>;
}
