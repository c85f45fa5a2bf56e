//! The HTTP/JSON + WebSocket API for game clients. Stateless: everything lives in
//! the store. [`router`] builds the routes; [`serve`] runs them until shutdown and
//! then closes WebSockets with 1001 and waits for them.

mod attributes;
mod auth;
mod backfill;
mod blocks;
mod body;
mod codes;
mod cors;
pub(crate) mod error;
mod extract;
mod limits;
mod matches;
mod observe;
mod openapi;
mod parties;
mod proxies;
mod queues;
mod ratings;
mod tickets;
mod ws;

pub use auth::{ACT_FOR, Actor, Authenticator, Caller, DevTokens, Player};
pub use codes::Code;
pub use cors::{AllowedOrigins, BadOrigin};
pub use error::ApiError;
pub use limits::{Class, Limit, RateLimits};
pub use openapi::json as openapi_json;
pub use proxies::{BadNetwork, TrustedProxies};

use crate::Catalog;
use crate::ratings::Lookup;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::serve::ListenerExt;
use mm_store::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// What every handler shares: one `Arc`, so that the clone each handler and
/// middleware takes per request is one reference count (a clone of every field
/// was 3-4% of the Redis ingress's CPU at saturation).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The fields of [`AppState`].
#[derive(Clone)]
pub struct Shared {
    pub store: Arc<dyn Store>,
    pub catalog: Arc<Catalog>,
    pub auth: Arc<dyn Authenticator>,
    /// Players' ratings, read for every ticket and by the rating endpoints.
    pub ratings: Arc<Lookup>,
    /// Tickets may carry ratings from the client (off by default: the rating
    /// service's ratings are the ones matched on; for tests and imports).
    pub client_ratings: bool,
    /// The store's freshness marks cover every rated player (`serve` on the
    /// in-memory store seeds them from the rating database at start, and its
    /// consumer raises them before every commit): a player without a mark was
    /// never rated, and needs no lookup.
    pub complete_marks: bool,
    /// Leaderboard pages, read at most every `ratings::BOARD_TTL`.
    pub boards: Arc<ratings::Boards>,
    /// Each pool's latest matches, for wait estimates and queue statistics.
    pub waits: Arc<queues::WaitStats>,
    /// Calls allowed per player and per client address.
    pub limits: Arc<RateLimits>,
    /// Proxies whose forwarding headers name the client address.
    pub proxies: Arc<TrustedProxies>,
    /// Web origins that may call the API from a browser.
    pub cors: Arc<AllowedOrigins>,
    /// WebSocket tasks, so shutdown can wait for them.
    pub sockets: TaskTracker,
    /// Each player's sockets open here, noted for the modes that cancel the
    /// tickets of players who left ([`crate::offline`]).
    pub online: Arc<crate::offline::Sockets>,
    pub shutdown: CancellationToken,
}

impl AppState {
    pub fn new(
        store: Arc<dyn Store>,
        catalog: Catalog,
        auth: Arc<dyn Authenticator>,
        ratings: Arc<Lookup>,
        shutdown: CancellationToken,
    ) -> Self {
        let online = Arc::new(crate::offline::Sockets::new(
            &catalog,
            crate::offline::RENEW_EVERY,
        ));
        Self(Arc::new(Shared {
            store,
            catalog: Arc::new(catalog),
            auth,
            ratings,
            client_ratings: false,
            complete_marks: false,
            boards: Arc::new(ratings::Boards::default()),
            waits: Arc::new(queues::WaitStats::default()),
            limits: Arc::new(RateLimits::default()),
            proxies: Arc::new(TrustedProxies::default()),
            cors: Arc::new(AllowedOrigins::None),
            sockets: TaskTracker::new(),
            online,
            shutdown,
        }))
    }

    /// The fields, to set before the state is shared (a copy if it already is).
    fn fields(&mut self) -> &mut Shared {
        Arc::make_mut(&mut self.0)
    }

    /// Declares the store's freshness marks complete (see [`Shared::complete_marks`]).
    pub fn with_complete_marks(mut self, complete: bool) -> Self {
        self.fields().complete_marks = complete;
        self
    }

    /// Limits calls per player and per address (default: none).
    pub fn with_limits(mut self, limits: RateLimits) -> Self {
        self.fields().limits = Arc::new(limits);
        self
    }

    /// Believes the forwarding headers of these proxies (default: none).
    pub fn with_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.fields().proxies = Arc::new(proxies);
        self
    }

    /// Lets these web origins call the API (see [`AllowedOrigins`]).
    pub fn with_cors(mut self, origins: AllowedOrigins) -> Self {
        self.fields().cors = Arc::new(origins);
        self
    }

    /// Renews the notes of the players with a socket open here every
    /// `every` (default [`crate::offline::RENEW_EVERY`]).
    pub fn with_presence_renewal(mut self, every: Duration) -> Self {
        let fields = self.fields();
        fields.online = Arc::new(crate::offline::Sockets::new(&fields.catalog, every));
        self
    }

    /// Lets tickets carry the client's ratings (see [`Shared::client_ratings`]).
    pub fn with_client_ratings(mut self, allowed: bool) -> Self {
        self.fields().client_ratings = allowed;
        self
    }
}

/// The routes of API v1 with the OpenAPI document generated from them.
fn routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    use utoipa::OpenApi;
    use utoipa_axum::router::OpenApiRouter;
    use utoipa_axum::routes;
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(tickets::create))
        .routes(routes!(tickets::get_one, tickets::cancel))
        .routes(routes!(tickets::player_matches))
        .routes(routes!(queues::get_one))
        .routes(routes!(matches::assignment))
        .routes(routes!(ratings::player))
        .routes(routes!(ratings::history))
        .routes(routes!(ratings::leaderboard))
        .routes(routes!(blocks::get_list))
        .routes(routes!(blocks::block, blocks::unblock))
        .routes(routes!(parties::mine))
        .routes(routes!(parties::create))
        .routes(routes!(parties::get_one, parties::disband))
        .routes(routes!(parties::invite))
        .routes(routes!(parties::join))
        .routes(routes!(parties::leave))
        .routes(routes!(parties::kick))
        .routes(routes!(matches::get_one))
        .routes(routes!(matches::accept))
        .routes(routes!(matches::decline))
        .routes(routes!(backfill::open, backfill::get_one, backfill::close))
        .routes(routes!(ws::upgrade))
        .routes(routes!(health))
        .routes(routes!(ready))
        .split_for_parts()
}

/// The OpenAPI document of the API (what `/openapi.json` serves).
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    routes().1
}

/// All routes of API v1, health checks and `/openapi.json`. The operator plane
/// (`/metrics`, the dashboard) is not here: see [`crate::ops`].
pub fn router(state: AppState) -> Router {
    let (routes, doc) = routes();
    let doc = Arc::new(openapi::json(&doc));
    let cors = state.cors.layer();
    let router = routes
        .route(
            "/openapi.json",
            get(move || {
                let doc = doc.clone();
                async move {
                    (
                        [(axum::http::header::CONTENT_TYPE, "application/json")],
                        doc.to_string(),
                    )
                }
            }),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limits::layer,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(body::layer))
        .layer(axum::middleware::from_fn(observe::layer))
        .with_state(state);
    // Outermost: preflights are answered before authentication and limits.
    match cors {
        Some(layer) => router.layer(layer),
        None => router,
    }
}

/// Serves the API on `listener` until `state.shutdown` is cancelled, then closes
/// open WebSockets and waits up to `drain` for them. `extra` routes (the
/// operator plane, for `serve` in dev mode on loopback) are served beside it.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    extra: Option<Router>,
    drain: Duration,
) -> std::io::Result<()> {
    let shutdown = state.shutdown.clone();
    let sockets = state.sockets.clone();
    tokio::spawn(state.online.clone().run(
        state.store.clone(),
        state.catalog.clone(),
        shutdown.clone(),
    ));
    let mut app = router(state);
    if let Some(extra) = extra {
        app = app.merge(extra);
    }
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    // Small answers and WebSocket frames go out at once: with Nagle's algorithm
    // a frame written while the previous one waits for its (delayed) ack waits
    // too.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY on a connection");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await?;
    sockets.close();
    if tokio::time::timeout(drain, sockets.wait()).await.is_err() {
        tracing::warn!("some WebSockets did not close in time");
    }
    Ok(())
}

/// A probe's answer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Probe {
    /// `ok` (alive) or `ready`.
    pub status: &'static str,
}

#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, description = "The process is alive", body = Probe)))]
async fn health() -> axum::Json<Probe> {
    axum::Json(Probe { status: "ok" })
}

#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "The store answers", body = Probe),
        (status = 503, description = "The store does not answer", body = openapi::ErrorBody)))]
async fn ready(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> Result<axum::Json<Probe>, ApiError> {
    match tokio::time::timeout(Duration::from_secs(2), state.store.ping()).await {
        Ok(Ok(())) => Ok(axum::Json(Probe { status: "ready" })),
        Ok(Err(e)) => Err(ApiError::unavailable(format!("store does not answer: {e}"))),
        Err(_) => Err(ApiError::unavailable("store did not answer within 2s")),
    }
}

async fn not_found() -> ApiError {
    ApiError::not_found(Code::NO_ROUTE, "no such endpoint")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        Code::METHOD_NOT_ALLOWED,
        "method not allowed on this endpoint",
    )
}
