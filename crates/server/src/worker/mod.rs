//! The worker: `pool_size` consumer tasks that claim batches, form matches with the
//! engine and commit them, plus one heartbeater that keeps the worker's leases
//! alive. Matched tickets are completed and the rest released in the same cycle, so
//! nothing accumulates in the held sets. On shutdown it releases whatever it holds.
//! With `COORDINATION=leader` the consumers give way to one pool leader task per
//! pool ([`crate::leader`]).
//!
//! An idle consumer sleeps until its next poll or until a wake-up says a ticket
//! arrived in one of its pools ([`mm_store::Wakes`], seed 002), whichever is first;
//! the poll stays as the safety net for wake-ups that are lost.
//!
//! The worker starts each committed match's saga ([`crate::saga`]): it places a
//! match without a ready check at once, and wakes up at a ready check's deadline
//! to expire it (the supervisor does both for matches whose worker died).
//!
//! In a mode with backfill, a cycle first fills running matches' open seats
//! from what it claimed ([`fill`]), then forms new matches from the rest.

use crate::MAX_BACKOFF;
use crate::saga;

mod fill;
mod forming;
mod kept;
mod pause;
pub(crate) use fill::fill_then_propose;
pub(crate) use forming::{form_in_parts, forms_in_parts};
pub(crate) use kept::{Kept, Reading};
use mm_domain::{
    Decided, EventEnvelope, Match, MatchId, MatchStatus, MatchTicket, Millis, Pool, RuleStep,
    Ticket, TicketId, now_ms,
};
use mm_engine::{BatchConfig, Candidate, Entry, Mode, Modes, form_matches};
use mm_store::outage::Backoff;
use mm_store::{Claimed, Store, StoreError, Wake};
use mm_telemetry::names;
pub(crate) use pause::IdlePause;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Unique per process; leases and held sets are keyed by it.
    pub id: String,
    pub pools: Vec<Pool>,
    /// Consumer tasks (`WORKER_POOL_SIZE`).
    pub pool_size: usize,
    /// Most tickets claimed per poll (`CLAIM_BATCH_SIZE`); a mode's polls claim at
    /// least three full matches' worth.
    pub batch_size: usize,
    /// Lease on claimed tickets (`LOCK_TTL`).
    pub lease: Duration,
    /// Lease refresh period (`HEARTBEAT_INTERVAL`).
    pub heartbeat: Duration,
    /// Longest pause after a pass over every pool that formed no match
    /// (`POLL_INTERVAL`); the first is 5 ms, doubling with each idle pass.
    pub poll: Duration,
    /// The modes of the pools, by name.
    pub modes: Modes,
    /// How matches are formed from a claimed batch (`FORMATION`).
    pub formation: Formation,
    /// Wake idle consumers when a ticket arrives (`WAKE_UPS`); without, they
    /// only poll.
    pub wake_ups: bool,
    /// How the workers of a deployment share the pools (`COORDINATION`).
    pub coordination: Coordination,
}

/// How the workers of a deployment share the pools. Every worker of a deployment
/// must use the same.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Coordination {
    /// Every worker claims batches of `CLAIM_BATCH_SIZE` tickets at a random rank
    /// of any pool and forms matches within the batch.
    #[default]
    Claim,
    /// One worker per pool leads it (a fenced lease) and forms matches over the
    /// whole pool ([`crate::leader`]).
    Leader,
}

/// The match-formation algorithm a worker runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Formation {
    /// Ours ([`mm_engine::propose`]): overdue tickets first, tightest match
    /// anywhere in the batch, parties and balanced teams.
    #[default]
    Engine,
    /// Seed 000's, kept as the benchmarks' baseline ([`mm_engine::form_matches`]):
    /// the contiguous run of the rating-sorted batch with the smallest spread,
    /// repeatedly, exactly `batch_size` tickets claimed per poll. Solo tickets only:
    /// members are dealt to teams in turn.
    Seed000,
}

impl WorkerConfig {
    /// How many tickets to claim per poll in a pool of `mode`.
    pub fn batch_for(&self, mode: &Mode) -> usize {
        match self.formation {
            Formation::Engine => self.batch_size.max(3 * mode.max_players()),
            Formation::Seed000 => self.batch_size,
        }
    }
}

/// How many tickets a consumer's next claim of each pool takes: the batch
/// ([`WorkerConfig::batch_for`]), more in a pool whose `equal` rules split its
/// batches (see [`mm_engine::claim`]), measured on the consumer's last claim of
/// the pool if that claim formed a match; a claim past the batch takes at most
/// half the queue ([`Store::claim_part`]).
#[derive(Debug, Default)]
pub struct ClaimSizes(HashMap<String, usize>);

impl ClaimSizes {
    fn next(&self, cfg: &WorkerConfig, pool: &Pool, mode: &Mode) -> usize {
        let base = cfg.batch_for(mode);
        self.0.get(&pool.name()).copied().unwrap_or(base)
    }

    /// After a claim that took `claimed` and formed `formed` matches.
    fn learn(
        &mut self,
        cfg: &WorkerConfig,
        pool: &Pool,
        mode: &Mode,
        claimed: &[Claimed],
        formed: usize,
    ) {
        if cfg.formation != Formation::Engine || formed == 0 {
            self.0.remove(&pool.name());
            return;
        }
        let tickets: Vec<&Ticket> = claimed.iter().map(|c| &c.ticket).collect();
        let next = mm_engine::claim::next_claim(mode, cfg.batch_for(mode), &tickets);
        self.0.insert(pool.name(), next);
    }
}

/// Counters of one worker process.
#[derive(Debug, Default)]
pub struct WorkerStats {
    pub claimed: AtomicU64,
    pub matched_tickets: AtomicU64,
    pub matches: AtomicU64,
    pub released: AtomicU64,
    pub errors: AtomicU64,
    /// Pools a plain worker found led by a pool leader, so left to it (see
    /// [`StoreError::Led`]); each is logged when it starts and when it ends.
    left_to_leaders: std::sync::Mutex<HashSet<String>>,
}

impl WorkerStats {
    /// Notes whether `pool` is led by a pool leader now; logs the changes.
    fn note_led(&self, worker: &str, pool: &Pool, led: Option<&str>) {
        let mut left = self
            .left_to_leaders
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match led {
            Some(why) if left.insert(pool.name()) => {
                metrics::gauge!(names::POOLS_LEFT_TO_LEADER, "pool" => pool.name()).set(1.0);
                tracing::warn!(
                    worker,
                    pool = %pool.name(),
                    "a pool leader (COORDINATION=leader) holds this pool, so this COORDINATION=claim \
                     worker leaves it to the leader ({why}); run one coordination per deployment"
                );
            }
            None if left.remove(&pool.name()) => {
                metrics::gauge!(names::POOLS_LEFT_TO_LEADER, "pool" => pool.name()).set(0.0);
                tracing::info!(
                    worker,
                    pool = %pool.name(),
                    "the pool has no leader any more; claiming it again"
                );
            }
            _ => {}
        }
    }

    /// Pools this worker leaves to their leaders now.
    pub fn left_to_leaders(&self) -> Vec<String> {
        let left = self
            .left_to_leaders
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut pools: Vec<String> = left.iter().cloned().collect();
        pools.sort();
        pools
    }
}

/// Runs the worker until `shutdown` is cancelled, then releases what it holds.
pub async fn run(
    store: Arc<dyn Store>,
    cfg: WorkerConfig,
    shutdown: CancellationToken,
) -> Arc<WorkerStats> {
    let stats = Arc::new(WorkerStats::default());
    let cfg = Arc::new(cfg);
    tracing::info!(worker = %cfg.id, pools = cfg.pools.len(), consumers = cfg.pool_size, "worker started");
    // Counters exist from the start, so rates and alerts see a zero, not no series.
    metrics::counter!(names::HEARTBEAT_FAILURES).increment(0);
    for pool in &cfg.pools {
        metrics::counter!(names::TICKETS_CLAIMED, "pool" => pool.name()).increment(0);
        metrics::counter!(names::TICKETS_RELEASED, "pool" => pool.name()).increment(0);
        metrics::counter!(names::MATCHES_FORMED, "mode" => pool.mode.clone()).increment(0);
        if cfg.coordination == Coordination::Claim {
            metrics::gauge!(names::POOLS_LEFT_TO_LEADER, "pool" => pool.name()).set(0.0);
        }
    }
    let heartbeat_stop = CancellationToken::new();
    let led = crate::leader::Led::default();
    let heartbeater = tokio::spawn(heartbeat_loop(
        store.clone(),
        cfg.clone(),
        led.clone(),
        heartbeat_stop.clone(),
    ));
    let (woken, wakes) = tokio::sync::watch::channel(0u64);
    let listener = cfg.wake_ups.then(|| {
        tokio::spawn(listen_wakes(
            store.clone(),
            cfg.clone(),
            woken,
            shutdown.clone(),
        ))
    });
    let mut consumers = Vec::new();
    match cfg.coordination {
        Coordination::Claim => {
            for i in 0..cfg.pool_size.max(1) {
                consumers.push(tokio::spawn(consume(
                    store.clone(),
                    cfg.clone(),
                    stats.clone(),
                    i,
                    wakes.clone(),
                    shutdown.clone(),
                )));
            }
        }
        Coordination::Leader => {
            for pool in &cfg.pools {
                consumers.push(tokio::spawn(crate::leader::lead_pool(
                    store.clone(),
                    cfg.clone(),
                    stats.clone(),
                    pool.clone(),
                    led.clone(),
                    wakes.clone(),
                    shutdown.clone(),
                )));
            }
        }
    }
    for c in consumers {
        let _ = c.await;
    }
    if let Some(l) = listener {
        l.abort();
    }
    // Consumers finish their cycle before returning; keep the lease until then.
    heartbeat_stop.cancel();
    let _ = heartbeater.await;
    let mut released = 0;
    // A leader released its pools itself, fenced; a deposed one must not.
    let plain = cfg.coordination == Coordination::Claim;
    for pool in cfg.pools.iter().filter(|_| plain) {
        match store.release(&cfg.id, pool, None).await {
            Ok(n) => released += n,
            Err(e) => {
                warn_store!(e, pool = %pool.name(), "could not release on shutdown; the supervisor will reclaim")
            }
        }
    }
    tracing::info!(worker = %cfg.id, released, matches = stats.matches.load(Ordering::Relaxed), "worker stopped");
    stats
}

/// Extends the worker's lease on every pool, which also says it is live (a
/// candidate to lead, with `COORDINATION=leader`). Pools it leads are left to the
/// leader's own fenced heartbeat.
async fn heartbeat_loop(
    store: Arc<dyn Store>,
    cfg: Arc<WorkerConfig>,
    led: crate::leader::Led,
    stop: CancellationToken,
) {
    let mut tick = tokio::time::interval(cfg.heartbeat);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let mut held = 0;
        let leading = led.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for pool in cfg.pools.iter().filter(|p| !leading.contains(&p.name())) {
            match store.heartbeat(&cfg.id, pool, cfg.lease).await {
                Ok(n) => held += n,
                Err(e) => {
                    metrics::counter!(names::HEARTBEAT_FAILURES).increment(1);
                    warn_store!(e, pool = %pool.name(), "heartbeat failed");
                }
            }
        }
        metrics::gauge!(names::LOCKS_REFRESHED).set(held as f64);
    }
}

/// Turns the store's wake-ups for this worker's pools into a counter the
/// consumers watch; subscribes again (with back-off) if the store cannot be
/// reached at first.
async fn listen_wakes(
    store: Arc<dyn Store>,
    cfg: Arc<WorkerConfig>,
    woken: tokio::sync::watch::Sender<u64>,
    shutdown: CancellationToken,
) {
    let mine: HashSet<String> = cfg.pools.iter().map(Pool::name).collect();
    let mut backoff = Backoff::new(cfg.poll, MAX_BACKOFF);
    let mut ups = loop {
        match store.wake_ups().await {
            Ok(ups) => break ups,
            Err(e) => {
                warn_store!(e, "no wake-ups yet; polling meanwhile");
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(backoff.failed()) => {}
                }
            }
        }
    };
    loop {
        let wake = tokio::select! {
            _ = shutdown.cancelled() => return,
            wake = ups.next() => wake,
        };
        match wake {
            Some(Wake::Pool(p)) if !mine.contains(&p) => {}
            Some(_) => {
                woken.send_modify(|n| *n += 1);
            }
            None => return,
        }
    }
}

async fn consume(
    store: Arc<dyn Store>,
    cfg: Arc<WorkerConfig>,
    stats: Arc<WorkerStats>,
    index: usize,
    mut wakes: tokio::sync::watch::Receiver<u64>,
    shutdown: CancellationToken,
) {
    let n = cfg.pools.len();
    let mut pause = IdlePause::new(cfg.poll);
    let mut backoff = Backoff::new(cfg.poll, MAX_BACKOFF);
    let mut sizes = ClaimSizes::default();
    while !shutdown.is_cancelled() {
        // Wake-ups from here on end the pause after this pass.
        wakes.borrow_and_update();
        let mut formed = 0;
        let mut failed = false;
        for k in 0..n {
            if shutdown.is_cancelled() {
                return;
            }
            let pool = &cfg.pools[(index + k) % n];
            match cycle(&*store, &cfg, &stats, pool, &mut sizes).await {
                Ok(done) => {
                    formed += done.matches.len();
                    start_sagas(&store, pool, done.matches);
                }
                Err(e) => {
                    stats.errors.fetch_add(1, Ordering::Relaxed);
                    warn_store!(e, pool = %pool.name(), "match cycle failed");
                    failed = true;
                }
            }
        }
        let passed = Instant::now();
        let wait = if failed {
            Some(backoff.failed())
        } else {
            backoff.reset();
            pause.after_pass(formed)
        };
        if let Some(wait) = wait {
            // Without a listener (wake-ups off, or it ended) only the poll wakes.
            let woken = async {
                if wakes.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(wait) => {}
                _ = woken, if !failed => {
                    let gather = pause.woken(passed.elapsed());
                    tokio::select! {
                        _ = shutdown.cancelled() => return,
                        _ = tokio::time::sleep(gather) => {}
                    }
                }
            }
        }
    }
}

/// Drives the sagas of matches just committed and fanned out: placement now, or a
/// timer for the ready check's deadline.
pub(crate) fn start_sagas(store: &Arc<dyn Store>, pool: &Pool, done: Vec<Match>) {
    for m in done {
        let wake = match m.lifecycle.initial_status() {
            MatchStatus::Placing => Some(0),
            MatchStatus::RequiresAcceptance => m.lifecycle.ready_check_ms,
            _ => None,
        };
        let Some(wait) = wake else { continue };
        let (store, pool) = (store.clone(), pool.clone());
        tokio::spawn(async move {
            saga::pause_if("commit", &m.id).await;
            let at = m.created_at + wait;
            tokio::time::sleep(Duration::from_millis(at.saturating_sub(now_ms()))).await;
            if let Err(e) = saga::drive(&*store, &pool, &m.id).await {
                warn_store!(e, match_id = %m.id, "saga step failed; the supervisor will retry");
            }
        });
    }
}

/// What one cycle committed.
#[derive(Debug, Default)]
pub struct Formed {
    /// When the store confirmed the commit; `None` when nothing was committed.
    /// (`matchmaker bench push` measures from here to the players' sockets.)
    pub committed_at: Option<Instant>,
    /// The matches committed and fanned out (empty if the fan-out failed: the
    /// supervisor finishes it).
    pub matches: Vec<Match>,
}

/// One claim -> form -> complete -> release -> fan-out cycle on one pool; the
/// claim's size is `sizes`'s for the pool, which the claim updates.
pub async fn cycle(
    store: &dyn Store,
    cfg: &WorkerConfig,
    stats: &WorkerStats,
    pool: &Pool,
    sizes: &mut ClaimSizes,
) -> Result<Formed, StoreError> {
    let Some(mode) = cfg.modes.get(&pool.mode) else {
        tracing::warn!(pool = %pool.name(), "pool of an unknown mode; skipped");
        return Ok(Formed::default());
    };
    let started = Instant::now();
    // A claim past the batch takes at most half the queue.
    let claimed = store
        .claim_part(
            &cfg.id,
            pool,
            sizes.next(cfg, pool, mode),
            cfg.batch_for(mode),
            rand::random::<f64>(),
            cfg.lease,
        )
        .await;
    let claimed = match claimed {
        Err(StoreError::Led(why)) => {
            stats.note_led(&cfg.id, pool, Some(&why));
            return Ok(Formed::default());
        }
        claimed => claimed?,
    };
    stats.note_led(&cfg.id, pool, None);
    if claimed.is_empty() {
        sizes.learn(cfg, pool, mode, &claimed, 0);
        return Ok(Formed::default());
    }
    stats
        .claimed
        .fetch_add(claimed.len() as u64, Ordering::Relaxed);
    metrics::counter!(names::TICKETS_CLAIMED, "pool" => pool.name())
        .increment(claimed.len() as u64);
    // The players of tickets claimed for the first time hear `ticket.searching`
    // with their match, or once the unmatched go back.
    let first: HashSet<TicketId> = claimed
        .iter()
        .filter(|c| c.first_claim)
        .map(|c| c.ticket.id.clone())
        .collect();
    let matches = fill::fill_then_propose(store, cfg, &claimed, pool, mode, Reading::Fresh).await;
    sizes.learn(cfg, pool, mode, &claimed, matches.len());
    let committed: HashSet<MatchId> = match store.complete(&cfg.id, pool, &matches, cfg.lease).await
    {
        Ok(ids) => ids.into_iter().collect(),
        Err(e) => {
            publish_searching(store, &claimed).await;
            return Err(e);
        }
    };
    let committed_at = (!committed.is_empty()).then(Instant::now);
    let done: Vec<Match> = matches
        .into_iter()
        .filter(|m| committed.contains(&m.id))
        .collect();
    let matched_ids: HashSet<&TicketId> = done
        .iter()
        .flat_map(|m| m.tickets.iter().map(|t| &t.ticket_id))
        .collect();
    let rest: Vec<TicketId> = claimed
        .iter()
        .map(|c| &c.ticket.id)
        .filter(|id| !matched_ids.contains(id))
        .cloned()
        .collect();
    let matched = matched_ids.len();
    // The release and the fan-out at once: the players hear of their matches
    // without waiting for the unmatched tickets to go back. The unmatched's
    // `ticket.searching` is sent first, ahead of the release on the connection
    // (and so of any match they join after it).
    let unmatched = claimed
        .iter()
        .filter(|c| !matched_ids.contains(&c.ticket.id));
    let ((), released, fanned) = tokio::join!(
        publish_searching(store, unmatched),
        store.release(&cfg.id, pool, Some(&rest)),
        store.fan_out_first(pool, &done, &first)
    );
    let released = released?;
    stats.released.fetch_add(released as u64, Ordering::Relaxed);
    metrics::counter!(names::TICKETS_RELEASED, "pool" => pool.name()).increment(released as u64);
    record_matches(&done);
    metrics::histogram!(names::WORKER_CYCLE).record(started.elapsed().as_secs_f64());
    stats
        .matched_tickets
        .fetch_add(matched as u64, Ordering::Relaxed);
    stats
        .matches
        .fetch_add(committed.len() as u64, Ordering::Relaxed);

    Ok(fanned_out(fanned, committed_at, done))
}

/// What a cycle committed, once fanned out: the matches to drive, none if the
/// fan-out failed (it leaves them in the outbox for the supervisor).
pub(crate) fn fanned_out(
    fanned: Result<(), StoreError>,
    committed_at: Option<Instant>,
    done: Vec<Match>,
) -> Formed {
    if let Err(e) = fanned {
        warn_store!(
            e,
            matches = done.len(),
            "fan-out failed; the supervisor will retry"
        );
        return Formed {
            committed_at,
            matches: Vec::new(),
        };
    }
    Formed {
        committed_at,
        matches: done,
    }
}

/// Tells the players of tickets claimed for the first time that their search began.
pub(crate) async fn publish_searching<'a>(
    store: &dyn Store,
    claimed: impl IntoIterator<Item = &'a Claimed>,
) {
    let searching: Vec<EventEnvelope> = claimed
        .into_iter()
        .filter(|c| c.first_claim)
        .flat_map(|c| mm_store::searching(&c.ticket.id, &c.ticket.players))
        .collect();
    if let Err(e) = store.publish(&searching).await {
        warn_store!(e, "could not publish ticket.searching");
    }
}

/// Proposes matches of `claimed` with the configured formation.
pub(crate) fn propose_for(
    cfg: &WorkerConfig,
    claimed: &[Claimed],
    pool: &Pool,
    mode: &Mode,
    reading: &Reading<'_>,
) -> Vec<Match> {
    match cfg.formation {
        Formation::Engine => propose(claimed, pool, mode, reading),
        Formation::Seed000 => propose_seed000(claimed, pool, mode),
    }
}

/// Matches formed, each ticket's time to match and each match's rating spread.
pub(crate) fn record_matches(done: &[Match]) {
    for m in done {
        let mode = m.mode.clone();
        metrics::counter!(names::MATCHES_FORMED, "mode" => mode.clone()).increment(1);
        if m.fills().is_some() {
            metrics::counter!(names::BACKFILL_FILLS, "mode" => mode.clone(), "what" => "fills")
                .increment(1);
            metrics::counter!(names::BACKFILL_FILLS, "mode" => mode.clone(), "what" => "players")
                .increment(m.player_count() as u64);
        }
        let waited = metrics::histogram!(names::TIME_TO_MATCH, "mode" => mode.clone());
        for t in &m.tickets {
            waited.record(m.created_at.saturating_sub(t.enqueued_at) as f64 / 1000.0);
        }
        let ratings = m.tickets.iter().map(|t| t.rating);
        let (lo, hi) = ratings.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
            (lo.min(r), hi.max(r))
        });
        if lo.is_finite() {
            metrics::histogram!(names::MATCH_RATING_SPREAD, "mode" => mode.clone()).record(hi - lo);
        }
        for r in &m.decided.rules {
            metrics::counter!(names::RULE_STEPS, "mode" => mode.clone(), "rule" => r.rule.clone(), "step" => r.step.to_string())
                .increment(1);
        }
    }
}

/// Turns a claimed batch into matches with seed 000's tightest-spread formation.
fn propose_seed000(claimed: &[Claimed], pool: &Pool, mode: &Mode) -> Vec<Match> {
    let now = now_ms();
    let candidates: Vec<Candidate> = claimed
        .iter()
        .map(|c| Candidate {
            rating: c.ticket.rating,
            enqueued_at: c.ticket.enqueued_at,
        })
        .collect();
    let cfg = BatchConfig {
        min_players: mode.min_players,
        max_players: mode.max_players(),
        window: mode.window,
    };
    let teams = mode.teams.max(1);
    form_matches(&candidates, now, &cfg)
        .into_iter()
        .map(|group| {
            let members: Vec<(usize, usize)> = group
                .into_iter()
                .enumerate()
                .map(|(k, i)| (i, k % teams))
                .collect();
            to_match(claimed, pool, mode, &members, now, Decided::default())
        })
        .collect()
}

/// A match of the claimed tickets `members` (index, team), with what the rules
/// `decided`.
pub(crate) fn to_match(
    claimed: &[Claimed],
    pool: &Pool,
    mode: &Mode,
    members: &[(usize, usize)],
    now: Millis,
    decided: Decided,
) -> Match {
    let keep = mode.backfill != mm_engine::BackfillPolicy::Off && !mode.rules.is_empty();
    Match {
        id: MatchId::random(&uuid::Uuid::new_v4().simple().to_string()),
        mode: pool.mode.clone(),
        region: pool.region.clone(),
        tickets: members
            .iter()
            .map(|&(i, team)| {
                let t = &claimed[i].ticket;
                MatchTicket {
                    ticket_id: t.id.clone(),
                    players: t.players.clone(),
                    rating: t.rating,
                    enqueued_at: t.enqueued_at,
                    team,
                    skills: t.skills.clone(),
                    // Kept for the players who fill its seats later.
                    attributes: if keep {
                        t.attributes.clone()
                    } else {
                        Default::default()
                    },
                    player_attributes: if keep {
                        t.player_attributes.clone()
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect(),
        created_at: now,
        lifecycle: mode.lifecycle,
        decided,
    }
}

/// Turns a claimed batch into proposed matches with the engine, the rules
/// reading the tickets as `reading` has them.
fn propose(claimed: &[Claimed], pool: &Pool, mode: &Mode, reading: &Reading<'_>) -> Vec<Match> {
    let now = now_ms();
    let entries = entries(claimed, pool);
    let tickets: Vec<&mm_domain::Ticket> = claimed.iter().map(|c| &c.ticket).collect();
    let traits = reading.traits(mode, &tickets);
    mm_engine::propose_with(mode, &entries, &traits, now)
        .into_iter()
        .map(|p| match_of(&p, claimed, &tickets, pool, mode, now))
        .collect()
}

/// The engine's entries of `claimed` in `pool`.
pub(crate) fn entries(claimed: &[Claimed], pool: &Pool) -> Vec<Entry> {
    claimed
        .iter()
        .map(|c| Entry {
            rating: c.ticket.rating,
            size: c.ticket.players.len(),
            enqueued_at: c.ticket.enqueued_at,
            // Outside its best region a ticket waits for the mode's cross-region time.
            eligible_at: c.ticket.eligible_at(&pool.region),
        })
        .collect()
}

/// The match of proposal `p` of `claimed` (whose tickets are `tickets`),
/// formed at `now`.
pub(crate) fn match_of(
    p: &mm_engine::Proposal,
    claimed: &[Claimed],
    tickets: &[&mm_domain::Ticket],
    pool: &Pool,
    mode: &Mode,
    now: Millis,
) -> Match {
    let members: Vec<(usize, usize)> = p
        .members
        .iter()
        .copied()
        .zip(p.teams.iter().copied())
        .collect();
    to_match(claimed, pool, mode, &members, now, decided(p, tickets))
}

/// What the rules decided for proposal `p` of `tickets`, as the match keeps it.
pub(crate) fn decided(p: &mm_engine::Proposal, tickets: &[&mm_domain::Ticket]) -> Decided {
    Decided {
        chosen: p
            .chosen
            .iter()
            .map(|(rule, value)| (rule.to_string(), value.to_string()))
            .collect(),
        roles: p
            .roles
            .iter()
            .filter_map(|(k, i, role)| {
                let player = tickets[p.members[*k]].players.get(*i)?;
                Some((player.clone(), role.to_string()))
            })
            .collect(),
        rules: p
            .steps
            .iter()
            .map(|(rule, step)| RuleStep {
                rule: rule.to_string(),
                step: *step,
            })
            .collect(),
        backfill: None,
    }
}
