//! The port's worker and supervisor processes (`matchmaker bench seed000-worker`,
//! `matchmaker bench seed000-supervisor`, hidden: the benches start them).
//!
//! A worker is `WORKER_POOL_SIZE` consumers and one heartbeater, as seed 000's Go
//! worker is N+1 goroutines. Each consumer runs a cycle on every tick of its poll
//! ticker (`--poll ticker`, the default; see [`Poll`] for why): claim, form, then
//! for each match save it and publish it, then complete the matched tickets and
//! release the rest, each its own round trip. SIGTERM stops the consumers and
//! releases whatever the worker holds (its `Worker.Stop`); SIGKILL leaves it to the
//! supervisor.

use super::{PortMatch, PortTicket};
use anyhow::Result;
use clap::Args;
use mm_engine::{BatchConfig, Candidate, WindowPolicy, form_matches};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    #[arg(long)]
    pub redis_url: String,
    #[arg(long)]
    pub region: String,
    #[arg(long)]
    pub worker_id: String,
    #[arg(long, default_value_t = super::BATCH)]
    pub claim_batch_size: usize,
    #[arg(long, default_value_t = 2)]
    pub worker_pool_size: usize,
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub lock_ttl: Duration,
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    pub heartbeat_interval: Duration,
    /// When a consumer claims.
    #[arg(long, value_enum, default_value = "ticker")]
    pub poll: Poll,
    /// The consumers' poll interval.
    #[arg(long, default_value = "100ms", value_parser = humantime::parse_duration)]
    pub poll_interval: Duration,
}

/// When a consumer runs its next cycle. The seed shows no consumer loop, only that
/// workers pick tickets up "on the next poll cycle"; every loop it does show (the
/// heartbeater, the supervisor) is a `time.NewTicker` in a `select`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Poll {
    /// One cycle per tick of a ticker (`POLL_INTERVAL`), as Go's `time.Ticker`
    /// paces it: a cycle longer than the interval drops the ticks it spans. This is
    /// the reading the seed's own drain figures fit: a "steady ~1,200 tickets/s"
    /// with processing depth "at zero across every sample" is what consumers that
    /// idle between ticks give (3 workers x 4 consumers x 10 tickets every 100 ms
    /// is 1,200/s), not consumers that always hold a batch.
    Ticker,
    /// The next cycle at once after one that formed a match, a pause of
    /// `POLL_INTERVAL` after one that formed none: the most generous reading,
    /// bounded only by Redis and round trips.
    Eager,
}

#[derive(Debug, Clone, Args)]
pub struct SupervisorArgs {
    #[arg(long)]
    pub redis_url: String,
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub lock_ttl: Duration,
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub supervise_interval: Duration,
}

/// Cancelled on SIGTERM or Ctrl-C.
fn on_signal() -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
        }
        t.cancel();
    });
    token
}

pub async fn run_worker(args: WorkerArgs) -> Result<()> {
    let stop = on_signal();
    let mut port = super::Port::connect(&args.redis_url, &args.region).await?;
    // Registered before the first claim, so the supervisor sees a live worker.
    port.heartbeat(&args.worker_id, args.lock_ttl).await?;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..args.worker_pool_size.max(1) {
        // A connection per consumer, as each goroutine takes one from go-redis's pool.
        let port = super::Port::connect(&args.redis_url, &args.region).await?;
        tasks.spawn(consume(port, args.clone(), stop.clone()));
    }
    let beat = {
        let (mut port, args, stop) = (port.clone(), args.clone(), stop.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(args.heartbeat_interval);
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tick.tick() => {}
                }
                if let Err(e) = port.heartbeat(&args.worker_id, args.lock_ttl).await {
                    eprintln!("heartbeat failed: {e:#}");
                }
            }
        })
    };
    while let Some(r) = tasks.join_next().await {
        r??;
    }
    beat.abort();
    port.release_all(&args.worker_id).await?;
    Ok(())
}

/// One consumer's poll loop, paced as `args.poll` says.
pub(crate) async fn consume(
    mut port: super::Port,
    args: WorkerArgs,
    stop: CancellationToken,
) -> Result<()> {
    let every = args.poll_interval;
    // Go's first tick comes one interval after `NewTicker`.
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    while !stop.is_cancelled() {
        if args.poll == Poll::Ticker {
            tokio::select! {
                _ = stop.cancelled() => return Ok(()),
                _ = ticker.tick() => {}
            }
        }
        let formed = match one_cycle(&mut port, &args).await {
            Ok(n) => n,
            Err(e) => {
                eprintln!("consumer cycle failed: {e:#}");
                0
            }
        };
        if args.poll == Poll::Eager && formed == 0 {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep(every) => {}
            }
        }
    }
    Ok(())
}

/// Claim, form, save and publish each match, complete, release. Returns the
/// number of matches formed.
pub(crate) async fn one_cycle(port: &mut super::Port, args: &WorkerArgs) -> Result<usize> {
    let cfg = BatchConfig {
        min_players: super::MIN_PLAYERS,
        max_players: super::MAX_PLAYERS,
        window: WindowPolicy::default(),
    };
    let worker = args.worker_id.as_str();
    let batch = port
        .claim(worker, args.claim_batch_size, args.lock_ttl)
        .await?;
    if batch.is_empty() {
        return Ok(0);
    }
    let now = mm_domain::now_ms();
    let candidates: Vec<Candidate> = batch
        .iter()
        .map(|t| Candidate {
            rating: t.mmr,
            enqueued_at: t.created_at,
        })
        .collect();
    let groups = form_matches(&candidates, now, &cfg);
    let mut matched = vec![false; batch.len()];
    for group in &groups {
        let members: Vec<&PortTicket> = group.iter().map(|&i| &batch[i]).collect();
        let m = PortMatch {
            id: uuid::Uuid::new_v4().simple().to_string(),
            region: args.region.clone(),
            tickets: members.iter().map(|t| t.id.clone()).collect(),
            players: members.iter().map(|t| t.player_id.clone()).collect(),
            created_at: mm_domain::now_ms(),
        };
        port.save_match(&m).await?;
        port.publish(&m).await?;
        for &i in group {
            matched[i] = true;
        }
    }
    let (done, rest): (Vec<_>, Vec<_>) = batch.iter().zip(&matched).partition(|(_, m)| **m);
    let done: Vec<&str> = done.iter().map(|(t, _)| t.id.as_str()).collect();
    let rest: Vec<&str> = rest.iter().map(|(t, _)| t.id.as_str()).collect();
    port.complete(worker, &done).await?;
    port.release(worker, &rest).await?;
    Ok(groups.len())
}

pub async fn run_supervisor(args: SupervisorArgs) -> Result<()> {
    let stop = on_signal();
    // Its keys are found by SCAN; the region is not used.
    let mut port = super::Port::connect(&args.redis_url, "").await?;
    let mut tick = tokio::time::interval(args.supervise_interval);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return Ok(()),
            _ = tick.tick() => {}
        }
        match port.reclaim(args.lock_ttl).await {
            Ok(0) => {}
            Ok(n) => eprintln!("reclaimed {n} stale tickets"),
            Err(e) => eprintln!("reclaim cycle failed: {e:#}"),
        }
    }
}
