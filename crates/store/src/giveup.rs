//! Tickets that waited too long: a mode's `give_up_after` ends a ticket still
//! waiting then as `timed_out` (reason `no_match_found`). The supervisor finds
//! them per pool ([`GiveUp::overdue`]) and ends each in every pool it waits in
//! ([`GiveUp::give_up`]); a held entry is marked, and its worker or leader drops
//! it. On Redis the pool's waiting-since index (per second of enqueue time)
//! finds them, a second at a time: a ticket is given up at most a second late
//! (plus the supervisor's interval). A region being retired takes its
//! tickets out of its pools ([`GiveUp::leave_pool`]) while they wait in another.

use crate::{CancelOutcome, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId, Pool, Ticket, TicketId};

#[async_trait]
pub trait GiveUp {
    /// Live tickets of `pool` queued before `before`, at most `max`, oldest
    /// seconds first.
    async fn overdue(
        &self,
        pool: &Pool,
        before: Millis,
        max: usize,
    ) -> Result<Vec<Ticket>, StoreError>;

    /// Ends `player`'s ticket `id` as `timed_out` with `reason` in every pool it
    /// waits in, unless it is in a match.
    async fn give_up(
        &self,
        player: &PlayerId,
        id: &TicketId,
        reason: &str,
    ) -> Result<CancelOutcome, StoreError>;

    /// Takes `player`'s ticket `id` out of `pool` alone, unless its entry
    /// there is in a match or finished: the entry reads withdrawn with
    /// `reason` (its region was closed), the ticket waits on in its other
    /// pools (a read of it says so), and nobody is told. A held entry is
    /// taken from its worker or leader, as a cancel takes it. Whether a
    /// waiting entry was taken out.
    async fn leave_pool(
        &self,
        pool: &Pool,
        player: &PlayerId,
        id: &TicketId,
        reason: &str,
    ) -> Result<bool, StoreError>;
}
