//! `matchmaker simulate`: replays the shipped scenarios (or one of them) through our
//! engine on whole pools, our engine on claim batches (the `claim` workers) and the
//! seed-000 baseline on a simulated clock and prints the comparison as markdown. Needs no Redis; the same scenario always gives the same figures.

use anyhow::{Result, bail};
use clap::Args;
use mm_sim::{CLAIM, SEED000, run, scenarios, side_by_side};

#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    /// Scenario to run (quiet, normal, peak, solo, br100, mixed), or `all`.
    #[arg(long, default_value = "all")]
    pub scenario: String,
    /// Replace the stream's random seed (each scenario has its own by default).
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub modes: crate::config::ModesArgs,
}

pub fn simulate(args: SimulateArgs) -> Result<()> {
    let modes = args.modes.modes()?;
    let all = scenarios::all(&modes);
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|s| args.scenario == "all" || s.name == args.scenario)
        .collect();
    if chosen.is_empty() {
        bail!(
            "unknown scenario {:?}; known: quiet, normal, peak, solo, br100, mixed, all",
            args.scenario
        );
    }
    for mut scenario in chosen {
        if let Some(seed) = args.seed {
            scenario.stream.seed = seed;
        }
        for (mode, _) in &scenario.stream.modes {
            if modes.get(mode).is_none() {
                bail!(
                    "scenario {} needs mode {mode:?}, which the modes file does not define",
                    scenario.name
                );
            }
        }
        let whole = run(&scenario, mm_sim::Engine::Ours);
        let claim = run(&scenario, CLAIM);
        let base = run(&scenario, SEED000);
        println!(
            "### {} ({}; seed {}, matching every {} ms, {} s drain)\n",
            scenario.name, scenario.about, scenario.stream.seed, scenario.tick_ms, scenario.drain_s
        );
        println!(
            "{}",
            side_by_side(&[
                ("ours, whole pool", &whole),
                ("ours, claim batches", &claim),
                ("seed-000 baseline", &base),
            ])
        );
    }
    Ok(())
}
