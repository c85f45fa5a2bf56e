//! Token locks (seeds 001 and 002): a lock is a key holding its holder's random
//! token with a TTL. Taking it is `SET NX PX`; extending and releasing compare the
//! token inside one script, so a holder whose lock expired and was taken by
//! another can neither extend nor release the new holder's lock. Each time a lock
//! is taken, its fencing counter (a key that never expires) goes up by one in the
//! same script, and the taker gets the new value: a fencing token, larger for every
//! later holder, that writes guarded by the lock can carry so that a store refuses
//! a stale holder's (seeds 003 and 004).
//!
//! [`Locks`] is what a store provides; [`TokenLock`] is one process's handle on one
//! lock, with seed 002's acquire-with-retry (3 tries, 500 ms apart).

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::Pool;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where a lock lives: the key holding its holder's token and its fencing counter
/// (one slot: both are written by one script).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LockName {
    pub(crate) holder: String,
    pub(crate) fence: String,
}

impl LockName {
    /// A lock of its own: `mm:{lk:NAME}:h`, fencing counter `mm:{lk:NAME}:f`.
    pub fn named(name: &str) -> Self {
        Self {
            holder: format!("mm:{{lk:{name}}}:h"),
            fence: format!("mm:{{lk:{name}}}:f"),
        }
    }

    /// The lock of a pool's leader, in the pool's slot so the pool's own scripts
    /// can check its fencing token: `mm:{p:POOL}:leader`, `mm:{p:POOL}:fence`.
    pub fn pool_leader(pool: &Pool) -> Self {
        let keys = crate::keys::PoolKeys::new(pool);
        Self {
            holder: keys.leader,
            fence: keys.fence,
        }
    }
}

/// Token locks kept by a store.
#[async_trait]
pub trait Locks {
    /// Takes `lock` for `token` for `ttl` if nobody holds it; the new fencing
    /// token if taken, `None` if held (by anyone, `token` included).
    async fn try_lock(
        &self,
        lock: &LockName,
        token: &str,
        ttl: Duration,
    ) -> Result<Option<u64>, StoreError>;

    /// Makes `lock` expire `ttl` from now if `token` holds it; false otherwise.
    async fn extend_lock(
        &self,
        lock: &LockName,
        token: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError>;

    /// Frees `lock` if `token` holds it; false otherwise.
    async fn unlock(&self, lock: &LockName, token: &str) -> Result<bool, StoreError>;
}

/// Seed 002's tries to take a lock before giving up.
pub const LOCK_TRIES: u32 = 3;
/// Seed 002's pause between tries.
pub const LOCK_RETRY_PAUSE: Duration = Duration::from_millis(500);

/// One holder's handle on one lock: its own random token, fixed at creation.
#[derive(Debug, Clone)]
pub struct TokenLock {
    name: LockName,
    token: String,
    ttl: Duration,
}

impl TokenLock {
    pub fn new(name: LockName, ttl: Duration) -> Self {
        Self {
            name,
            token: uuid::Uuid::new_v4().simple().to_string(),
            ttl,
        }
    }

    /// A lock whose token starts with its holder's name and a dot
    /// (`HOLDER.RANDOM`): whoever reads the lock (an operator, a test) sees
    /// who holds it.
    pub fn held_by(name: LockName, ttl: Duration, holder: &str) -> Self {
        Self {
            name,
            token: format!("{holder}.{}", uuid::Uuid::new_v4().simple()),
            ttl,
        }
    }

    /// Takes the lock if it is free: the fencing token, or `None` if held.
    pub async fn acquire(&self, store: &(impl Locks + ?Sized)) -> Result<Option<u64>, StoreError> {
        store.try_lock(&self.name, &self.token, self.ttl).await
    }

    /// [`TokenLock::acquire`], tried `tries` times `pause` apart (and a little
    /// jitter, so contenders do not retry in step); seed 002 uses
    /// [`LOCK_TRIES`] and [`LOCK_RETRY_PAUSE`].
    pub async fn acquire_retrying(
        &self,
        store: &(impl Locks + ?Sized),
        tries: u32,
        pause: Duration,
    ) -> Result<Option<u64>, StoreError> {
        for attempt in 0..tries.max(1) {
            if attempt > 0 {
                let jitter = pause.mul_f64(rand::random::<f64>() * 0.1);
                tokio::time::sleep(pause + jitter).await;
            }
            if let Some(fence) = self.acquire(store).await? {
                return Ok(Some(fence));
            }
        }
        Ok(None)
    }

    /// Extends the lock by its TTL from now; false if this holder lost it.
    pub async fn extend(&self, store: &(impl Locks + ?Sized)) -> Result<bool, StoreError> {
        store.extend_lock(&self.name, &self.token, self.ttl).await
    }

    /// Frees the lock; false if this holder no longer held it.
    pub async fn release(&self, store: &(impl Locks + ?Sized)) -> Result<bool, StoreError> {
        store.unlock(&self.name, &self.token).await
    }
}

/// In-process locks for [`crate::MemoryStore`], timed by the process's clock.
#[derive(Debug, Default)]
pub struct MemoryLocks {
    inner: Mutex<MemoryLocksInner>,
}

#[derive(Debug, Default)]
struct MemoryLocksInner {
    /// Holder key -> (token, expiry).
    held: HashMap<String, (String, Instant)>,
    /// Fencing counter key -> its value.
    fences: HashMap<String, u64>,
}

impl MemoryLocks {
    fn with<T>(&self, f: impl FnOnce(&mut MemoryLocksInner, Instant) -> T) -> T {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        inner.held.retain(|_, (_, until)| *until > now);
        f(&mut inner, now)
    }

    /// The fencing counter of `lock`: the token its latest holder got (0: never
    /// taken).
    pub fn fence(&self, lock: &LockName) -> u64 {
        self.with(|inner, _| inner.fences.get(&lock.fence).copied().unwrap_or(0))
    }

    /// Whether someone holds `lock` now.
    pub fn is_held(&self, lock: &LockName) -> bool {
        self.with(|inner, _| inner.held.contains_key(&lock.holder))
    }

    pub fn try_lock(&self, lock: &LockName, token: &str, ttl: Duration) -> Option<u64> {
        self.with(|inner, now| {
            if inner.held.contains_key(&lock.holder) {
                return None;
            }
            inner
                .held
                .insert(lock.holder.clone(), (token.to_string(), now + ttl));
            let fence = inner.fences.entry(lock.fence.clone()).or_default();
            *fence += 1;
            Some(*fence)
        })
    }

    pub fn extend_lock(&self, lock: &LockName, token: &str, ttl: Duration) -> bool {
        self.with(|inner, now| match inner.held.get_mut(&lock.holder) {
            Some((holder, until)) if holder == token => {
                *until = now + ttl;
                true
            }
            _ => false,
        })
    }

    pub fn unlock(&self, lock: &LockName, token: &str) -> bool {
        self.with(|inner, _| match inner.held.get(&lock.holder) {
            Some((holder, _)) if holder == token => {
                inner.held.remove(&lock.holder);
                true
            }
            _ => false,
        })
    }
}
