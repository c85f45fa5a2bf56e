//! Rate limits on the API, per player and per client address, for six kinds of
//! call: ticket writes, ready-check answers, party invites, reads, socket
//! connects and socket messages. Counted in the store ([`mm_store::Limits`]: Redis scripts that
//! concurrent requests share, so the limits hold across every ingress; in memory
//! for `serve`). Over a limit: `429` with `Retry-After` and the JSON error body; on
//! a socket, an error message and a close. Trusted backends are not limited. A store that cannot be reached
//! lets the call through (it fails on its own if it needs the store).
//!
//! [`layer`] authenticates the caller once (the extractors reuse the result),
//! checks the per-address and per-player keys in one round trip, and remembers the
//! client address for the socket's message checks. A player's ticket creation is
//! the exception: its per-player check is left to the store, which charges it in
//! the same script that activates the ticket ([`mm_store::Store::enqueue_charged`]),
//! so the hottest call pays no round trip for it.

use super::Code;
use super::auth::{self, Authenticated};
use super::{ApiError, AppState};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mm_auth::Caller;
use mm_domain::PlayerId;
use mm_store::{Rate, RateCheck, RateKey, Verdict};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// The kinds of call limited separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Creating and cancelling tickets.
    Tickets,
    /// Ready-check answers over HTTP.
    Answers,
    /// Party invites.
    Invites,
    /// Everything else over HTTP.
    Reads,
    /// Opening a WebSocket.
    Connects,
    /// Messages on a WebSocket.
    Messages,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Tickets => "tickets",
            Class::Answers => "answers",
            Class::Invites => "invites",
            Class::Reads => "reads",
            Class::Connects => "connects",
            Class::Messages => "messages",
        }
    }

    /// The class of an HTTP request.
    fn of(method: &Method, path: &str) -> Self {
        match (method, path) {
            (&Method::POST, "/v1/tickets") => Class::Tickets,
            (&Method::DELETE, p) if p.starts_with("/v1/tickets/") => Class::Tickets,
            (&Method::POST, p) if p.ends_with("/accept") || p.ends_with("/decline") => {
                Class::Answers
            }
            (&Method::POST, p) if p.starts_with("/v1/parties/") && p.ends_with("/invites") => {
                Class::Invites
            }
            (_, "/v1/ws") => Class::Connects,
            _ => Class::Reads,
        }
    }
}

/// One class's limits; `None`: unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limit {
    pub per_player: Option<Rate>,
    pub per_address: Option<Rate>,
}

/// Every class's limits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateLimits {
    pub tickets: Limit,
    pub answers: Limit,
    pub invites: Limit,
    pub reads: Limit,
    pub connects: Limit,
    pub messages: Limit,
}

impl RateLimits {
    pub fn get(&self, class: Class) -> Limit {
        match class {
            Class::Tickets => self.tickets,
            Class::Answers => self.answers,
            Class::Invites => self.invites,
            Class::Reads => self.reads,
            Class::Connects => self.connects,
            Class::Messages => self.messages,
        }
    }

    /// No limits at all.
    pub fn is_off(&self) -> bool {
        *self == Self::default()
    }
}

/// The client's address: the TCP peer's, or behind a trusted proxy the one the
/// proxy forwarded (see [`super::TrustedProxies`]).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub Option<IpAddr>);

/// The per-player check of a ticket creation, left to the store (see the module
/// doc); `None` when there is none to make.
#[derive(Debug, Clone, Default)]
pub struct TicketCharge(pub Option<RateCheck>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for TicketCharge {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .remove::<TicketCharge>()
            .unwrap_or_default())
    }
}

/// The limiter of `player`'s calls of `class`, with its rate; `None`: unlimited.
fn player_check(state: &AppState, class: Class, player: &PlayerId) -> Option<RateCheck> {
    let rate = state.limits.get(class).per_player?;
    Some((RateKey::player(class.name(), player.clone()), rate))
}

/// Counts one call of `class` by `player` from `addr`; `Err` (429) when over.
pub async fn check(
    state: &AppState,
    class: Class,
    player: Option<&PlayerId>,
    addr: Option<IpAddr>,
) -> Result<(), ApiError> {
    let limit = state.limits.get(class);
    let mut checks = Vec::with_capacity(2);
    let mut scopes = Vec::with_capacity(2);
    if let (Some(rate), Some(ip)) = (limit.per_address, addr) {
        checks.push((RateKey::address(class.name(), ip), rate));
        scopes.push("address");
    }
    if let Some(check) = player.and_then(|p| player_check(state, class, p)) {
        checks.push(check);
        scopes.push("player");
    }
    if checks.is_empty() {
        return Ok(());
    }
    let verdicts = match state.store.check_rates(&checks).await {
        Ok(v) => v,
        Err(e) => {
            warn_store!(e, "rate limits unavailable; letting the call through");
            return Ok(());
        }
    };
    let worst = verdicts
        .iter()
        .zip(&scopes)
        .filter_map(|(v, scope)| match v {
            Verdict::Limited(wait) => Some((*wait, *scope)),
            Verdict::Allowed => None,
        })
        .max();
    match worst {
        None => Ok(()),
        Some((wait, scope)) => Err(limited(class, scope, wait)),
    }
}

/// The 429 of a call of `class` over its `scope`'s limit.
pub(crate) fn limited(class: Class, scope: &'static str, wait: Duration) -> ApiError {
    metrics::counter!(mm_telemetry::names::RATE_LIMITED, "class" => class.name(), "scope" => scope)
        .increment(1);
    let ms = wait.as_millis().max(1) as u64;
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        Code::RATE_LIMITED,
        format!(
            "too many {} calls from this {scope}; retry in {:.1} s",
            class.name(),
            ms as f64 / 1000.0
        ),
    )
    .with("retry_after_ms", ms)
    .with("scope", scope)
    .retry_after(ms.div_ceil(1000))
}

/// The middleware: authenticates once, checks the limits, and passes on.
pub async fn layer(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let addr = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| state.proxies.client(c.0.ip(), req.headers()));
    if matches!(req.uri().path(), "/healthz" | "/readyz") {
        return next.run(req).await;
    }
    let class = Class::of(req.method(), req.uri().path());
    let caller = auth::authenticate(req.headers(), req.uri(), &state);
    let mut player = match &caller {
        Ok(v) => match &v.caller {
            Caller::Player(p) => Some(p.clone()),
            _ => None,
        },
        _ => None,
    };
    let trusted = matches!(&caller, Ok(v) if matches!(v.caller, Caller::Service(_)));
    req.extensions_mut().insert(Authenticated(caller));
    req.extensions_mut().insert(ClientAddr(addr));
    if trusted {
        return next.run(req).await;
    }
    if req.method() == Method::POST && req.uri().path() == "/v1/tickets" {
        // The store charges the player's creation with the ticket's activation.
        let charge = player.take().and_then(|p| player_check(&state, class, &p));
        req.extensions_mut().insert(TicketCharge(charge));
    }
    if let Err(e) = check(&state, class, player.as_ref(), addr).await {
        return e.into_response();
    }
    next.run(req).await
}
