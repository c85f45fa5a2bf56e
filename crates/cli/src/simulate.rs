//! `matchmaker simulate`: replays the shipped scenarios (or one of them) through
//! pool leaders (our engine on whole pools), `claim` workers (our engine on claim
//! batches) and the seed-000 baseline on a simulated clock, with the timing the
//! worker settings give (`POLL_INTERVAL`, `WAKE_UPS`, `CLAIM_BATCH_SIZE`, workers x
//! `WORKER_POOL_SIZE`), and prints the comparison as markdown.
//! `--trace FILE` replays a studio's own arrivals instead ([`mm_sim::trace`]), and
//! `--rate`, `--duration`, `--party-mix` and `--mode` describe a stream of one's
//! own. Needs no Redis; the same scenario always gives the same figures.

use anyhow::{Context, Result, bail};
use clap::Args;
use mm_sim::Scenario;
use mm_sim::stream::RegionMix;
use mm_sim::{Engine, SEED000, Timing, run, scenarios, side_by_side};
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    /// Scenario to run (quiet, duel, normal, peak, solo, br100, rules, mixed), or
    /// `all`.
    #[arg(long, default_value = "all")]
    pub scenario: String,
    /// Replace the stream's random seed (each scenario has its own by default).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Replay this trace (JSON lines or CSV of arriving groups: time, ratings,
    /// modes, latencies per region, cancel time) instead of a generated stream.
    #[arg(long, conflicts_with_all = ["scenario", "rate", "duration", "party_mix", "mode"])]
    pub trace: Option<std::path::PathBuf>,
    /// A stream of your own: players arriving per second (default 50).
    #[arg(long)]
    pub rate: Option<f64>,
    /// A stream of your own: how long players arrive (default 10m).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// A stream of your own: share of groups by size, solo first (default
    /// 0.8,0.08,0.05,0.04,0.03).
    #[arg(long, value_delimiter = ',')]
    pub party_mix: Option<Vec<f64>>,
    /// A stream of your own: the mode everyone queues for (default 5v5).
    #[arg(long)]
    pub mode: Option<String>,
    /// Attributes for the generated stream's groups, as a TOML of value
    /// draws per attribute (`values`, `list` with `pick`, `accept` per player,
    /// `range`), for the modes' rules.
    #[arg(long, conflicts_with = "trace")]
    pub attributes: Option<std::path::PathBuf>,
    /// Players leave running matches: each player's chance to leave in a
    /// minute of play (0 to 1; e.g. 0.02). Matches then play for
    /// `--match-duration`, and open seats are backfilled (`--backfill`).
    #[arg(long)]
    pub leave_rate: Option<f64>,
    /// How long a match plays, with `--leave-rate`.
    #[arg(long, default_value = "10m", value_parser = humantime::parse_duration, requires = "leave_rate")]
    pub match_duration: std::time::Duration,
    /// With `--leave-rate`: fill open seats (`on`), or leave them open (`off`,
    /// to compare the waits).
    #[arg(long, value_enum, default_value = "on", requires = "leave_rate")]
    pub backfill: OnOff,
    #[command(flatten)]
    pub modes: crate::config::ModesArgs,
    #[command(flatten)]
    pub strategy: StrategyArgs,
}

/// A switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

/// The worker settings the simulated strategies run with (the service's
/// variables and defaults, but two consumers per worker whatever the CPUs).
#[derive(Debug, Clone, Args)]
pub struct StrategyArgs {
    /// Worker processes of the `claim` strategy.
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    /// Consumers per worker process.
    #[arg(long, env = "WORKER_POOL_SIZE", default_value_t = 2)]
    pub worker_pool_size: usize,
    /// Most tickets a consumer claims per pool cycle (at least three full
    /// matches' worth).
    #[arg(long, env = "CLAIM_BATCH_SIZE", default_value_t = 100)]
    pub claim_batch_size: usize,
    /// Longest pause after a pass that formed no match (the first is 5 ms,
    /// doubling).
    #[arg(long, env = "POLL_INTERVAL", default_value = "100ms", value_parser = humantime::parse_duration)]
    pub poll_interval: Duration,
    /// Wake idle matchers as soon as a ticket arrives in their pools; `false`:
    /// poll only.
    #[arg(long, env = "WAKE_UPS", default_value_t = true, action = clap::ArgAction::Set)]
    pub wake_ups: bool,
    /// Simulated time one cycle over one pool takes (claim, engine, commit).
    #[arg(long, default_value = "1ms", value_parser = humantime::parse_duration)]
    pub cycle: Duration,
}

impl StrategyArgs {
    /// Leaders and claim workers as these settings configure them.
    fn engines(&self) -> Result<(Engine, Engine)> {
        if !(1..=64).contains(&self.workers) {
            bail!("--workers must be between 1 and 64");
        }
        if !(1..=1024).contains(&self.worker_pool_size) {
            bail!("WORKER_POOL_SIZE (--worker-pool-size) must be between 1 and 1024");
        }
        if !(1..=2000).contains(&self.claim_batch_size) {
            bail!("CLAIM_BATCH_SIZE (--claim-batch-size) must be between 1 and 2000");
        }
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        if self.poll_interval.is_zero() || self.poll_interval > Duration::from_secs(60) {
            bail!("POLL_INTERVAL (--poll-interval) must be more than zero and at most 60s");
        }
        if self.cycle.is_zero() || self.cycle > Duration::from_secs(10) {
            bail!("--cycle must be at least 1ms and at most 10s");
        }
        let timing = Timing {
            poll_ms: ms(self.poll_interval).max(1),
            wake_ups: self.wake_ups,
            cycle_ms: ms(self.cycle).max(1),
            ..Timing::SERVICE
        };
        Ok((
            Engine::Leader { timing },
            Engine::Claim {
                batch: self.claim_batch_size,
                workers: self.workers * self.worker_pool_size,
                seed: 1,
                timing,
            },
        ))
    }

    fn describe(&self) -> String {
        format!(
            "claim: {} x {} consumers of {} tickets; POLL_INTERVAL {}, wake-ups {}, {} per pool cycle",
            self.workers,
            self.worker_pool_size,
            self.claim_batch_size,
            humantime::format_duration(self.poll_interval),
            if self.wake_ups { "on" } else { "off" },
            humantime::format_duration(self.cycle),
        )
    }
}

/// The scenario a trace file describes.
fn from_trace(path: &std::path::Path, modes: &mm_engine::Modes) -> Result<Scenario> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the trace {}", path.display()))?;
    let trace =
        mm_sim::trace::parse(&text).with_context(|| format!("the trace {}", path.display()))?;
    let mut s = scenarios::scenario(
        modes,
        "trace",
        &format!(
            "{}: {} groups over {} s",
            path.display(),
            trace.arrivals.len(),
            trace.arrivals.last().map_or(0, |a| a.at_ms).div_ceil(1000)
        ),
        0,
        0.0,
        0,
        &[1.0],
        Vec::new(),
        0.0,
    );
    let mut used: Vec<&str> = trace
        .arrivals
        .iter()
        .flat_map(|a| a.modes.iter().map(String::as_str))
        .collect();
    used.sort_unstable();
    used.dedup();
    s.stream.modes = used.into_iter().map(|m| (m.to_string(), 1.0)).collect();
    s.stream.regions = trace
        .regions
        .iter()
        .map(|name| RegionMix {
            name: name.clone(),
            share: 0.0,
            latency_ms: Vec::new(),
        })
        .collect();
    s.trace = Some(trace.arrivals);
    Ok(s)
}

/// The scenario `--rate`, `--duration`, `--party-mix` and `--mode` describe, if
/// any of them is given.
fn from_stream_args(args: &SimulateArgs, modes: &mm_engine::Modes) -> Result<Option<Scenario>> {
    if args.rate.is_none()
        && args.duration.is_none()
        && args.party_mix.is_none()
        && args.mode.is_none()
    {
        return Ok(None);
    }
    let rate = args.rate.unwrap_or(50.0);
    if !(rate > 0.0 && rate <= 100_000.0) {
        bail!("--rate must be more than 0 and at most 100000 players/s");
    }
    let duration = args.duration.unwrap_or(std::time::Duration::from_secs(600));
    if duration.is_zero() || duration > std::time::Duration::from_secs(24 * 3600) {
        bail!("--duration must be more than 0 and at most 24h");
    }
    let mix = args
        .party_mix
        .clone()
        .unwrap_or(scenarios::PARTY_MIX.to_vec());
    if mix.is_empty()
        || mix.iter().any(|w| !w.is_finite() || *w < 0.0)
        || mix.iter().sum::<f64>() <= 0.0
    {
        bail!("--party-mix must list shares >= 0 by party size, solo first, not all zero");
    }
    let mode = args.mode.clone().unwrap_or_else(|| "5v5".into());
    let about = format!(
        "{mode}, {rate} players/s for {}, party mix {mix:?}",
        humantime::format_duration(duration)
    );
    Ok(Some(scenarios::scenario(
        modes,
        "custom",
        &about,
        args.seed.unwrap_or(7),
        rate,
        duration.as_secs().max(1),
        &mix,
        vec![(mode.as_str(), 1.0)],
        0.0,
    )))
}

pub fn simulate(args: SimulateArgs) -> Result<()> {
    let modes = args.modes.modes()?;
    let (leader, claim) = args.strategy.engines()?;
    let chosen: Vec<Scenario> = if let Some(path) = &args.trace {
        vec![from_trace(path, &modes)?]
    } else if let Some(custom) = from_stream_args(&args, &modes)? {
        vec![custom]
    } else {
        scenarios::all(&modes)
            .into_iter()
            .filter(|s| args.scenario == "all" || s.name == args.scenario)
            .collect()
    };
    if chosen.is_empty() {
        bail!(
            "unknown scenario {:?}; known: quiet, duel, normal, peak, solo, br100, rules, mixed, all",
            args.scenario
        );
    }
    let attributes = match &args.attributes {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading --attributes {}", path.display()))?;
            Some(
                mm_sim::attrs::AttributeMix::parse(&text)
                    .map_err(|e| anyhow::anyhow!("--attributes {}: {e}", path.display()))?,
            )
        }
    };
    let leaving = match args.leave_rate {
        None => None,
        Some(rate) if !(0.0..1.0).contains(&rate) => {
            bail!("--leave-rate must be at least 0 and below 1 (a chance a minute)")
        }
        Some(per_minute) => {
            let match_ms = args.match_duration.as_millis();
            if match_ms == 0 || match_ms > 24 * 3600 * 1000 {
                bail!("--match-duration must be more than 0 and at most 24h");
            }
            Some(mm_sim::backfill::Leaving {
                per_minute,
                match_ms: match_ms as u64,
                backfill: args.backfill == OnOff::On,
            })
        }
    };
    for mut scenario in chosen {
        if let Some(seed) = args.seed
            && scenario.trace.is_none()
        {
            scenario.stream.seed = seed;
        }
        if let Some(mix) = &attributes {
            scenario.stream.attributes = mix.clone();
        }
        scenario.leaving = leaving;
        for (mode, _) in &scenario.stream.modes {
            if modes.get(mode).is_none() {
                bail!(
                    "scenario {} needs mode {mode:?}, which the modes file does not define",
                    scenario.name
                );
            }
        }
        let whole = run(&scenario, leader);
        let batches = run(&scenario, claim);
        let base = run(&scenario, SEED000);
        println!(
            "### {} ({}; seed {}, {} s drain; {})\n",
            scenario.name,
            scenario.about,
            scenario.stream.seed,
            scenario.drain_s,
            args.strategy.describe()
        );
        println!(
            "{}",
            side_by_side(&[
                ("ours, leader", &whole),
                ("ours, claim", &batches),
                ("seed-000 baseline", &base),
            ])
        );
    }
    Ok(())
}
