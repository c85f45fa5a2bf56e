//! Whether this process can reach the store, as its last calls found it.
//!
//! An outage is a run of calls that failed because the store could not be reached
//! (connection refused or dropped, I/O timeout, a cluster without a primary for a
//! slot, a server still loading its data). Its first failure is logged once as a
//! warning and its end once as info, with how long it lasted and how many calls
//! failed; callers log the failures in between at debug (see
//! [`StoreError::is_unreachable`]) and wait longer between tries ([`Backoff`]), so an
//! outage costs a few log lines, not one per call. A full Redis, which refuses
//! writes but answers reads, is not an outage: it is logged apart, at most every
//! 10 s ([`refused`]).
//!
//! The state is process-wide: every connection of the process reports to it.

use crate::StoreError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The outage state of this process. One word says which outage a call was
/// sent in, read once per call instead of the clock: the outages begun so
/// far times two, plus one while one lasts. Beside it, for the log lines,
/// when the current outage began (ms since the epoch) and how many calls
/// failed in it.
struct Tracker {
    epoch: AtomicU64,
    since_ms: AtomicU64,
    failed_calls: AtomicU64,
    /// When the last outage ended (ms since the epoch; 0: none has).
    ended_ms: AtomicU64,
}

impl Tracker {
    const fn new() -> Self {
        Self {
            epoch: AtomicU64::new(0),
            since_ms: AtomicU64::new(0),
            failed_calls: AtomicU64::new(0),
            ended_ms: AtomicU64::new(0),
        }
    }

    /// What a call notes when it is sent, for [`Tracker::answered`].
    fn sent(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// A call failed at `now`: whether it began an outage.
    fn failed(&self, now: u64) -> bool {
        self.failed_calls.fetch_add(1, Ordering::Relaxed);
        let mut epoch = self.epoch.load(Ordering::Acquire);
        while !during_outage(epoch) {
            match self
                .epoch
                .compare_exchange(epoch, epoch + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    self.since_ms.store(now, Ordering::Release);
                    return true;
                }
                Err(seen) => epoch = seen,
            }
        }
        false
    }

    /// A call that noted `sent` ([`Tracker::sent`]) was answered at `now`:
    /// if that ended an outage, how long it lasted (ms) and how many calls
    /// failed in it. Only a call sent during the outage ends it: the answer
    /// to one sent before (read just before the store went away, its task
    /// run late on a busy machine) says nothing of the store now, and taking
    /// it for the end would log the outage a second time at the next
    /// failure.
    fn answered(&self, sent: u64, now: u64) -> Option<(u64, u64)> {
        if !during_outage(sent) {
            return None;
        }
        self.epoch
            .compare_exchange(sent, sent + 1, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        self.ended_ms.store(now, Ordering::Release);
        let since = self.since_ms.load(Ordering::Acquire);
        let failed = self.failed_calls.swap(0, Ordering::Relaxed);
        Some((now.saturating_sub(since), failed))
    }

    fn is_down(&self) -> bool {
        during_outage(self.epoch.load(Ordering::Relaxed))
    }
}

/// Whether a [`Tracker`]'s word says an outage lasts (odd: one begun and
/// not ended).
fn during_outage(epoch: u64) -> bool {
    epoch & 1 == 1
}

static STATE: Tracker = Tracker::new();

/// Now, in milliseconds since the epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(1)
        .max(1)
}

/// What a call notes when it is sent, for [`answered`]: which outage, if
/// any, it was sent in (one atomic read, no clock).
pub(crate) fn sent() -> u64 {
    STATE.sent()
}

/// Whether a Redis error means the store could not be reached, or refuses
/// every write for now ([`full`]), rather than that the call itself was wrong:
/// callers wait it out with backoff, answer 503 and log it at debug.
pub(crate) fn unreachable(e: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind as S};
    full(e)
        || e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(
            e.kind(),
            ErrorKind::ClusterConnectionNotFound
                | ErrorKind::Server(S::ClusterDown | S::TryAgain | S::MasterDown | S::BusyLoading)
        )
}

/// Whether Redis refused a write because it is full (`OOM`: `maxmemory` reached
/// with `maxmemory-policy noeviction`). Reads still work then, so it is not an
/// outage (an answer would end it at once, and the next write begin another):
/// [`refused`] logs it apart.
pub(crate) fn full(e: &redis::RedisError) -> bool {
    e.code() == Some("OOM")
}

/// When a refused write was last logged (ms), and how many were refused since.
static FULL_LOGGED_MS: AtomicU64 = AtomicU64::new(0);
static FULL_REFUSED: AtomicU64 = AtomicU64::new(0);

/// How often a full Redis is logged while it refuses writes.
const FULL_LOG_EVERY_MS: u64 = 10_000;

/// Records a write a full Redis refused: logged as a warning at most once
/// every 10 s, with how many were refused in between.
pub(crate) fn refused(e: &redis::RedisError) {
    let refused = FULL_REFUSED.fetch_add(1, Ordering::Relaxed) + 1;
    let now = now_ms();
    let last = FULL_LOGGED_MS.load(Ordering::Relaxed);
    if now.saturating_sub(last) < FULL_LOG_EVERY_MS
        || FULL_LOGGED_MS
            .compare_exchange(last, now, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    FULL_REFUSED.store(0, Ordering::Relaxed);
    tracing::warn!(
        error = %e,
        refused,
        "Redis is full and refuses writes (answered 503); free memory or raise maxmemory \
         (logged at most every 10 s)"
    );
}

/// Records a call that could not reach the store. The first of an outage logs.
pub(crate) fn failed(e: &redis::RedisError) {
    if STATE.failed(now_ms()) {
        metrics::counter!(mm_telemetry::names::STORE_OUTAGES).increment(1);
        tracing::warn!(
            error = %e,
            "the store is unreachable; retrying with backoff (further failures are logged at debug until it answers)"
        );
    }
}

/// Records a call that noted `sent` (see [`sent`]) and that the store
/// answered. The first answer to a call sent during an outage ends it, and
/// logs.
pub(crate) fn answered(sent: u64) {
    if !during_outage(sent) {
        return;
    }
    if let Some((down_for_ms, failed_calls)) = STATE.answered(sent, now_ms()) {
        tracing::info!(down_for_ms, failed_calls, "the store answers again");
    }
}

/// Whether the last calls of this process found the store unreachable.
pub fn is_down() -> bool {
    STATE.is_down()
}

/// Whether the store is unreachable now or was within `window` (an outage of
/// this process's calls ended less than `window` ago): what other processes
/// renew in the store may have run out meanwhile.
pub fn down_within(window: std::time::Duration) -> bool {
    if is_down() {
        return true;
    }
    let ended = STATE.ended_ms.load(Ordering::Acquire);
    ended != 0 && now_ms().saturating_sub(ended) < window.as_millis() as u64
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
    fn only_a_call_sent_during_an_outage_ends_it() {
        let t = Tracker::new();
        let before = t.sent();
        assert!(t.failed(1_000), "the first failure begins the outage");
        assert!(!t.failed(1_010), "the next ones do not");
        // Sent before the outage began, answered after: the store may still be gone.
        assert_eq!(t.answered(before, 1_020), None);
        assert!(t.is_down());
        let during = t.sent();
        assert!(!t.failed(1_030), "still the same outage: logged once");
        assert_eq!(t.ended_ms.load(Ordering::Relaxed), 0, "not ended yet");
        assert_eq!(t.answered(during, 1_050), Some((50, 3)));
        assert!(!t.is_down());
        assert_eq!(t.ended_ms.load(Ordering::Relaxed), 1_050, "when it ended");
        assert_eq!(t.answered(during, 1_070), None, "ended once");
        assert!(t.failed(2_000), "a later failure is a new outage");
        // Sent during the first outage, answered during the second: not its end.
        assert_eq!(t.answered(during, 2_010), None);
        // Sent after the second began, even within the same millisecond: its end.
        let now = t.sent();
        assert_eq!(t.answered(now, 2_000), Some((0, 1)));
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
