//! The dashboard's figures at one moment, read from the store: what the page
//! draws, and what `/dashboard/snapshot` answers.

use futures_util::future::try_join_all;
use mm_domain::{Match, Millis, Pool, now_ms};
use mm_store::{RECENT_MATCHES, RegionCensus, Store, StoreError};
use serde::Serialize;

/// Upper bounds (seconds) of the time-to-match buckets; a last bucket takes the rest.
pub const WAIT_BUCKETS: [f64; 6] = [5.0, 15.0, 30.0, 60.0, 120.0, 300.0];
/// Recent matches listed per pool.
const LISTED: usize = 5;
/// Matches per second are counted over this window.
const RATE_WINDOW_MS: Millis = 60_000;

#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    /// When it was taken (ms since the epoch).
    pub at: Millis,
    pub totals: Totals,
    pub pools: Vec<PoolView>,
    pub regions: Vec<RegionCensus>,
    /// The newest matches of every pool, newest first.
    pub recent: Vec<RecentMatch>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub waiting: u64,
    pub held: u64,
    pub matches_per_second: f64,
    pub game_servers: u64,
    pub free_slots: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PoolView {
    pub pool: String,
    pub mode: String,
    pub region: String,
    /// Tickets not matched yet: in the queue or held by a worker.
    pub waiting: u64,
    /// Of those, the tickets a worker holds: a claim batch being matched, or
    /// (`COORDINATION=leader`) every ticket of the pool its leader has taken in.
    pub held: u64,
    /// How long the longest-waiting ticket has waited (s); 0 when none waits.
    pub oldest_wait_s: f64,
    /// Matches formed per second over the last minute (from the recent matches).
    pub matches_per_second: f64,
    /// Times to match of the recent matches' tickets, counted per
    /// [`WAIT_BUCKETS`] bucket (one more for the rest).
    pub wait_histogram: Vec<u64>,
    /// Median rating spread (highest minus lowest) of the recent matches.
    pub spread_median: Option<f64>,
    /// How many recent matches the figures above come from.
    pub sampled_matches: usize,
    /// Workers holding a live lease on the pool (claim workers and its
    /// leader): none while tickets wait means nothing matches them.
    pub workers: u64,
    /// Its mode or its region is closed: it takes no new ticket, forms no
    /// match, and what waits in it is ended or moved by the supervisor.
    pub closed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecentMatch {
    pub id: String,
    pub pool: String,
    pub created_at: Millis,
    /// Players by team, each with the rating they were matched on.
    pub teams: Vec<Vec<(String, f64)>>,
    pub spread: f64,
    /// The longest time to match among its tickets (s).
    pub wait_s: f64,
}

fn spread(m: &Match) -> f64 {
    let ratings = m.tickets.iter().map(|t| t.rating);
    let hi = ratings.clone().fold(f64::MIN, f64::max);
    let lo = ratings.fold(f64::MAX, f64::min);
    if m.tickets.is_empty() { 0.0 } else { hi - lo }
}

fn recent(pool: &Pool, m: &Match) -> RecentMatch {
    let teams = m.tickets.iter().map(|t| t.team).max().map_or(0, |t| t + 1);
    RecentMatch {
        id: m.id.to_string(),
        pool: pool.name(),
        created_at: m.created_at,
        teams: (0..teams)
            .map(|team| {
                m.tickets
                    .iter()
                    .filter(|t| t.team == team)
                    .flat_map(|t| t.players.iter().map(|p| (p.to_string(), t.rating)))
                    .collect()
            })
            .collect(),
        spread: spread(m),
        wait_s: m
            .tickets
            .iter()
            .map(|t| m.created_at.saturating_sub(t.enqueued_at))
            .max()
            .unwrap_or(0) as f64
            / 1000.0,
    }
}

fn pool_view(
    pool: &Pool,
    depths: &mm_store::Depths,
    matches: &[Match],
    workers: u64,
    closed: bool,
    now: Millis,
) -> PoolView {
    let mut histogram = vec![0u64; WAIT_BUCKETS.len() + 1];
    for m in matches {
        for t in &m.tickets {
            let wait = m.created_at.saturating_sub(t.enqueued_at) as f64 / 1000.0;
            let bucket = WAIT_BUCKETS
                .iter()
                .position(|&le| wait <= le)
                .unwrap_or(WAIT_BUCKETS.len());
            histogram[bucket] += 1;
        }
    }
    let mut spreads: Vec<f64> = matches.iter().map(spread).collect();
    spreads.sort_by(f64::total_cmp);
    let in_window = matches
        .iter()
        .filter(|m| now.saturating_sub(m.created_at) <= RATE_WINDOW_MS)
        .count();
    PoolView {
        pool: pool.name(),
        mode: pool.mode.clone(),
        region: pool.region.clone(),
        waiting: depths.queued + depths.processing,
        held: depths.processing,
        oldest_wait_s: depths
            .oldest_enqueued_at
            .map_or(0.0, |at| now.saturating_sub(at) as f64 / 1000.0),
        matches_per_second: in_window as f64 / (RATE_WINDOW_MS as f64 / 1000.0),
        wait_histogram: histogram,
        spread_median: spreads.get(spreads.len() / 2).copied(),
        sampled_matches: matches.len(),
        workers,
        closed,
    }
}

/// Reads every pool's depths and recent matches and the fleet census, concurrently.
pub async fn snapshot(store: &dyn Store, pools: &[(Pool, bool)]) -> Result<Snapshot, StoreError> {
    let per_pool = try_join_all(pools.iter().map(|(p, closed)| async move {
        let (depths, matches, workers) = tokio::try_join!(
            store.depths(p),
            store.recent_matches(p, RECENT_MATCHES),
            store.live_workers(p)
        )?;
        Ok::<_, StoreError>((p, *closed, depths, matches, workers))
    }));
    let (per_pool, regions) = tokio::try_join!(per_pool, store.census())?;
    let now = now_ms();
    let mut views = Vec::with_capacity(per_pool.len());
    let mut recents = Vec::new();
    for (pool, closed, depths, matches, workers) in &per_pool {
        views.push(pool_view(pool, depths, matches, *workers, *closed, now));
        recents.extend(matches.iter().take(LISTED).map(|m| recent(pool, m)));
    }
    recents.sort_by_key(|m| std::cmp::Reverse(m.created_at));
    recents.truncate(LISTED * 2);
    let totals = Totals {
        waiting: views.iter().map(|v| v.waiting).sum(),
        held: views.iter().map(|v| v.held).sum(),
        matches_per_second: views.iter().map(|v| v.matches_per_second).sum(),
        game_servers: regions.iter().map(|r| r.servers).sum(),
        free_slots: regions.iter().map(|r| r.free_slots).sum(),
    };
    Ok(Snapshot {
        at: now,
        totals,
        pools: views,
        regions,
        recent: recents,
    })
}
