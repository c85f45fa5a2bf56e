//! How much of the operator plane one caller may take: requests per address
//! (a token bucket in this process; refused or not, every dashboard request
//! counts, so guessing credentials is slow), and live event streams per address,
//! per operator and in all. Over any of them: `429` with `Retry-After`, never an
//! answer that locks other callers out.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Dashboard requests per second an address is refilled with, and its burst.
pub const REQUESTS_PER_SECOND: u32 = 5;
pub const REQUEST_BURST: u32 = 30;
/// Event streams open at once from one address, for one operator, and in all.
pub const STREAMS_PER_ADDRESS: usize = 4;
pub const STREAMS_PER_OPERATOR: usize = 16;
pub const STREAMS: usize = 64;
/// What a caller over a stream cap is asked to wait.
pub const STREAM_RETRY: Duration = Duration::from_secs(5);

/// Requests per address.
pub struct Requests {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    checks: AtomicU64,
}

impl Default for Requests {
    fn default() -> Self {
        let quota = Quota::per_second(NonZeroU32::new(REQUESTS_PER_SECOND).expect("non-zero"))
            .allow_burst(NonZeroU32::new(REQUEST_BURST).expect("non-zero"));
        Self {
            limiter: RateLimiter::keyed(quota),
            checks: AtomicU64::new(0),
        }
    }
}

impl Requests {
    /// Counts a request from `ip`; `Err` with the wait when it is over.
    pub fn check(&self, ip: IpAddr) -> Result<(), Duration> {
        // Now and then forget addresses that went quiet, so the map stays small.
        if self.checks.fetch_add(1, Ordering::Relaxed) % 1024 == 1023 {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(&ip)
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

/// Which cap a stream was refused by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Address,
    Operator,
    All,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Address => "address",
            Scope::Operator => "operator",
            Scope::All => "all",
        }
    }
}

#[derive(Default)]
struct Open {
    by_address: HashMap<IpAddr, usize>,
    by_operator: HashMap<String, usize>,
    total: usize,
}

/// The event streams open now.
#[derive(Default, Clone)]
pub struct Streams {
    open: Arc<Mutex<Open>>,
}

/// One open stream; closing it (dropping this) frees its place.
pub struct Stream {
    streams: Streams,
    ip: IpAddr,
    operator: String,
}

impl Streams {
    /// Opens a stream for `operator` from `ip`, if every cap has room.
    pub fn open(&self, ip: IpAddr, operator: &str) -> Result<Stream, Scope> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.by_address.get(&ip).copied().unwrap_or(0) >= STREAMS_PER_ADDRESS {
            return Err(Scope::Address);
        }
        if open.by_operator.get(operator).copied().unwrap_or(0) >= STREAMS_PER_OPERATOR {
            return Err(Scope::Operator);
        }
        if open.total >= STREAMS {
            return Err(Scope::All);
        }
        *open.by_address.entry(ip).or_default() += 1;
        *open.by_operator.entry(operator.to_string()).or_default() += 1;
        open.total += 1;
        Ok(Stream {
            streams: self.clone(),
            ip,
            operator: operator.to_string(),
        })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let mut open = self.streams.open.lock().unwrap_or_else(|p| p.into_inner());
        fn down<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: &K) {
            if let Some(n) = map.get_mut(key) {
                *n -= 1;
                if *n == 0 {
                    map.remove(key);
                }
            }
        }
        down(&mut open.by_address, &self.ip);
        down(&mut open.by_operator, &self.operator);
        open.total -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, n])
    }

    #[test]
    fn streams_are_capped_per_address_and_per_operator_and_freed_on_close() {
        let s = Streams::default();
        let mine: Vec<Stream> = (0..STREAMS_PER_ADDRESS)
            .map(|_| s.open(ip(2), "ann").unwrap())
            .collect();
        assert_eq!(s.open(ip(2), "ann").err(), Some(Scope::Address));
        // Another address is not locked out.
        let other = s.open(ip(3), "bob").unwrap();
        let mut more = Vec::new();
        for n in 0..(STREAMS_PER_OPERATOR - STREAMS_PER_ADDRESS) {
            more.push(s.open(ip(10 + n as u8), "ann").unwrap());
        }
        assert_eq!(s.open(ip(99), "ann").err(), Some(Scope::Operator));
        drop(mine);
        assert!(s.open(ip(2), "ann").is_ok());
        drop((other, more));
        assert_eq!(s.open.lock().unwrap().total, 0);
    }

    #[test]
    fn requests_are_limited_per_address() {
        let r = Requests::default();
        for _ in 0..REQUEST_BURST {
            r.check(ip(2)).unwrap();
        }
        let wait = r.check(ip(2)).unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert!(r.check(ip(3)).is_ok());
    }
}
