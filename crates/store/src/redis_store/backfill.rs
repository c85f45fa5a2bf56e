//! [`Backfills`] on Redis: one hash of backfills per pool, beside the matches'
//! lifecycle hashes in the pool's slot (`backfill_open.lua`,
//! `backfill_close.lua`, `backfill_list.lua`).

use super::RedisStore;
use crate::keys::PoolKeys;
use crate::{Backfill, BackfillOutcome, Backfills, StoreError};
use async_trait::async_trait;
use mm_domain::{MatchId, MatchStatus, Pool};
use std::time::Duration;

/// A script's answer (`{'open', json}`, `{'not_running', status}`, ...) as an
/// outcome.
fn outcome(reply: Vec<String>) -> Result<BackfillOutcome, StoreError> {
    let corrupt = || StoreError::Corrupt(format!("backfill script answered {reply:?}"));
    match reply.first().map(String::as_str) {
        Some("open") => Ok(BackfillOutcome::Open(serde_json::from_str(
            reply.get(1).ok_or_else(corrupt)?,
        )?)),
        Some("closed") => Ok(BackfillOutcome::Closed),
        Some("no_match") => Ok(BackfillOutcome::NoMatch),
        Some("not_yours") => Ok(BackfillOutcome::NotYours),
        Some("not_running") => reply
            .get(1)
            .and_then(|s| MatchStatus::parse(s))
            .map(BackfillOutcome::NotRunning)
            .ok_or_else(corrupt),
        _ => Err(corrupt()),
    }
}

impl RedisStore {
    async fn list_backfills(
        &self,
        pool: &Pool,
        id: Option<&MatchId>,
    ) -> Result<Vec<Backfill>, StoreError> {
        let keys = PoolKeys::new(pool);
        let raw: Vec<String> = self
            .scripts
            .backfill_list
            .key(&keys.backfills)
            .arg(&keys.life_prefix)
            .arg(id.map_or("", MatchId::as_str))
            .invoke_async(&mut self.conn())
            .await?;
        raw.iter()
            .map(|json| serde_json::from_str(json).map_err(StoreError::from))
            .collect()
    }
}

#[async_trait]
impl Backfills for RedisStore {
    async fn open_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        open: &[u32],
        ttl: Duration,
    ) -> Result<BackfillOutcome, StoreError> {
        if open.is_empty() {
            return self.close_backfill(pool, id, server).await;
        }
        let keys = PoolKeys::new(pool);
        let reply: Vec<String> = self
            .scripts
            .backfill_open
            .key(keys.life(id.as_str()))
            .key(&keys.backfills)
            .arg(id.as_str())
            .arg(server.unwrap_or(""))
            .arg(serde_json::to_string(open)?)
            .arg(ttl.as_millis() as u64)
            .invoke_async(&mut self.conn())
            .await?;
        outcome(reply)
    }

    async fn close_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
    ) -> Result<BackfillOutcome, StoreError> {
        let keys = PoolKeys::new(pool);
        let reply: Vec<String> = self
            .scripts
            .backfill_close
            .key(keys.life(id.as_str()))
            .key(&keys.backfills)
            .arg(id.as_str())
            .arg(server.unwrap_or(""))
            .invoke_async(&mut self.conn())
            .await?;
        outcome(reply)
    }

    async fn backfill(&self, pool: &Pool, id: &MatchId) -> Result<Option<Backfill>, StoreError> {
        Ok(self.list_backfills(pool, Some(id)).await?.pop())
    }

    async fn open_backfills(&self, pool: &Pool) -> Result<Vec<Backfill>, StoreError> {
        Ok(crate::backfill::with_seats(
            self.list_backfills(pool, None).await?,
        ))
    }
}
