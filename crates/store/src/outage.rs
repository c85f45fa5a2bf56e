//! Whether this process can reach the store, as its last calls found it.
//!
//! An outage is a run of calls that failed because the store could not be reached
//! (connection refused or dropped, I/O timeout, a cluster without a primary for a
//! slot, a server still loading its data). Its first failure is logged once as a
//! warning and its end once as info, with how long it lasted and how many calls
//! failed; callers log the failures in between at debug (see
//! [`StoreError::is_unreachable`]) and wait longer between tries ([`Backoff`]), so an
//! outage costs a few log lines, not one per call.
//!
//! The state is process-wide: every connection of the process reports to it.

use crate::StoreError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch when the current outage began; 0 when none.
static DOWN_SINCE_MS: AtomicU64 = AtomicU64::new(0);
/// Calls failed in the current outage.
static FAILED_CALLS: AtomicU64 = AtomicU64::new(0);

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(1)
        .max(1)
}

/// Whether a Redis error means the store could not be reached (rather than that
/// the call itself was wrong).
pub(crate) fn unreachable(e: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind as S};
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(
            e.kind(),
            ErrorKind::ClusterConnectionNotFound
                | ErrorKind::Server(S::ClusterDown | S::TryAgain | S::MasterDown | S::BusyLoading)
        )
}

/// Records a call that could not reach the store. The first of an outage logs.
pub(crate) fn failed(e: &redis::RedisError) {
    FAILED_CALLS.fetch_add(1, Ordering::Relaxed);
    if DOWN_SINCE_MS
        .compare_exchange(0, now_ms(), Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        metrics::counter!(mm_telemetry::names::STORE_OUTAGES).increment(1);
        tracing::warn!(
            error = %e,
            "the store is unreachable; retrying with backoff (further failures are logged at debug until it answers)"
        );
    }
}

/// Records a call the store answered. The first after an outage logs.
pub(crate) fn answered() {
    if DOWN_SINCE_MS.load(Ordering::Relaxed) == 0 {
        return;
    }
    let since = DOWN_SINCE_MS.swap(0, Ordering::AcqRel);
    if since != 0 {
        let failed = FAILED_CALLS.swap(0, Ordering::Relaxed);
        tracing::info!(
            down_for_ms = now_ms().saturating_sub(since),
            failed_calls = failed,
            "the store answers again"
        );
    }
}

/// Whether the last calls of this process found the store unreachable.
pub fn is_down() -> bool {
    DOWN_SINCE_MS.load(Ordering::Relaxed) != 0
}

impl StoreError {
    /// Whether this error means the store could not be reached. Such a failure was
    /// already logged once for its outage; log it at debug.
    pub fn is_unreachable(&self) -> bool {
        match self {
            StoreError::Redis(e) => unreachable(e),
            StoreError::Timeout => true,
            StoreError::Corrupt(_)
            | StoreError::NotReplicated { .. }
            | StoreError::Fenced(_)
            | StoreError::Led(_) => false,
        }
    }
}

/// The pause of a loop between tries: its usual pause while the store answers,
/// doubling (up to `max`) while it does not.
#[derive(Debug, Clone)]
pub struct Backoff {
    base: Duration,
    max: Duration,
    current: Duration,
}

impl Backoff {
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            current: base,
        }
    }

    /// The pause after a pass that failed to reach the store.
    pub fn failed(&mut self) -> Duration {
        let pause = self.current;
        self.current = (self.current * 2)
            .max(Duration::from_millis(50))
            .min(self.max);
        pause
    }

    /// The store answered: back to the usual pause, which is returned.
    pub fn reset(&mut self) -> Duration {
        self.current = self.base;
        self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
        let pauses: Vec<_> = (0..6).map(|_| b.failed().as_millis()).collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(b.reset(), Duration::from_millis(100));
        assert_eq!(b.failed(), Duration::from_millis(100));
    }

    #[test]
    fn a_zero_base_still_backs_off() {
        let mut b = Backoff::new(Duration::ZERO, Duration::from_secs(5));
        assert_eq!(b.failed(), Duration::ZERO);
        assert_eq!(b.failed(), Duration::from_millis(50));
        assert_eq!(b.failed(), Duration::from_millis(100));
    }

    #[test]
    fn refused_connections_are_unreachable_and_script_errors_are_not() {
        let refused =
            redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(StoreError::Redis(refused).is_unreachable());
        let script = redis::RedisError::from((redis::ErrorKind::Parse, "bad reply"));
        assert!(!StoreError::Redis(script).is_unreachable());
        assert!(!StoreError::Corrupt("x".into()).is_unreachable());
    }
}
