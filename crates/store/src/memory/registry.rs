//! [`Registry`] for the in-memory store: the pools its process's supervisor
//! noted, by when. One process serves every pool of its store, so a pool goes
//! unsupervised only if that process stops supervising it.

use super::MemoryStore;
use crate::{Registry, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, Pool};

#[async_trait]
impl Registry for MemoryStore {
    async fn supervised(&self, pools: &[Pool], now: Millis) -> Result<(), StoreError> {
        let mut noted = self.supervised.lock().unwrap_or_else(|p| p.into_inner());
        for p in pools {
            noted.insert(p.clone(), now);
        }
        Ok(())
    }

    async fn unsupervised(
        &self,
        before: Millis,
        max: usize,
    ) -> Result<Vec<(Pool, Millis)>, StoreError> {
        let noted = self.supervised.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(Pool, Millis)> = noted
            .iter()
            .filter(|&(_, &at)| at < before)
            .map(|(p, &at)| (p.clone(), at))
            .collect();
        out.sort_by_key(|(p, at)| (*at, p.name()));
        out.truncate(max);
        Ok(out)
    }

    async fn forget_pool(&self, pool: &Pool, before: Millis) -> Result<(), StoreError> {
        let mut noted = self.supervised.lock().unwrap_or_else(|p| p.into_inner());
        if noted.get(pool).is_some_and(|&at| at < before) {
            noted.remove(pool);
        }
        Ok(())
    }

    async fn live_workers(&self, pool: &Pool) -> Result<u64, StoreError> {
        let now = mm_domain::now_ms();
        let inner = self.lock();
        Ok(inner.pools.get(pool).map_or(0, |ps| {
            ps.leases.values().filter(|&&until| until > now).count() as u64
        }))
    }
}
