//! `matchmaker bench <scenario>`: benchmarks against a deployment the command starts
//! itself on loopback. Bounded in time and traffic.

mod drain;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum Scenario {
    /// Seed N tickets into a local Redis, start K worker processes, measure how fast they drain the queue.
    Drain(drain::DrainArgs),
}

pub async fn run(scenario: Scenario) -> anyhow::Result<()> {
    match scenario {
        Scenario::Drain(args) => drain::run(args).await,
    }
}
