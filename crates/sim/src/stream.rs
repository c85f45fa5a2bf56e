//! The synthetic arrival stream: seeded, so the same scenario always produces the
//! same players, parties, modes, regions, latencies and cancellations.

use crate::attrs::AttributeMix;
use mm_domain::Attributes;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Ratings are drawn from N(`RATING_MEAN`, `RATING_SD`) and clipped to 0..=3000.
pub const RATING_MEAN: f64 = 1500.0;
pub const RATING_SD: f64 = 300.0;
pub const RATING_MAX: f64 = 3000.0;

/// A region players live in: its share of arrivals and the latency from it to
/// every region (ms, same order as the scenario's region list).
#[derive(Debug, Clone)]
pub struct RegionMix {
    pub name: String,
    pub share: f64,
    pub latency_ms: Vec<u32>,
}

/// What arrives, how fast and for how long.
#[derive(Debug, Clone)]
pub struct StreamSpec {
    pub seed: u64,
    /// Players arriving per second (parties count their members).
    pub players_per_second: f64,
    /// Seconds of arrivals.
    pub duration_s: u64,
    /// Share of tickets by party size, index 0 = solo.
    pub party_sizes: Vec<f64>,
    /// Share of arrivals by mode.
    pub modes: Vec<(String, f64)>,
    /// Share of arriving groups that queue for a second mode at the same time.
    pub second_mode: f64,
    pub regions: Vec<RegionMix>,
    /// Share of groups that cancel if not matched within a patience drawn
    /// uniformly from 10..120 s.
    pub cancel_rate: f64,
    /// How the groups' attributes are drawn (none by default).
    pub attributes: AttributeMix,
}

/// A group of players arriving together, queueing for one or more modes.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrival {
    pub at_ms: u64,
    /// Member ratings (the first is the leader's).
    pub ratings: Vec<f64>,
    /// Modes queued for, first is the main one.
    pub modes: Vec<String>,
    /// Latency to every region of the scenario.
    pub latency_ms: Vec<u32>,
    /// When the group gives up, if it ever does.
    pub cancel_at_ms: Option<u64>,
    /// What the group runs and wants, for the modes' rules.
    pub attributes: Attributes,
    /// Each member's own attributes where they differ (empty: none).
    pub player_attributes: Vec<Attributes>,
}

fn normal(rng: &mut StdRng) -> f64 {
    // Box-Muller.
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn pick<'a, T>(rng: &mut StdRng, items: &'a [(T, f64)]) -> &'a T {
    let total: f64 = items.iter().map(|(_, w)| w).sum();
    let mut x = rng.random::<f64>() * total;
    for (item, w) in items {
        if x < *w {
            return item;
        }
        x -= w;
    }
    &items.last().expect("non-empty").0
}

/// A rating drawn from N(1500, 300), clipped to 0..=3000.
pub fn rating(rng: &mut StdRng) -> f64 {
    (RATING_MEAN + RATING_SD * normal(rng)).clamp(0.0, RATING_MAX)
}

/// Generates the whole stream, in arrival order. `max_party(mode)` is the largest
/// party each mode accepts; groups too big for a mode do not queue for it.
pub fn generate(spec: &StreamSpec, max_party: impl Fn(&str) -> usize) -> Vec<Arrival> {
    let mut rng = StdRng::seed_from_u64(spec.seed);
    // Attributes draw from a stream of their own: the same stream with or
    // without them has the same groups.
    let mut attr_rng = StdRng::seed_from_u64(spec.seed ^ 0xA77B_0000_0000_0001);
    let sizes: Vec<(usize, f64)> = spec
        .party_sizes
        .iter()
        .enumerate()
        .map(|(i, &w)| (i + 1, w))
        .collect();
    let mean_size: f64 = sizes.iter().map(|&(s, w)| s as f64 * w).sum::<f64>()
        / sizes.iter().map(|&(_, w)| w).sum::<f64>();
    let groups_per_ms = spec.players_per_second / mean_size / 1000.0;
    let regions: Vec<(usize, f64)> = spec
        .regions
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.share))
        .collect();
    let end = spec.duration_s * 1000;
    let mut t = 0.0f64;
    let mut out = Vec::new();
    loop {
        t += -rng.random::<f64>().max(f64::MIN_POSITIVE).ln() / groups_per_ms;
        if t as u64 >= end {
            break;
        }
        let mode = pick(&mut rng, &spec.modes).as_str();
        let mut size = *pick(&mut rng, &sizes);
        size = size.min(max_party(mode));
        let leader = rating(&mut rng);
        let mut ratings = vec![leader];
        for _ in 1..size {
            ratings.push((leader + 150.0 * normal(&mut rng)).clamp(0.0, RATING_MAX));
        }
        let mut modes = vec![mode.to_string()];
        if rng.random::<f64>() < spec.second_mode {
            let other = pick(&mut rng, &spec.modes);
            if other != mode && size <= max_party(other) {
                modes.push(other.clone());
            }
        }
        let home = &spec.regions[*pick(&mut rng, &regions)];
        let latency_ms = home
            .latency_ms
            .iter()
            .map(|&l| l + rng.random_range(0..=l / 4 + 5))
            .collect();
        let cancel_at_ms = (rng.random::<f64>() < spec.cancel_rate)
            .then(|| t as u64 + rng.random_range(10_000..120_000));
        let (attributes, player_attributes) = spec.attributes.draw(&mut attr_rng, ratings.len());
        out.push(Arrival {
            at_ms: t as u64,
            ratings,
            modes,
            latency_ms,
            cancel_at_ms,
            attributes,
            player_attributes,
        });
    }
    out
}
