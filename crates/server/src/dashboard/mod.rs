//! The live operator dashboard on the operator plane ([`crate::ops`], which
//! admits operators before these handlers run): one page (HTML, CSS and script
//! embedded in the binary, no CDN) fed by server-sent events.
//!
//! - `GET /dashboard`: the page;
//! - `GET /dashboard/snapshot`: the figures now, as JSON;
//! - `GET /dashboard/events`: a `snapshot` event every [`INTERVAL`].
//!
//! The figures come from the shared store, so any ingress shows the whole
//! deployment: per pool the tickets waiting and held and the oldest wait, and from
//! its recent matches the matches per second, their times to match and rating
//! spreads, and their teams; per region the live game servers and free slots.
//! Streams are capped per address, per operator and in all
//! ([`crate::ops::limits::Streams`], 429 beyond); they share one snapshot per
//! tick, so the store is read once a tick however many dashboards are open.

mod snapshot;

pub use snapshot::{PoolView, RecentMatch, Snapshot, snapshot};

use crate::ingress::Code;
use crate::ingress::error::ApiError;
use crate::ops::Admitted;
use crate::ops::limits::{STREAM_RETRY, Streams};
use axum::Router;
use axum::extract::{Extension, State};
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mm_domain::Pool;
use mm_store::Store;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The pools a dashboard shows, each with whether it is closed (its mode or
/// its region: it takes no new ticket).
pub type Shown = Vec<(Pool, bool)>;

/// How often a stream sends a new snapshot.
pub const INTERVAL: Duration = Duration::from_secs(1);

const PAGE: &str = include_str!("page.html");

/// A snapshot and when it was taken.
type Taken = (Instant, Arc<Snapshot>);

#[derive(Clone)]
struct Dashboard {
    store: Arc<dyn Store>,
    /// Each pool shown, and whether it is closed.
    pools: Arc<Shown>,
    streams: Streams,
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
                    Code::DASHBOARD_UNAVAILABLE,
                    "the matchmaking store is unavailable; retry shortly",
                ))
            }
        }
    }
}

/// The dashboard's routes over `store`, for `pools` (each with whether it is
/// closed), its event streams counted
/// in `streams`. Mount them behind [`crate::ops`]'s gate, which admits the
/// caller.
pub fn router(store: Arc<dyn Store>, pools: Shown, streams: Streams) -> Router {
    let state = Dashboard {
        store,
        pools: Arc::new(pools),
        streams,
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

async fn events(State(d): State<Dashboard>, Extension(who): Extension<Admitted>) -> Response {
    let permit = match d.streams.open(who.ip, &who.operator) {
        Ok(p) => p,
        Err(scope) => {
            return ApiError::new(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                Code::TOO_MANY_STREAMS,
                format!(
                    "too many dashboards open (per {}); close one or retry later",
                    scope.name()
                ),
            )
            .with("scope", scope.name())
            .retry_after(STREAM_RETRY.as_secs())
            .into_response();
        }
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
