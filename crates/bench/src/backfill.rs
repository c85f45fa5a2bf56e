//! The backfill scenario (issue 34): how long an open seat of a running match
//! waits for a player to be told to join it, against how long a new match
//! takes to reach its players, at the same load.
//!
//! On a fresh `redis-server`, with this process's own worker (claim
//! coordination, one consumer claiming the whole pool, wake-ups on) driving
//! the sagas, and one registered game server:
//! - `--matches` running 5v5 matches (default 200) are formed and placed, match
//!   `i` at rating `100 + 15 i`;
//! - `--waiting` players (default 1,000) then wait in the same pool, the same
//!   share at each match's rating: fewer than a match needs, and the mode's
//!   window (a fixed +-5) keeps the rating groups apart, so none of them can
//!   form a match of their own; each can only fill a seat;
//! - seats open at `--rate` per second (default 100), one at a time on the
//!   running matches in turn (a trusted backend's `open_backfill`), until
//!   `--seats` (default: one per waiting player) have opened. Measured: from
//!   just before the open call to the filler's `match.assigned` (the store's
//!   event feed, as an ingress hears it);
//! - baseline, interleaved at the same rate: after every `--new-every` seats
//!   (default 10), a new group of 10 players at a rating of its own arrives at
//!   once; measured: from when the last of them is queued to the last
//!   `match.assigned` of its match (formation, commit, allocation, notice).
//!
//! Neither path has a ready check. The worker claims the whole pool each
//! cycle (`CLAIM_BATCH_SIZE` 4096): with smaller batches a claim worker sees a
//! random slice of a big pool and a seat can wait for the cycle that holds its
//! filler (pool leaders see the whole pool).

use super::histogram::Latency;
use super::{Output, progress};
use anyhow::{Context, Result, bail};
use clap::Args;
use mm_domain::{Event, MatchId, PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_engine::{Modes, WindowPolicy};
use mm_server::worker::{WorkerConfig, run as run_worker};
use mm_store::{Backfills, EnqueueOutcome, Fleet, GameServer, RedisStore, Store};
use mm_testkit::RedisServer;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const MODE: &str = "bf";
const REGION: &str = "eu";

/// 5v5, a fixed narrow window, no ready check, game servers, manual backfill;
/// a long placement timeout, so that fillers the bench never acknowledges
/// stay in their match for the run.
const BACKFILL_MODE: &str = r#"
[modes.bf]
teams = 2
team_size = 5
window = { initial = 5, per_second = 0, cap = 5 }
ready_check = false
backfill = "manual"
placement_timeout = "5m"
"#;

#[derive(Debug, Clone, Args)]
pub struct BackfillArgs {
    /// Running matches whose seats open.
    #[arg(long, default_value_t = 200)]
    pub matches: usize,
    /// Players waiting to fill seats (a multiple of --matches, less than ten
    /// per match).
    #[arg(long, default_value_t = 1000)]
    pub waiting: usize,
    /// Seats opened per second.
    #[arg(long, default_value_t = 100.0)]
    pub rate: f64,
    /// Seats to open (default: --waiting).
    #[arg(long)]
    pub seats: Option<usize>,
    /// A new match's ten players arrive after every this many seats.
    #[arg(long, default_value_t = 10)]
    pub new_every: usize,
    #[command(flatten)]
    pub output: Output,
}

/// A `match.assigned` as the bench sees it.
struct Heard {
    player: PlayerId,
    /// The running match a fill joined (`None`: a new match).
    fills: Option<MatchId>,
    match_id: MatchId,
    at: Instant,
}

/// What the bench heard, against what it did.
#[derive(Default)]
struct Tally {
    by_match: HashMap<MatchId, usize>,
    /// Per running match, when its seats not yet filled opened.
    opened: Vec<VecDeque<Instant>>,
    /// New matches: when the last player was queued, players heard, the last
    /// heard.
    groups: Vec<(Instant, usize, Option<Instant>)>,
    group_of: HashMap<PlayerId, usize>,
    fills: Latency,
    news: Latency,
    /// Assignments that matched no open seat or new match.
    stray: usize,
}

impl Tally {
    fn hear(&mut self, h: Heard) {
        if let Some(&i) = h.fills.as_ref().and_then(|m| self.by_match.get(m)) {
            match self.opened[i].pop_front() {
                Some(t0) => self.fills.record(h.at.saturating_duration_since(t0)),
                None => self.stray += 1,
            }
            return;
        }
        let Some(&g) = self.group_of.get(&h.player) else {
            self.stray += 1;
            return;
        };
        let (queued, heard, last) = &mut self.groups[g];
        *heard += 1;
        *last = Some(last.map_or(h.at, |l: Instant| l.max(h.at)));
        if *heard == 10
            && let Some(l) = last
        {
            self.news.record(l.saturating_duration_since(*queued));
        }
    }
}

fn player(kind: &str, i: usize) -> PlayerId {
    PlayerId::new(format!("bf-{kind}-{i}")).expect("valid id")
}

fn ticket(p: &PlayerId, rating: f64) -> Ticket {
    let mut t = Ticket::solo(
        TicketId::random(&uuid::Uuid::new_v4().simple().to_string()),
        p.clone(),
        MODE,
        REGION,
        rating,
        now_ms(),
    );
    t.player_ratings = vec![rating];
    t
}

/// Queues `p` at `rating` after subscribing to its events; its
/// `match.assigned` goes to `heard`.
async fn queue(
    store: &Arc<RedisStore>,
    p: PlayerId,
    rating: f64,
    heard: &mpsc::UnboundedSender<Heard>,
) -> Result<()> {
    let mut rx = store.subscribe(&p).await?;
    let tx = heard.clone();
    let who = p.clone();
    tokio::spawn(async move {
        while let Some(e) = rx.recv().await {
            if let Event::Assigned {
                match_id, matched, ..
            } = *e
            {
                let _ = tx.send(Heard {
                    player: who.clone(),
                    fills: matched.fills().map(|f| f.match_id.clone()),
                    match_id,
                    at: Instant::now(),
                });
                return;
            }
        }
    });
    match store.enqueue(&ticket(&p, rating)).await? {
        EnqueueOutcome::Queued => Ok(()),
        other => bail!("ticket of {p} not queued: {other:?}"),
    }
}

fn worker_config() -> Result<WorkerConfig> {
    let all = Modes::load(Some(BACKFILL_MODE), WindowPolicy::default())?;
    let mode = all.get(MODE).context("the backfill mode")?.clone();
    Ok(WorkerConfig {
        id: format!("bench-backfill-{}", std::process::id()),
        pools: vec![Pool::new(MODE, REGION)],
        pool_size: 1,
        batch_size: 4096,
        lease: Duration::from_secs(30),
        heartbeat: Duration::from_secs(2),
        poll: Duration::from_millis(100),
        modes: Modes::of([mode])?,
        formation: Default::default(),
        wake_ups: true,
        coordination: Default::default(),
    })
}

pub async fn run(args: BackfillArgs) -> Result<()> {
    let seats = args.seats.unwrap_or(args.waiting);
    if args.matches == 0 || !args.waiting.is_multiple_of(args.matches) {
        bail!("--waiting must be a multiple of --matches");
    }
    if args.waiting / args.matches >= 10 {
        bail!("fewer than ten waiting players per match (--waiting / --matches < 10)");
    }
    if seats > args.waiting {
        bail!("--seats may not exceed --waiting (each seat needs its filler)");
    }
    let redis = RedisServer::start();
    let store = Arc::new(RedisStore::connect(&redis.url()).await?);
    let dyn_store: Arc<dyn Store> = store.clone();
    let pool = Pool::new(MODE, REGION);
    store
        .register_server(
            &GameServer {
                id: "bench-gs".into(),
                region: REGION.into(),
                modes: vec![MODE.into()],
                capacity: (args.matches + seats / args.new_every.max(1) + 16) as u32,
                address: "10.0.0.1:7777".into(),
            },
            Duration::from_secs(3600),
        )
        .await?;
    let shutdown = CancellationToken::new();
    let worker = tokio::spawn(run_worker(
        dyn_store.clone(),
        worker_config()?,
        shutdown.clone(),
    ));
    let (tx, mut rx) = mpsc::unbounded_channel::<Heard>();

    // The running matches.
    let rating = |i: usize| 100.0 + 15.0 * i as f64;
    let mut running: Vec<MatchId> = vec![MatchId::new("m-none")?; args.matches];
    let mut first: HashMap<PlayerId, usize> = HashMap::new();
    let started = Instant::now();
    for i in 0..args.matches {
        for k in 0..10 {
            let p = player(&format!("run{i}"), k);
            if k == 0 {
                first.insert(p.clone(), i);
            }
            queue(&store, p, rating(i), &tx).await?;
        }
    }
    // Every player of every running match told (none is heard later, as a stray).
    for _ in 0..10 * args.matches {
        let heard = tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .context("the running matches were not all placed within a minute")?
            .context("event feed closed")?;
        if let Some(&i) = first.get(&heard.player) {
            running[i] = heard.match_id;
        }
    }
    println!(
        "{} running matches placed in {:.1}s",
        args.matches,
        started.elapsed().as_secs_f64()
    );

    // The waiting players.
    let per = args.waiting / args.matches;
    for i in 0..args.matches {
        for k in 0..per {
            queue(&store, player(&format!("wait{i}"), k), rating(i), &tx).await?;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let depth = store.depths(&pool).await?;
    println!(
        "{} players waiting ({} queued, {} held)",
        args.waiting, depth.queued, depth.processing
    );

    // Seats open at the rate; new matches arrive among them.
    let mut tally = Tally {
        by_match: running
            .iter()
            .enumerate()
            .map(|(i, m)| (m.clone(), i))
            .collect(),
        opened: vec![VecDeque::new(); args.matches],
        ..Tally::default()
    };
    let gap = Duration::from_secs_f64(1.0 / args.rate);
    let mut next = Instant::now();
    let bar = progress::counter(seats as u64, "seats");
    for s in 0..seats {
        tokio::time::sleep_until(next.into()).await;
        next += gap;
        let i = s % args.matches;
        tally.opened[i].push_back(Instant::now());
        store
            .open_backfill(&pool, &running[i], None, &[1, 0], Duration::from_secs(300))
            .await?;
        bar.inc(1);
        if args.new_every > 0 && (s + 1) % args.new_every == 0 {
            // A new match's ten players at once, at a rating of their own.
            let g = tally.groups.len();
            let r = 10_000.0 + 20.0 * g as f64;
            for k in 0..10 {
                let p = player(&format!("new{g}"), k);
                tally.group_of.insert(p.clone(), g);
                queue(&store, p, r, &tx).await?;
            }
            tally.groups.push((Instant::now(), 0, None));
        }
        while let Ok(h) = rx.try_recv() {
            tally.hear(h);
        }
    }
    bar.finish_and_clear();
    // The last ones.
    let deadline = Instant::now() + Duration::from_secs(10);
    while (tally.fills.count() as usize) < seats
        || (tally.news.count() as usize) < tally.groups.len()
    {
        match tokio::time::timeout_at(deadline.into(), rx.recv()).await {
            Ok(Some(h)) => tally.hear(h),
            _ => break,
        }
    }
    shutdown.cancel();
    let _ = worker.await;
    let Tally {
        fills,
        news,
        stray,
        groups,
        ..
    } = tally;
    let groups = groups.len();

    let unfilled = seats - fills.count() as usize;
    println!();
    println!(
        "seats opened {seats} at {:.0}/s, filled {}, unfilled after 10 s {unfilled}; new matches {groups}, heard {}",
        args.rate,
        fills.count(),
        news.count()
    );
    println!(
        "{:<34} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "ms", "p50", "p90", "p99", "max", "n"
    );
    for (label, l) in [
        ("seat open -> filler assigned", &fills),
        ("new match: last queued -> assigned", &news),
    ] {
        println!(
            "{label:<34} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8}",
            l.ms(0.5),
            l.ms(0.9),
            l.ms(0.99),
            l.max_ms(),
            l.count()
        );
    }
    if news.count() > 0 && fills.count() > 0 {
        println!(
            "fill / new match: p50 {:.2}x, p99 {:.2}x",
            fills.ms(0.5) / news.ms(0.5),
            fills.ms(0.99) / news.ms(0.99)
        );
    }
    if stray > 0 {
        println!("{stray} assignments matched no open seat or new match");
    }
    args.output.csv(
        "backfill.csv",
        "path,p50_ms,p90_ms,p99_ms,max_ms,n",
        [("fill", &fills), ("new_match", &news)].map(|(k, l)| {
            format!(
                "{k},{:.3},{:.3},{:.3},{:.3},{}",
                l.ms(0.5),
                l.ms(0.9),
                l.ms(0.99),
                l.max_ms(),
                l.count()
            )
        }),
    )?;
    drop(redis);
    Ok(())
}
