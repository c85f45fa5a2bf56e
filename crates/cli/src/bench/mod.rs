//! `matchmaker bench <scenario>`: benchmarks against a deployment the command starts
//! itself on loopback. Bounded in time and traffic. Each scenario runs a baseline in
//! the same command and prints the ratio: the machine is shared, so ratios are the
//! honest figure.

mod allocate;
mod contention;
mod drain;
mod fleet;
mod latency;
mod lock;
mod push;
mod recovery;
mod redis_info;
mod throughput;

use clap::Subcommand;

/// The mode the benches use: matches of 2 to 8 solo players, as seed 000's
/// MIN/MAX_PLAYERS_PER_MATCH defaults (teams of one, formed below full at once).
/// No ready check and no placement: the drain measures matchmaking itself, and the
/// allocation benches allocate on their own.
const BENCH_MODE: &str = r#"
[modes.bench]
teams = 8
team_size = 1
min_players = 2
start_below_max_after = "0s"
ready_check = false
placement = "none"
"#;

#[derive(Debug, Subcommand)]
pub enum Scenario {
    /// Seed N tickets into a local Redis, start K worker processes, measure how fast they drain the queue.
    Drain(drain::DrainArgs),
    /// Concurrent callers allocate and release game-server slots through the store, against seed 001's token lock.
    Allocate(allocate::AllocateArgs),
    /// Seed 001's race: many callers, a few free slots, through gRPC Allocate and the store; exactly that many may win.
    Contention(contention::ContentionArgs),
    /// Players on WebSockets through an ingress: time from a match's commit to its ready check on the socket, against plain Pub/Sub.
    Push(push::PushArgs),
    /// A drain during which one worker is SIGKILLed: how long its tickets stay stranded; none lost or duplicated.
    Recovery(recovery::RecoveryArgs),
    /// Ticket creations/s the ingress sustains at saturation (Redis and embedded), against GET /healthz.
    Throughput(throughput::ThroughputArgs),
}

pub async fn run(scenario: Scenario) -> anyhow::Result<()> {
    match scenario {
        Scenario::Drain(args) => drain::run(args).await,
        Scenario::Allocate(args) => allocate::run(args).await,
        Scenario::Contention(args) => contention::run(args).await,
        Scenario::Push(args) => push::run(args).await,
        Scenario::Recovery(args) => recovery::run(args).await,
        Scenario::Throughput(args) => throughput::run(args).await,
    }
}
