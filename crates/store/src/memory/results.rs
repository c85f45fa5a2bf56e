//! [`Results`] in process memory: the same steps as `results_claim.lua`,
//! `results_queue.lua`, `results_ack.lua` and `skill_mark.lua`, each under the
//! store's one lock.

use super::MemoryStore;
use crate::{Results, StoreError};
use async_trait::async_trait;
use mm_domain::{MatchId, PlayerId, Pool, RatingJob, now_ms};
use std::time::Duration;

#[async_trait]
impl Results for MemoryStore {
    async fn claim_results(
        &self,
        pool: &Pool,
        max: usize,
        lease: Duration,
    ) -> Result<Vec<RatingJob>, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let mut ready: Vec<(&MatchId, &mut (RatingJob, u64))> = ps
            .results
            .iter_mut()
            .filter(|(_, (_, at))| *at <= now)
            .collect();
        ready.sort_by_key(|(id, (_, at))| (*at, (*id).clone()));
        Ok(ready
            .into_iter()
            .take(max)
            .map(|(_, (job, at))| {
                *at = now + lease.as_millis() as u64;
                job.clone()
            })
            .collect())
    }

    async fn queue_result(&self, pool: &Pool, job: &RatingJob) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        if ps.results.contains_key(&job.matched.id) {
            return Ok(false);
        }
        ps.results
            .insert(job.matched.id.clone(), (job.clone(), now_ms()));
        Ok(true)
    }

    async fn ack_results(&self, pool: &Pool, ids: &[MatchId]) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        for id in ids {
            ps.results.remove(id);
        }
        Ok(())
    }

    async fn pending_results(&self, pool: &Pool) -> Result<u64, StoreError> {
        Ok(self
            .lock()
            .pools
            .get(pool)
            .map_or(0, |ps| ps.results.len() as u64))
    }

    async fn mark_ratings(&self, marks: &[(PlayerId, String, u64)]) -> Result<(), StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        for (player, mode, version) in marks {
            let state = inner.player_mut(player, now);
            let mark = state.marks.entry(mode.clone()).or_insert(0);
            *mark = (*mark).max(*version);
        }
        Ok(())
    }
}
