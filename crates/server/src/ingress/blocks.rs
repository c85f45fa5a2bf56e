//! Block lists: a player never meets the players they blocked, nor those who
//! blocked them, in any match (never relaxed).
//!
//! - `PUT /v1/players/{id}/blocks/{player_id}`: block (`409 too_many_blocks`
//!   past 200);
//! - `DELETE /v1/players/{id}/blocks/{player_id}`: unblock;
//! - `GET /v1/players/{id}/blocks`: the caller's list.
//!
//! `id` is `me` or the caller. A new ticket carries whom its players blocked
//! ([`mm_store::Blocks::kept_apart`]; the engine keeps two tickets apart when
//! either one's list names a player of the other, and a backfill reads the
//! running match's players' lists); a block made while either player
//! waits reaches their waiting tickets before it is answered
//! ([`mm_store::Blocks::keep_apart_waiting`]): no match formed after the
//! answer holds both. An unblock reaches their waiting tickets the same way
//! ([`mm_store::Blocks::release_waiting`]) before it is answered.

use super::Code;
use super::openapi::Errors;
use super::{ApiError, AppState, Player};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use mm_domain::PlayerId;
use mm_store::{Blocked, MAX_BLOCKS};
use serde::Serialize;

/// A player's block list.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BlockList {
    #[schema(value_type = String)]
    pub player_id: PlayerId,
    /// The players blocked, sorted.
    #[schema(value_type = Vec<String>)]
    pub blocks: Vec<PlayerId>,
}

fn own(actor: &PlayerId, id: &str) -> Result<(), ApiError> {
    if id == "me" || id == actor.as_str() {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        Code::FORBIDDEN,
        "players can only manage their own block list",
    ))
}

fn other(actor: &PlayerId, raw: String) -> Result<PlayerId, ApiError> {
    let p = PlayerId::new(raw)
        .map_err(|e| ApiError::bad_request(Code::INVALID_PLAYER, e.to_string()))?;
    if p == *actor {
        return Err(ApiError::bad_request(
            Code::INVALID_PLAYER,
            "a player cannot block themselves",
        ));
    }
    Ok(p)
}

async fn list(state: &AppState, actor: PlayerId) -> Result<Json<BlockList>, ApiError> {
    let blocks = state.store.blocks(&actor).await?;
    Ok(Json(BlockList {
        player_id: actor,
        blocks,
    }))
}

/// `GET /v1/players/{id}/blocks`.
#[utoipa::path(get, path = "/v1/players/{id}/blocks", tag = "players",
    params(("id" = String, Path, description = "`me` or the caller's id")),
    responses((status = 200, description = "The caller's block list", body = BlockList), Errors),
    security(("bearer" = [])))]
pub async fn get_list(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<BlockList>, ApiError> {
    own(&actor, &id)?;
    list(&state, actor).await
}

/// `PUT /v1/players/{id}/blocks/{player_id}`.
///
/// Answered once the two players' waiting tickets, if any, carry the block:
/// no match formed after the answer holds both.
#[utoipa::path(put, path = "/v1/players/{id}/blocks/{player_id}", tag = "players",
    params(("id" = String, Path, description = "`me` or the caller's id"),
           ("player_id" = String, Path, description = "The player to block")),
    responses((status = 200, description = "The caller's block list, with the player", body = BlockList), Errors),
    security(("bearer" = [])))]
pub async fn block(
    State(state): State<AppState>,
    Player(actor): Player,
    Path((id, target)): Path<(String, String)>,
) -> Result<Json<BlockList>, ApiError> {
    own(&actor, &id)?;
    let target = other(&actor, target)?;
    match state.store.block(&actor, &target).await? {
        Blocked::Done => {
            state.store.keep_apart_waiting(&actor, &target).await?;
            list(&state, actor).await
        }
        Blocked::Full => Err(ApiError::conflict(
            Code::TOO_MANY_BLOCKS,
            format!("a player may block at most {MAX_BLOCKS} players; unblock one first"),
        )),
    }
}

/// `DELETE /v1/players/{id}/blocks/{player_id}`.
///
/// Answered once the two players' waiting tickets, if any, no longer carry
/// the block (unless another player of the same ticket blocked them too):
/// they may meet in the next match formed.
#[utoipa::path(delete, path = "/v1/players/{id}/blocks/{player_id}", tag = "players",
    params(("id" = String, Path, description = "`me` or the caller's id"),
           ("player_id" = String, Path, description = "The player to unblock")),
    responses((status = 200, description = "The caller's block list, without the player", body = BlockList), Errors),
    security(("bearer" = [])))]
pub async fn unblock(
    State(state): State<AppState>,
    Player(actor): Player,
    Path((id, target)): Path<(String, String)>,
) -> Result<Json<BlockList>, ApiError> {
    own(&actor, &id)?;
    let target = other(&actor, target)?;
    state.store.unblock(&actor, &target).await?;
    // Also when the list did not hold them: a retried call whose first try
    // could not reach the tickets.
    state.store.release_waiting(&actor, &target).await?;
    list(&state, actor).await
}
