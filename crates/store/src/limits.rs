//! Rate limits shared by every ingress: [`Limits::check_rates`] counts one call
//! against each key's [`Rate`] with GCRA (a call is allowed while the key's
//! theoretical arrival time is within a burst of now). On Redis it is one script
//! per key (`rate.lua`, keys `mm:{rl:KEY}` expiring once idle), timed by the
//! server's clock; in memory, `governor`'s keyed limiters.

use crate::StoreError;
use async_trait::async_trait;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `count` calls per `period`, in bursts of up to `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    pub count: u32,
    pub period: Duration,
}

impl Rate {
    /// The time one call uses up (at least 1 µs).
    pub fn interval(&self) -> Duration {
        (self.period / self.count.max(1)).max(Duration::from_micros(1))
    }
}

/// The answer to one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// Over the limit: a call would be allowed after this long.
    Limited(Duration),
}

#[async_trait]
pub trait Limits {
    /// Counts one call against each `(key, rate)`; one verdict per check, in order.
    /// A limited key is not charged.
    async fn check_rates(&self, checks: &[(String, Rate)]) -> Result<Vec<Verdict>, StoreError>;
}

/// How many checks between sweeps of idle keys in memory.
const SWEEP_EVERY: u64 = 1 << 16;

/// In-process limits for [`crate::MemoryStore`].
#[derive(Default)]
pub struct MemoryLimits {
    limiters: Mutex<HashMap<Rate, Arc<DefaultKeyedRateLimiter<String>>>>,
    checks: AtomicU64,
}

impl MemoryLimits {
    fn limiter(&self, rate: Rate) -> Arc<DefaultKeyedRateLimiter<String>> {
        let mut limiters = self.limiters.lock().unwrap_or_else(|p| p.into_inner());
        limiters
            .entry(rate)
            .or_insert_with(|| {
                let burst = NonZeroU32::new(rate.count.max(1)).expect("at least one");
                let quota = Quota::with_period(rate.interval())
                    .expect("a positive interval")
                    .allow_burst(burst);
                Arc::new(DefaultKeyedRateLimiter::dashmap(quota))
            })
            .clone()
    }

    pub fn check(&self, checks: &[(String, Rate)]) -> Vec<Verdict> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            let all: Vec<_> = self
                .limiters
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .cloned()
                .collect();
            for l in all {
                l.retain_recent();
                l.shrink_to_fit();
            }
        }
        let clock = DefaultClock::default();
        checks
            .iter()
            .map(|(key, rate)| match self.limiter(*rate).check_key(key) {
                Ok(()) => Verdict::Allowed,
                Err(not_until) => Verdict::Limited(not_until.wait_time_from(clock.now())),
            })
            .collect()
    }
}
