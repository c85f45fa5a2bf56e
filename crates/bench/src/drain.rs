//! The drain scenario (seed 000's "Queue Drain Rate"): N tickets seeded in one pool,
//! K `matchmaker worker` processes (and a supervisor) started, queue and
//! processing depth sampled until the queue is empty. A ticket is matched once it
//! has left the queue and its worker and its player has been told (the event on
//! the channel the ingress relays to sockets; the port's match message). Reports
//! tickets/s, the workers' peak RSS, Redis CPU per ticket by command (from
//! `INFO commandstats`, taken when 99% are matched, before the idle tail) and
//! every process's CPU per ticket at the same mark ([`super::cpu`]), beside two
//! baselines in the same command: the seed-000 port ([`super::seed000`]: seed
//! 000's own scripts, keys and worker loop; its consumers poll on a ticker, so it
//! drains a pool of its own size, `--port-tickets`), the port with consumers that
//! claim again at once (`port-eager`), and our pipeline run with seed 000's
//! settings and formation. Each run also reports how many samples found its
//! processing depth at zero while the queue drained: the seed reports every one.
//!
//! `--record-metrics on,off` runs ours again with every process's metrics off
//! (`METRICS=false`), and `--rounds N` repeats the whole plan, interleaved: the
//! median of the on/off drain-rate ratios is the cost of recording metrics.
//!
//! `--rules` runs ours twice more on a 5v5 with attributes on its tickets: with
//! the `rules` scenario's rules and without ([`rules`]).

mod report;
mod rules;

use super::cpu::{self, Spent};
use super::deploy::rss_kib;
use super::pipeline::{Watch, port_supervisor, port_worker, worker_ids};
use super::redis_info::{command_usec, redis_cpu_usec};
use super::seed000::worker::Poll;
use super::{BENCH_MODE, Output, SEED000_SUPERVISE, SEED000_WORKER, matchmaker, progress, seed000};
use anyhow::{Result, bail};
use clap::Args;
use mm_domain::{PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_testkit::{Proc, RedisServer};
use rand::{Rng, SeedableRng};
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct DrainArgs {
    /// Tickets seeded before the workers start.
    #[arg(long, default_value_t = 10_000)]
    pub tickets: usize,
    /// Worker processes.
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    /// Consumer tasks per worker process.
    #[arg(long, default_value_t = 2)]
    pub worker_pool_size: usize,
    /// Tickets claimed per poll.
    #[arg(long, default_value_t = 100)]
    pub claim_batch_size: usize,
    /// At most this many tickets for the `port` baseline (seed 000's own drain:
    /// 10,000). Its consumers claim 10 tickets per 100 ms tick, so its rate is
    /// steady and a larger pool only takes longer.
    #[arg(long, default_value_t = 10_000)]
    pub port_tickets: usize,
    #[command(flatten)]
    pub baselines: Baselines,
    /// Use this Redis (redis://HOST:PORT on loopback) instead of a redis-server the
    /// command starts. Each run seeds a pool of its own (mode `bench`, region
    /// `bench-TAG`) and leaves behind what it did not match.
    #[arg(long)]
    pub redis_url: Option<String>,
    /// Give up on a run after this long.
    #[arg(long, default_value = "120s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Seed of the rating generator (ratings ~ N(1500, 300) clipped to 0..3000).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Metrics of the worker and supervisor processes, comma-separated: each is a
    /// run of its own (`on,off` measures what recording costs).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "on")]
    pub record_metrics: Vec<super::Switch>,
    /// Also run ours with pool leaders (`COORDINATION=leader`): one worker claims
    /// the whole pool and matches it in memory.
    #[arg(long)]
    pub leader: bool,
    /// Also drain a 5v5 whose tickets carry the `rules` scenario's attributes,
    /// once with the scenario's rules (builds apart, crossplay after 30 s, a
    /// shared map, a tank and a healer a team, party balance) and once without
    /// (with `--leader`, that pair again with pool leaders).
    #[arg(long)]
    pub rules: bool,
    /// Also drain twice on the bench mode with its matches placed on a game
    /// server (one the command registers, with a slot for every match): with
    /// `backfill = "manual"` and without. No backfill is open, so the pair
    /// measures what serving backfills costs ordinary tickets (a read of the
    /// pool's open backfills each cycle); the target is at least 0.9x.
    #[arg(long)]
    pub backfill: bool,
    /// With `--rules`: draw the tickets' attributes from this TOML (the
    /// format of `simulate --attributes`) instead of the scenario's.
    #[arg(long, requires = "rules")]
    pub attributes: Option<std::path::PathBuf>,
    /// Runs the plan this many times, interleaved, and reports the median ratio.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    #[command(flatten)]
    pub output: Output,
}

/// Which baselines run beside ours (`drain` and `recovery`).
#[derive(Debug, Clone, Args)]
pub struct Baselines {
    /// Skip the baselines.
    #[arg(long)]
    pub no_baseline: bool,
    /// The baselines, comma-separated: `port` (seed 000's pipeline ported: its
    /// scripts, keys and worker loop, a consumer cycle per 100 ms tick),
    /// `port-eager` (the same with consumers that claim again at once after a
    /// cycle that formed a match), `settings` (our pipeline with seed 000's
    /// settings and formation: claim batch 10, tightest-spread runs, 30 s lease,
    /// 2 s heartbeat, 5 s supervisor, no wake-ups).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "port,port-eager,settings"
    )]
    pub baseline: Vec<Baseline>,
}

impl Baselines {
    /// The baselines to run, in order.
    pub fn chosen(&self) -> &[Baseline] {
        if self.no_baseline {
            &[]
        } else {
            &self.baseline
        }
    }
}

/// A baseline run beside ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Baseline {
    /// Seed 000's pipeline, ported (`crates/bench/src/seed000`).
    Port,
    /// The port with eager consumers (`--poll eager`).
    PortEager,
    /// Our pipeline with seed 000's settings and formation.
    Settings,
}

/// What a run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pipeline {
    Ours {
        metrics: bool,
    },
    /// Ours with pool leaders (`COORDINATION=leader`).
    Leader,
    /// Ours on a 5v5 whose tickets carry attributes, with or without rules.
    FiveVsFive {
        rules: bool,
        leader: bool,
    },
    /// Ours with the matches placed on a game server, backfill on or off.
    Placed {
        backfill: bool,
    },
    Seed000Settings,
    Seed000Port(Poll),
}

/// Labels of the baselines (their rounds add " #N").
const PORT: &str = "seed-000 port";
const PORT_EAGER: &str = "seed-000 port, eager";
const SETTINGS: &str = "seed-000 settings";
const FIVE: &str = "ours, 5v5";
const FIVE_RULES: &str = "ours, 5v5 rules";
const FIVE_RATIO: &str = "5v5 rules / no rules";
const FIVE_RATIO_90: &str = "5v5 rules / no rules, to 90%";
const FIVE_RATIO_LEADER: &str = "5v5 rules / no rules, leaders";
const FIVE_RATIO_LEADER_90: &str = "5v5 rules / no rules, leaders, to 90%";
const PLACED: &str = "ours, placed";
const PLACED_BACKFILL: &str = "ours, placed, backfill";
const BACKFILL_RATIO: &str = "backfill on / off";

/// What one run measured.
struct Outcome {
    label: String,
    batch: usize,
    /// Tickets seeded.
    tickets: usize,
    matched: u64,
    left: u64,
    /// When 90% were matched (the rules' comparison reads it: see [`rules`]).
    t90: Option<Duration>,
    t99: Option<Duration>,
    /// When the last of the matched tickets was delivered. A run whose last
    /// few tickets no window can pair ends once the count left has been
    /// stable for a while; that wait is not counted here.
    t_end: Duration,
    /// Redis CPU (user + sys, from `INFO cpu`) per matched ticket, at the 99% mark.
    redis_usec_per_ticket: f64,
    /// The same at the 90% mark: a drain whose last tenth waits for windows to
    /// grow (the rules') spends Redis on claims that match nothing meanwhile.
    redis_usec_per_ticket_90: Option<f64>,
    /// `INFO commandstats` per matched ticket, largest first, at the 99% mark.
    /// Commands a script calls are counted on their own and inside `evalsha`.
    breakdown: Vec<(String, f64)>,
    samples: Vec<(f64, u64, u64)>,
    /// Peak RSS of each worker process, KiB.
    worker_rss_kib: Vec<u64>,
    /// CPU per matched ticket at the 99% mark, us: the worker processes and
    /// the supervisor together, Redis, and the bench (seeding done; what it
    /// does is count the players told).
    cpu: Spent,
    /// Of that, each worker's, then the supervisor's.
    worker_cpu: Vec<f64>,
}

/// Redis counters and the processes' CPU time when 99% of the tickets were
/// matched.
struct Snapshot {
    done: u64,
    cpu_usec: f64,
    per_cmd: Vec<(String, f64)>,
    /// Each worker's CPU time, then the supervisor's (us; `None`: unreadable).
    workers_usec: Vec<Option<f64>>,
    /// The bench's since the workers started.
    load_usec: Option<f64>,
}

pub async fn run(args: DrainArgs) -> Result<()> {
    if args.tickets < 2
        || args.port_tickets < 2
        || args.workers == 0
        || args.rounds == 0
        || args.record_metrics.is_empty()
    {
        bail!(
            "--tickets and --port-tickets must be at least 2, --workers and --rounds at least 1, --metrics not empty"
        );
    }
    let mut outcomes = Vec::new();
    for round in 1..=args.rounds {
        let suffix = if args.rounds > 1 {
            format!(" #{round}")
        } else {
            String::new()
        };
        for &m in &args.record_metrics {
            let label = match m {
                super::Switch::On => format!("ours{suffix}"),
                super::Switch::Off => format!("ours, metrics off{suffix}"),
            };
            let metrics = m == super::Switch::On;
            outcomes.push(drain_once(&args, &label, Pipeline::Ours { metrics }).await?);
        }
        if args.leader {
            let label = format!("ours, leader{suffix}");
            outcomes.push(drain_once(&args, &label, Pipeline::Leader).await?);
        }
        if args.rules {
            let leaders: &[bool] = if args.leader {
                &[false, true]
            } else {
                &[false]
            };
            for &leader in leaders {
                for (name, rules) in [(FIVE, false), (FIVE_RULES, true)] {
                    let how = if leader { ", leader" } else { "" };
                    let label = format!("{name}{how}{suffix}");
                    let pipeline = Pipeline::FiveVsFive { rules, leader };
                    outcomes.push(drain_once(&args, &label, pipeline).await?);
                }
            }
        }
        if args.backfill {
            for (name, backfill) in [(PLACED, false), (PLACED_BACKFILL, true)] {
                let pipeline = Pipeline::Placed { backfill };
                outcomes.push(drain_once(&args, &format!("{name}{suffix}"), pipeline).await?);
            }
        }
        for b in args.baselines.chosen() {
            let (name, pipeline) = match b {
                Baseline::Port => (PORT, Pipeline::Seed000Port(Poll::Ticker)),
                Baseline::PortEager => (PORT_EAGER, Pipeline::Seed000Port(Poll::Eager)),
                Baseline::Settings => (SETTINGS, Pipeline::Seed000Settings),
            };
            outcomes.push(drain_once(&args, &format!("{name}{suffix}"), pipeline).await?);
        }
    }
    report::report(&args, &outcomes)
}

fn ratings(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            // Box-Muller: N(1500, 300), clipped to 0..3000.
            let u1: f64 = rng.random_range(f64::EPSILON..1.0);
            let u2: f64 = rng.random();
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            (1500.0 + 300.0 * z).clamp(0.0, 3000.0).round()
        })
        .collect()
}

/// Of `n` seeded tickets, those not yet matched and told: a ticket counts once it
/// has left the queue and its worker (`in_pipeline` counts those that have not)
/// and its player was told (`told`). Ours tells after the commit (the match is
/// settled first), the seed-000 port before it completes the tickets; a pool
/// leader commits a whole pool before it settles any, so the commit alone would
/// flatter it.
fn undelivered(n: u64, in_pipeline: u64, told: u64) -> u64 {
    let delivered = n.saturating_sub(in_pipeline).min(told);
    n - delivered
}

/// The `n` seeded tickets of a run: `t-bench-TAG-I`, ratings N(1500, 300).
pub(super) fn bench_tickets(pool: &Pool, n: usize, rng_seed: u64, tag: &str) -> Vec<Ticket> {
    let now = now_ms();
    ratings(n, rng_seed)
        .into_iter()
        .enumerate()
        .map(|(i, rating)| {
            let player = PlayerId::new(format!("bench-{tag}-{i}")).expect("valid id");
            Ticket::solo(
                TicketId::new(format!("t-bench-{tag}-{i}")).expect("valid id"),
                player,
                pool.mode.clone(),
                pool.region.clone(),
                rating,
                now,
            )
        })
        .collect()
}

async fn drain_once(args: &DrainArgs, label: &str, pipeline: Pipeline) -> Result<Outcome> {
    let RunRedis {
        server: _server,
        url,
        pool,
        tag,
    } = RunRedis::new(args.redis_url.as_deref())?;
    let mut watch = match pipeline {
        Pipeline::Seed000Port(_) => Watch::port(&url, &pool, worker_ids(args.workers)).await?,
        _ => Watch::ours(&url, &pool, &format!("bench-{tag}-")).await?,
    };
    let batch = match pipeline {
        Pipeline::Ours { .. }
        | Pipeline::Leader
        | Pipeline::FiveVsFive { .. }
        | Pipeline::Placed { .. } => args.claim_batch_size,
        _ => seed000::BATCH,
    };
    let tickets = match pipeline {
        Pipeline::Seed000Port(Poll::Ticker) => args.tickets.min(args.port_tickets),
        _ => args.tickets,
    };
    eprintln!("[{label}] seeding {tickets} tickets into {url} ...");
    let mut seeded = bench_tickets(&pool, tickets, args.seed, &tag);
    if let Pipeline::FiveVsFive { rules, .. } = pipeline {
        rules::give_attributes(&mut seeded, args.attributes.as_deref(), args.seed)?;
        // In the lanes the ingress would give them (the seeding bypasses it).
        rules::give_lanes(&mut seeded, &pool.mode, rules)?;
    }
    watch.seed(&seeded).await?;
    let mut admin = redis::Client::open(url.as_str())?
        .get_multiplexed_async_connection()
        .await?;
    let () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut admin)
        .await?;
    let cpu_start = redis_cpu_usec(&mut admin).await?;

    let logs = tempfile::tempdir()?;
    let modes_file = logs.path().join("modes.toml");
    match pipeline {
        Pipeline::FiveVsFive { rules, .. } => {
            std::fs::write(&modes_file, rules::mode_toml(&pool.mode, rules)?)?
        }
        Pipeline::Placed { backfill } => {
            std::fs::write(&modes_file, placed_mode(backfill))?;
            register_server(&url, &pool, tickets).await?;
        }
        _ => std::fs::write(&modes_file, BENCH_MODE)?,
    }
    let command = |sub: &str, i: usize| -> Result<Command> {
        if let Pipeline::Seed000Port(poll) = pipeline {
            return match sub {
                "supervisor" => {
                    port_supervisor(&url, seed000::LOCK_TTL, seed000::SUPERVISE_INTERVAL)
                }
                _ => port_worker(
                    &url,
                    &pool,
                    &worker_ids(args.workers)[i],
                    args.worker_pool_size,
                    seed000::LOCK_TTL,
                    seed000::HEARTBEAT_INTERVAL,
                    poll,
                ),
            };
        }
        let mut cmd = matchmaker(sub, Some(&url), &modes_file, &pool.mode, &pool.region)?;
        let metrics = pipeline != Pipeline::Ours { metrics: false };
        cmd.env("CLAIM_BATCH_SIZE", batch.to_string())
            .env("WORKER_POOL_SIZE", args.worker_pool_size.to_string())
            .env("METRICS", metrics.to_string());
        if pipeline == Pipeline::Seed000Settings {
            for (k, v) in SEED000_WORKER {
                cmd.env(k, v);
            }
            cmd.env("SUPERVISE_INTERVAL", SEED000_SUPERVISE);
        }
        // Each run is labelled with its strategy: pinned, whatever the caller's
        // environment says.
        let leads = matches!(
            pipeline,
            Pipeline::Leader | Pipeline::FiveVsFive { leader: true, .. }
        );
        let coordination = if leads { "leader" } else { "claim" };
        cmd.env("COORDINATION", coordination);
        Ok(cmd)
    };
    let mut supervisor = Proc::spawn("supervisor", command("supervisor", 0)?, logs.path());
    let started = Instant::now();
    let load_start = cpu::own_usec();
    let mut workers = Vec::new();
    for i in 0..args.workers {
        workers.push(Proc::spawn(
            &format!("worker-{i}"),
            command("worker", i)?,
            logs.path(),
        ));
    }
    let mut worker_rss_kib = vec![0u64; workers.len()];
    let bar = progress::counter(tickets as u64, "tickets matched");
    bar.set_prefix(label.to_string());

    let n = tickets as u64;
    let mut samples = Vec::new();
    let mut t90 = None;
    let mut redis_90 = None;
    let mut t99 = None;
    let mut at_t99: Option<Snapshot> = None;
    let mut stable_since: Option<(u64, Duration)> = None;
    let t_end = loop {
        let (queued, processing) = watch.depths().await?;
        let elapsed = started.elapsed();
        samples.push((elapsed.as_secs_f64(), queued, processing));
        let left = undelivered(n, queued + processing, watch.told());
        bar.set_position(n.saturating_sub(left));
        for (peak, w) in worker_rss_kib.iter_mut().zip(&workers) {
            *peak = (*peak).max(rss_kib(w.pid()).unwrap_or(0));
        }
        if t90.is_none() && left * 10 <= n {
            t90 = Some(elapsed);
            let cpu = redis_cpu_usec(&mut admin).await? - cpu_start;
            redis_90 = Some(cpu / (n - left).max(1) as f64);
        }
        if t99.is_none() && left * 100 <= n {
            t99 = Some(elapsed);
            let cpu = redis_cpu_usec(&mut admin).await? - cpu_start;
            at_t99 = Some(Snapshot {
                done: n - left,
                cpu_usec: cpu,
                per_cmd: command_usec(&mut admin).await?,
                // The processes started with the drain: all their time is its.
                workers_usec: workers
                    .iter()
                    .chain([&supervisor])
                    .map(|p| cpu::process_usec(p.pid()))
                    .collect(),
                load_usec: cpu::own_usec().zip(load_start).map(|(now, at)| now - at),
            });
        }
        if left == 0 {
            break elapsed;
        }
        // A handful of tickets no window can pair (yet) ends the run once stable.
        match stable_since {
            // `at`: the sample that found this count first saw the last delivery.
            Some((l, at)) if l == left && left * 100 <= n => {
                if elapsed - at > Duration::from_secs(5) {
                    break at;
                }
            }
            _ => stable_since = Some((left, elapsed)),
        }
        if elapsed > args.timeout {
            eprintln!("[{label}] timed out with {left} tickets left");
            break elapsed;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    bar.finish_and_clear();
    for w in &mut workers {
        w.terminate(Duration::from_secs(10));
    }
    supervisor.terminate(Duration::from_secs(10));
    let Snapshot {
        done,
        cpu_usec,
        per_cmd,
        workers_usec,
        load_usec,
    } = match at_t99 {
        Some(snapshot) => snapshot,
        None => Snapshot {
            done: 0,
            cpu_usec: 0.0,
            per_cmd: command_usec(&mut admin).await?,
            workers_usec: Vec::new(),
            load_usec: None,
        },
    };
    let per_ticket = |us: f64| us / done.max(1) as f64;
    let worker_cpu: Option<Vec<f64>> = workers_usec.iter().map(|us| us.map(per_ticket)).collect();
    let worker_cpu = worker_cpu.filter(|w| !w.is_empty()).unwrap_or_default();
    let mut breakdown: Vec<(String, f64)> = per_cmd
        .into_iter()
        .map(|(name, usec)| (name, per_ticket(usec)))
        .collect();
    breakdown.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (queued, processing) = watch.depths().await?;
    let left = undelivered(n, queued + processing, watch.told());
    Ok(Outcome {
        label: label.into(),
        batch,
        tickets,
        matched: n - left,
        left,
        t90,
        t99,
        t_end,
        redis_usec_per_ticket: per_ticket(cpu_usec),
        redis_usec_per_ticket_90: redis_90,
        breakdown,
        samples,
        worker_rss_kib,
        cpu: Spent {
            server: None,
            workers: (!worker_cpu.is_empty()).then(|| worker_cpu.iter().sum()),
            redis: (done > 0).then(|| per_ticket(cpu_usec)),
            load: load_usec.map(per_ticket),
        },
        worker_cpu,
    })
}

/// The Redis a drain runs on, and its pool there.
/// The bench mode with its matches placed on game servers, backfill on or off.
fn placed_mode(backfill: bool) -> String {
    let on = if backfill {
        "backfill = \"manual\"\n"
    } else {
        ""
    };
    BENCH_MODE.replace(
        "placement = \"none\"\n",
        &format!("placement = \"servers\"\nplacement_timeout = \"5m\"\n{on}"),
    )
}

/// Registers a game server for `pool` with a slot for each of `tickets`
/// (more than the matches they make), live for an hour.
async fn register_server(url: &str, pool: &Pool, tickets: usize) -> Result<()> {
    use mm_store::Fleet;
    let store = mm_store::RedisStore::connect(url).await?;
    store
        .register_server(
            &mm_store::GameServer {
                id: format!("bench-gs-{}", pool.region),
                region: pool.region.clone(),
                modes: vec![pool.mode.clone()],
                capacity: tickets as u32,
                address: "10.0.0.1:7777".into(),
            },
            Duration::from_secs(3600),
        )
        .await?;
    Ok(())
}

pub(super) struct RunRedis {
    /// The redis-server the command started, if it was not given one.
    pub server: Option<RedisServer>,
    pub url: String,
    /// `bench`/`eu` on a started server; on a given one a pool of this run's own
    /// (`bench`/`bench-TAG`), so runs never meet.
    pub pool: Pool,
    /// Part of the seeded tickets' and players' ids.
    pub tag: String,
}

impl RunRedis {
    pub fn new(given: Option<&str>) -> Result<Self> {
        let tag = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        Ok(match given {
            Some(url) => Self {
                server: None,
                url: loopback_redis(url)?,
                pool: Pool::new("bench", format!("bench-{tag}")),
                tag,
            },
            None => {
                let r = RedisServer::start();
                Self {
                    url: r.url(),
                    server: Some(r),
                    pool: Pool::new("bench", "eu"),
                    tag,
                }
            }
        })
    }
}

/// `url` if it is a `redis://` URL of a loopback host.
fn loopback_redis(url: &str) -> Result<String> {
    let http = url.replacen("redis://", "http://", 1);
    if !url.starts_with("redis://") || super::deploy::loopback_base(&http).is_err() {
        bail!("--redis-url must be redis://HOST:PORT on loopback, got {url}");
    }
    Ok(url.to_string())
}
