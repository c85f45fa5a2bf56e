//! Pool leaders' fenced calls ([`crate::Leading`]), the fence-aware forms of
//! release and heartbeat that the plain worker calls pass no fence to, and the
//! plain worker's claim (a leader reads its pool instead: `lead_read.lua`).

use super::RedisStore;
use crate::keys::{PoolKeys, WAKE_CHANNEL};
use crate::{Claimed, Leading, StoreError};
use async_trait::async_trait;
use futures_util::future::try_join_all;
use mm_domain::{Match, MatchId, Pool, TicketId};
use std::time::Duration;

/// The fence argument of a script: '' for a worker that is not a leader.
pub(super) fn fence_arg(fence: Option<u64>) -> String {
    fence.map(|f| f.to_string()).unwrap_or_default()
}

/// Ids a leader's prune call looks at, at most.
const PRUNE_STEP: usize = 2000;

/// A claim's or a leader's read's answer: ticket JSON and first-claim flag.
fn claimed(got: Vec<(String, i64)>) -> Result<Vec<Claimed>, StoreError> {
    got.into_iter()
        .map(|(json, first)| {
            Ok(Claimed {
                ticket: serde_json::from_str(&json)?,
                first_claim: first == 1,
            })
        })
        .collect()
}

impl RedisStore {
    /// `claim.lua` for a claim worker, up to `max` tickets; with a `floor`,
    /// at most half the queue unless that is fewer.
    pub(super) async fn claim_as(
        &self,
        worker: &str,
        pool: &Pool,
        (max, floor): (usize, Option<usize>),
        start: f64,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        let keys = PoolKeys::new(pool);
        let got: Vec<(String, i64)> = self
            .scripts
            .claim
            .key(&keys.queue)
            .key(&keys.tickets)
            .key(&keys.state)
            .key(keys.held(worker))
            .key(&keys.leases)
            .key(&keys.armed)
            .key(&keys.leader)
            .arg(worker)
            .arg(max)
            .arg(start.clamp(0.0, 1.0))
            .arg(lease.as_millis() as u64)
            .arg(floor.map_or(String::new(), |f| f.to_string()))
            .arg(mm_domain::LANE_SPAN)
            .invoke_async(&mut self.conn())
            .await?;
        claimed(got)
    }

    pub(super) async fn release_as(
        &self,
        worker: &str,
        pool: &Pool,
        fence: Option<u64>,
        ids: Option<&[TicketId]>,
    ) -> Result<usize, StoreError> {
        if ids.is_some_and(|ids| ids.is_empty()) {
            return Ok(0);
        }
        let keys = PoolKeys::new(pool);
        let mut inv = self.scripts.release.prepare_invoke();
        inv.key(&keys.queue)
            .key(&keys.state)
            .key(keys.held(worker))
            .key(&keys.fence)
            .key(&keys.leader)
            .key(&keys.arrivals)
            .arg(fence_arg(fence));
        for id in ids.unwrap_or_default() {
            inv.arg(id.as_str());
        }
        Ok(inv.invoke_async(&mut self.conn()).await?)
    }

    pub(super) async fn heartbeat_as(
        &self,
        worker: &str,
        pool: &Pool,
        fence: Option<u64>,
        lease: Duration,
    ) -> Result<usize, StoreError> {
        let keys = PoolKeys::new(pool);
        Ok(self
            .scripts
            .heartbeat
            .key(&keys.leases)
            .key(keys.held(worker))
            .key(&keys.fence)
            .arg(worker)
            .arg(lease.as_millis() as u64)
            .arg(fence_arg(fence))
            .invoke_async(&mut self.conn())
            .await?)
    }
}

#[async_trait]
impl Leading for RedisStore {
    async fn lead_claim(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        max: usize,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        let keys = PoolKeys::new(pool);
        let got: Vec<(String, i64)> = self
            .scripts
            .lead_read
            .key(&keys.arrivals)
            .key(&keys.tickets)
            .key(&keys.state)
            .key(&keys.leases)
            .key(&keys.armed)
            .key(&keys.fence)
            .key(&keys.leader)
            .arg(worker)
            .arg(fence)
            .arg(max)
            .arg(lease.as_millis() as u64)
            .invoke_async(&mut self.conn())
            .await?;
        claimed(got)
    }

    async fn lead_complete(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        matches: &[Match],
        lease: Duration,
    ) -> Result<Vec<MatchId>, StoreError> {
        if matches.is_empty() {
            return Ok(Vec::new());
        }
        self.commit(worker, pool, Some(fence), matches, lease).await
    }

    async fn lead_release(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        ids: Option<&[TicketId]>,
    ) -> Result<usize, StoreError> {
        self.release_as(worker, pool, Some(fence), ids).await
    }

    async fn lead_heartbeat(
        &self,
        worker: &str,
        pool: &Pool,
        fence: u64,
        lease: Duration,
    ) -> Result<usize, StoreError> {
        self.heartbeat_as(worker, pool, Some(fence), lease).await
    }

    async fn lead_prune(
        &self,
        _worker: &str,
        pool: &Pool,
        fence: u64,
        ids: &[TicketId],
    ) -> Result<Vec<TicketId>, StoreError> {
        let keys = PoolKeys::new(pool);
        // In steps, so no call holds Redis long (a leader looks at its whole
        // pool every heartbeat), sent together; one call even for no ids, so
        // that a deposed leader hears it is one.
        let steps: Vec<&[TicketId]> = if ids.is_empty() {
            vec![&[]]
        } else {
            ids.chunks(PRUNE_STEP).collect()
        };
        let calls = steps.into_iter().map(|step| {
            let mut inv = self.scripts.lead_prune.prepare_invoke();
            inv.key(&keys.state).key(&keys.fence).arg(fence);
            for id in step {
                inv.arg(id.as_str());
            }
            let mut conn = self.conn();
            async move { inv.invoke_async::<Vec<String>>(&mut conn).await }
        });
        let mut gone = Vec::new();
        for ended in try_join_all(calls).await? {
            for id in ended {
                gone.push(TicketId::new(id).map_err(|e| StoreError::Corrupt(e.to_string()))?);
            }
        }
        Ok(gone)
    }

    async fn lead_recount(
        &self,
        _worker: &str,
        pool: &Pool,
        fence: u64,
        had: usize,
    ) -> Result<usize, StoreError> {
        let keys = PoolKeys::new(pool);
        let missed: i64 = self
            .scripts
            .lead_recount
            .key(&keys.queue)
            .key(&keys.arrivals)
            .key(&keys.fence)
            .arg(fence)
            .arg(had)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(missed.max(0) as usize)
    }

    async fn adopt(&self, worker: &str, pool: &Pool, fence: u64) -> Result<usize, StoreError> {
        let keys = PoolKeys::new(pool);
        // Every worker that ever heartbeated the pool and was not reclaimed since:
        // whoever holds tickets here, the new leader too (what it held under an
        // earlier token is in no one's memory now).
        let others: Vec<String> = redis::cmd("ZRANGE")
            .arg(&keys.leases)
            .arg(0)
            .arg(-1)
            .query_async(&mut self.conn())
            .await?;
        let mut inv = self.scripts.adopt.prepare_invoke();
        inv.key(&keys.queue)
            .key(&keys.state)
            .key(&keys.fence)
            .key(&keys.armed)
            .key(&keys.leader)
            .key(&keys.arrivals)
            .key(keys.held(worker));
        for other in others.iter().filter(|w| *w != worker) {
            inv.key(keys.held(other));
        }
        inv.arg(fence).arg(WAKE_CHANNEL).arg(pool.name());
        Ok(inv.invoke_async(&mut self.conn()).await?)
    }

    async fn candidates(
        &self,
        worker: &str,
        pool: &Pool,
        lease: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let keys = PoolKeys::new(pool);
        Ok(self
            .scripts
            .candidates
            .key(&keys.candidates)
            .arg(worker)
            .arg(lease.as_millis() as u64)
            .invoke_async(&mut self.conn())
            .await?)
    }
}
