//! The scenarios shipped with `matchmaker simulate`.

use crate::attrs::AttributeMix;
use crate::run::Scenario;
use crate::stream::{RegionMix, StreamSpec};
use mm_engine::{Modes, WindowPolicy};

/// The `rules` scenario's attributes: client builds 60/30/10%, pc or console
/// half and half, two or three of five maps per group, and per player the roles
/// they accept (20% tank, 20% healer, everyone damage).
pub const RULES_ATTRIBUTES: &str = r#"
[build]
values = { "1.4.2" = 0.6, "1.4.1" = 0.3, "1.3.9" = 0.1 }

[platform]
values = { pc = 0.5, console = 0.5 }

[maps]
list = ["dust", "harbor", "canal", "port", "mill"]
pick = [2, 3]

[roles]
accept = { tank = 0.2, healer = 0.2, damage = 1.0 }
"#;

/// The `rules` scenario's 5v5: the shipped one's party balance, and builds
/// kept apart, crossplay after 30 s, a shared map (any after a minute), and a
/// tank and a healer a team (anyone after a minute).
pub const RULES_MODE: &str = r#"
[modes.5v5]
teams = 2
team_size = 5
party_rating = "highest"
window = { initial = 50, per_second = 10, cap = 500 }
cross_region_after = "10s"
max_latency_ms = 150
rules = [
  { kind = "party_balance", max_size_gap = 2, relax = [{ after = "120s", off = true }] },
  { kind = "equal", attribute = "build" },
  { kind = "equal", attribute = "platform", groups = [["pc"], ["console"]],
    relax = [{ after = "30s", groups = [["pc", "console"]] }] },
  { kind = "intersect", attribute = "maps", relax = [{ after = "60s", off = true }] },
  { kind = "roles", attribute = "roles", need = { tank = 1, healer = 1, damage = 3 },
    relax = [{ after = "60s", any = ["tank", "healer"] }] },
]
"#;

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
            attributes: Default::default(),
        },
        modes: modes.clone(),
        drain_s: 180,
        leaving: None,
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
        rules(modes),
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

/// `normal`'s stream (the same groups, ratings and parties) with attributes,
/// through a 5v5 with rules ([`RULES_MODE`], [`RULES_ATTRIBUTES`]).
pub fn rules(modes: &Modes) -> Scenario {
    let ruled = Modes::load(Some(RULES_MODE), WindowPolicy::default())
        .expect("the rules scenario's mode is valid")
        .get("5v5")
        .expect("defined")
        .clone();
    let modes = Modes::of(
        modes
            .iter()
            .filter(|m| m.name != "5v5")
            .cloned()
            .chain(std::iter::once(ruled)),
    )
    .expect("valid modes");
    let mut s = scenario(
        &modes,
        "rules",
        "normal's 5v5 stream with builds, platforms, maps and roles, through a 5v5 with rules",
        7,
        50.0,
        600,
        &PARTY_MIX,
        vec![("5v5", 1.0)],
        0.0,
    );
    s.stream.attributes =
        AttributeMix::parse(RULES_ATTRIBUTES).expect("the rules scenario's attributes parse");
    s
}
