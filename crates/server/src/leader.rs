//! Pool leaders (`COORDINATION=leader`; seeds 003 and 004): one worker per pool
//! holds the pool's token lock and forms matches over the **whole pool**, kept in
//! its memory, instead of every worker claiming random batches.
//!
//! Each pool gets one task in every worker. Every `HEARTBEAT_INTERVAL` it registers
//! as a candidate to lead the pool ([`mm_store::Leading::candidates`]; workers
//! that only claim never do), looks at the live candidates and picks the pool's
//! owner by rendezvous hashing,
//! so pools spread over the workers and only the pools of a worker that comes or
//! goes move. The owner takes the lock (a fencing token with it), adopts whatever
//! the previous leader held and claims the whole queue; from then on each cycle
//! claims the new arrivals, runs the engine over everything it holds and commits,
//! every write carrying the fencing token. It keeps the lock and its lease by
//! extending both each interval; a leader that is no longer the owner hands the
//! pool over (releases its tickets, frees the lock). A leader that stalls past its
//! lease finds, when it comes back, every write refused: it forgets the pool.
//!
//! A worker that is not the owner still takes a lock left free for a whole lease,
//! so a pool whose owner cannot lead it (not serving it, stuck) is not left alone.

use crate::MAX_BACKOFF;
use crate::worker::{
    Formed, IdlePause, Kept, WorkerConfig, WorkerStats, fanned_out, fill_then_propose,
    form_in_parts, forms_in_parts, publish_searching, record_matches, start_sagas,
};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use mm_domain::{Match, MatchId, Pool, TicketId};
use mm_engine::Mode;
use mm_store::outage::Backoff;
use mm_store::{LockName, Store, StoreError, TokenLock};
use mm_telemetry::names;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Most tickets a leader claims in one script: new arrivals come in steps of
/// this many, so no one script holds Redis for long. Redis spends about a tenth
/// less per drained ticket with steps of 500 than of 2,000 (fewer calls of 250 cost
/// more again; see BENCHMARKS.md, "Smaller commit steps for leaders").
pub const CLAIM_STEP: usize = 500;

/// A leader commits (and fans out) its matches in steps of about this many
/// players: matches join a step until it holds this many or more (a match
/// bigger than that is a step of its own). About a claim worker's batch: Redis
/// spends about an eighth less per ticket on steps this size than on steps of 250
/// matches (2,000 players; the script's own work, not its commands, grows with
/// its size), and the leader holds less (see BENCHMARKS.md, "Smaller commit
/// steps for leaders").
pub const COMMIT_STEP_PLAYERS: usize = 100;

/// Claims a leader has in flight at once while a backlog lasts.
const CLAIMS_IN_FLIGHT: usize = 3;

/// Commit steps a leader has in flight at once.
const STEPS_IN_FLIGHT: usize = 6;

/// The pools this worker leads right now (their names); the plain heartbeat
/// leaves them to the leader's fenced one.
pub type Led = Arc<Mutex<HashSet<String>>>;

/// The worker whose pool `pool` is among `workers`: the highest rendezvous score.
pub fn owner<'a>(pool: &str, workers: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    workers.into_iter().max_by_key(|w| (score(w, pool), *w))
}

/// A stable hash of (worker, pool): FNV-1a, then a 64-bit finalizer so that
/// similar names spread.
fn score(worker: &str, pool: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64;
    for b in worker.bytes().chain([0xff]).chain(pool.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// What a leader holds: its fencing token and the pool's tickets (with what
/// the rules read of them).
struct Leadership {
    fence: u64,
    tickets: Kept,
}

/// Why a leader stopped leading.
enum Lost {
    /// Its lock expired or was taken: a later leader may already write.
    Fenced,
    /// It handed the pool to its owner.
    HandedOver,
}

/// Leads `pool` whenever this worker should, until `shutdown`; then hands it back.
pub async fn lead_pool(
    store: Arc<dyn Store>,
    cfg: Arc<WorkerConfig>,
    stats: Arc<WorkerStats>,
    pool: Pool,
    led: Led,
    mut wakes: tokio::sync::watch::Receiver<u64>,
    shutdown: CancellationToken,
) {
    let name = pool.name();
    let lock = TokenLock::held_by(LockName::pool_leader(&pool), cfg.lease, &cfg.id);
    let mut leading: Option<Leadership> = None;
    let mut next_look = Instant::now();
    // When this worker last saw the pool led by someone or took it; a lock free
    // for a whole lease after that is taken even by a worker that is not the owner.
    let mut not_owner_since = Instant::now();
    let mut pause = IdlePause::new(cfg.poll);
    let mut backoff = Backoff::new(cfg.poll, MAX_BACKOFF);
    while !shutdown.is_cancelled() {
        wakes.borrow_and_update();
        let mut failed = false;
        if Instant::now() >= next_look {
            next_look = Instant::now() + cfg.heartbeat;
            let looked = match leading.as_mut() {
                Some(l) => keep(&*store, &cfg, &pool, &lock, l).await.map(|kept| {
                    if let Some(why) = kept {
                        step_down(&led, &name, &mut leading, why);
                        not_owner_since = Instant::now();
                    }
                }),
                None => take(&*store, &cfg, &pool, &lock, not_owner_since)
                    .await
                    .map(|took| match took {
                        Take::Took(fence) => {
                            tracing::info!(pool = %name, worker = %cfg.id, fence, "leading the pool");
                            led.lock().unwrap_or_else(|p| p.into_inner()).insert(name.clone());
                            metrics::gauge!(names::POOLS_LED, "pool" => name.clone()).set(1.0);
                            leading = Some(Leadership {
                                fence,
                                tickets: Kept::default(),
                            });
                        }
                        Take::Someone => not_owner_since = Instant::now(),
                        Take::NotYet => {}
                    }),
            };
            if let Err(e) = looked {
                if matches!(e, StoreError::Fenced(_)) {
                    step_down(&led, &name, &mut leading, Lost::Fenced);
                } else {
                    warn_store!(e, pool = %name, "pool leadership check failed");
                    failed = true;
                }
            }
        }
        let mut formed = 0;
        if let Some(l) = leading.as_mut() {
            match cycle(&*store, &cfg, &stats, &pool, l).await {
                Ok(done) => {
                    formed = done.matches.len();
                    start_sagas(&store, &pool, done.matches);
                }
                Err(StoreError::Fenced(why)) => {
                    tracing::warn!(pool = %name, %why, "fenced off: another worker leads the pool now");
                    step_down(&led, &name, &mut leading, Lost::Fenced);
                }
                Err(e) => {
                    stats.errors.fetch_add(1, Ordering::Relaxed);
                    warn_store!(e, pool = %name, "leader cycle failed");
                    failed = true;
                }
            }
        }
        let passed = Instant::now();
        let wait = if failed {
            backoff.failed()
        } else {
            backoff.reset();
            pause
                .after_pass(formed)
                .unwrap_or(Duration::ZERO)
                .min(next_look.saturating_duration_since(Instant::now()))
        };
        if wait.is_zero() {
            tokio::task::yield_now().await;
            continue;
        }
        let woken = async {
            if wakes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            _ = shutdown.cancelled() => {}
            _ = tokio::time::sleep(wait) => {}
            _ = woken, if !failed && leading.is_some() => {
                let gather = pause.woken(passed.elapsed());
                tokio::select! {
                    _ = shutdown.cancelled() => {}
                    _ = tokio::time::sleep(gather) => {}
                }
            }
        }
    }
    // No longer a candidate: the next owner is chosen without this worker.
    if let Err(e) = store.candidates(&cfg.id, &pool, Duration::ZERO).await {
        warn_store!(e, pool = %name, "could not withdraw from leading the pool; it expires");
    }
    if let Some(l) = leading.take() {
        hand_over(&*store, &cfg, &pool, &lock, &l).await;
        step_down(&led, &name, &mut None, Lost::HandedOver);
    }
}

fn step_down(led: &Led, name: &str, leading: &mut Option<Leadership>, why: Lost) {
    *leading = None;
    led.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
    metrics::gauge!(names::POOLS_LED, "pool" => name.to_string()).set(0.0);
    match why {
        Lost::Fenced => tracing::warn!(pool = %name, "lost the pool's leadership"),
        Lost::HandedOver => tracing::info!(pool = %name, "handed the pool over"),
    }
}

/// What a look for a pool without this worker as leader found.
enum Take {
    /// Took the lock: this fencing token.
    Took(u64),
    /// Someone else owns or leads it.
    Someone,
    /// Not the owner, and the lock has not been free long enough to take anyway.
    NotYet,
}

async fn take(
    store: &dyn Store,
    cfg: &WorkerConfig,
    pool: &Pool,
    lock: &TokenLock,
    not_owner_since: Instant,
) -> Result<Take, StoreError> {
    let live = store.candidates(&cfg.id, pool, cfg.lease).await?;
    let owner = owner(
        &pool.name(),
        live.iter().map(String::as_str).chain([cfg.id.as_str()]),
    );
    let owns = owner == Some(cfg.id.as_str());
    if !owns && not_owner_since.elapsed() < cfg.lease {
        return Ok(Take::NotYet);
    }
    let Some(fence) = lock.acquire(store).await? else {
        return Ok(Take::Someone);
    };
    // The new leader starts from what is in the store: the previous leader's
    // tickets back in the queue, then claimed with the rest by the first cycle.
    match store.adopt(&cfg.id, pool, fence).await {
        Ok(n) => {
            if n > 0 {
                tracing::info!(pool = %pool.name(), tickets = n, "took over the previous leader's tickets");
            }
            Ok(Take::Took(fence))
        }
        Err(e) => {
            let _ = lock.release(store).await;
            Err(e)
        }
    }
}

/// A leader's look: extends its lock and lease, forgets tickets that ended, and
/// hands the pool over if another live worker owns it now.
async fn keep(
    store: &dyn Store,
    cfg: &WorkerConfig,
    pool: &Pool,
    lock: &TokenLock,
    l: &mut Leadership,
) -> Result<Option<Lost>, StoreError> {
    if !lock.extend(store).await? {
        return Ok(Some(Lost::Fenced));
    }
    store
        .lead_heartbeat(&cfg.id, pool, l.fence, cfg.lease)
        .await?;
    let ids = l.tickets.ids();
    let gone = store.lead_prune(&cfg.id, pool, l.fence, &ids).await?;
    forget(l, &gone);
    let missed = store
        .lead_recount(&cfg.id, pool, l.fence, l.tickets.len())
        .await?;
    if missed > 0 {
        tracing::warn!(
            pool = %pool.name(),
            missed,
            "tickets were queued without reaching the leader (a process of an older release?); reading the whole queue again"
        );
    }
    let live = store.candidates(&cfg.id, pool, cfg.lease).await?;
    let owner = owner(
        &pool.name(),
        live.iter().map(String::as_str).chain([cfg.id.as_str()]),
    );
    if owner != Some(cfg.id.as_str()) {
        hand_over(store, cfg, pool, lock, l).await;
        return Ok(Some(Lost::HandedOver));
    }
    Ok(None)
}

/// Gives the pool back: its tickets to the queue, the lock freed.
async fn hand_over(
    store: &dyn Store,
    cfg: &WorkerConfig,
    pool: &Pool,
    lock: &TokenLock,
    l: &Leadership,
) {
    match store.lead_release(&cfg.id, pool, l.fence, None).await {
        Ok(n) => tracing::info!(pool = %pool.name(), released = n, "leader released the pool"),
        Err(e) => {
            warn_store!(e, pool = %pool.name(), "leader could not release the pool; the next leader adopts it")
        }
    }
    if let Err(e) = lock.release(store).await {
        warn_store!(e, pool = %pool.name(), "could not free the pool's lock; it expires");
    }
}

fn forget(l: &mut Leadership, gone: &[TicketId]) {
    if gone.is_empty() {
        return;
    }
    let gone: HashSet<&TicketId> = gone.iter().collect();
    l.tickets.retain(|c| !gone.contains(&c.ticket.id));
}

/// One leader cycle: claim the new arrivals, form matches over the whole pool,
/// commit them, fan them out.
async fn cycle(
    store: &dyn Store,
    cfg: &WorkerConfig,
    stats: &WorkerStats,
    pool: &Pool,
    l: &mut Leadership,
) -> Result<Formed, StoreError> {
    let Some(mode) = cfg.modes.get(&pool.mode) else {
        tracing::warn!(pool = %pool.name(), "pool of an unknown mode; skipped");
        return Ok(Formed::default());
    };
    let started = Instant::now();
    let first = claim_arrivals(store, cfg, stats, pool, mode, l).await?;
    let formed = form_and_commit(store, cfg, stats, pool, mode, l, &first, started).await;
    // The first claimed tickets not told with a match hear now.
    if !first.is_empty() {
        let waiting = l.tickets.from(0).iter();
        publish_searching(store, waiting.filter(|c| first.contains(&c.ticket.id))).await;
    }
    formed
}

/// The rest of a [`cycle`] once its arrivals are claimed: forms matches over
/// the whole pool, commits them and fans them out. The players of a ticket in
/// `first` (claimed for the first time by this cycle) whose match commits
/// hear `ticket.searching` just before it, with it.
#[allow(clippy::too_many_arguments)]
async fn form_and_commit(
    store: &dyn Store,
    cfg: &WorkerConfig,
    stats: &WorkerStats,
    pool: &Pool,
    mode: &Mode,
    l: &mut Leadership,
    first: &HashSet<TicketId>,
    started: Instant,
) -> Result<Formed, StoreError> {
    if l.tickets.is_empty() {
        return Ok(Formed::default());
    }
    let fence = l.fence;
    let (tickets, reading) = l.tickets.reading(mode);
    // A big backlog forms in the background, part by part, and its first
    // parts commit while the rest form (see `worker::forming`).
    let steps: BoxStream<'_, Vec<Match>> = if forms_in_parts(cfg, mode, tickets.len()) {
        stall_before_commit(None).await;
        form_in_parts(tickets, pool, mode, &reading)
            .flat_map(|matches| futures_util::stream::iter(commit_steps(matches)))
            .boxed()
    } else {
        let matches = fill_then_propose(store, cfg, tickets, pool, mode, reading).await;
        if matches.is_empty() {
            return Ok(Formed::default());
        }
        stall_before_commit(Some(matches.len())).await;
        futures_util::stream::iter(commit_steps(matches)).boxed()
    };
    // A whole pool's matches commit in steps, so no script holds Redis long and
    // no request holds them all in memory; each step's matches are fanned out
    // (settled, their players told) as soon as that step commits, so the first
    // players of a big pool hear of their match after one step, not after all.
    // A few steps are in flight at once (they hold other tickets and players),
    // so Redis works on one while the next is encoded and sent.
    let mut committed_at = None;
    let mut done: Vec<Match> = Vec::new();
    let mut aborted: Vec<Match> = Vec::new();
    let mut fanned = Ok(());
    let mut failed = None;
    let mut results = steps
        .map(|step| async move {
            let committed = store
                .lead_complete(&cfg.id, pool, fence, &step, cfg.lease)
                .await;
            let ids: HashSet<MatchId> = match committed {
                Ok(ids) => ids.into_iter().collect(),
                Err(e) => return (Err(e), step, Vec::new(), Ok(())),
            };
            let at = (!ids.is_empty()).then(Instant::now);
            let (ok, lost): (Vec<_>, Vec<_>) = step.into_iter().partition(|m| ids.contains(&m.id));
            let told = store.fan_out_first(pool, &ok, first).await;
            (Ok(at), ok, lost, told)
        })
        .buffered(STEPS_IN_FLIGHT);
    while let Some((committed, ok, lost, told)) = results.next().await {
        match committed {
            Ok(at) => {
                if let Some(at) = at {
                    committed_at.get_or_insert(at);
                }
                done.extend(ok);
                aborted.extend(lost);
                fanned = fanned.and(told);
            }
            // Every step in flight still finishes (a dropped request may have
            // committed anyway); the first failure is the cycle's.
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    drop(results);
    if let Some(e) = failed {
        // What committed stays committed: the supervisor fans out what this
        // cycle could not, and the next cycle forgets the matched tickets.
        l.tickets.retain(|c| {
            !done
                .iter()
                .any(|m| m.tickets.iter().any(|t| t.ticket_id == c.ticket.id))
        });
        return Err(e);
    }
    let matched: HashSet<&TicketId> = done
        .iter()
        .flat_map(|m| m.tickets.iter().map(|t| &t.ticket_id))
        .collect();
    let n_matched = matched.len();
    l.tickets.retain(|c| !matched.contains(&c.ticket.id));
    // An aborted match had a ticket that ended meanwhile (or a player taken
    // elsewhere): drop what ended, keep the rest for the next cycle.
    let suspects: Vec<TicketId> = aborted
        .iter()
        .flat_map(|m| m.tickets.iter().map(|t| t.ticket_id.clone()))
        .collect();
    if !suspects.is_empty() {
        let gone = store.lead_prune(&cfg.id, pool, l.fence, &suspects).await?;
        forget(l, &gone);
    }
    record_matches(&done);
    metrics::histogram!(names::WORKER_CYCLE).record(started.elapsed().as_secs_f64());
    stats
        .matched_tickets
        .fetch_add(n_matched as u64, Ordering::Relaxed);
    stats
        .matches
        .fetch_add(done.len() as u64, Ordering::Relaxed);
    Ok(fanned_out(fanned, committed_at, done))
}

/// Claims what arrived since the last cycle, in steps of [`CLAIM_STEP`]: one
/// claim first (a steady pool's arrivals fit in it), then, while claims come
/// back full, [`CLAIMS_IN_FLIGHT`] at a time, each answered one replaced at
/// once, so a backlog's claims keep Redis busy instead of waiting on each
/// reply in turn. Each step is read for `mode`'s rules as it comes in, while
/// Redis works on the next ones (a backlog's 50,000 tickets cost the cycle
/// about 40 ms to read once all were in). Returns the tickets claimed for the
/// first time: their players hear `ticket.searching` with their match, or
/// after the cycle (see [`cycle`]), so that telling 50,000 players of a
/// backlog does not hold its first commit back. If a claim fails, they hear
/// it at once.
async fn claim_arrivals(
    store: &dyn Store,
    cfg: &WorkerConfig,
    stats: &WorkerStats,
    pool: &Pool,
    mode: &Mode,
    l: &mut Leadership,
) -> Result<HashSet<TicketId>, StoreError> {
    let fence = l.fence;
    let claim = || store.lead_claim(&cfg.id, pool, fence, CLAIM_STEP, cfg.lease);
    let held = l.tickets.len();
    let first = claim().await?;
    let full = first.len() == CLAIM_STEP;
    let mut failed = None;
    if full {
        let mut in_flight: futures_util::stream::FuturesUnordered<_> =
            (0..CLAIMS_IN_FLIGHT).map(|_| claim()).collect();
        // The first step is read once the claims after it are sent (they are
        // sent when first waited for), and before the steps they bring.
        let mut first = Some(first);
        let mut more = true;
        // Every claim sent is waited for: one that succeeded holds its tickets
        // now, whatever the others did.
        while let Some(answer) = in_flight.next().await {
            match answer {
                Ok(step) => {
                    if step.len() < CLAIM_STEP {
                        more = false;
                    }
                    if more {
                        in_flight.push(claim());
                    }
                    if let Some(first) = first.take() {
                        l.tickets.extend_read(first, mode);
                    }
                    l.tickets.extend_read(step, mode);
                }
                Err(e) => {
                    more = false;
                    failed.get_or_insert(e);
                }
            }
        }
        if let Some(first) = first.take() {
            l.tickets.extend_read(first, mode);
        }
    } else {
        l.tickets.extend(first);
    }
    let claimed = l.tickets.from(held);
    let n = claimed.len();
    if n > 0 {
        stats.claimed.fetch_add(n as u64, Ordering::Relaxed);
        metrics::counter!(names::TICKETS_CLAIMED, "pool" => pool.name()).increment(n as u64);
    }
    if let Some(e) = failed {
        publish_searching(store, claimed).await;
        return Err(e);
    }
    Ok(claimed
        .iter()
        .filter(|c| c.first_claim)
        .map(|c| c.ticket.id.clone())
        .collect())
}

/// `matches` in commit steps of about [`COMMIT_STEP_PLAYERS`] players each, in
/// order.
fn commit_steps(matches: Vec<Match>) -> Vec<Vec<Match>> {
    let mut steps = Vec::new();
    let mut step = Vec::new();
    let mut players = 0;
    for m in matches {
        players += m.player_count();
        step.push(m);
        if players >= COMMIT_STEP_PLAYERS {
            steps.push(std::mem::take(&mut step));
            players = 0;
        }
    }
    if !step.is_empty() {
        steps.push(step);
    }
    steps
}

/// Waits half a second before a cycle's first commit under the failpoint
/// below (`matches`: how many are about to commit, if known yet).
async fn stall_before_commit(matches: Option<usize>) {
    if failpoint_stall_before_commit() {
        tracing::warn!(
            ?matches,
            "failpoint leader-stall-before-commit: stalling before the commit"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `MATCHMAKER_FAILPOINT=leader-stall-before-commit` (tests): the first cycle
/// with matches to commit (or, for a pool formed part by part, the first whose
/// forming starts) waits half a second before its first commit, long enough
/// for a test to freeze the process there (a leader paused mid-write, seed
/// 004's case).
fn failpoint_stall_before_commit() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    static FIRED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    *ON.get_or_init(|| {
        std::env::var("MATCHMAKER_FAILPOINT").is_ok_and(|v| v == "leader-stall-before-commit")
    }) && !FIRED.swap(true, Ordering::Relaxed)
}

/// How many of `pools` each of `workers` would own (for the docs and tests).
pub fn spread<'a>(pools: &[String], workers: &[&'a str]) -> HashMap<&'a str, usize> {
    let mut n: HashMap<&str, usize> = workers.iter().map(|w| (*w, 0)).collect();
    for p in pools {
        if let Some(w) = owner(p, workers.iter().copied()) {
            *n.entry(w).or_default() += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A match of `players` solo tickets.
    fn a_match(id: usize, players: usize) -> Match {
        Match {
            id: MatchId::new(format!("m-{id}")).unwrap(),
            mode: "ffa".into(),
            region: "eu".into(),
            tickets: (0..players)
                .map(|p| mm_domain::MatchTicket {
                    ticket_id: TicketId::new(format!("t-{id}-{p}")).unwrap(),
                    players: vec![mm_domain::PlayerId::new(format!("p-{id}-{p}")).unwrap()],
                    rating: 1500.0,
                    enqueued_at: 0,
                    team: p,
                    skills: Vec::new(),
                    attributes: Default::default(),
                    player_attributes: Vec::new(),
                })
                .collect(),
            created_at: 0,
            lifecycle: Default::default(),
            decided: Default::default(),
        }
    }

    #[test]
    fn commit_steps_hold_about_a_claim_batch_of_players_in_order() {
        // Eight-player matches: 13 to a step (104 players), the rest last.
        let steps = commit_steps((0..30).map(|i| a_match(i, 8)).collect());
        let sizes: Vec<usize> = steps.iter().map(Vec::len).collect();
        assert_eq!(sizes, [13, 13, 4]);
        let ids: Vec<String> = steps.iter().flatten().map(|m| m.id.to_string()).collect();
        let want: Vec<String> = (0..30).map(|i| format!("m-{i}")).collect();
        assert_eq!(ids, want, "every match once, in order");
        // A match bigger than a step is a step of its own.
        let steps = commit_steps(vec![a_match(0, 150), a_match(1, 2), a_match(2, 100)]);
        let sizes: Vec<usize> = steps.iter().map(Vec::len).collect();
        assert_eq!(sizes, [1, 2]);
        assert!(commit_steps(Vec::new()).is_empty());
    }

    fn pools(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("mode{}:region{}", i % 7, i))
            .collect()
    }

    #[test]
    fn pools_spread_over_workers_and_only_a_leavers_pools_move() {
        let pools = pools(300);
        let workers = ["w-a", "w-b", "w-c"];
        let n = spread(&pools, &workers);
        for w in workers {
            assert!((70..=130).contains(&n[w]), "{w} owns {} of 300", n[w]);
        }
        // w-c leaves: its pools move, nobody else's do.
        for p in &pools {
            let before = owner(p, workers).unwrap();
            let after = owner(p, ["w-a", "w-b"]).unwrap();
            if before != "w-c" {
                assert_eq!(before, after, "{p} moved though its owner stayed");
            }
        }
        // A fourth worker takes about a quarter, each from its previous owner.
        let four = ["w-a", "w-b", "w-c", "w-d"];
        let moved = pools
            .iter()
            .filter(|p| owner(p, workers) != owner(p, four))
            .inspect(|p| assert_eq!(owner(p, four), Some("w-d")))
            .count();
        assert!((45..=105).contains(&moved), "{moved} of 300 moved to w-d");
    }

    #[test]
    fn the_owner_does_not_depend_on_the_order_workers_are_listed() {
        let one = owner("5v5:eu", ["a", "b", "c"]);
        let two = owner("5v5:eu", ["c", "a", "b"]);
        assert_eq!(one, two);
        assert_eq!(owner("5v5:eu", []), None);
    }
}
