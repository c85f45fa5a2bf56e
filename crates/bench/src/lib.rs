//! `matchmaker bench <scenario>`: benchmarks against a deployment the command starts
//! itself on loopback. Bounded in time and traffic. Each scenario runs a baseline in
//! the same command and prints the ratio: the machine is shared, so ratios are the
//! honest figure.

mod allocate;
mod backfill;
mod callers;
mod chart;
mod contention;
mod cpu;
mod deploy;
mod drain;
mod fleet;
mod histogram;
mod latency;
mod lock;
mod pipeline;
mod progress;
mod push;
mod ratings;
mod recovery;
mod redis_info;
pub mod seed000;
mod soak;
mod throughput;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;

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

/// Seed 000's worker and supervisor settings, run beside ours as the baseline:
/// its tightest-spread formation over a claim batch of 10, a 30 s lease refreshed
/// every 2 s, the supervisor every 5 s, polling without wake-ups. Environment for
/// `matchmaker worker`.
pub(crate) const SEED000_WORKER: [(&str, &str); 5] = [
    ("FORMATION", "seed000"),
    ("CLAIM_BATCH_SIZE", "10"),
    ("LOCK_TTL", "30s"),
    ("HEARTBEAT_INTERVAL", "2s"),
    // Seed 000's workers poll; they are never woken.
    ("WAKE_UPS", "false"),
];
/// Seed 000's supervisor period (`SUPERVISE_INTERVAL`).
pub(crate) const SEED000_SUPERVISE: &str = "5s";

/// `matchmaker SUB` (this binary) serving `mode` in `region` from `modes_file`,
/// on `redis_url` (in-memory without), logging warnings only. Its rating database
/// is a SQLite file beside the modes file, and tickets carry the bench's ratings
/// unless the caller sets `ALLOW_CLIENT_RATINGS=false`.
pub(crate) fn matchmaker(
    sub: &str,
    redis_url: Option<&str>,
    modes_file: &std::path::Path,
    mode: &str,
    region: &str,
) -> Result<std::process::Command> {
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.arg(sub)
        .env_remove("REDIS_URL")
        .env("MODES_FILE", modes_file)
        .env("MODES", mode)
        .env("REGIONS", region)
        .env("RUST_LOG", "warn")
        .env("AUTH", "dev")
        .env("RATE_LIMIT_TICKETS", "off,off")
        .env("RATE_LIMIT_ANSWERS", "off,off")
        .env("RATE_LIMIT_INVITES", "off,off")
        .env("RATE_LIMIT_READS", "off,off")
        .env("RATE_LIMIT_CONNECTS", "off,off")
        .env("RATE_LIMIT_MESSAGES", "off,off")
        .env_remove("JWT_SECRET_FILE")
        .env_remove("JWT_JWKS_FILE")
        .env("ALLOW_CLIENT_RATINGS", "true");
    if let Some(dir) = modes_file.parent() {
        cmd.env("DATA_DIR", dir).env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.join("ratings.db").display()),
        );
    }
    if let Some(url) = redis_url {
        cmd.env("REDIS_URL", url);
    }
    Ok(cmd)
}

/// A deployment given on the command line, and the pool its tickets go to.
#[derive(Debug, Clone, Args)]
pub struct Target {
    /// Run against this deployment (http://HOST:PORT on loopback) instead of
    /// starting one. It needs a solo mode without placement (see --mode).
    #[arg(long)]
    pub url: Option<String>,
    /// Mode of the tickets (the deployments the command starts serve `bench`).
    #[arg(long, default_value = "bench")]
    pub mode: String,
    /// Region of the tickets (the deployments the command starts serve `eu`).
    #[arg(long, default_value = "eu")]
    pub region: String,
}

/// Where a scenario writes its CSV and PNG chart.
#[derive(Debug, Clone, Args)]
pub struct Output {
    /// Directory for the scenario's CSV and PNG chart (created if missing).
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,
}

impl Output {
    /// `DIR/NAME`, creating DIR.
    pub fn file(&self, name: &str) -> Result<PathBuf> {
        std::fs::create_dir_all(&self.out)
            .with_context(|| format!("cannot create {}", self.out.display()))?;
        Ok(self.out.join(name))
    }

    /// Writes `DIR/NAME` (a CSV: `header`, then `rows`, their text fields
    /// quoted where they need it) and says so.
    pub fn csv(
        &self,
        name: &str,
        header: &str,
        rows: impl IntoIterator<Item = String>,
    ) -> Result<()> {
        let path = self.file(name)?;
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path)
                .with_context(|| format!("cannot write {}", path.display()))?,
        );
        writeln!(f, "{header}")?;
        for row in rows {
            writeln!(f, "{row}")?;
        }
        f.flush()?;
        println!("wrote {}", path.display());
        Ok(())
    }

    /// Renders a line chart to `DIR/NAME` and says so.
    pub fn lines(&self, name: &str, chart: &chart::Lines) -> Result<()> {
        let path = self.file(name)?;
        chart.render(&path)?;
        println!("wrote {}", path.display());
        Ok(())
    }

    /// Renders a bar chart to `DIR/NAME` and says so.
    pub fn bars(&self, name: &str, chart: &chart::Bars) -> Result<()> {
        let path = self.file(name)?;
        chart.render(&path)?;
        println!("wrote {}", path.display());
        Ok(())
    }
}

/// "median of N rounds, COMPARISON: 0.98x WHAT (sorted: ...)", for ratios of
/// interleaved rounds.
pub(crate) fn median_of_rounds(comparison: &str, what: &str, mut ratios: Vec<f64>) -> String {
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    let median = match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => ratios[n / 2],
        _ => (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0,
    };
    let each: Vec<String> = ratios.iter().map(|x| format!("{x:.2}")).collect();
    format!(
        "median of {n} rounds, {comparison}: {median:.2}x {what} (sorted: {})",
        each.join(", ")
    )
}

/// A feature on or off, for scenarios that compare the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    On,
    Off,
}

#[derive(Debug, Subcommand)]
pub enum Scenario {
    /// Players ramp from 10 to 1,000 concurrent, each queuing tickets over HTTP and waiting on a WebSocket: creation and time to match per step.
    Latency(latency::LatencyArgs),
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
    /// Finished matches to ratings in PostgreSQL: updates/s against seed 004's transaction per match, and result-to-readable latency at load.
    Ratings(ratings::RatingsArgs),
    /// Seats of running matches open at 100/s with 1,000 players waiting: time from a seat opening to its filler's match.assigned, against a new match's time to its players at the same load.
    Backfill(backfill::BackfillArgs),
    /// A long run of players queuing, accepting, declining and cancelling on Redis: every process's memory and Redis's key count over time (flat once warm).
    Soak(soak::SoakArgs),
    /// A worker of the seed-000 port (the benches start it).
    #[command(hide = true)]
    Seed000Worker(seed000::worker::WorkerArgs),
    /// The supervisor of the seed-000 port (the benches start it).
    #[command(hide = true)]
    Seed000Supervisor(seed000::worker::SupervisorArgs),
}

pub async fn run(scenario: Scenario) -> Result<()> {
    if scenario.starts_redis() {
        mm_testkit::RedisServer::available().map_err(anyhow::Error::msg)?;
    }
    match scenario {
        Scenario::Latency(args) => latency::run(args).await,
        Scenario::Drain(args) => drain::run(args).await,
        Scenario::Allocate(args) => allocate::run(args).await,
        Scenario::Contention(args) => contention::run(args).await,
        Scenario::Push(args) => push::run(args).await,
        Scenario::Recovery(args) => recovery::run(args).await,
        Scenario::Throughput(args) => throughput::run(args).await,
        Scenario::Ratings(args) => ratings::run(args).await,
        Scenario::Soak(args) => soak::run(args).await,
        Scenario::Backfill(args) => backfill::run(args).await,
        Scenario::Seed000Worker(args) => seed000::worker::run_worker(args).await,
        Scenario::Seed000Supervisor(args) => seed000::worker::run_supervisor(args).await,
    }
}

impl Scenario {
    /// Whether the bench starts a `redis-server` of its own: then a machine
    /// without one gets the install hint as an error, not a panic from the
    /// first start. (Not a drain pointed at a running Redis, latency and
    /// throughput runs of the embedded deployment or against `--url`, nor
    /// the seed port's own processes, which are handed one.)
    fn starts_redis(&self) -> bool {
        match self {
            Scenario::Drain(args) => args.redis_url.is_none(),
            Scenario::Latency(args) => {
                args.deployment == deploy::Kind::Redis && args.target.url.is_none()
            }
            Scenario::Throughput(args) => {
                args.deployments.contains(&deploy::Kind::Redis) && args.target.url.is_none()
            }
            Scenario::Seed000Worker(_) | Scenario::Seed000Supervisor(_) => false,
            _ => true,
        }
    }
}

/// `text` as one CSV field: quoted when it holds a comma, a quote or a line
/// break (run labels such as "ours, leader" do).
pub(crate) fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod csv_tests {
    use super::csv_field;

    #[test]
    fn labels_with_commas_stay_one_field() {
        assert_eq!(csv_field("ours"), "ours");
        assert_eq!(csv_field("ours, leader #2"), "\"ours, leader #2\"");
        assert_eq!(csv_field("a \"b\""), "\"a \"\"b\"\"\"");
    }
}
