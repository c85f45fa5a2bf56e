//! The recovery scenario (seed 000's worker-crash test): a drain during which one
//! worker process is SIGKILLed while it holds tickets (by default once a quarter of
//! them are matched). Reports how long its tickets
//! stay stranded (from the kill until none is held by the dead worker any more:
//! each is back in the queue or already matched by another worker), then audits the
//! store: no ticket lost, none in two matches.
//!
//! Our short-lease settings run beside two baselines in the same command: the
//! seed-000 port ([`super::seed000`], its own scripts, keys and worker loop) and
//! our pipeline with seed 000's settings (both: 30 s lease, 2 s heartbeat, 5 s
//! supervisor, claim batch 10); and (with `--leader`) our
//! pool leaders (`COORDINATION=leader`), whose victim is the pool's leader: a
//! leader reads its pool and holds nothing, so its "stranded" tickets are those
//! waiting in the pool it led, "back after" is the takeover (another worker
//! leads the pool and has read its queue), and "next match" the failover, from
//! the kill to the next match formed in the pool.
//! A leader matches a whole seeded pool in one cycle, so its run streams the
//! tickets in instead (`--stream-rate` a second) and kills the leader mid-stream.

use super::chart::{Lines, Series};
use super::drain::{Baseline, Baselines, RunRedis, bench_tickets};
use super::pipeline::{Watch, port_supervisor, port_worker, worker_ids};
use super::seed000::worker::Poll;
use super::{BENCH_MODE, Output, matchmaker, progress, seed000};
use anyhow::{Context, Result, bail};
use clap::Args;
use mm_store::{RedisStore, Store};
use mm_testkit::Proc;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct RecoveryArgs {
    /// Tickets seeded before the workers start.
    #[arg(long, default_value_t = 10_000)]
    pub tickets: usize,
    /// Worker processes; the first one is killed.
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    /// Workers' lease (`LOCK_TTL`) in our run.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub lock_ttl: Duration,
    /// Lease refresh (`HEARTBEAT_INTERVAL`) in our run.
    #[arg(long, default_value = "300ms", value_parser = humantime::parse_duration)]
    pub heartbeat_interval: Duration,
    /// Supervisor period (`SUPERVISE_INTERVAL`) in our run.
    #[arg(long, default_value = "200ms", value_parser = humantime::parse_duration)]
    pub supervise_interval: Duration,
    /// Tickets claimed per poll in our run.
    #[arg(long, default_value_t = 100)]
    pub claim_batch_size: usize,
    /// Share of the tickets matched before the kill (0 kills the worker the first
    /// time it is seen holding tickets).
    #[arg(long, default_value_t = 0.25)]
    pub kill_after: f64,
    /// The baselines (each takes about a minute: seed 000's lease is 30 s).
    #[command(flatten)]
    pub baselines: Baselines,
    /// Also run our pool leaders (`COORDINATION=leader`, same lease), killing the
    /// pool's leader.
    #[arg(long)]
    pub leader: bool,
    /// Tickets a second streamed into the leader run (after the first tenth).
    #[arg(long, default_value_t = 2_000)]
    pub stream_rate: usize,
    /// Give up on a run after this long.
    #[arg(long, default_value = "180s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Seed of the rating generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Use this Redis (redis://HOST:PORT on loopback) instead of a redis-server
    /// the command starts. Each run seeds a pool of its own (mode `bench`, region
    /// `bench-TAG`) and leaves behind what it did not match.
    #[arg(long)]
    pub redis_url: Option<String>,
    #[command(flatten)]
    pub output: Output,
}

/// Worker and supervisor settings of one run.
struct Settings {
    label: &'static str,
    lock_ttl: Duration,
    heartbeat: Duration,
    supervise: Duration,
    batch: usize,
    /// Seed 000's formation (`FORMATION=seed000`) rather than ours.
    seed000: bool,
    /// `COORDINATION=leader`: the victim is the pool's leader.
    leader: bool,
    /// The seed-000 port, paced so, instead of our pipeline.
    port: Option<Poll>,
}

struct Outcome {
    label: &'static str,
    /// Tickets the killed worker held.
    stranded: usize,
    /// From the kill until the dead worker held nothing.
    recovered_after: Option<Duration>,
    /// From the kill until the next match was formed in the pool.
    next_match_after: Option<Duration>,
    matched: usize,
    left: usize,
    lost: usize,
    duplicated: usize,
    /// (seconds since start, queued, processing).
    samples: Vec<(f64, u64, u64)>,
    kill_at: f64,
}

pub async fn run(args: RecoveryArgs) -> Result<()> {
    if args.tickets < 100 || args.workers < 2 {
        bail!("--tickets must be at least 100 and --workers at least 2 (one is killed)");
    }
    if !(0.0..1.0).contains(&args.kill_after) {
        bail!("--kill-after must be at least 0 and below 1");
    }
    if args.heartbeat_interval >= args.lock_ttl {
        bail!("--heartbeat-interval must be shorter than --lock-ttl");
    }
    let mut runs = vec![Settings {
        label: "ours",
        lock_ttl: args.lock_ttl,
        heartbeat: args.heartbeat_interval,
        supervise: args.supervise_interval,
        batch: args.claim_batch_size,
        seed000: false,
        leader: false,
        port: None,
    }];
    if args.leader {
        runs.push(Settings {
            label: "ours, leader",
            leader: true,
            ..runs[0]
        });
    }
    let seed000 = Settings {
        label: "seed-000 settings",
        lock_ttl: seed000::LOCK_TTL,
        heartbeat: seed000::HEARTBEAT_INTERVAL,
        supervise: seed000::SUPERVISE_INTERVAL,
        batch: seed000::BATCH,
        seed000: true,
        leader: false,
        port: None,
    };
    for b in args.baselines.chosen() {
        runs.push(match b {
            Baseline::Port => Settings {
                label: "seed-000 port",
                port: Some(Poll::Ticker),
                ..seed000
            },
            Baseline::PortEager => Settings {
                label: "seed-000 port, eager",
                port: Some(Poll::Eager),
                ..seed000
            },
            Baseline::Settings => Settings { ..seed000 },
        });
    }
    let mut outcomes = Vec::new();
    for s in &runs {
        outcomes.push(recover_once(&args, s).await?);
    }
    report(&args, &outcomes)?;
    for o in outcomes
        .iter()
        .filter(|o| o.label.starts_with("seed-000 port") && o.duplicated > 0)
    {
        // The seed's design, not a fault of the bench: a worker killed after saving
        // and publishing a match but before completing its tickets leaves them in
        // its processing hash, and the supervisor puts them back in the queue.
        println!(
            "{}: {} tickets in two matches (killed between saving a match and completing its tickets; the supervisor requeued them)",
            o.label, o.duplicated
        );
    }
    // The port may lose or double-book by design (above); ours must not.
    if let Some(o) = outcomes
        .iter()
        .find(|o| !o.label.starts_with("seed-000 port") && (o.lost > 0 || o.duplicated > 0))
    {
        bail!(
            "{}: {} tickets lost, {} in two matches",
            o.label,
            o.lost,
            o.duplicated
        );
    }
    Ok(())
}

async fn recover_once(args: &RecoveryArgs, s: &Settings) -> Result<Outcome> {
    let label = s.label;
    let RunRedis {
        server: _server,
        url,
        pool,
        tag,
    } = RunRedis::new(args.redis_url.as_deref())?;
    let mut watch = if s.port.is_some() {
        Watch::port(&url, &pool, worker_ids(args.workers)).await?
    } else {
        Watch::ours(&url, &pool, &format!("bench-{tag}-")).await?
    };
    // Tickets not enqueued yet count as left.
    let unsent = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let producer = if s.leader {
        // A tenth at once, the rest streamed at --stream-rate.
        let store: Arc<dyn Store> = Arc::new(RedisStore::connect(&url).await?);
        let tickets = bench_tickets(&pool, args.tickets, args.seed, &tag);
        let (first, rest) = tickets.split_at(args.tickets / 10);
        for t in first {
            store.enqueue(t).await?;
        }
        let (store, rest, rate) = (store.clone(), rest.to_vec(), args.stream_rate.max(100));
        unsent.store(rest.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let unsent = unsent.clone();
        Some(tokio::spawn(async move {
            let start = Instant::now();
            for (i, chunk) in rest.chunks(rate / 100).enumerate() {
                tokio::time::sleep_until((start + Duration::from_millis(10 * i as u64)).into())
                    .await;
                for t in chunk {
                    store.enqueue(t).await?;
                }
                unsent.fetch_sub(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
            }
            Ok::<_, mm_store::StoreError>(())
        }))
    } else {
        eprintln!("[{label}] seeding {} tickets ...", args.tickets);
        watch
            .seed(&bench_tickets(&pool, args.tickets, args.seed, &tag))
            .await?;
        None
    };

    let logs = tempfile::tempdir()?;
    let modes_file = logs.path().join("modes.toml");
    std::fs::write(&modes_file, BENCH_MODE)?;
    let spawn = |name: &str, sub: &str, extra: &[(&str, String)]| -> Result<Proc> {
        if let Some(poll) = s.port {
            let cmd = match sub {
                "supervisor" => port_supervisor(&url, s.lock_ttl, s.supervise)?,
                _ => {
                    let id = &extra
                        .iter()
                        .find(|(k, _)| *k == "WORKER_ID")
                        .context("id")?
                        .1;
                    port_worker(&url, &pool, id, 2, s.lock_ttl, s.heartbeat, poll)?
                }
            };
            return Ok(Proc::spawn(name, cmd, logs.path()));
        }
        let mut cmd = matchmaker(sub, Some(&url), &modes_file, &pool.mode, &pool.region)?;
        cmd.env(
            "LOCK_TTL",
            humantime::format_duration(s.lock_ttl).to_string(),
        );
        if s.seed000 {
            cmd.env("FORMATION", "seed000");
        }
        // Each run is labelled with its strategy: pinned, whatever the caller's
        // environment says.
        cmd.env("COORDINATION", if s.leader { "leader" } else { "claim" });
        for (k, v) in extra {
            cmd.env(k, v);
        }
        Ok(Proc::spawn(name, cmd, logs.path()))
    };
    let mut supervisor = spawn(
        "supervisor",
        "supervisor",
        &[(
            "SUPERVISE_INTERVAL",
            humantime::format_duration(s.supervise).to_string(),
        )],
    )?;
    let started = Instant::now();
    let mut workers: Vec<Proc> = (0..args.workers)
        .map(|i| {
            spawn(
                &format!("worker-{i}"),
                "worker",
                &[
                    ("WORKER_ID", format!("bench-w{i}")),
                    ("CLAIM_BATCH_SIZE", s.batch.to_string()),
                    (
                        "HEARTBEAT_INTERVAL",
                        humantime::format_duration(s.heartbeat).to_string(),
                    ),
                    ("WORKER_POOL_SIZE", "2".into()),
                ],
            )
        })
        .collect::<Result<_>>()?;

    let n = args.tickets as u64;
    let ids = worker_ids(args.workers);
    // The claim run kills the first worker; the leader run the pool's leader.
    let victim = if s.leader {
        let owner = mm_server::leader::owner(&pool.name(), ids.iter().map(String::as_str))
            .context("no workers")?;
        ids.iter().position(|w| w == owner).unwrap_or(0)
    } else {
        0
    };
    let victim_id = ids[victim].clone();
    let mut matches_at_kill = 0usize;
    let mut next_match_after = None;
    let mut samples = Vec::new();
    let mut killed: Option<(Instant, Vec<String>)> = None;
    let mut recovered_after = None;
    let mut stable_since: Option<(u64, Instant)> = None;
    let bar = progress::counter(n, "tickets matched");
    bar.set_prefix(label.to_string());
    loop {
        let (queued, processing) = watch.depths().await?;
        let now = started.elapsed();
        samples.push((now.as_secs_f64(), queued, processing));
        let left = queued + processing + unsent.load(std::sync::atomic::Ordering::Relaxed);
        bar.set_position(n.saturating_sub(left));
        match &killed {
            // Kill the victim once `--kill-after` of the tickets are matched, while
            // it holds tickets (it holds them only during its cycles, so look
            // closely). It is frozen while it is looked at: otherwise it may hand
            // its tickets back between the look and the kill, and strand none.
            None if n.saturating_sub(left) as f64 >= args.kill_after * n as f64 => {
                let mut stranded = Vec::new();
                let look = Instant::now();
                while stranded.is_empty() && look.elapsed() < Duration::from_secs(2) {
                    if watch.strands(&victim_id, s.leader).await?.is_empty() {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        continue;
                    }
                    workers[victim].freeze(true);
                    // Read while frozen: the set cannot change before the kill.
                    // (Read after it, a fast reclaim could already have emptied
                    // it.)
                    stranded = watch.strands(&victim_id, s.leader).await?;
                    if stranded.is_empty() {
                        workers[victim].freeze(false);
                    }
                }
                if !stranded.is_empty() {
                    workers[victim].kill();
                    let at = Instant::now();
                    matches_at_kill = watch.formed().await?;
                    bar.println(format!(
                        "[{label}] SIGKILLed the worker holding {} tickets at {:.2}s",
                        stranded.len(),
                        at.duration_since(started).as_secs_f64()
                    ));
                    killed = Some((at, stranded));
                }
            }
            Some((at, _)) if next_match_after.is_none() || recovered_after.is_none() => {
                if next_match_after.is_none() {
                    let formed = watch.formed().await?;
                    if formed > matches_at_kill {
                        next_match_after = Some(at.elapsed());
                    }
                }
                if recovered_after.is_some() {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
                if watch.back_from(&victim_id, s.leader).await? {
                    recovered_after = Some(at.elapsed());
                    eprintln!(
                        "[{label}] every stranded ticket back after {:.2}s",
                        at.elapsed().as_secs_f64()
                    );
                }
            }
            _ => {}
        }
        let done = recovered_after.is_some() || killed.is_none();
        if left == 0 && done {
            break;
        }
        match stable_since {
            Some((l, since)) if l == left && left * 100 <= n && done => {
                if since.elapsed() > Duration::from_secs(5) {
                    break;
                }
            }
            Some((l, _)) if l == left => {}
            _ => stable_since = Some((left, Instant::now())),
        }
        if started.elapsed() > args.timeout {
            eprintln!("[{label}] timed out with {left} tickets left");
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bar.finish_and_clear();
    if let Some(p) = producer {
        p.await??;
    }
    for (i, w) in workers.iter_mut().enumerate() {
        if i != victim {
            w.terminate(Duration::from_secs(10));
        }
    }
    supervisor.terminate(Duration::from_secs(10));

    let Some((at, stranded)) = &killed else {
        bail!(
            "[{label}] the drain ended before the worker could be killed holding tickets; use more --tickets"
        );
    };
    let (stranded, kill_at) = (stranded.len(), at.duration_since(started).as_secs_f64());
    let audit = audit(&mut watch, args.tickets, &tag)
        .await
        .context("auditing the store")?;
    Ok(Outcome {
        label,
        stranded,
        recovered_after,
        next_match_after,
        matched: audit.matched,
        left: audit.waiting,
        lost: audit.lost,
        duplicated: audit.duplicated,
        samples,
        kill_at,
    })
}

struct Audit {
    matched: usize,
    waiting: usize,
    lost: usize,
    duplicated: usize,
}

/// Every seeded ticket must be in exactly one committed match, or waiting in the
/// queue; none in two matches, none anywhere else.
async fn audit(watch: &mut Watch, tickets: usize, tag: &str) -> Result<Audit> {
    let (matches, queued) = watch.settled().await?;
    let mut times: HashMap<String, usize> = HashMap::new();
    for m in matches {
        for t in m {
            *times.entry(t).or_default() += 1;
        }
    }
    let (mut matched, mut waiting, mut lost, mut duplicated) = (0, 0, 0, 0);
    for i in 0..tickets {
        let id = format!("t-bench-{tag}-{i}");
        match (times.get(&id).copied().unwrap_or(0), queued.contains(&id)) {
            (1, false) => matched += 1,
            (0, true) => waiting += 1,
            (0, false) => lost += 1,
            _ => duplicated += 1,
        }
    }
    Ok(Audit {
        matched,
        waiting,
        lost,
        duplicated,
    })
}

fn report(args: &RecoveryArgs, outcomes: &[Outcome]) -> Result<()> {
    println!();
    println!(
        "{:<20} {:>9} {:>13} {:>13} {:>8} {:>8} {:>5} {:>11}",
        "run", "stranded", "back after", "next match", "matched", "waiting", "lost", "duplicated"
    );
    for o in outcomes {
        println!(
            "{:<20} {:>9} {:>13} {:>13} {:>8} {:>8} {:>5} {:>11}",
            o.label,
            o.stranded,
            o.recovered_after
                .map_or("never".into(), |d| format!("{:.2}s", d.as_secs_f64())),
            o.next_match_after
                .map_or("none".into(), |d| format!("{:.2}s", d.as_secs_f64())),
            o.matched,
            o.left,
            o.lost,
            o.duplicated
        );
    }
    let ours = outcomes.iter().find(|o| o.label == "ours");
    for base in ["seed-000 port", "seed-000 port, eager", "seed-000 settings"] {
        let base = outcomes.iter().find(|o| o.label == base);
        if let (Some(ours), Some(base)) = (ours, base)
            && let (Some(a), Some(b)) = (ours.recovered_after, base.recovered_after)
        {
            println!(
                "ratio {} / ours (time stranded): {:.1}x (seed 000 published about 15 s)",
                base.label,
                b.as_secs_f64() / a.as_secs_f64().max(f64::MIN_POSITIVE)
            );
        }
    }
    args.output.csv(
        "recovery.csv",
        "run,t_s,queued,processing,kill_s,back_s",
        outcomes.iter().flat_map(|o| {
            let back = o.recovered_after.map_or(String::new(), |d| {
                format!("{:.3}", o.kill_at + d.as_secs_f64())
            });
            o.samples.iter().map(move |(t, q, p)| {
                format!(
                    "{},{t:.3},{q},{p},{:.3},{back}",
                    super::csv_field(o.label),
                    o.kill_at
                )
            })
        }),
    )?;
    // One chart per run: their time scales differ by an order of magnitude.
    for o in outcomes {
        let mut markers = vec![(o.kill_at, "worker SIGKILLed".to_string())];
        if let Some(d) = o.recovered_after {
            markers.push((
                o.kill_at + d.as_secs_f64(),
                format!("every stranded ticket back ({:.2} s)", d.as_secs_f64()),
            ));
        }
        let file = match o.label {
            "ours" => "recovery.png",
            "ours, leader" => "recovery-leader.png",
            "seed-000 port" => "recovery-seed000-port.png",
            "seed-000 port, eager" => "recovery-seed000-port-eager.png",
            _ => "recovery-seed000.png",
        };
        args.output.lines(
            file,
            &Lines {
                title: format!(
                    "Fault recovery, {}: {} tickets, {} workers, one SIGKILLed",
                    o.label, args.tickets, args.workers
                ),
                x_label: "seconds since the workers started".into(),
                y_label: "tickets (log)".into(),
                series: vec![
                    Series {
                        label: "queued".into(),
                        points: o.samples.iter().map(|s| (s.0, s.1 as f64)).collect(),
                        dashed: false,
                        color: 0,
                    },
                    Series {
                        label: "processing (claimed, incl. the dead worker's)".into(),
                        points: o.samples.iter().map(|s| (s.0, s.2 as f64)).collect(),
                        dashed: false,
                        color: 1,
                    },
                ],
                markers,
                // The stranded few beside the thousands queued.
                log_y: true,
            },
        )?;
    }
    Ok(())
}
