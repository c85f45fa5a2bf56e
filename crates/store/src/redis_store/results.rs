//! [`Results`] on Redis: each pool's results wait in its own slot (`rj`/`rq`, see
//! [`crate::keys`]), queued by `transition.lua` and claimed under a lease by
//! `results_claim.lua`; freshness marks live in each player's slot (`rv`).

use super::{PLAYER_TTL_SECS, RedisStore};
use crate::keys::{PlayerKeys, PoolKeys};
use crate::{Results, StoreError};
use async_trait::async_trait;
use futures_util::future::try_join_all;
use mm_domain::{MatchId, PlayerId, Pool, RatingJob};
use redis::AsyncCommands;
use std::time::Duration;

#[async_trait]
impl Results for RedisStore {
    async fn claim_results(
        &self,
        pool: &Pool,
        max: usize,
        lease: Duration,
    ) -> Result<Vec<RatingJob>, StoreError> {
        let keys = PoolKeys::new(pool);
        let jobs: Vec<String> = self
            .scripts
            .results_claim
            .key(&keys.results)
            .key(&keys.results_queue)
            .arg(lease.as_millis() as u64)
            .arg(max)
            .invoke_async(&mut self.conn())
            .await?;
        jobs.iter()
            .map(|j| serde_json::from_str(j).map_err(StoreError::from))
            .collect()
    }

    async fn queue_result(&self, pool: &Pool, job: &RatingJob) -> Result<bool, StoreError> {
        let keys = PoolKeys::new(pool);
        let queued: i64 = self
            .scripts
            .results_queue
            .key(&keys.results)
            .key(&keys.results_queue)
            .arg(job.matched.id.as_str())
            .arg(serde_json::to_string(job)?)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(queued == 1)
    }

    async fn ack_results(&self, pool: &Pool, ids: &[MatchId]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let keys = PoolKeys::new(pool);
        let mut inv = self.scripts.results_ack.prepare_invoke();
        inv.key(&keys.results).key(&keys.results_queue);
        for id in ids {
            inv.arg(id.as_str());
        }
        let _: i64 = inv.invoke_async(&mut self.conn()).await?;
        Ok(())
    }

    async fn pending_results(&self, pool: &Pool) -> Result<u64, StoreError> {
        let keys = PoolKeys::new(pool);
        Ok(self.conn().zcard(&keys.results_queue).await?)
    }

    async fn mark_ratings(&self, marks: &[(PlayerId, String, u64)]) -> Result<(), StoreError> {
        try_join_all(marks.iter().map(|(player, mode, version)| async move {
            let _: i64 = self
                .scripts
                .skill_mark
                .key(PlayerKeys::new(player).marks)
                .arg(mode)
                .arg(*version)
                .arg(PLAYER_TTL_SECS)
                .invoke_async(&mut self.conn())
                .await?;
            Ok::<_, StoreError>(())
        }))
        .await?;
        Ok(())
    }
}
