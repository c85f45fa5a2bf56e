//! [`Registry`] on Redis: one sorted set of pool names scored by when a
//! supervisor last served them ([`keys::POOL_REGISTRY`]), in a slot of its
//! own; a handful of members, written once per supervisor pass. A pool's live
//! workers are its leases' zset counted from the Redis clock's now.

use super::RedisStore;
use crate::keys::{self, PoolKeys};
use crate::{Registry, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, Pool};

#[async_trait]
impl Registry for RedisStore {
    async fn supervised(&self, pools: &[Pool], now: Millis) -> Result<(), StoreError> {
        if pools.is_empty() {
            return Ok(());
        }
        let mut cmd = redis::cmd("ZADD");
        cmd.arg(keys::POOL_REGISTRY);
        for p in pools {
            cmd.arg(now).arg(p.name());
        }
        let _: i64 = cmd.query_async(&mut self.conn()).await?;
        Ok(())
    }

    async fn unsupervised(
        &self,
        before: Millis,
        max: usize,
    ) -> Result<Vec<(Pool, Millis)>, StoreError> {
        let raw: Vec<(String, f64)> = redis::cmd("ZRANGEBYSCORE")
            .arg(keys::POOL_REGISTRY)
            .arg("-inf")
            .arg(format!("({before}"))
            .arg("WITHSCORES")
            .arg("LIMIT")
            .arg(0)
            .arg(max)
            .query_async(&mut self.conn())
            .await?;
        raw.into_iter()
            .map(|(name, at)| {
                let pool = Pool::parse(&name)
                    .ok_or_else(|| StoreError::Corrupt(format!("pool registry: {name:?}")))?;
                Ok((pool, at as Millis))
            })
            .collect()
    }

    async fn forget_pool(&self, pool: &Pool, before: Millis) -> Result<(), StoreError> {
        // Only if still unsupervised: a supervisor may have noted it since it
        // was listed.
        let _: i64 = self
            .scripts
            .pool_forget
            .key(keys::POOL_REGISTRY)
            .arg(pool.name())
            .arg(before)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }

    async fn live_workers(&self, pool: &Pool) -> Result<u64, StoreError> {
        let now = self.server_now().await?;
        let n: u64 = redis::cmd("ZCOUNT")
            .arg(PoolKeys::new(pool).leases)
            .arg(format!("({now}"))
            .arg("+inf")
            .query_async(&mut self.conn())
            .await?;
        Ok(n)
    }
}
