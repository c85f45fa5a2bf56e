//! [`Blocks`] on Redis: a player's block list and its reverse, sets in the
//! player's own slot (`block.lua` bounds the list).

use super::RedisStore;
use crate::StoreError;
use crate::blocks::{Blocked, Blocks, MAX_BLOCKS};
use crate::keys::PlayerKeys;
use async_trait::async_trait;
use futures_util::future::try_join_all;
use mm_domain::PlayerId;
use std::collections::BTreeSet;

fn ids(raw: Vec<String>) -> Result<Vec<PlayerId>, StoreError> {
    raw.into_iter()
        .map(|p| PlayerId::new(p).map_err(|e| StoreError::Corrupt(e.to_string())))
        .collect()
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
        if added == 0 {
            return Ok(Blocked::Full);
        }
        // The other's reverse set, in their slot (a retry of the block mends it
        // if this step is lost).
        let _: i64 = redis::cmd("SADD")
            .arg(PlayerKeys::new(other).blocked_by)
            .arg(player.as_str())
            .query_async(&mut self.conn())
            .await?;
        Ok(Blocked::Done)
    }

    async fn unblock(&self, player: &PlayerId, other: &PlayerId) -> Result<bool, StoreError> {
        let removed: i64 = redis::cmd("SREM")
            .arg(PlayerKeys::new(player).blocks)
            .arg(other.as_str())
            .query_async(&mut self.conn())
            .await?;
        let _: i64 = redis::cmd("SREM")
            .arg(PlayerKeys::new(other).blocked_by)
            .arg(player.as_str())
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
            let k = PlayerKeys::new(p);
            let mut pipe = redis::pipe();
            pipe.cmd("SMEMBERS")
                .arg(&k.blocks)
                .cmd("SMEMBERS")
                .arg(&k.blocked_by);
            let (own, by): (Vec<String>, Vec<String>) = pipe.query_async(&mut self.conn()).await?;
            Ok::<_, StoreError>(own.into_iter().chain(by))
        });
        let all: BTreeSet<String> = try_join_all(reads).await?.into_iter().flatten().collect();
        ids(all.into_iter().collect())
    }
}
