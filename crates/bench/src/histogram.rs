//! Latency recording for the benches: an HDR histogram of microseconds (1 µs to
//! 60 s, three significant digits), merged across tasks, printed as percentiles
//! in milliseconds.

use hdrhistogram::Histogram;
use std::time::Duration;

/// Latencies of one kind of operation.
#[derive(Clone)]
pub struct Latency(Histogram<u64>);

impl Default for Latency {
    fn default() -> Self {
        Self(Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds"))
    }
}

impl Latency {
    pub fn record(&mut self, d: Duration) {
        // Values past the top are clamped rather than lost.
        self.0
            .saturating_record(d.as_micros().clamp(1, u64::MAX as u128) as u64);
    }

    pub fn merge(&mut self, other: &Latency) {
        self.0.add(&other.0).expect("same bounds");
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// The `q` quantile (0..1) in milliseconds.
    pub fn ms(&self, q: f64) -> f64 {
        self.0.value_at_quantile(q) as f64 / 1000.0
    }

    pub fn mean_ms(&self) -> f64 {
        self.0.mean() / 1000.0
    }

    pub fn max_ms(&self) -> f64 {
        self.0.max() as f64 / 1000.0
    }

    /// `mean 0.412  p50 0.380  p99 1.200  p99.9 2.310  max 4.020` (ms).
    pub fn summary(&self) -> String {
        if self.count() == 0 {
            return "no samples".into();
        }
        format!(
            "mean {:.3}  p50 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
            self.mean_ms(),
            self.ms(0.5),
            self.ms(0.99),
            self.ms(0.999),
            self.max_ms()
        )
    }
}
