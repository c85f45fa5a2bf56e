//! Token locks on Redis: one script per step (`lock_*.lua`), the holder's token
//! and the fencing counter in one slot.

use super::RedisStore;
use crate::{LockName, Locks, StoreError};
use async_trait::async_trait;
use std::time::Duration;

fn ms(ttl: Duration) -> u64 {
    (ttl.as_millis() as u64).max(1)
}

#[async_trait]
impl Locks for RedisStore {
    async fn try_lock(
        &self,
        lock: &LockName,
        token: &str,
        ttl: Duration,
    ) -> Result<Option<u64>, StoreError> {
        let fence: u64 = self
            .scripts
            .lock_acquire
            .key(&lock.holder)
            .key(&lock.fence)
            .arg(token)
            .arg(ms(ttl))
            .invoke_async(&mut self.conn())
            .await?;
        Ok((fence > 0).then_some(fence))
    }

    async fn extend_lock(
        &self,
        lock: &LockName,
        token: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let done: u64 = self
            .scripts
            .lock_extend
            .key(&lock.holder)
            .arg(token)
            .arg(ms(ttl))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(done == 1)
    }

    async fn unlock(&self, lock: &LockName, token: &str) -> Result<bool, StoreError> {
        let done: u64 = self
            .scripts
            .lock_release
            .key(&lock.holder)
            .arg(token)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(done == 1)
    }
}
