//! Tickets that waited too long: a mode's `give_up_after` ends a ticket still
//! waiting then as `timed_out` (reason `no_match_found`). The supervisor finds
//! them per pool ([`GiveUp::overdue`]) and ends each in every pool it waits in
//! ([`GiveUp::give_up`]); a held entry is marked, and its worker or leader drops
//! it. On Redis the pool's waiting-since index (per second of enqueue time)
//! finds them, a second at a time: a ticket is given up at most a second late
//! (plus the supervisor's interval).

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
}
