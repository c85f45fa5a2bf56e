//! The contention scenario of seed 001: a few free slots, many callers racing for
//! them for a fixed time. Exactly as many callers as there are slots may win; every
//! other request must get a clean "no capacity" answer, none an internal error.
//!
//! Four runs in one command, each on a fresh `redis-server`:
//! - ours through gRPC `Allocate` of a `matchmaker server-manager` process, one
//!   HTTP/2 connection per caller (seed 001's 200 virtual users);
//! - ours through the store directly;
//! - seed 001's token lock per server, answering "no capacity" when the lock is
//!   held, as its endpoint answered 409 ([`super::lock`]);
//! - read-then-write without a lock, which shows the check can fail: it usually
//!   sells more slots than there are.
//!
//! After each run the slots actually held are read back from the store and
//! compared with the callers that were told they won.

use super::BENCH_MODE;
use super::chart::Bars;
use super::fleet::{self, MODE, REGION};
use super::histogram::Latency;
use super::lock::{Guard, LockFleet};
use super::{Output, callers, matchmaker};
use anyhow::{Context, Result, bail};
use clap::Args;
use mm_proto::v1 as pb;
use mm_proto::v1::server_manager_client::ServerManagerClient;
use mm_store::{RedisStore, Store};
use mm_testkit::{Proc, RedisServer, free_port, wait_for_port};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::Code;
use tonic::transport::Channel;

#[derive(Debug, Clone, Args)]
pub struct ContentionArgs {
    /// Concurrent callers (seed 001: 200 virtual users).
    #[arg(long, default_value_t = 200)]
    pub clients: usize,
    /// How long each run lasts (seed 001: 10 s).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    /// Game servers (seed 001: 3 seats, so 3 servers of 1 slot).
    #[arg(long, default_value_t = 3)]
    pub servers: usize,
    /// Slots per server.
    #[arg(long, default_value_t = 1)]
    pub capacity: u32,
    /// Race through the gRPC `Allocate` of this server manager
    /// (http://HOST:PORT on loopback) instead of starting one; only that path
    /// runs. The bench registers its own game servers in --region for --mode, so
    /// that pair must have no other servers with free slots.
    #[arg(long)]
    pub grpc_url: Option<String>,
    /// Region of the bench's game servers on a given server manager.
    #[arg(long, default_value = REGION)]
    pub region: String,
    /// Mode of the bench's game servers on a given server manager.
    #[arg(long, default_value = MODE)]
    pub mode: String,
    #[command(flatten)]
    pub output: Output,
}

/// How the requests of one run ended.
#[derive(Default)]
struct Tally {
    requests: u64,
    /// Ids told they got a slot.
    won: Vec<String>,
    no_capacity: u64,
    /// Other answers, by kind.
    errors: BTreeMap<String, u64>,
    latency: Latency,
}

impl callers::Tally for Tally {
    fn died(&mut self, why: String) {
        *self.errors.entry(why).or_default() += 1;
    }

    fn merge(&mut self, other: Tally) {
        self.requests += other.requests;
        self.won.extend(other.won);
        self.no_capacity += other.no_capacity;
        for (k, n) in other.errors {
            *self.errors.entry(k).or_default() += n;
        }
        self.latency.merge(&other.latency);
    }
}

/// What a request can end in.
enum Answer {
    Won,
    NoCapacity,
    Error(String),
}

struct Outcome {
    label: &'static str,
    tally: Tally,
    wall: Duration,
    /// Ids holding a slot in the store after the run.
    held: BTreeSet<String>,
    /// Whether this run must hold the invariant (the naive one is expected not to).
    sound: bool,
}

impl Outcome {
    /// Exactly `slots` winners, each told so holds a slot, nothing else holds one.
    fn exact(&self, slots: usize) -> bool {
        let won: BTreeSet<String> = self.tally.won.iter().cloned().collect();
        self.tally.won.len() == slots && won == self.held
    }
}

pub async fn run(args: ContentionArgs) -> Result<()> {
    if args.clients == 0 || args.servers == 0 || args.capacity == 0 {
        bail!("--clients, --servers and --capacity must be at least 1");
    }
    if args.duration.is_zero() {
        bail!("--duration must be more than zero");
    }
    let slots = args.servers * args.capacity as usize;
    println!(
        "contention: {} callers for {:?} per run racing for {slots} free slots ({} servers x {})",
        args.clients, args.duration, args.servers, args.capacity
    );
    let outcomes = if args.grpc_url.is_some() {
        vec![grpc(&args).await?]
    } else {
        vec![
            grpc(&args).await?,
            store(&args).await?,
            locked(&args, Guard::LockRefuse, "seed-001 lock", true).await?,
            locked(&args, Guard::None, "no lock (read, write)", false).await?,
        ]
    };
    report(&outcomes, slots);
    write(&args, &outcomes)?;
    let broken: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.sound && (!o.exact(slots) || !o.tally.errors.is_empty()))
        .map(|o| o.label)
        .collect();
    if !broken.is_empty() {
        bail!("the invariant did not hold for: {}", broken.join(", "));
    }
    Ok(())
}

/// Runs the callers until the deadline; `request(caller, id)` makes one request.
async fn race<F, Fut>(args: &ContentionArgs, request: F) -> (Tally, Duration)
where
    F: Fn(usize, String) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send,
{
    let timed = move |caller: usize, i: u64| {
        let request = request.clone();
        async move {
            let id = format!("c-{caller}-{i}");
            let t0 = Instant::now();
            let answer = request(caller, id.clone()).await;
            (id, t0.elapsed(), answer)
        }
    };
    callers::until(
        "contention",
        "racing",
        args.clients,
        args.duration,
        timed,
        |t: &mut Tally, (id, took, answer)| {
            t.latency.record(took);
            t.requests += 1;
            match answer {
                Answer::Won => t.won.push(id),
                Answer::NoCapacity => t.no_capacity += 1,
                Answer::Error(kind) => *t.errors.entry(kind).or_default() += 1,
            }
        },
    )
    .await
}

/// Ours through gRPC `Allocate` of a server-manager process: one the command
/// starts, or the one given.
async fn grpc(args: &ContentionArgs) -> Result<Outcome> {
    if let Some(url) = &args.grpc_url {
        let url = super::deploy::loopback_base(url)?;
        let tag = &uuid::Uuid::new_v4().simple().to_string()[..8];
        return race_grpc(args, &url, &args.region, &args.mode, &format!("gs-{tag}")).await;
    }
    let label = "ours, gRPC Allocate";
    eprintln!("[{label}] starting redis-server and the server manager ...");
    let redis = RedisServer::start();
    let dir = tempfile::tempdir()?;
    let modes = dir.path().join("modes.toml");
    std::fs::write(&modes, BENCH_MODE)?;
    let addr = format!("127.0.0.1:{}", free_port());
    let mut cmd = matchmaker("server-manager", Some(&redis.url()), &modes, MODE, REGION)?;
    cmd.env("GRPC_LISTEN_ADDR", &addr);
    let mut manager = Proc::spawn("server-manager", cmd, dir.path());
    if !wait_for_port(&addr, Duration::from_secs(20)) {
        bail!("the server manager did not start:\n{}", manager.log());
    }
    let outcome = race_grpc(args, &format!("http://{addr}"), REGION, MODE, "gs").await;
    if !manager.running() {
        bail!("the server manager died:\n{}", manager.log());
    }
    manager.terminate(Duration::from_secs(10));
    drop(redis);
    outcome
}

/// Registers `--servers` game servers (ids `PREFIX-i`) with the server manager at
/// `url`, races for their slots, then gives the slots back.
async fn race_grpc(
    args: &ContentionArgs,
    url: &str,
    region: &str,
    mode: &str,
    prefix: &str,
) -> Result<Outcome> {
    let label = "ours, gRPC Allocate";
    let url = url.to_string();
    let mut control = ServerManagerClient::connect(url.clone()).await?;
    let ids: Vec<String> = (0..args.servers).map(|i| format!("{prefix}-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        control
            .register(pb::RegisterRequest {
                server_id: id.clone(),
                region: region.into(),
                modes: vec![mode.into()],
                capacity: args.capacity,
                address: format!("10.0.0.{i}:7777"),
            })
            .await
            .context("Register")?;
    }
    // The game servers stay live through the run.
    let beating = tokio_util::sync::CancellationToken::new();
    let heartbeats = tokio::spawn({
        let (mut control, ids, stop) = (control.clone(), ids.clone(), beating.clone());
        async move {
            while !stop.is_cancelled() {
                for id in &ids {
                    let _ = control
                        .heartbeat(pb::HeartbeatRequest {
                            server_id: id.clone(),
                        })
                        .await;
                }
                tokio::select! {
                    _ = stop.cancelled() => {}
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                }
            }
        }
    });
    // One connection per caller, as each of seed 001's virtual users had its own.
    let mut clients = Vec::with_capacity(args.clients);
    for _ in 0..args.clients {
        clients.push(ServerManagerClient::connect(url.clone()).await?);
    }
    let clients: Arc<Vec<ServerManagerClient<Channel>>> = Arc::new(clients);
    eprintln!("[{label}] {} connections open; racing ...", clients.len());
    let (region, mode) = (Arc::new(region.to_string()), Arc::new(mode.to_string()));
    let (tally, wall) = race(args, move |caller, id| {
        let mut client = clients[caller].clone();
        let (region, mode) = (region.to_string(), mode.to_string());
        async move {
            let answer = client
                .allocate(pb::AllocateRequest {
                    region,
                    mode,
                    allocation_id: id,
                })
                .await;
            match answer {
                Ok(_) => Answer::Won,
                Err(s) if s.code() == Code::ResourceExhausted => Answer::NoCapacity,
                Err(s) => Answer::Error(format!("{:?}", s.code())),
            }
        }
    })
    .await;
    beating.cancel();
    let _ = heartbeats.await;
    let mut held = BTreeSet::new();
    for id in &ids {
        let r = control
            .heartbeat(pb::HeartbeatRequest {
                server_id: id.clone(),
            })
            .await
            .context("Heartbeat after the run")?;
        for a in r.into_inner().allocations {
            held.insert(a.allocation_id.clone());
            // Give the slot back; the servers lapse once the heartbeats stop.
            let _ = control
                .release(pb::ReleaseRequest {
                    server_id: id.clone(),
                    allocation_id: a.allocation_id,
                    ..Default::default()
                })
                .await;
        }
    }
    Ok(Outcome {
        label,
        tally,
        wall,
        held,
        sound: true,
    })
}

/// Ours through the store (`fleet_allocate.lua`), no RPC in between.
async fn store(args: &ContentionArgs) -> Result<Outcome> {
    let label = "ours, store";
    eprintln!("[{label}] racing ...");
    let redis = RedisServer::start();
    let store: Arc<dyn Store> = Arc::new(RedisStore::connect(&redis.url()).await?);
    let ids: Vec<String> = (0..args.servers).map(fleet::server_id).collect();
    fleet::register(
        &*store,
        args.servers,
        args.capacity,
        args.duration + Duration::from_secs(600),
    )
    .await?;
    let s = store.clone();
    let (tally, wall) = race(args, move |_, id| {
        let store = s.clone();
        async move {
            match fleet::allocate(&*store, &id).await {
                Ok(Some(_)) => Answer::Won,
                Ok(None) => Answer::NoCapacity,
                Err(e) => Answer::Error(e.to_string()),
            }
        }
    })
    .await;
    let mut held = BTreeSet::new();
    for id in &ids {
        let allocations = store
            .server_heartbeat(id, Duration::from_secs(600))
            .await?
            .unwrap_or_default();
        held.extend(allocations.into_iter().map(|a| a.id));
    }
    Ok(Outcome {
        label,
        tally,
        wall,
        held,
        sound: true,
    })
}

/// The lock-based baseline, or no lock at all.
async fn locked(
    args: &ContentionArgs,
    guard: Guard,
    label: &'static str,
    sound: bool,
) -> Result<Outcome> {
    eprintln!("[{label}] racing ...");
    let redis = RedisServer::start();
    let fleet = Arc::new(LockFleet::setup(&redis.url(), args.servers, args.capacity, guard).await?);
    let f = fleet.clone();
    let (tally, wall) = race(args, move |_, id| {
        let fleet = f.clone();
        async move {
            match fleet.allocate(&id).await {
                Ok(Some(_)) => Answer::Won,
                Ok(None) => Answer::NoCapacity,
                Err(e) => Answer::Error(e.to_string()),
            }
        }
    })
    .await;
    let held = fleet.held().await?.into_iter().collect();
    Ok(Outcome {
        label,
        tally,
        wall,
        held,
        sound,
    })
}

fn report(outcomes: &[Outcome], slots: usize) {
    println!();
    println!(
        "{:<22} {:>9} {:>10} {:>5} {:>12} {:>7} {:>5}  verdict",
        "run", "requests", "requests/s", "won", "no capacity", "errors", "held"
    );
    for o in outcomes {
        let errors: u64 = o.tally.errors.values().sum();
        let verdict = if o.exact(slots) && errors == 0 {
            format!("exactly {slots} won, held by the winners")
        } else if o.tally.won.len() > slots {
            format!("OVERSOLD: {} won {slots} slots", o.tally.won.len())
        } else {
            "BROKEN".to_string()
        };
        println!(
            "{:<22} {:>9} {:>10.0} {:>5} {:>12} {:>7} {:>5}  {verdict}",
            o.label,
            o.tally.requests,
            o.tally.requests as f64 / o.wall.as_secs_f64(),
            o.tally.won.len(),
            o.tally.no_capacity,
            errors,
            o.held.len(),
        );
        for (kind, n) in &o.tally.errors {
            println!("{:<22}   error {kind}: {n}", "");
        }
    }
    println!("\nlatency per request (ms):");
    for o in outcomes {
        println!("  {:<22} {}", o.label, o.tally.latency.summary());
    }
    if let [grpc, ours, lock, ..] = outcomes {
        let rate = |o: &Outcome| o.tally.requests as f64 / o.wall.as_secs_f64();
        println!(
            "\nratio ours (store) / seed-001 lock: {:.2}x the requests/s, {:.2}x the p99 latency",
            rate(ours) / rate(lock).max(f64::MIN_POSITIVE),
            ours.tally.latency.ms(0.99) / lock.tally.latency.ms(0.99).max(f64::MIN_POSITIVE)
        );
        println!(
            "gRPC Allocate answered {:.0} requests/s at p99 {:.2} ms (seed 001's published run: 5,718 requests in 10 s, mean 144 ms, on other hardware)",
            rate(grpc),
            grpc.tally.latency.ms(0.99)
        );
    }
}

/// The counts by answer as CSV and as a bar chart (log scale: 3 winners beside
/// a million refusals).
fn write(args: &ContentionArgs, outcomes: &[Outcome]) -> Result<()> {
    args.output.csv(
        "contention.csv",
        "run,requests,won,no_capacity,errors,held,p50_ms,p99_ms",
        outcomes.iter().map(|o| {
            format!(
                "{},{},{},{},{},{},{:.3},{:.3}",
                o.label,
                o.tally.requests,
                o.tally.won.len(),
                o.tally.no_capacity,
                o.tally.errors.values().sum::<u64>(),
                o.held.len(),
                o.tally.latency.ms(0.5),
                o.tally.latency.ms(0.99)
            )
        }),
    )?;
    let mut bars = Vec::new();
    for o in outcomes {
        let short = match o.label {
            "ours, gRPC Allocate" => "gRPC",
            "ours, store" => "store",
            "seed-001 lock" => "lock",
            _ => "no lock",
        };
        bars.push((format!("{short} won"), o.tally.won.len() as f64));
        bars.push((format!("{short} refused"), o.tally.no_capacity as f64));
    }
    args.output.bars(
        "contention.png",
        &Bars {
            title: format!(
                "{} callers, {:?}, {} free slots: answers (gRPC, store: ours; lock: seed 001)",
                args.clients,
                args.duration,
                args.servers * args.capacity as usize
            ),
            y_label: "requests".into(),
            bars,
            log_y: true,
        },
    )
}
