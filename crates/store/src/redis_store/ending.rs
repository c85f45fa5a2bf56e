//! Ending a ticket's entries on Redis (`cancel.lua`, one pool's entry a
//! call): a player's cancel, the matchmaker's withdrawal or give-up in every
//! pool the ticket waits in ([`RedisStore::end`]), and one pool's entry alone
//! when its region closes ([`crate::GiveUp::leave_pool`]).

use super::RedisStore;
use crate::keys::PoolKeys;
use crate::{CancelOutcome, StoreError};
use futures_util::future::try_join_all;
use mm_domain::{MatchId, PlayerId, Pool, TicketId};

impl RedisStore {
    /// `cancel.lua` on ticket `id`'s entry in `pool` alone: cancelled, withdrawn
    /// with `reason` (when not empty), or timed out with it (`timed_out`),
    /// unless it is in a match or over. The script's answer.
    pub(super) async fn end_entry(
        &self,
        pool: &Pool,
        id: &TicketId,
        reason: &str,
        timed_out: bool,
    ) -> Result<Vec<String>, StoreError> {
        let keys = PoolKeys::new(pool);
        Ok(self
            .scripts
            .cancel
            .key(&keys.queue)
            .key(&keys.state)
            .key(&keys.done)
            .arg(id.as_str())
            .arg(reason)
            .arg(if timed_out { "t" } else { "" })
            .invoke_async(&mut self.conn())
            .await?)
    }

    /// Ends `player`'s ticket `id` in every pool it waits in (`cancel.lua` on
    /// each): cancelled, withdrawn with `reason` (when not empty), or timed out
    /// with it (`timed_out`); a matched ticket is left alone.
    pub(super) async fn end(
        &self,
        player: &PlayerId,
        id: &TicketId,
        reason: &str,
        timed_out: bool,
    ) -> Result<CancelOutcome, StoreError> {
        let pools = self.ticket_pools(player, id).await?;
        let cancels = pools
            .iter()
            .map(|pool| self.end_entry(pool, id, reason, timed_out));
        // Matched anywhere wins; else cancelled if any entry was live.
        let mut outcome = CancelOutcome::NotFound;
        for out in try_join_all(cancels).await? {
            let detail = out.get(1).map(String::as_str);
            outcome = match (out.first().map(String::as_str), detail, outcome) {
                (_, _, matched @ CancelOutcome::Matched(_)) => matched,
                (Some("matched"), Some(mid), _) => CancelOutcome::Matched(
                    MatchId::new(mid).map_err(|e| StoreError::Corrupt(e.to_string()))?,
                ),
                (_, _, CancelOutcome::Cancelled) => CancelOutcome::Cancelled,
                (Some("cancelled"), Some("already"), _) | (Some("withdrawn"), _, _) => {
                    CancelOutcome::AlreadyCancelled
                }
                (Some("cancelled"), _, _) => CancelOutcome::Cancelled,
                (_, _, other) => other,
            };
        }
        Ok(outcome)
    }
}
