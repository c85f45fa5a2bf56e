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
//! Streams are capped at [`MAX_STREAMS`] at once, each reading the store once per
//! tick.

mod snapshot;

pub use snapshot::{PoolView, RecentMatch, Snapshot, snapshot};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mm_domain::Pool;
use mm_store::Store;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// How often a stream sends a new snapshot.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// Event streams open at once; more are refused with 503.
pub const MAX_STREAMS: usize = 32;

const PAGE: &str = include_str!("page.html");

#[derive(Clone)]
struct Dashboard {
    store: Arc<dyn Store>,
    pools: Arc<Vec<Pool>>,
    streams: Arc<Semaphore>,
}

/// The dashboard's routes over `store`, for `pools`.
pub fn router(store: Arc<dyn Store>, pools: Vec<Pool>) -> Router {
    let state = Dashboard {
        store,
        pools: Arc::new(pools),
        streams: Arc::new(Semaphore::new(MAX_STREAMS)),
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

fn unavailable(message: &str) -> Response {
    let body = serde_json::json!({"error": {"code": "dashboard_unavailable", "message": message}});
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "1")],
        axum::Json(body),
    )
        .into_response()
}

async fn current(State(d): State<Dashboard>) -> Response {
    match snapshot(&*d.store, &d.pools).await {
        Ok(s) => axum::Json(s).into_response(),
        Err(e) => {
            warn_store!(e, "dashboard snapshot failed");
            unavailable("the matchmaking store is unavailable; retry shortly")
        }
    }
}

async fn events(State(d): State<Dashboard>) -> Response {
    let Ok(permit) = d.streams.clone().try_acquire_owned() else {
        return unavailable("too many dashboards open; retry later");
    };
    let stream = futures_util::stream::unfold((d, permit, true), |(d, permit, first)| async move {
        if !first {
            tokio::time::sleep(INTERVAL).await;
        }
        let event = match snapshot(&*d.store, &d.pools).await {
            Ok(s) => Event::default()
                .event("snapshot")
                .json_data(&s)
                .unwrap_or_else(|_| Event::default().event("error").data("encoding")),
            Err(e) => {
                warn_store!(e, "dashboard snapshot failed");
                Event::default().event("error").data("store unavailable")
            }
        };
        Some((Ok::<_, Infallible>(event), (d, permit, false)))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
