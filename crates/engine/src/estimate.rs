//! Wait estimates (issue 35): how long a ticket will likely wait, from how
//! long tickets like it waited lately in the same pool. Pure: the service
//! keeps the samples in its store, the simulator on its own clock, and both
//! ask the same question here.
//!
//! A sample is a matched ticket: when it matched, its rating, its size and its
//! wait. The estimate for a new ticket is the median wait of the recent
//! samples ([`WINDOW`]) of its kind (solo or party, when there are enough of
//! those) within [`RADIUS`] of its rating, at most the [`NEIGHBOURS`] closest;
//! with too few that close, of the closest anywhere; `None` with fewer than
//! [`MIN_SAMPLES`] recent samples. Ratings far from the crowd wait longer, and
//! their own neighbours show it, not the crowd's median.

use mm_domain::Millis;

/// How far back samples count.
pub const WINDOW: Millis = 15 * 60_000;
/// How many of the closest samples an estimate reads.
pub const NEIGHBOURS: usize = 20;
/// Fewer recent samples than this: no estimate.
pub const MIN_SAMPLES: usize = 5;
/// Samples this close in rating speak for a ticket first.
pub const RADIUS: f64 = 100.0;

/// A matched ticket's wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// When it matched.
    pub at: Millis,
    pub rating: f64,
    /// Players in the ticket.
    pub size: usize,
    /// How long it waited.
    pub wait: Millis,
}

/// The likely wait of a ticket of `rating` and `size` queued at `now`, from
/// `samples` (any order); `None` when too few are recent.
pub fn estimate(samples: &[Sample], rating: f64, size: usize, now: Millis) -> Option<Millis> {
    let recent: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.at <= now && now - s.at <= WINDOW && s.rating.is_finite())
        .collect();
    let party = size > 1;
    let alike: Vec<&Sample> = recent
        .iter()
        .filter(|s| (s.size > 1) == party)
        .copied()
        .collect();
    let mut near = if alike.len() >= MIN_SAMPLES {
        alike
    } else {
        recent
    };
    if near.len() < MIN_SAMPLES {
        return None;
    }
    near.sort_by(|a, b| {
        (a.rating - rating)
            .abs()
            .total_cmp(&(b.rating - rating).abs())
    });
    let close = near.partition_point(|s| (s.rating - rating).abs() <= RADIUS);
    near.truncate(if close >= MIN_SAMPLES {
        close.min(NEIGHBOURS)
    } else {
        NEIGHBOURS
    });
    let mut waits: Vec<Millis> = near.iter().map(|s| s.wait).collect();
    waits.sort_unstable();
    let n = waits.len();
    Some(if n % 2 == 1 {
        waits[n / 2]
    } else {
        (waits[n / 2 - 1] + waits[n / 2]) / 2
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(at: Millis, rating: f64, size: usize, wait: Millis) -> Sample {
        Sample {
            at,
            rating,
            size,
            wait,
        }
    }

    #[test]
    fn too_few_recent_samples_give_no_estimate() {
        let old: Vec<Sample> = (0..50).map(|i| s(i, 1500.0, 1, 1_000)).collect();
        assert_eq!(estimate(&old, 1500.0, 1, WINDOW + 100), None);
        assert_eq!(estimate(&old[..4], 1500.0, 1, 100), None);
        assert_eq!(estimate(&old[..5], 1500.0, 1, 100), Some(1_000));
    }

    #[test]
    fn the_closest_ratings_speak_for_a_ticket() {
        // The crowd at 1500 matches in 2 s; the few at 2500 waited 60 s.
        let mut samples: Vec<Sample> = (0..100)
            .map(|i| s(i, 1500.0 + (i % 7) as f64, 1, 2_000))
            .collect();
        samples.extend((0..8).map(|i| s(i, 2500.0 + i as f64, 1, 60_000)));
        assert_eq!(estimate(&samples, 1502.0, 1, 1_000), Some(2_000));
        // Eight waited near 2500: they speak, not the crowd.
        assert_eq!(estimate(&samples, 2500.0, 1, 1_000), Some(60_000));
        // Nobody near 2000: the closest anywhere (the crowd's top, then the
        // tail), the crowd outnumbering.
        assert_eq!(estimate(&samples, 2000.0, 1, 1_000), Some(2_000));
    }

    #[test]
    fn parties_read_parties_when_there_are_enough() {
        let mut samples: Vec<Sample> = (0..30).map(|i| s(i, 1500.0, 1, 1_000)).collect();
        samples.extend((0..4).map(|i| s(i, 1500.0, 5, 30_000)));
        // Four party samples are too few: the solos speak.
        assert_eq!(estimate(&samples, 1500.0, 5, 100), Some(1_000));
        samples.push(s(5, 1500.0, 3, 30_000));
        assert_eq!(estimate(&samples, 1500.0, 5, 100), Some(30_000));
        assert_eq!(estimate(&samples, 1500.0, 1, 100), Some(1_000));
    }
}
