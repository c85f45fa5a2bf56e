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
//! The leader holds everything queued in its pool in its memory and forms
//! matches over all of it. A new leader first [`Leading::adopt`]s: whatever is
//! still held in the pool (a claim worker's, or a leader's of an earlier
//! release) goes back to the queue, and from then on [`Leading::lead_claim`]
//! hands it each ticket queued in its pool once, the whole queue first.
//!
//! On Redis a leader reads its pool instead of taking from it: the tickets
//! stay in the queue, marked held, until the leader commits their match
//! (`complete.lua` takes them out of the queue then); while the leader's lock
//! exists every script that queues a ticket also pushes it to the pool's
//! arrivals list, which `lead_read.lua` reads (seed 000's claim, moving each
//! ticket into a held set and out again, was a sixth of a drained ticket's
//! Redis time). A dead leader leaves nothing to hand back, and its depth reads
//! as queued, not processing. The memory store keeps a held set per leader;
//! the contract is the same.

use crate::{Claimed, StoreError};
use async_trait::async_trait;
use mm_domain::{Match, MatchId, Pool, TicketId};
use std::time::Duration;

/// A pool leader's fenced writes. `fence` is the token its lock gave it.
#[async_trait]
pub trait Leading {
    /// Up to `max` tickets of `pool` the leader has not had yet: after
    /// [`Leading::adopt`], the whole queue in its order (lane, then
    /// rating), then what was
    /// queued since, in the order it came; each marked held (a first one's
    /// `first_claim` set) and the leader's lease set (as
    /// [`crate::Store::claim`]). Refused ([`StoreError::Fenced`]) while the
    /// lock is not held.
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

    /// Of `ids` (tickets the leader had), those no longer searching:
    /// cancelled, withdrawn, matched through another pool, dropped from a
    /// held set where there is one. Returns their ids, for the leader to
    /// forget them too.
    async fn lead_prune(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        ids: &[TicketId],
    ) -> Result<Vec<TicketId>, StoreError>;

    /// A leader's count, after a [`Leading::lead_prune`] and with no read in
    /// flight: if `pool` holds more tickets searching than the `had` the
    /// leader has and those on their way to it, some were queued without
    /// being handed over (a process of an older release queueing beside this
    /// one), and the whole queue is handed over again (the leader keeps one
    /// of each). Returns how many were missed (0 on the memory store, which
    /// hands over whatever is queued).
    async fn lead_recount(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        had: usize,
    ) -> Result<usize, StoreError>;

    /// Returns every ticket held in `pool` to the queue (waking the pool): other
    /// workers' and `worker`'s own from an earlier term (a leader whose lock
    /// lapsed and that took it again knows none of them any more), and has the
    /// next [`Leading::lead_claim`]s hand over the whole queue; the new
    /// leader's first step. How many went back to the queue.
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
