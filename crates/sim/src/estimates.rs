//! Wait estimates in the simulator (issue 35): the estimate the service gives
//! a ticket when it is queued ([`mm_engine::estimate`]), made here on the
//! simulated clock from the same kind of samples (each matched ticket's wait,
//! in its pool), and set against the wait the group then had.

use mm_engine::estimate::{Sample, WINDOW, estimate};

/// Samples per pool, the estimate each group got, and the wait it had.
pub(crate) struct Estimates {
    samples: Vec<Vec<Sample>>,
    made: Vec<Option<u64>>,
    waited: Vec<Option<u64>>,
    /// Groups queued while their pool had too few samples.
    without: usize,
}

/// How good the estimates were.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimateFigures {
    /// Groups that got an estimate and were matched.
    pub judged: usize,
    /// Groups queued without an estimate (too little data yet).
    pub without: usize,
    /// Median of |estimate - wait|, seconds.
    pub error_p50_s: f64,
    /// Median wait of the judged groups, seconds.
    pub wait_p50_s: f64,
    /// Median of |estimate - wait| / wait (a wait under a second counts as
    /// one second).
    pub relative_p50: f64,
    /// Share of judged groups whose estimate was within 30% of their wait.
    pub within_30: f64,
}

impl Estimates {
    pub(crate) fn new(pools: usize, groups: usize) -> Self {
        Self {
            samples: vec![Vec::new(); pools],
            made: vec![None; groups],
            waited: vec![None; groups],
            without: 0,
        }
    }

    /// Group `group`, queued at `now` in `pool` (its best) with a ticket of
    /// `rating` and `size`, gets its estimate.
    pub(crate) fn queued(&mut self, group: usize, pool: usize, rating: f64, size: usize, now: u64) {
        if self.made[group].is_some() {
            return;
        }
        let samples = &mut self.samples[pool];
        // Forget what is out of the window (samples arrive in time order).
        let old = samples.partition_point(|s| now.saturating_sub(s.at) > WINDOW);
        samples.drain(..old);
        self.made[group] = estimate(samples, rating, size, now);
        if self.made[group].is_none() {
            self.without += 1;
        }
    }

    /// A ticket of `group` (`rating`, `size`, queued at `enqueued_at`) was
    /// matched in `pool` at `at`.
    pub(crate) fn matched(
        &mut self,
        group: usize,
        pool: usize,
        rating: f64,
        size: usize,
        enqueued_at: u64,
        at: u64,
    ) {
        let wait = at.saturating_sub(enqueued_at);
        self.samples[pool].push(Sample {
            at,
            rating,
            size,
            wait,
        });
        self.waited[group].get_or_insert(wait);
    }

    pub(crate) fn figures(&self) -> Option<EstimateFigures> {
        let pairs: Vec<(f64, f64)> = self
            .made
            .iter()
            .zip(&self.waited)
            .filter_map(|(&e, &w)| Some((e? as f64 / 1000.0, w? as f64 / 1000.0)))
            .collect();
        if pairs.is_empty() {
            return None;
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        };
        let errors: Vec<f64> = pairs.iter().map(|(e, w)| (e - w).abs()).collect();
        let relative: Vec<f64> = pairs
            .iter()
            .map(|(e, w)| (e - w).abs() / w.max(1.0))
            .collect();
        let within = relative.iter().filter(|&&r| r <= 0.3).count();
        Some(EstimateFigures {
            judged: pairs.len(),
            without: self.without,
            error_p50_s: median(errors),
            wait_p50_s: median(pairs.iter().map(|p| p.1).collect()),
            within_30: within as f64 / pairs.len() as f64,
            relative_p50: median(relative),
        })
    }
}
