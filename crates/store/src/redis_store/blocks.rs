//! [`Blocks`] on Redis: a player's block list, a set in the player's own
//! slot (`block.lua` bounds it). A block reaches the
//! players' waiting tickets through `late_block.lua`, in each pool they wait in.

use super::RedisStore;
use crate::StoreError;
use crate::blocks::{Blocked, Blocks, MAX_BLOCKS, ON_ITS_WAY_MS};
use crate::keys::{PlayerKeys, PoolKeys};
use async_trait::async_trait;
use futures_util::future::try_join_all;
use mm_domain::{PlayerId, Pool, Ticket};
use std::collections::BTreeSet;

fn ids(raw: Vec<String>) -> Result<Vec<PlayerId>, StoreError> {
    raw.into_iter()
        .map(|p| PlayerId::new(p).map_err(|e| StoreError::Corrupt(e.to_string())))
        .collect()
}

/// Times a ticket's copy is read again after another writer changed it
/// between the read and the rewrite (another block of the same player's).
const REWRITES: usize = 8;

/// What a block or an unblock does to a waiting ticket's copy.
#[derive(Clone, Copy)]
enum Edit<'a> {
    /// Keeps it apart from these players too.
    Add(&'a [PlayerId]),
    /// Takes this player out, unless one of its players still blocks them.
    Drop(&'a PlayerId),
}

impl RedisStore {
    /// Rewrites ticket `id`'s copy in `pool` by `edit` (`late_block.lua`),
    /// reading it again while another writer changed it between the read and
    /// the rewrite: false if the pool has no data for it.
    async fn rewrite_in(&self, pool: &Pool, id: &str, edit: Edit<'_>) -> Result<bool, StoreError> {
        let keys = PoolKeys::new(pool);
        for _ in 0..REWRITES {
            let read: Option<String> = redis::cmd("HGET")
                .arg(&keys.tickets)
                .arg(id)
                .query_async(&mut self.conn())
                .await?;
            let Some(read) = read else {
                return Ok(false);
            };
            let ticket: Ticket = serde_json::from_str(&read)?;
            let (new, take) = match edit {
                // A copy that holds them already is rewritten all the same,
                // counted, and not taken from its holder.
                Edit::Add(others) => match crate::blocks::with_blocks(&ticket, others) {
                    Some(new) => (new, true),
                    None => (crate::blocks::recounted(&ticket), false),
                },
                // Unless one of its players still blocks them, read after
                // each read of the copy.
                Edit::Drop(other) => {
                    if !ticket.blocks.contains(other) {
                        return Ok(true);
                    }
                    let still = self.kept_apart(&ticket.players).await?;
                    match crate::blocks::without_block(&ticket, other, &still) {
                        Some(new) => (new, true),
                        None => return Ok(true),
                    }
                }
            };
            let done: String = self
                .scripts
                .late_block
                .key(&keys.tickets)
                .key(&keys.state)
                .key(&keys.queue)
                .key(&keys.leases)
                .key(&keys.leader)
                .key(&keys.arrivals)
                .key(&keys.armed)
                .arg(id)
                .arg(&read)
                .arg(serde_json::to_string(&new)?)
                .arg(keys.held(""))
                .arg(crate::keys::WAKE_CHANNEL)
                .arg(pool.name())
                .arg(if take { "1" } else { "0" })
                .invoke_async(&mut self.conn())
                .await?;
            match done.as_str() {
                "changed" => continue,
                "gone" => return Ok(false),
                _ => return Ok(true),
            }
        }
        Err(StoreError::Corrupt(format!(
            "ticket {id} in {}: rewritten under every one of {REWRITES} blocks",
            pool.name()
        )))
    }

    /// `player`'s live tickets: each id and the pools it waits in.
    async fn live_tickets(
        &self,
        player: &PlayerId,
    ) -> Result<Vec<(String, Vec<Pool>)>, StoreError> {
        let live: Vec<String> = redis::cmd("HVALS")
            .arg(PlayerKeys::new(player).active)
            .query_async(&mut self.conn())
            .await?;
        Ok(live
            .iter()
            .filter_map(|entry| {
                let (id, pools) = entry.split_once('|')?;
                Some((
                    id.to_string(),
                    pools.split(',').filter_map(Pool::parse).collect(),
                ))
            })
            .collect())
    }

    /// Whether `player`'s ticket `id` was activated within [`ON_ITS_WAY_MS`]
    /// (the activation time its index entry carries, on Redis's clock, read
    /// against this process's: a few milliseconds apart).
    async fn on_its_way(&self, player: &PlayerId, id: &str) -> Result<bool, StoreError> {
        let entry: Option<String> = redis::cmd("HGET")
            .arg(PlayerKeys::new(player).tickets)
            .arg(id)
            .query_async(&mut self.conn())
            .await?;
        let at = entry.as_deref().and_then(crate::keys::indexed_at);
        Ok(at.is_some_and(|at| mm_domain::now_ms().saturating_sub(at) < ON_ITS_WAY_MS))
    }
}

#[async_trait]
impl Blocks for RedisStore {
    async fn block(&self, player: &PlayerId, other: &PlayerId) -> Result<Blocked, StoreError> {
        let added: i64 = self
            .scripts
            .block
            .key(PlayerKeys::new(player).blocks)
            .arg(other.as_str())
            .arg(MAX_BLOCKS)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(if added == 0 {
            Blocked::Full
        } else {
            Blocked::Done
        })
    }

    async fn unblock(&self, player: &PlayerId, other: &PlayerId) -> Result<bool, StoreError> {
        let removed: i64 = redis::cmd("SREM")
            .arg(PlayerKeys::new(player).blocks)
            .arg(other.as_str())
            .query_async(&mut self.conn())
            .await?;
        Ok(removed == 1)
    }

    async fn blocks(&self, player: &PlayerId) -> Result<Vec<PlayerId>, StoreError> {
        let mut raw: Vec<String> = redis::cmd("SMEMBERS")
            .arg(PlayerKeys::new(player).blocks)
            .query_async(&mut self.conn())
            .await?;
        raw.sort();
        ids(raw)
    }

    async fn kept_apart(&self, players: &[PlayerId]) -> Result<Vec<PlayerId>, StoreError> {
        let reads = players.iter().map(|p| async move {
            let own: Vec<String> = redis::cmd("SMEMBERS")
                .arg(PlayerKeys::new(p).blocks)
                .query_async(&mut self.conn())
                .await?;
            Ok::<_, StoreError>(own)
        });
        let all: BTreeSet<String> = try_join_all(reads).await?.into_iter().flatten().collect();
        ids(all.into_iter().collect())
    }

    async fn add_blocks_to_waiting(
        &self,
        player: &PlayerId,
        others: &[PlayerId],
    ) -> Result<bool, StoreError> {
        let mut all_queued = true;
        for (id, pools) in self.live_tickets(player).await? {
            let found = try_join_all(
                pools
                    .iter()
                    .map(|p| self.rewrite_in(p, &id, Edit::Add(others))),
            )
            .await?;
            if !found.contains(&true) {
                all_queued &= !self.on_its_way(player, &id).await?;
            }
        }
        Ok(all_queued)
    }

    async fn drop_block_from_waiting(
        &self,
        player: &PlayerId,
        other: &PlayerId,
    ) -> Result<(), StoreError> {
        for (id, pools) in self.live_tickets(player).await? {
            try_join_all(
                pools
                    .iter()
                    .map(|p| self.rewrite_in(p, &id, Edit::Drop(other))),
            )
            .await?;
        }
        Ok(())
    }
}
