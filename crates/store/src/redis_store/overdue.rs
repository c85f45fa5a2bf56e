//! [`crate::GiveUp`] on Redis: `overdue.lua` lists a pool's tickets queued
//! before a time from its waiting-since index; giving one up is `cancel.lua`
//! ending each of its entries as timed out, taking it out of one pool is
//! `cancel.lua` on that pool's entry alone.

use super::RedisStore;
use crate::keys::PoolKeys;
use crate::{CancelOutcome, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId, Pool, Ticket, TicketId};

#[async_trait]
impl crate::GiveUp for RedisStore {
    async fn overdue(
        &self,
        pool: &Pool,
        before: Millis,
        max: usize,
    ) -> Result<Vec<Ticket>, StoreError> {
        let keys = PoolKeys::new(pool);
        let raw: Vec<String> = self
            .scripts
            .overdue
            .key(&keys.since)
            .key(&keys.state)
            .key(&keys.tickets)
            .arg(before)
            .arg(max)
            .invoke_async(&mut self.conn())
            .await?;
        raw.iter()
            .map(|j| serde_json::from_str(j).map_err(StoreError::from))
            .collect()
    }

    async fn give_up(
        &self,
        player: &PlayerId,
        id: &TicketId,
        reason: &str,
    ) -> Result<CancelOutcome, StoreError> {
        self.end(player, id, reason, true).await
    }

    async fn leave_pool(
        &self,
        pool: &Pool,
        _player: &PlayerId,
        id: &TicketId,
        reason: &str,
    ) -> Result<bool, StoreError> {
        let out = self.end_entry(pool, id, reason, false).await?;
        // {'cancelled', previous state} when a waiting entry was taken out.
        Ok(out.first().map(String::as_str) == Some("cancelled")
            && out.get(1).map(String::as_str) != Some("already"))
    }
}
