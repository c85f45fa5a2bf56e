//! The live operator dashboard the ingress serves at `/dashboard`: one page (HTML,
//! CSS and script embedded in the binary, no CDN) fed by server-sent events.
//!
//! - `GET /dashboard`: the page;
//! - `GET /dashboard/snapshot`: the figures now, as JSON;
//! - `GET /dashboard/events`: a `snapshot` event every [`INTERVAL`].
//!
//! The figures come from the shared store, so any ingress shows the whole
//! deployment: per pool the tickets waiting and held and the oldest wait, and from
//! its recent matches the matches per second, their times to match and rating
//! spreads, and their teams; per region the live game servers and free slots.
//! Streams are capped at [`MAX_STREAMS`] at once; they share one snapshot per
//! tick, so the store is read once a tick however many dashboards are open.

mod snapshot;

pub use snapshot::{PoolView, RecentMatch, Snapshot, snapshot};

use crate::ingress::error::ApiError;
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mm_domain::Pool;
use mm_store::Store;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// How often a stream sends a new snapshot.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// Event streams open at once; more are refused with 503.
pub const MAX_STREAMS: usize = 32;

const PAGE: &str = include_str!("page.html");

/// A snapshot and when it was taken.
type Taken = (Instant, Arc<Snapshot>);

#[derive(Clone)]
struct Dashboard {
    store: Arc<dyn Store>,
    pools: Arc<Vec<Pool>>,
    streams: Arc<Semaphore>,
    /// The latest snapshot and when it was taken, for every stream of this tick.
    latest: Arc<tokio::sync::Mutex<Option<Taken>>>,
}

impl Dashboard {
    /// The figures now: the snapshot another caller took less than half a tick
    /// ago, or a new one.
    async fn snapshot(&self) -> Result<Arc<Snapshot>, ApiError> {
        let mut latest = self.latest.lock().await;
        if let Some((at, s)) = &*latest
            && at.elapsed() < INTERVAL / 2
        {
            return Ok(s.clone());
        }
        match snapshot(&*self.store, &self.pools).await {
            Ok(s) => {
                let s = Arc::new(s);
                *latest = Some((Instant::now(), s.clone()));
                Ok(s)
            }
            Err(e) => {
                warn_store!(e, "dashboard snapshot failed");
                Err(ApiError::unavailable_as(
                    "dashboard_unavailable",
                    "the matchmaking store is unavailable; retry shortly",
                ))
            }
        }
    }
}

/// The dashboard's routes over `store`, for `pools`.
pub fn router(store: Arc<dyn Store>, pools: Vec<Pool>) -> Router {
    let state = Dashboard {
        store,
        pools: Arc::new(pools),
        streams: Arc::new(Semaphore::new(MAX_STREAMS)),
        latest: Default::default(),
    };
    Router::new()
        .route("/dashboard", get(page))
        .route("/dashboard/snapshot", get(current))
        .route("/dashboard/events", get(events))
        .with_state(state)
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
        .into_response()
}

async fn current(State(d): State<Dashboard>) -> Response {
    match d.snapshot().await {
        Ok(s) => axum::Json(&*s).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn events(State(d): State<Dashboard>) -> Response {
    let Ok(permit) = d.streams.clone().try_acquire_owned() else {
        return ApiError::unavailable_as(
            "dashboard_unavailable",
            "too many dashboards open; retry later",
        )
        .into_response();
    };
    let stream = futures_util::stream::unfold((d, permit, true), |(d, permit, first)| async move {
        if !first {
            tokio::time::sleep(INTERVAL).await;
        }
        let event = match d.snapshot().await {
            Ok(s) => Event::default()
                .event("snapshot")
                .json_data(&*s)
                .unwrap_or_else(|_| Event::default().event("error").data("encoding")),
            Err(_) => Event::default().event("error").data("store unavailable"),
        };
        Some((Ok::<_, Infallible>(event), (d, permit, false)))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
