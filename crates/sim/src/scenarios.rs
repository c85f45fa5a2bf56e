//! The scenarios shipped with `matchmaker simulate`.

use crate::run::Scenario;
use crate::stream::{RegionMix, StreamSpec};
use mm_engine::Modes;

/// Three regions; players live in each with these shares and measure these
/// latencies (ms) to eu, na and asia (jitter is added per player).
pub fn regions() -> Vec<RegionMix> {
    vec![
        RegionMix {
            name: "eu".into(),
            share: 0.45,
            latency_ms: vec![25, 95, 190],
        },
        RegionMix {
            name: "na".into(),
            share: 0.35,
            latency_ms: vec![95, 30, 140],
        },
        RegionMix {
            name: "asia".into(),
            share: 0.20,
            latency_ms: vec![190, 140, 35],
        },
    ]
}

/// Solo 80%, then parties of 2, 3, 4 and 5 (20% of tickets are parties).
pub const PARTY_MIX: [f64; 5] = [0.80, 0.08, 0.05, 0.04, 0.03];

/// A scenario against `modes`: `rate` players/s for `duration_s`, then 180 s of
/// drain; 5% of groups give up.
#[allow(clippy::too_many_arguments)]
pub fn scenario(
    modes: &Modes,
    name: &str,
    about: &str,
    seed: u64,
    rate: f64,
    duration_s: u64,
    party_sizes: &[f64],
    mix: Vec<(&str, f64)>,
    second_mode: f64,
) -> Scenario {
    Scenario {
        name: name.to_string(),
        about: about.to_string(),
        trace: None,
        stream: StreamSpec {
            seed,
            players_per_second: rate,
            duration_s,
            party_sizes: party_sizes.to_vec(),
            modes: mix.into_iter().map(|(m, w)| (m.to_string(), w)).collect(),
            second_mode,
            regions: regions(),
            cancel_rate: 0.05,
        },
        modes: modes.clone(),
        drain_s: 180,
    }
}

/// Every shipped scenario, given the modes to run them with.
pub fn all(modes: &Modes) -> Vec<Scenario> {
    let five = || vec![("5v5", 1.0)];
    vec![
        scenario(
            modes,
            "quiet",
            "5v5, 2 players/s for 15 min",
            7,
            2.0,
            900,
            &PARTY_MIX,
            five(),
            0.0,
        ),
        // A thin queue with quick matches: the shortest waits of the scenarios,
        // so the matchers' poll and wake-up timing weighs most here.
        scenario(
            modes,
            "duel",
            "1v1, solo players only, 5 players/s for 10 min",
            5,
            5.0,
            600,
            &[1.0],
            vec![("1v1", 1.0)],
            0.0,
        ),
        scenario(
            modes,
            "normal",
            "5v5, 50 players/s for 10 min",
            7,
            50.0,
            600,
            &PARTY_MIX,
            five(),
            0.0,
        ),
        scenario(
            modes,
            "peak",
            "5v5, 500 players/s for 5 min",
            7,
            500.0,
            300,
            &PARTY_MIX,
            five(),
            0.0,
        ),
        // The baseline knows no parties; without them its team balance can be
        // compared with ours fairly.
        scenario(
            modes,
            "solo",
            "5v5, solo players only, 50 players/s for 10 min",
            7,
            50.0,
            600,
            &[1.0],
            five(),
            0.0,
        ),
        scenario(
            modes,
            "br100",
            "battle royale (100 solo), 60 players/s for 10 min",
            11,
            60.0,
            600,
            &[1.0],
            vec![("br100", 1.0)],
            0.0,
        ),
        scenario(
            modes,
            "mixed",
            "1v1 30% / 5v5 50% / br100 20%, 100 players/s for 10 min, 20% of groups queue for two modes",
            13,
            100.0,
            600,
            &PARTY_MIX,
            vec![("1v1", 0.3), ("5v5", 0.5), ("br100", 0.2)],
            0.2,
        ),
    ]
}
