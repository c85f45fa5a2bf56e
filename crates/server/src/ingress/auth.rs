//! Who is calling. Every handler that acts for a player takes the [`Player`]
//! extractor, which reads `Authorization: Bearer <token>` (and, on WebSocket
//! upgrades only, a `token` query parameter) and asks the configured
//! [`Authenticator`]. Handlers never take the acting player's id from anywhere else.

use super::{ApiError, AppState};
use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, UPGRADE};
use axum::http::request::Parts;
use mm_domain::PlayerId;

/// Turns a bearer token into a player id.
pub trait Authenticator: Send + Sync + 'static {
    fn authenticate(&self, token: &str) -> Result<PlayerId, String>;
}

/// Development mode: the token *is* the player id. Anyone can act as anyone; use
/// it only on a laptop or behind a gateway that authenticates players.
pub struct DevTokens;

impl Authenticator for DevTokens {
    fn authenticate(&self, token: &str) -> Result<PlayerId, String> {
        PlayerId::new(token).map_err(|e| format!("invalid token: {e}"))
    }
}

/// The authenticated player making the request.
#[derive(Debug, Clone)]
pub struct Player(pub PlayerId);

impl FromRequestParts<AppState> for Player {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = match parts.headers.get(AUTHORIZATION) {
            Some(value) => {
                let value = value.to_str().map_err(|_| {
                    ApiError::unauthorized("Authorization header is not valid text")
                })?;
                value
                    .strip_prefix("Bearer ")
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| {
                        ApiError::unauthorized("Authorization must be 'Bearer <token>'")
                    })?
                    .to_string()
            }
            None if is_websocket(parts) => query_token(parts).ok_or_else(|| {
                ApiError::unauthorized("pass 'Authorization: Bearer <token>' or ?token=<token>")
            })?,
            None => {
                return Err(ApiError::unauthorized(
                    "missing 'Authorization: Bearer <token>' header",
                ));
            }
        };
        state
            .auth
            .authenticate(&token)
            .map(Player)
            .map_err(ApiError::unauthorized)
    }
}

fn is_websocket(parts: &Parts) -> bool {
    parts
        .headers
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

fn query_token(parts: &Parts) -> Option<String> {
    let query = parts.uri.query()?;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "token" && !v.is_empty()).then(|| v.to_string())
    })
}
