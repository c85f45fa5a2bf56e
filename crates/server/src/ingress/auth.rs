//! Who is calling. Handlers that act for a player take the [`Player`] extractor;
//! ticket creation takes [`Actor`], which also lets a trusted backend act without
//! naming a player. Both read `Authorization: Bearer <token>` (and, on WebSocket
//! upgrades only, a `token` query parameter) and ask the configured
//! [`Authenticator`]. A trusted backend (a token with the service role) acts for
//! the player it names in `X-Player-Id`. Handlers never take the acting player's
//! id from anywhere else.

use super::Code;
use super::{ApiError, AppState};
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, UPGRADE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Uri};
pub use mm_auth::{Authenticator, Caller, DevTokens, Verified};
use mm_domain::{Attributes, PlayerId};

/// The header a trusted backend names the player it acts for in.
pub const ACT_FOR: &str = "x-player-id";

/// The caller, authenticated once per request by the rate-limit layer and reused
/// by the extractors.
#[derive(Clone)]
pub struct Authenticated(pub Result<Verified, ApiError>);

/// Authenticates a request's bearer token.
pub fn authenticate(
    headers: &HeaderMap,
    uri: &Uri,
    state: &AppState,
) -> Result<Verified, ApiError> {
    let token = bearer(headers, uri)?;
    state.auth.verify(&token).map_err(|e| {
        // The detail (which key or claim) is for the operator, not the caller.
        tracing::debug!(error = %e, "token refused");
        ApiError::invalid_token(e.public_message())
    })
}

/// The player a request acts for: the token's own player, or the player a trusted
/// backend names.
#[derive(Debug, Clone)]
pub struct Player(pub PlayerId);

/// Who is calling and for whom: a player (for themselves), or a trusted backend
/// for the player it names, if any.
#[derive(Debug, Clone)]
pub struct Actor {
    pub player: Option<PlayerId>,
    /// The trusted backend's name, when a service token made the call.
    pub service: Option<String>,
    /// The token's claims that can be attributes (for `from_claims`).
    pub claims: Attributes,
}

impl Actor {
    /// A trusted backend made the call (it may name any players and pass ratings).
    pub fn trusted(&self) -> bool {
        self.service.is_some()
    }
}

impl FromRequestParts<AppState> for Actor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Verified { caller, claims } = match parts.extensions.get::<Authenticated>() {
            Some(Authenticated(done)) => done.clone()?,
            None => authenticate(&parts.headers, &parts.uri, state)?,
        };
        let named = match parts.headers.get(ACT_FOR) {
            None => None,
            Some(v) => {
                let text = v.to_str().map_err(|_| {
                    ApiError::bad_request(Code::INVALID_PLAYER, "X-Player-Id is not valid text")
                })?;
                Some(
                    PlayerId::new(text)
                        .map_err(|e| ApiError::bad_request(Code::INVALID_PLAYER, e.to_string()))?,
                )
            }
        };
        match caller {
            Caller::Player(p) => {
                if named.as_ref().is_some_and(|n| *n != p) {
                    return Err(ApiError::new(
                        StatusCode::FORBIDDEN,
                        Code::FORBIDDEN,
                        "only a trusted backend may act for another player (X-Player-Id)",
                    ));
                }
                Ok(Actor {
                    player: Some(p),
                    service: None,
                    claims,
                })
            }
            Caller::Service(name) => Ok(Actor {
                player: named,
                service: Some(name),
                claims,
            }),
            Caller::Operator(_) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                Code::OPERATOR_TOKEN,
                "an operator token is for the operator plane (the dashboard), not the player API",
            )),
        }
    }
}

impl FromRequestParts<AppState> for Player {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let actor = Actor::from_request_parts(parts, state).await?;
        actor.player.map(Player).ok_or_else(|| {
            ApiError::bad_request(
                Code::PLAYER_REQUIRED,
                "a service token acts for the player named in the X-Player-Id header",
            )
        })
    }
}

/// The attribute claims of the caller's token (empty without a verified token).
#[derive(Debug, Clone, Default)]
pub struct TokenClaims(pub Attributes);

impl FromRequestParts<AppState> for TokenClaims {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, Self::Rejection> {
        Ok(match parts.extensions.get::<Authenticated>() {
            Some(Authenticated(Ok(v))) => TokenClaims(v.claims.clone()),
            _ => TokenClaims::default(),
        })
    }
}

/// The bearer token of a request.
fn bearer(headers: &HeaderMap, uri: &Uri) -> Result<String, ApiError> {
    match headers.get(AUTHORIZATION) {
        Some(value) => {
            let value = value
                .to_str()
                .map_err(|_| ApiError::unauthorized("Authorization header is not valid text"))?;
            value
                .strip_prefix("Bearer ")
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .ok_or_else(|| ApiError::unauthorized("Authorization must be 'Bearer <token>'"))
        }
        None if is_websocket(headers) => query_token(uri).ok_or_else(|| {
            ApiError::unauthorized("pass 'Authorization: Bearer <token>' or ?token=<token>")
        }),
        None => Err(ApiError::unauthorized(
            "missing 'Authorization: Bearer <token>' header",
        )),
    }
}

fn is_websocket(headers: &HeaderMap) -> bool {
    headers
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

fn query_token(uri: &Uri) -> Option<String> {
    let query = uri.query()?;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "token" && !v.is_empty()).then(|| v.to_string())
    })
}
