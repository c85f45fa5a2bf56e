//! The scenarios shipped with `matchmaker simulate`.

use crate::run::Scenario;
use crate::stream::{RegionMix, StreamSpec};
use mm_engine::Modes;

/// Three regions; players live in each with these shares and measure these
/// latencies (ms) to eu, na and asia (jitter is added per player).
pub fn regions() -> Vec<RegionMix> {
    vec![
        RegionMix {
            name: "eu",
            share: 0.45,
            latency_ms: vec![25, 95, 190],
        },
        RegionMix {
            name: "na",
            share: 0.35,
            latency_ms: vec![95, 30, 140],
        },
        RegionMix {
            name: "asia",
            share: 0.20,
            latency_ms: vec![190, 140, 35],
        },
    ]
}

/// Solo 80%, then parties of 2, 3, 4 and 5 (20% of tickets are parties).
pub const PARTY_MIX: [f64; 5] = [0.80, 0.08, 0.05, 0.04, 0.03];

fn five_v_five(name: &'static str, about: &'static str, rate: f64, duration_s: u64) -> Scenario {
    Scenario {
        name,
        about,
        stream: StreamSpec {
            seed: 7,
            players_per_second: rate,
            duration_s,
            party_sizes: PARTY_MIX.to_vec(),
            modes: vec![("5v5", 1.0)],
            second_mode: 0.0,
            regions: regions(),
            cancel_rate: 0.05,
        },
        modes: Modes::defaults(),
        tick_ms: 500,
        drain_s: 180,
    }
}

/// Every shipped scenario, given the modes to run them with.
pub fn all(modes: &Modes) -> Vec<Scenario> {
    let mut out = vec![
        five_v_five("quiet", "5v5, 2 players/s for 15 min", 2.0, 900),
        five_v_five("normal", "5v5, 50 players/s for 10 min", 50.0, 600),
        five_v_five("peak", "5v5, 500 players/s for 5 min", 500.0, 300),
        Scenario {
            name: "br100",
            about: "battle royale (100 solo), 60 players/s for 10 min",
            stream: StreamSpec {
                seed: 11,
                players_per_second: 60.0,
                duration_s: 600,
                party_sizes: vec![1.0],
                modes: vec![("br100", 1.0)],
                second_mode: 0.0,
                regions: regions(),
                cancel_rate: 0.05,
            },
            modes: Modes::defaults(),
            tick_ms: 500,
            drain_s: 180,
        },
        Scenario {
            name: "mixed",
            about: "1v1 30% / 5v5 50% / br100 20%, 100 players/s for 10 min, 20% of groups queue for two modes",
            stream: StreamSpec {
                seed: 13,
                players_per_second: 100.0,
                duration_s: 600,
                party_sizes: PARTY_MIX.to_vec(),
                modes: vec![("1v1", 0.3), ("5v5", 0.5), ("br100", 0.2)],
                second_mode: 0.2,
                regions: regions(),
                cancel_rate: 0.05,
            },
            modes: Modes::defaults(),
            tick_ms: 500,
            drain_s: 180,
        },
    ];
    for s in &mut out {
        s.modes = modes.clone();
    }
    out
}
