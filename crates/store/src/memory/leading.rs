//! Pool leaders' fenced writes ([`crate::Leading`]) in process: each write checks
//! the pool's fencing counter behind the same gate lock takers pass, then does
//! what the plain worker's call does.

use super::{MemoryStore, State};
use crate::{Claimed, Leading, LockName, Store, StoreError};
use async_trait::async_trait;
use mm_domain::{Match, MatchId, Millis, Pool, TicketId, now_ms};
use std::time::Duration;

impl MemoryStore {
    /// Holds the gate while `fence` is the pool's latest; refuses it otherwise.
    async fn fenced(
        &self,
        pool: &Pool,
        fence: u64,
    ) -> Result<tokio::sync::MutexGuard<'_, ()>, StoreError> {
        let gate = self.leading.lock().await;
        let current = self.locks.fence(&LockName::pool_leader(pool));
        if fence < current {
            return Err(StoreError::Fenced(format!(
                "fencing token {fence} is stale: the pool has a later leader ({current})"
            )));
        }
        Ok(gate)
    }
}

#[async_trait]
impl Leading for MemoryStore {
    async fn lead_claim(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        max: usize,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        let _gate = self.fenced(pool, fence).await?;
        Ok(self.claim_batch(worker, pool, max, None, 0.0, lease))
    }

    async fn lead_complete(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        matches: &[Match],
        lease: Duration,
    ) -> Result<Vec<MatchId>, StoreError> {
        let _gate = self.fenced(pool, fence).await?;
        // As Redis: a leader whose lock lapsed commits nothing, even if no one
        // took the lock since (claim workers may have claimed meanwhile).
        if !self.locks.is_held(&LockName::pool_leader(pool)) {
            return Err(StoreError::Fenced(format!(
                "the pool leader lock lapsed: token {fence} no longer holds it"
            )));
        }
        self.complete(worker, pool, matches, lease).await
    }

    async fn lead_release(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        ids: Option<&[TicketId]>,
    ) -> Result<usize, StoreError> {
        let _gate = self.fenced(pool, fence).await?;
        self.release(worker, pool, ids).await
    }

    async fn lead_heartbeat(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        lease: Duration,
    ) -> Result<usize, StoreError> {
        let _gate = self.fenced(pool, fence).await?;
        self.heartbeat(worker, pool, lease).await
    }

    async fn lead_prune(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        ids: &[TicketId],
    ) -> Result<Vec<TicketId>, StoreError> {
        let _gate = self.fenced(pool, fence).await?;
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let Some(held) = ps.held.get_mut(worker) else {
            return Ok(Vec::new());
        };
        let gone: Vec<TicketId> = ids
            .iter()
            .filter(|id| held.contains_key(*id) && ps.state.get(*id) != Some(&State::Held))
            .cloned()
            .collect();
        for id in &gone {
            held.remove(id);
        }
        if held.is_empty() {
            ps.held.remove(worker);
        }
        Ok(gone)
    }

    async fn lead_recount(
        &self,
        _worker: &str,
        pool: &Pool,
        fence: u64,
        _had: usize,
    ) -> Result<usize, StoreError> {
        let _gate = self.fenced(pool, fence).await?;
        Ok(0)
    }

    async fn adopt(&self, _worker: &str, pool: &Pool, fence: u64) -> Result<usize, StoreError> {
        let _gate = self.fenced(pool, fence).await?;
        let back = {
            let mut inner = self.lock();
            let ps = inner.pool(pool);
            // The new leader's own held set too: what it held under an earlier
            // token is in no one's memory now.
            let holders: Vec<String> = ps.held.keys().cloned().collect();
            holders
                .iter()
                .map(|w| {
                    let ids = ps.held_ids(w);
                    ps.requeue(w, &ids)
                })
                .sum()
        };
        if back > 0 {
            self.wakes.wake(&pool.name());
        }
        Ok(back)
    }

    async fn candidates(
        &self,
        worker: &str,
        pool: &Pool,
        lease: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let candidates = &mut inner.pool(pool).candidates;
        if lease.is_zero() {
            candidates.remove(worker);
        } else {
            candidates.insert(worker.to_string(), now + lease.as_millis() as Millis);
        }
        candidates.retain(|_, until| *until >= now);
        let mut live: Vec<String> = candidates.keys().cloned().collect();
        live.sort();
        Ok(live)
    }
}
