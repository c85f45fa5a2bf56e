//! Rate limits shared by every ingress: [`Limits::check_rates`] counts one call
//! against each limiter's [`Rate`] with GCRA (a call is allowed while the
//! limiter's theoretical arrival time is within a burst of now). A limiter
//! ([`RateKey`]) counts one class of call by one player or from one address. On
//! Redis it is `rate.lua`, timed by the server's clock, with the checks of
//! concurrent requests batched into one call (one per slot on a cluster: a
//! player's limiters live in the player's slot, so scripts that act for the player
//! can charge them too; an address's in one of 64 shards); keys expire once idle.
//! An address that sends many calls is answered from leases, calls its ingress
//! took ahead and Redis charged before their use, so the limit still holds across
//! ingresses (see `redis_store::limits`). In memory, `governor`'s keyed limiters.

use crate::StoreError;
use async_trait::async_trait;
use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota};
use mm_domain::PlayerId;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// Keys come from clients (player ids, addresses): a seeded hash that is fast.
type Hasher = foldhash::quality::RandomState;
type Limiter = DefaultKeyedRateLimiter<
    String,
    governor::middleware::NoOpMiddleware<governor::clock::QuantaInstant>,
    Hasher,
>;

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

/// Whose calls a limiter counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Who {
    Player(PlayerId),
    Address(IpAddr),
}

/// A limiter: one class of call (`tickets`, `reads`, ...) by one player or from
/// one address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RateKey {
    pub class: &'static str,
    pub who: Who,
}

impl RateKey {
    pub fn player(class: &'static str, player: PlayerId) -> Self {
        Self {
            class,
            who: Who::Player(player),
        }
    }

    pub fn address(class: &'static str, addr: IpAddr) -> Self {
        Self {
            class,
            who: Who::Address(addr),
        }
    }

    /// A name unique to the limiter: `CLASS:p:PLAYER` or `CLASS:a:ADDRESS`.
    pub fn name(&self) -> String {
        match &self.who {
            Who::Player(p) => format!("{}:p:{p}", self.class),
            Who::Address(a) => format!("{}:a:{a}", self.class),
        }
    }
}

/// One call to count against a limiter.
pub type RateCheck = (RateKey, Rate);

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
    async fn check_rates(&self, checks: &[RateCheck]) -> Result<Vec<Verdict>, StoreError>;
}

/// How many checks between sweeps of idle keys in memory.
const SWEEP_EVERY: u64 = 1 << 16;

/// In-process limits for [`crate::MemoryStore`].
#[derive(Default)]
pub struct MemoryLimits {
    /// One keyed limiter per rate (a handful: a short list beats a map).
    limiters: RwLock<Vec<(Rate, Arc<Limiter>)>>,
    checks: AtomicU64,
}

impl MemoryLimits {
    fn limiter(&self, rate: Rate) -> Arc<Limiter> {
        let found = self
            .limiters
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(r, _)| *r == rate)
            .map(|(_, l)| l.clone());
        if let Some(l) = found {
            return l;
        }
        let mut limiters = self.limiters.write().unwrap_or_else(|p| p.into_inner());
        if let Some((_, l)) = limiters.iter().find(|(r, _)| *r == rate) {
            return l.clone();
        }
        let burst = NonZeroU32::new(rate.count.max(1)).expect("at least one");
        let quota = Quota::with_period(rate.interval())
            .expect("a positive interval")
            .allow_burst(burst);
        let l = Arc::new(Limiter::dashmap_with_hasher(quota, Hasher::default()));
        limiters.push((rate, l.clone()));
        l
    }

    pub fn check(&self, checks: &[RateCheck]) -> Vec<Verdict> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            let all: Vec<_> = self
                .limiters
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|(_, l)| l.clone())
                .collect();
            for l in all {
                l.retain_recent();
                l.shrink_to_fit();
            }
        }
        checks
            .iter()
            .map(|(key, rate)| {
                let limiter = self.limiter(*rate);
                match limiter.check_key(&key.name()) {
                    Ok(()) => Verdict::Allowed,
                    // The limiter's own clock: making one reads the CPU's
                    // features (CPUID), which is slow, in a VM very slow.
                    Err(not_until) => {
                        Verdict::Limited(not_until.wait_time_from(limiter.clock().now()))
                    }
                }
            })
            .collect()
    }
}
