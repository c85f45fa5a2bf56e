//! Concurrent callers, each repeating one request until a deadline: the loop the
//! timed benches (allocate, contention, throughput) share. Each caller folds its
//! outcomes into a tally of its own; the tallies are merged at the end.

use super::progress;
use std::future::Future;
use std::time::{Duration, Instant};

/// What a run counts, per caller and then merged.
pub trait Tally: Default + Send + 'static {
    fn merge(&mut self, other: Self);
    /// A caller task ended abnormally (it panicked).
    fn died(&mut self, why: String);
}

/// Runs `callers` tasks for `duration`, with a progress bar (`label`, `what`).
/// Caller `c` makes requests `request(c, 0)`, `request(c, 1)`, ... back to back
/// and folds each outcome into its tally with `record`. Returns the merged tally
/// and the wall time.
pub async fn until<T, R, F, Fut>(
    label: &str,
    what: &str,
    callers: usize,
    duration: Duration,
    request: F,
    record: fn(&mut T, R),
) -> (T, Duration)
where
    T: Tally,
    R: Send + 'static,
    F: Fn(usize, u64) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = R> + Send,
{
    let bar = progress::clock(duration, what);
    bar.set_prefix(label.to_string());
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for caller in 0..callers {
        let request = request.clone();
        tasks.spawn(async move {
            let mut t = T::default();
            let mut i = 0u64;
            while Instant::now() < deadline {
                let outcome = request(caller, i).await;
                i += 1;
                record(&mut t, outcome);
            }
            t
        });
    }
    let mut tally = T::default();
    while let Some(t) = tasks.join_next().await {
        match t {
            Ok(t) => tally.merge(t),
            Err(e) => tally.died(format!("caller died: {e}")),
        }
    }
    let wall = started.elapsed();
    bar.finish_and_clear();
    (tally, wall)
}
