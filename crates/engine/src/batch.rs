//! Seed 000's batch formation: sort the claimed batch by rating, then repeatedly
//! take the contiguous run of `min..=max` tickets with the smallest rating spread
//! in which every ticket lies inside every other ticket's window, until no such run
//! is left.

use crate::WindowPolicy;
use mm_domain::Millis;

/// One ticket as the engine sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub rating: f64,
    pub enqueued_at: Millis,
}

/// How matches are formed from a batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchConfig {
    /// Fewest tickets in a match (`MIN_PLAYERS_PER_MATCH`).
    pub min_players: usize,
    /// Most tickets in a match (`MAX_PLAYERS_PER_MATCH`).
    pub max_players: usize,
    pub window: WindowPolicy,
}

impl Default for BatchConfig {
    fn default() -> Self {
        Self {
            min_players: 2,
            max_players: 8,
            window: WindowPolicy::default(),
        }
    }
}

/// Forms matches from `candidates` at time `now`. Returns groups of indexes into
/// `candidates`; each index appears at most once. Candidates left out should be
/// released back to the queue.
///
/// Among runs of equal spread the longer one wins, so a batch of identical ratings
/// fills matches up to `max_players`.
pub fn form_matches(candidates: &[Candidate], now: Millis, cfg: &BatchConfig) -> Vec<Vec<usize>> {
    let min = cfg.min_players.max(1);
    let max = cfg.max_players.max(min);
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| {
        candidates[a]
            .rating
            .total_cmp(&candidates[b].rating)
            .then(a.cmp(&b))
    });
    let delta: Vec<f64> = candidates
        .iter()
        .map(|c| cfg.window.delta(now.saturating_sub(c.enqueued_at)))
        .collect();

    let mut matches = Vec::new();
    // `order` shrinks as matches are taken out; runs are contiguous in what is left.
    while order.len() >= min {
        let Some((start, len)) = best_run(&order, candidates, &delta, min, max) else {
            break;
        };
        matches.push(order.drain(start..start + len).collect());
    }
    matches
}

/// The best run `(start, len)` in `order`: smallest spread, then longest, then leftmost.
fn best_run(
    order: &[usize],
    candidates: &[Candidate],
    delta: &[f64],
    min: usize,
    max: usize,
) -> Option<(usize, usize)> {
    let mut best: Option<(f64, usize, usize)> = None;
    for start in 0..=order.len() - min {
        let lo = candidates[order[start]].rating;
        let mut narrowest = f64::INFINITY;
        for len in 1..=max.min(order.len() - start) {
            let idx = order[start + len - 1];
            narrowest = narrowest.min(delta[idx]);
            let spread = candidates[idx].rating - lo;
            // Every member within every other's window: the spread must fit the
            // narrowest window of the run. Longer runs only get worse.
            if spread > narrowest {
                break;
            }
            if len < min {
                continue;
            }
            let better = match best {
                None => true,
                Some((s, l, _)) => spread < s || (spread == s && len > l),
            };
            if better {
                best = Some((spread, len, start));
            }
        }
    }
    best.map(|(_, len, start)| (start, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c(rating: f64) -> Candidate {
        Candidate {
            rating,
            enqueued_at: 0,
        }
    }

    #[test]
    fn pairs_the_closest_ratings_first() {
        let cands = [c(1000.0), c(1500.0), c(1010.0), c(1520.0), c(2500.0)];
        let cfg = BatchConfig {
            min_players: 2,
            max_players: 2,
            ..Default::default()
        };
        let m = form_matches(&cands, 0, &cfg);
        assert_eq!(m, vec![vec![0, 2], vec![1, 3]]);
    }

    #[test]
    fn identical_ratings_fill_matches_to_the_maximum() {
        let cands: Vec<_> = (0..20).map(|_| c(1500.0)).collect();
        let m = form_matches(&cands, 0, &BatchConfig::default());
        let sizes: Vec<usize> = m.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![8, 8, 4]);
    }

    #[test]
    fn windows_grow_with_wait() {
        let cands = [c(1500.0), c(1700.0)];
        let cfg = BatchConfig::default();
        assert!(form_matches(&cands, 0, &cfg).is_empty());
        // After 15 s both windows are +-200.
        assert_eq!(form_matches(&cands, 15_000, &cfg), vec![vec![0, 1]]);
    }

    proptest! {
        #[test]
        fn matches_respect_sizes_windows_and_use_each_ticket_once(
            ratings in proptest::collection::vec(0.0f64..3000.0, 0..60),
            waits in proptest::collection::vec(0u64..60_000, 60),
            min in 1usize..4,
            extra in 0usize..6,
        ) {
            let now = 100_000;
            let cands: Vec<Candidate> = ratings.iter().zip(&waits)
                .map(|(&r, &w)| Candidate { rating: r, enqueued_at: now - w }).collect();
            let cfg = BatchConfig { min_players: min, max_players: min + extra, window: WindowPolicy::default() };
            let matches = form_matches(&cands, now, &cfg);
            let mut seen = std::collections::HashSet::new();
            for m in &matches {
                prop_assert!(m.len() >= min && m.len() <= min + extra);
                for &a in m {
                    prop_assert!(seen.insert(a), "ticket {a} used twice");
                    let (lo, hi) = cfg.window.window(cands[a].rating, now - cands[a].enqueued_at);
                    for &b in m {
                        prop_assert!(cands[b].rating >= lo && cands[b].rating <= hi);
                    }
                }
            }
        }
    }
}
