//! Wait estimates and queue statistics players can see (issue 35).
//!
//! - `GET /v1/tickets/{id}` carries `estimated_wait_ms` while the ticket waits
//!   ([`estimate_for`]): the median wait of recently matched tickets of its
//!   pool close to it in rating and of its kind (solo or party), as
//!   [`mm_engine::estimate`] computes it; `null` with too little data.
//! - `GET /v1/queues/{mode}`: per region, tickets waiting, matches per minute
//!   and time to match p50/p90 over the last 5 and 15 minutes. Any
//!   authenticated player may read it.
//!
//! Both read the pool's latest matches ([`mm_store::RECENT_MATCHES`], each
//! ticket's wait being its match's creation less its enqueue time) through a
//! per-pool cache of [`CACHE_FOR`], so a busy queue costs the store one read
//! per pool every few seconds however many players ask. In a busy pool the
//! latest matches span less than 15 minutes: the figures then cover the span
//! they have (`span_s` says how long).

use super::Code;
use super::openapi::Errors;
use super::{ApiError, AppState, Player};
use axum::Json;
use axum::extract::{Path, State};
use mm_domain::{Match, Millis, Pool, TicketView, now_ms};
use mm_engine::estimate::{Sample, estimate};
use mm_store::{RECENT_MATCHES, Store, StoreError};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a pool's matches are reused before they are read again.
pub const CACHE_FOR: Duration = Duration::from_secs(3);

/// What one pool's latest matches say.
#[derive(Clone)]
struct PoolWaits {
    read_at: Instant,
    samples: Arc<Vec<Sample>>,
    /// When each of the latest matches formed.
    formed: Arc<Vec<Millis>>,
    waiting: u64,
}

/// The per-pool cache.
#[derive(Default)]
pub struct WaitStats {
    pools: Mutex<HashMap<Pool, PoolWaits>>,
}

impl WaitStats {
    async fn pool(&self, store: &dyn Store, pool: &Pool) -> Result<PoolWaits, StoreError> {
        if let Some(w) = self
            .pools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(pool)
            .filter(|w| w.read_at.elapsed() < CACHE_FOR)
        {
            return Ok(w.clone());
        }
        let (matches, depths) = tokio::try_join!(
            store.recent_matches(pool, RECENT_MATCHES),
            store.depths(pool)
        )?;
        let w = PoolWaits {
            read_at: Instant::now(),
            samples: Arc::new(samples(&matches)),
            formed: Arc::new(matches.iter().map(|m| m.created_at).collect()),
            waiting: depths.queued + depths.processing,
        };
        self.pools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(pool.clone(), w.clone());
        Ok(w)
    }
}

/// Each ticket of `matches` as a sample: when its match formed, its rating,
/// its size, its wait. Fills (players joining running matches) count too.
fn samples(matches: &[Match]) -> Vec<Sample> {
    matches
        .iter()
        .flat_map(|m| {
            m.tickets.iter().map(move |t| Sample {
                at: m.created_at,
                rating: t.rating,
                size: t.players.len(),
                wait: m.created_at.saturating_sub(t.enqueued_at),
            })
        })
        .collect()
}

/// Fills in `view.estimated_wait_ms` while the ticket waits. A store that
/// cannot be read leaves it `null`: the ticket itself was read.
pub(super) async fn estimate_for(state: &AppState, view: &mut TicketView) {
    use mm_domain::TicketStatus::{Queued, Searching};
    if !matches!(view.status, Queued | Searching) {
        return;
    }
    let pool = Pool::new(view.mode.clone(), view.region.clone());
    match state.waits.pool(&*state.store, &pool).await {
        Ok(w) => {
            view.estimated_wait_ms =
                estimate(&w.samples, view.rating, view.players.len(), now_ms());
        }
        Err(e) => tracing::debug!(error = %e, "no wait estimate: the store did not answer"),
    }
}

/// Time to match over one stretch of time.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Stretch {
    /// Matches formed per minute.
    pub matches_per_minute: f64,
    /// Time from queue to match, p50 and p90 (ms); `null` without matches.
    pub time_to_match_p50_ms: Option<Millis>,
    pub time_to_match_p90_ms: Option<Millis>,
    /// Matched tickets the figures come from.
    pub tickets: usize,
}

/// One region's queue of a mode.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RegionQueueStats {
    pub region: String,
    /// The region is closed (being retired: `CLOSED_REGIONS`): it takes no
    /// new ticket, and its waiting tickets leave it (ending `timed_out`,
    /// `region_closed`, when they wait in no open region).
    pub closed: bool,
    /// Tickets waiting now (queued or being looked at by a worker).
    pub tickets_waiting: u64,
    pub last_5m: Stretch,
    pub last_15m: Stretch,
    /// How far back the latest matches read reach (s): less than 900 in a busy
    /// pool, whose figures then cover this span.
    pub span_s: f64,
}

/// `GET /v1/queues/{mode}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct QueueStats {
    pub mode: String,
    /// The mode is closed (`closed = true` in the modes file): it takes no
    /// new ticket, and its waiting tickets end `timed_out` (`mode_closed`).
    pub closed: bool,
    pub regions: Vec<RegionQueueStats>,
}

fn stretch(w: &PoolWaits, now: Millis, window: Millis) -> Stretch {
    let from = now.saturating_sub(window);
    let formed: Vec<Millis> = w.formed.iter().copied().filter(|&t| t >= from).collect();
    // Over the window, or over the span the matches read cover when shorter.
    let oldest = w.formed.iter().copied().min().unwrap_or(now);
    let span = if w.formed.len() >= RECENT_MATCHES {
        now.saturating_sub(oldest.max(from))
    } else {
        window
    };
    let mut waits: Vec<Millis> = w
        .samples
        .iter()
        .filter(|s| s.at >= from)
        .map(|s| s.wait)
        .collect();
    waits.sort_unstable();
    let q = |p: f64| {
        (!waits.is_empty()).then(|| waits[((waits.len() - 1) as f64 * p).round() as usize])
    };
    Stretch {
        matches_per_minute: if span == 0 {
            0.0
        } else {
            formed.len() as f64 * 60_000.0 / span as f64
        },
        time_to_match_p50_ms: q(0.5),
        time_to_match_p90_ms: q(0.9),
        tickets: waits.len(),
    }
}

/// `GET /v1/queues/{mode}`.
#[utoipa::path(get, path = "/v1/queues/{mode}", operation_id = "get_queue_stats", tag = "tickets",
    params(("mode" = String, Path, description = "Mode")),
    responses((status = 200, description = "The mode's queues, per region", body = QueueStats), Errors),
    security(("bearer" = [])))]
pub async fn get_one(
    State(state): State<AppState>,
    Player(_): Player,
    Path(mode): Path<String>,
) -> Result<Json<QueueStats>, ApiError> {
    let Some(closed) = state.catalog.mode(&mode).map(|m| m.closed) else {
        return Err(ApiError::not_found(
            Code::UNKNOWN_MODE,
            format!("no mode {mode:?}"),
        ));
    };
    let now = now_ms();
    let mut regions = Vec::new();
    for region in state.catalog.regions() {
        let pool = Pool::new(mode.clone(), region.clone());
        let w = state.waits.pool(&*state.store, &pool).await?;
        let oldest = w.formed.iter().copied().min();
        regions.push(RegionQueueStats {
            region: region.clone(),
            closed: state.catalog.region_closed(region),
            tickets_waiting: w.waiting,
            last_5m: stretch(&w, now, 5 * 60_000),
            last_15m: stretch(&w, now, 15 * 60_000),
            span_s: oldest.map_or(0.0, |o| now.saturating_sub(o) as f64 / 1000.0),
        });
    }
    Ok(Json(QueueStats {
        mode,
        closed,
        regions,
    }))
}
