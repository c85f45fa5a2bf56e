//! The operator plane: what operators read, on a listener of its own
//! (`OPS_LISTEN_ADDR`), never on the port players reach.
//!
//! - `GET /metrics`: Prometheus text, open (scrapers do not authenticate; keep
//!   the listener on a private network);
//! - `/dashboard`, `/dashboard/snapshot`, `/dashboard/events`: the live
//!   dashboard ([`crate::dashboard`]), for operators only ([`OperatorAuth`]: the
//!   `OPS_TOKEN_FILE` secret or a token with role `operator`, as a bearer token,
//!   or once in the address as `?token=`, after which the browser keeps it in a
//!   cookie), each address limited in requests and every caller in event
//!   streams ([`limits`]).
//!
//! `serve` in dev mode on loopback may mount this on its one port, open, for the
//! walk-through.

mod auth;
pub mod limits;

pub use auth::{COOKIE, OperatorAuth, Refusal, cookie_safe};

use crate::ingress::Code;
use crate::ingress::{ApiError, TrustedProxies};
use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mm_store::Store;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The plane's routes, ready to serve or to mount beside the API's.
pub type Routes = Router;

/// A caller the plane admitted, as the dashboard's handlers see it.
#[derive(Debug, Clone)]
pub struct Admitted {
    pub operator: String,
    pub ip: IpAddr,
}

/// What the plane serves.
pub struct OpsPlane {
    pub metrics: mm_telemetry::Metrics,
    /// The store and pools the dashboard shows, each with whether it is
    /// closed (its mode or region: it takes no new ticket); `None`: no
    /// dashboard.
    pub dashboard: Option<(Arc<dyn Store>, crate::dashboard::Shown)>,
    pub auth: OperatorAuth,
    pub proxies: TrustedProxies,
}

#[derive(Clone)]
struct Gate {
    auth: Arc<OperatorAuth>,
    proxies: Arc<TrustedProxies>,
    requests: Arc<limits::Requests>,
}

/// The plane's routes.
pub fn router(plane: OpsPlane) -> Router {
    let metrics = plane.metrics.router();
    let Some((store, pools)) = plane.dashboard else {
        return metrics;
    };
    let gate = Gate {
        auth: Arc::new(plane.auth),
        proxies: Arc::new(plane.proxies),
        requests: Arc::default(),
    };
    let dashboard = crate::dashboard::router(store, pools, limits::Streams::default())
        .layer(axum::middleware::from_fn_with_state(gate, admit));
    metrics.merge(dashboard)
}

/// Serves `app` (the plane's routes) on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown.cancelled_owned())
    .await
}

/// The credential of a request: the bearer token, else the cookie.
fn credential(headers: &HeaderMap) -> Option<String> {
    if let Some(v) = headers.get(header::AUTHORIZATION) {
        return v
            .to_str()
            .ok()?
            .strip_prefix("Bearer ")
            .map(|t| t.trim().to_string());
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            let (k, v) = c.trim().split_once('=')?;
            (k == COOKIE).then(|| v.to_string())
        })
}

/// `?token=` on the page's address, when a browser hands its credential over.
fn query_token(req: &Request) -> Option<String> {
    req.uri().query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "token" && !v.is_empty()).then(|| v.to_string())
    })
}

/// Counts the request against its address, then admits an operator (or
/// answers 401/403/429).
async fn admit(State(gate): State<Gate>, mut req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(IpAddr::from([0, 0, 0, 0]));
    let ip = gate.proxies.client(peer, req.headers());
    if let Err(wait) = gate.requests.check(ip) {
        let ms = wait.as_millis().max(1) as u64;
        return ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            Code::RATE_LIMITED,
            "too many operator-plane calls from this address; retry shortly",
        )
        .with("scope", "address")
        .with("retry_after_ms", ms)
        .retry_after(ms.div_ceil(1000))
        .into_response();
    }
    let handed_over = (req.uri().path() == "/dashboard")
        .then(|| query_token(&req))
        .flatten();
    let token = handed_over.clone().or_else(|| credential(req.headers()));
    let operator = match gate.auth.check(token.as_deref()) {
        Ok(operator) => operator,
        Err(Refusal::Missing) => {
            return ApiError::unauthorized(
                "the operator plane needs an operator credential: 'Authorization: Bearer <token>', or open /dashboard?token=<token> once in a browser",
            )
            .into_response();
        }
        Err(Refusal::Invalid) => {
            return ApiError::invalid_token("not a valid operator credential").into_response();
        }
        Err(Refusal::NotOperator) => {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                Code::NOT_OPERATOR,
                "this token is not an operator's (role operator)",
            )
            .into_response();
        }
    };
    if let Some(token) = handed_over.filter(|_| !gate.auth.is_open()) {
        // Into a cookie the page's own requests carry, and out of the address bar.
        let cookie = format!("{COOKIE}={token}; Path=/dashboard; HttpOnly; SameSite=Strict");
        let mut r = (StatusCode::SEE_OTHER, [(header::LOCATION, "/dashboard")]).into_response();
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            r.headers_mut().insert(header::SET_COOKIE, v);
        }
        return r;
    }
    req.extensions_mut().insert(Admitted { operator, ip });
    next.run(req).await
}
