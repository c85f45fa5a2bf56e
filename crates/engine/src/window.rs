//! The search window: how far from its own rating a ticket accepts opponents, as a
//! function of how long it has waited (seed 000's `CalculateSearchWindow`).

use mm_domain::Millis;

/// Initial half-width, growth per second of wait, and the cap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowPolicy {
    /// Half-width at time zero (`MMR_DELTA_INITIAL`, default 50).
    pub initial: f64,
    /// Growth of the half-width per second of wait (`MMR_SCALING_FACTOR`, default 10).
    pub per_second: f64,
    /// Largest half-width (default 500).
    pub cap: f64,
}

impl Default for WindowPolicy {
    fn default() -> Self {
        Self {
            initial: 50.0,
            per_second: 10.0,
            cap: 500.0,
        }
    }
}

impl WindowPolicy {
    /// The half-width of the window of a ticket that has waited `wait_ms`.
    pub fn delta(&self, wait_ms: Millis) -> f64 {
        let grown = self.initial + self.per_second * (wait_ms as f64 / 1000.0);
        grown.min(self.cap).max(0.0)
    }

    /// How long a ticket waits until its window stops growing.
    pub fn time_to_cap(&self) -> Millis {
        if self.per_second <= 0.0 {
            return 0;
        }
        (((self.cap - self.initial).max(0.0) / self.per_second) * 1000.0).min(1e15) as Millis
    }

    /// The window `(min, max)` of a ticket rated `rating` that has waited `wait_ms`.
    pub fn window(&self, rating: f64, wait_ms: Millis) -> (f64, f64) {
        let d = self.delta(wait_ms);
        (rating - d, rating + d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_with_wait_and_stops_at_the_cap() {
        let p = WindowPolicy::default();
        assert_eq!(p.window(1500.0, 0), (1450.0, 1550.0));
        assert_eq!(p.window(1500.0, 10_000), (1350.0, 1650.0));
        assert_eq!(p.delta(45_000), 500.0);
        assert_eq!(p.delta(3_600_000), 500.0);
    }
}
