//! The allocation scenario: concurrent callers take a game-server slot through the
//! store and give it back, for a fixed time. Three runs in one command, each on its
//! own fresh `redis-server` where Redis is used:
//! - ours on Redis (`fleet_allocate.lua`: one script call per allocation);
//! - the baseline: seed 001's token lock per server around a client-side read and
//!   write of the free count ([`super::lock`]);
//! - ours on the in-memory store (the embedded default).
//!
//! Reports allocations/s (each allocation is followed by its release, so this is
//! the steady-state rate), allocate and release latency, Redis CPU per allocation,
//! and the ratio of ours to the baseline.

use super::chart::Bars;
use super::fleet;
use super::histogram::Latency;
use super::lock::{Guard, LockFleet};
use super::redis_info::redis_cpu_usec;
use super::{Output, callers};
use anyhow::{Result, bail};
use clap::Args;
use mm_store::{MemoryStore, RedisStore, Store};
use mm_testkit::RedisServer;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct AllocateArgs {
    /// Concurrent callers.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// How long each run lasts.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    /// Game servers registered.
    #[arg(long, default_value_t = 100)]
    pub servers: usize,
    /// Slots (matches at once) per server.
    #[arg(long, default_value_t = 50)]
    pub capacity: u32,
    #[command(flatten)]
    pub output: Output,
}

/// Where a run allocates.
enum Target {
    Ours(Arc<dyn Store>),
    Lock(LockFleet),
}

impl Target {
    async fn allocate(&self, id: &str) -> Result<Option<String>> {
        match self {
            Target::Ours(store) => Ok(fleet::allocate(&**store, id).await?),
            Target::Lock(lock) => lock.allocate(id).await,
        }
    }

    async fn release(&self, server: &str, id: &str) -> Result<bool> {
        match self {
            Target::Ours(store) => Ok(store.release_slot(server, id).await?),
            Target::Lock(fleet) => fleet.release(server, id).await,
        }
    }
}

/// What one caller counted.
#[derive(Default)]
struct Tally {
    allocated: u64,
    no_capacity: u64,
    errors: u64,
    first_error: Option<String>,
    allocate: Latency,
    release: Latency,
}

/// How one allocate-and-release ended.
enum Step {
    /// Allocated in `allocate`; released in the time given, or not.
    Allocated {
        allocate: Duration,
        release: Result<Duration, String>,
    },
    NoCapacity,
    Failed(String),
}

impl Tally {
    fn error(&mut self, e: impl std::fmt::Display) {
        self.errors += 1;
        self.first_error.get_or_insert_with(|| e.to_string());
    }
}

impl callers::Tally for Tally {
    fn died(&mut self, why: String) {
        self.error(why);
    }

    fn merge(&mut self, other: Tally) {
        self.allocated += other.allocated;
        self.no_capacity += other.no_capacity;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.allocate.merge(&other.allocate);
        self.release.merge(&other.release);
    }
}

struct Outcome {
    label: &'static str,
    tally: Tally,
    wall: Duration,
    /// Redis CPU (user + sys) per allocation, for runs on Redis.
    redis_usec: Option<f64>,
}

impl Outcome {
    fn rate(&self) -> f64 {
        self.tally.allocated as f64 / self.wall.as_secs_f64()
    }
}

/// The servers stay live well past the run.
fn ttl(args: &AllocateArgs) -> Duration {
    args.duration + Duration::from_secs(600)
}

pub async fn run(args: AllocateArgs) -> Result<()> {
    if args.concurrency == 0 || args.servers == 0 || args.capacity == 0 {
        bail!("--concurrency, --servers and --capacity must be at least 1");
    }
    if args.duration.is_zero() {
        bail!("--duration must be more than zero");
    }
    println!(
        "allocate: {} callers for {:?} per run; {} servers x {} slots; each allocation is released again",
        args.concurrency, args.duration, args.servers, args.capacity
    );
    let ours = {
        let redis = RedisServer::start();
        let store: Arc<dyn Store> = Arc::new(RedisStore::connect(&redis.url()).await?);
        fleet::register(&*store, args.servers, args.capacity, ttl(&args)).await?;
        measure(
            &args,
            "ours, Redis",
            Target::Ours(store),
            Some(&redis.url()),
        )
        .await?
    };
    let baseline = {
        let redis = RedisServer::start();
        let fleet =
            LockFleet::setup(&redis.url(), args.servers, args.capacity, Guard::LockRetry).await?;
        measure(
            &args,
            "seed-001 lock, Redis",
            Target::Lock(fleet),
            Some(&redis.url()),
        )
        .await?
    };
    let memory = {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        fleet::register(&*store, args.servers, args.capacity, ttl(&args)).await?;
        measure(&args, "ours, memory", Target::Ours(store), None).await?
    };
    let outcomes = [ours, baseline, memory];
    report(&outcomes);
    write(&args, &outcomes)?;
    let [ours, baseline, _] = &outcomes;
    println!(
        "\nratio ours / seed-001 lock on Redis: {:.2}x the allocations/s, {:.2}x the p99 allocate latency",
        ours.rate() / baseline.rate().max(f64::MIN_POSITIVE),
        ours.tally.allocate.ms(0.99) / baseline.tally.allocate.ms(0.99).max(f64::MIN_POSITIVE)
    );
    if let Some(o) = outcomes.iter().find(|o| o.tally.errors > 0) {
        bail!(
            "{}: {} errors, first: {}",
            o.label,
            o.tally.errors,
            o.tally.first_error.as_deref().unwrap_or("-")
        );
    }
    Ok(())
}

async fn measure(
    args: &AllocateArgs,
    label: &'static str,
    target: Target,
    redis_url: Option<&str>,
) -> Result<Outcome> {
    eprintln!("[{label}] running for {:?} ...", args.duration);
    let mut admin = match redis_url {
        Some(url) => Some(
            redis::Client::open(url)?
                .get_multiplexed_async_connection()
                .await?,
        ),
        None => None,
    };
    let cpu_start = match &mut admin {
        Some(a) => redis_cpu_usec(a).await?,
        None => 0.0,
    };
    let target = Arc::new(target);
    let request = move |caller: usize, i: u64| {
        let target = target.clone();
        async move {
            let id = format!("a-{caller}-{i}");
            let t0 = Instant::now();
            match target.allocate(&id).await {
                Ok(Some(server)) => {
                    let allocate = t0.elapsed();
                    let t1 = Instant::now();
                    let release = match target.release(&server, &id).await {
                        Ok(true) => Ok(t1.elapsed()),
                        Ok(false) => Err(format!("{id} held no slot on {server}")),
                        Err(e) => Err(e.to_string()),
                    };
                    Step::Allocated { allocate, release }
                }
                Ok(None) => Step::NoCapacity,
                Err(e) => Step::Failed(e.to_string()),
            }
        }
    };
    let (tally, wall) = callers::until(
        label,
        "allocating and releasing",
        args.concurrency,
        args.duration,
        request,
        |t: &mut Tally, step| match step {
            Step::Allocated { allocate, release } => {
                t.allocate.record(allocate);
                t.allocated += 1;
                match release {
                    Ok(took) => t.release.record(took),
                    Err(e) => t.error(e),
                }
            }
            Step::NoCapacity => t.no_capacity += 1,
            Step::Failed(e) => t.error(e),
        },
    )
    .await;
    let redis_usec = match &mut admin {
        Some(a) => Some((redis_cpu_usec(a).await? - cpu_start) / tally.allocated.max(1) as f64),
        None => None,
    };
    Ok(Outcome {
        label,
        tally,
        wall,
        redis_usec,
    })
}

fn report(outcomes: &[Outcome]) {
    println!();
    println!(
        "{:<22} {:>10} {:>12} {:>8} {:>7} {:>22}",
        "run", "allocated", "allocs/s", "no-cap", "errors", "redis us/alloc+release"
    );
    for o in outcomes {
        println!(
            "{:<22} {:>10} {:>12.0} {:>8} {:>7} {:>22}",
            o.label,
            o.tally.allocated,
            o.rate(),
            o.tally.no_capacity,
            o.tally.errors,
            o.redis_usec.map_or("-".into(), |u| format!("{u:.1}"))
        );
    }
    println!("\nlatency (ms):");
    for o in outcomes {
        println!("  {:<22} allocate  {}", o.label, o.tally.allocate.summary());
        println!("  {:<22} release   {}", "", o.tally.release.summary());
    }
}

/// Allocations/s by run as CSV and as a bar chart.
fn write(args: &AllocateArgs, outcomes: &[Outcome]) -> Result<()> {
    args.output.csv(
        "allocate.csv",
        "run,allocated,allocs_per_s,no_capacity,errors,allocate_p50_ms,allocate_p99_ms,redis_us_per_alloc",
        outcomes.iter().map(|o| {
            format!(
                "{},{},{:.0},{},{},{:.3},{:.3},{}",
                o.label,
                o.tally.allocated,
                o.rate(),
                o.tally.no_capacity,
                o.tally.errors,
                o.tally.allocate.ms(0.5),
                o.tally.allocate.ms(0.99),
                o.redis_usec.map_or(String::new(), |u| format!("{u:.1}"))
            )
        }),
    )?;
    args.output.bars(
        "allocate.png",
        &Bars {
            title: format!(
                "Allocations/s (each released again), {} callers",
                args.concurrency
            ),
            y_label: "allocations/s".into(),
            bars: outcomes
                .iter()
                .map(|o| (o.label.to_string(), o.rate().round()))
                .collect(),
            log_y: false,
        },
    )
}
