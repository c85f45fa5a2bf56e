//! Backfill endpoints for trusted backends (issue 34): open, read and close the
//! backfill of a running match, so that the matchmaker fills its empty seats.
//! Game servers do the same over gRPC with their own credential.
//!
//! - `POST /v1/matches/{id}/backfill` `{"open": [1, 0]}`: opens the backfill
//!   with these open seats per team (or changes them); 200 with the backfill.
//! - `GET /v1/matches/{id}/backfill`: the live backfill, or 404.
//! - `DELETE /v1/matches/{id}/backfill`: closes it; 204.
//!
//! Only a service token may call them (a player may not open seats in a
//! match). The match must be `assigned` (placed on a game server and not
//! over), and its mode must have `backfill = "manual"` or `"auto"`.

use super::Code;
use super::extract::ApiJson;
use super::openapi::Errors;
use super::{Actor, ApiError, AppState};
use crate::backfill::SeatsError;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use mm_domain::{MatchId, MatchRecord, Millis, Pool};
use mm_store::{Backfill, BackfillOutcome, Store};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A running match's open seats.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BackfillView {
    pub match_id: String,
    /// The game server hosting the match.
    pub server_id: String,
    /// Open seats per team (0-based, as the match's tickets name teams).
    pub open: Vec<u32>,
    /// One more at every change; fills are fenced by it.
    pub generation: u64,
    /// When it was first opened (ms since the epoch).
    pub opened_at: Millis,
    /// When it closes unless refreshed (ms since the epoch).
    pub expires_at: Millis,
}

impl From<Backfill> for BackfillView {
    fn from(b: Backfill) -> Self {
        Self {
            match_id: b.match_id.to_string(),
            server_id: b.server_id,
            open: b.open,
            generation: b.generation,
            opened_at: b.opened_at,
            expires_at: b.expires_at,
        }
    }
}

/// `POST /v1/matches/{id}/backfill` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenSeats {
    /// Open seats per team, team 0 first.
    pub open: Vec<u32>,
}

fn not_found() -> ApiError {
    ApiError::not_found(Code::MATCH_NOT_FOUND, "no such match on a game server")
}

/// Refuses callers other than trusted backends.
fn trusted(actor: &Actor) -> Result<(), ApiError> {
    if actor.trusted() {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        Code::FORBIDDEN,
        "only a trusted backend (or the match's game server, over gRPC) manages a match's backfill",
    ))
}

/// The pool and record of a match that holds (or held) a game-server slot:
/// the slot's allocation names the pool.
pub(crate) async fn locate(
    store: &dyn Store,
    id: &MatchId,
) -> Result<Option<(Pool, MatchRecord)>, mm_store::StoreError> {
    let Some(a) = store.allocation(id.as_str()).await? else {
        return Ok(None);
    };
    let Some(pool) = a.pool.as_deref().and_then(Pool::parse) else {
        return Ok(None);
    };
    Ok(store.match_record(&pool, id).await?.map(|(r, _)| (pool, r)))
}

/// Checks `open` against the match's mode and region
/// ([`crate::backfill::check_seats`], [`crate::backfill::check_region`]).
fn check_seats(
    catalog: &crate::Catalog,
    pool: &Pool,
    mode: &mm_engine::Mode,
    open: &[u32],
) -> Result<(), ApiError> {
    crate::backfill::check_seats(mode, open)
        .and_then(|()| crate::backfill::check_region(catalog, pool))
        .map_err(|e| match e {
            SeatsError::Off(_) => ApiError::conflict(Code::BACKFILL_OFF, e.to_string()),
            SeatsError::Closed(_) => ApiError::conflict(Code::MODE_CLOSED, e.to_string()),
            SeatsError::RegionClosed(_) => ApiError::conflict(Code::REGION_CLOSED, e.to_string()),
            SeatsError::Invalid(m) => ApiError::bad_request(Code::INVALID_SEATS, m),
        })
}

/// A store's answer to an open or a close, as the API answers it.
fn outcome(o: BackfillOutcome, id: &MatchId) -> Result<Option<Backfill>, ApiError> {
    match o {
        BackfillOutcome::Open(b) => Ok(Some(b)),
        BackfillOutcome::Closed => Ok(None),
        BackfillOutcome::NoMatch => Err(not_found()),
        BackfillOutcome::NotRunning(status) => Err(ApiError::conflict(
            Code::MATCH_NOT_RUNNING,
            format!(
                "match {id} is {}: only a match being played has seats to fill",
                status.as_str()
            ),
        )
        .with("status", status.as_str())),
        BackfillOutcome::NotYours => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            Code::NOT_YOUR_MATCH,
            format!("match {id} is hosted by another game server"),
        )),
    }
}

/// `POST /v1/matches/{id}/backfill`.
#[utoipa::path(post, path = "/v1/matches/{id}/backfill", tag = "matches",
    params(("id" = String, Path, description = "Match id")),
    request_body = OpenSeats,
    responses((status = 200, description = "The backfill as it is now", body = BackfillView), Errors),
    security(("bearer" = [])))]
pub async fn open(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<OpenSeats>,
) -> Result<Json<BackfillView>, ApiError> {
    trusted(&actor)?;
    let id = MatchId::new(id).map_err(|_| not_found())?;
    let (pool, _) = locate(&*state.store, &id).await?.ok_or_else(not_found)?;
    let mode = state.catalog.mode(&pool.mode).ok_or_else(not_found)?;
    check_seats(&state.catalog, &pool, mode, &body.open)?;
    let ttl = Duration::from_millis(mode.backfill_ttl_ms);
    let o = state
        .store
        .open_backfill(&pool, &id, None, &body.open, ttl)
        .await?;
    let b = outcome(o, &id)?.ok_or_else(not_found)?;
    Ok(Json(b.into()))
}

/// `GET /v1/matches/{id}/backfill`.
#[utoipa::path(get, path = "/v1/matches/{id}/backfill", operation_id = "get_backfill", tag = "matches",
    params(("id" = String, Path, description = "Match id")),
    responses((status = 200, description = "The live backfill", body = BackfillView), Errors),
    security(("bearer" = [])))]
pub async fn get_one(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
) -> Result<Json<BackfillView>, ApiError> {
    trusted(&actor)?;
    let id = MatchId::new(id).map_err(|_| not_found())?;
    let (pool, _) = locate(&*state.store, &id).await?.ok_or_else(not_found)?;
    let b = state.store.backfill(&pool, &id).await?.ok_or_else(|| {
        ApiError::not_found(
            Code::BACKFILL_NOT_FOUND,
            format!("match {id} has no open backfill"),
        )
    })?;
    Ok(Json(b.into()))
}

/// `DELETE /v1/matches/{id}/backfill`.
#[utoipa::path(delete, path = "/v1/matches/{id}/backfill", tag = "matches",
    params(("id" = String, Path, description = "Match id")),
    responses((status = 204, description = "Closed (or there was none)"), Errors),
    security(("bearer" = [])))]
pub async fn close(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    trusted(&actor)?;
    let id = MatchId::new(id).map_err(|_| not_found())?;
    let (pool, _) = locate(&*state.store, &id).await?.ok_or_else(not_found)?;
    let o = state.store.close_backfill(&pool, &id, None).await?;
    outcome(o, &id)?;
    Ok(StatusCode::NO_CONTENT)
}
