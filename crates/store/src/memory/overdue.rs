//! [`crate::GiveUp`] for the in-memory store: the live tickets of a pool queued
//! before a time, ending one as timed out, and taking one out of a pool.

use super::{MemoryStore, State};
use crate::{CancelOutcome, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId, Pool, Ticket, TicketId, now_ms};

#[async_trait]
impl crate::GiveUp for MemoryStore {
    async fn overdue(
        &self,
        pool: &Pool,
        before: Millis,
        max: usize,
    ) -> Result<Vec<Ticket>, StoreError> {
        let inner = self.lock();
        let Some(ps) = inner.pools.get(pool) else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Ticket> = ps
            .queue
            .iter()
            .map(|(_, id)| id)
            .chain(ps.held.values().flat_map(|h| h.keys()))
            .filter(|id| ps.state.get(*id).is_some_and(State::is_live))
            .filter_map(|id| ps.tickets.get(id))
            .filter(|t| t.enqueued_at < before)
            .cloned()
            .collect();
        out.sort_by_key(|t| t.enqueued_at);
        out.truncate(max);
        Ok(out)
    }

    async fn give_up(
        &self,
        player: &PlayerId,
        id: &TicketId,
        reason: &str,
    ) -> Result<CancelOutcome, StoreError> {
        Ok(self
            .lock()
            .end(player, id, State::TimedOut(reason.to_string()), now_ms()))
    }

    async fn leave_pool(
        &self,
        pool: &Pool,
        _player: &PlayerId,
        id: &TicketId,
        reason: &str,
    ) -> Result<bool, StoreError> {
        Ok(self.lock().withdraw(pool, id, reason, now_ms()).is_some())
    }
}
