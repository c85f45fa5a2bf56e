//! Match endpoints: read a match, answer its ready check, and a player's current
//! assignment (to rejoin after a drop).
//!
//! - `GET /v1/matches/{id}`: the match with its status, answers, server, result
//!   (for its players only).
//! - `POST /v1/matches/{id}/accept`, `POST /v1/matches/{id}/decline`: the caller's
//!   ready-check answer (the WebSocket takes the same as `match.accept` /
//!   `match.decline` messages).
//! - `GET /v1/players/{id}/assignment` (`id` may be `me`): the caller's match that
//!   is not over, with the server address once assigned; 404 when there is none.

use super::Code;
use super::openapi::Errors;
use super::{ApiError, AppState, Player};
use crate::saga;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use mm_domain::{
    Answer, Event, EventEnvelope, MatchId, MatchRecord, MatchStatus, PlayerId, Pool,
    ServerAssignment,
};
use mm_store::{AnswerOutcome, Store};
use serde::Serialize;
use std::sync::Arc;

fn match_id(raw: String) -> Result<MatchId, ApiError> {
    MatchId::new(raw).map_err(|_| ApiError::not_found(Code::MATCH_NOT_FOUND, "no such match"))
}

fn not_found() -> ApiError {
    ApiError::not_found(Code::MATCH_NOT_FOUND, "no such match")
}

/// The pool of a match the player is (or was) in: their current match, or one in
/// their history.
async fn locate(
    store: &dyn Store,
    player: &PlayerId,
    id: &MatchId,
) -> Result<Option<Pool>, ApiError> {
    if let Some((pool, current)) = store.current_match(player).await?
        && current == *id
    {
        return Ok(Some(pool));
    }
    Ok(store.history_pool(player, id).await?)
}

/// The caller's match, or 404 (also for matches the caller is not in).
async fn read(
    store: &dyn Store,
    player: &PlayerId,
    id: &MatchId,
) -> Result<(Pool, MatchRecord), ApiError> {
    let pool = locate(store, player, id).await?.ok_or_else(not_found)?;
    let (record, _) = store.match_record(&pool, id).await?.ok_or_else(not_found)?;
    if !record.matched.players().any(|p| p == player) {
        return Err(not_found());
    }
    Ok((pool, record))
}

/// `GET /v1/matches/{id}`.
#[utoipa::path(get, path = "/v1/matches/{id}", operation_id = "get_match", tag = "matches",
    params(("id" = String, Path, description = "Match id")),
    responses((status = 200, description = "The match", body = MatchRecord), Errors),
    security(("bearer" = [])))]
pub async fn get_one(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<MatchRecord>, ApiError> {
    let id = match_id(id)?;
    let (_, record) = read(&*state.store, &actor, &id).await?;
    Ok(Json(record))
}

/// `POST /v1/matches/{id}/accept`.
#[utoipa::path(post, path = "/v1/matches/{id}/accept", tag = "matches",
    params(("id" = String, Path, description = "Match id")),
    responses((status = 200, description = "The match after the answer", body = MatchRecord), Errors),
    security(("bearer" = [])))]
pub async fn accept(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<MatchRecord>, ApiError> {
    let id = match_id(id)?;
    respond(&state.store, &actor, &id, Answer::Accepted)
        .await
        .map(Json)
}

/// `POST /v1/matches/{id}/decline`.
#[utoipa::path(post, path = "/v1/matches/{id}/decline", tag = "matches",
    params(("id" = String, Path, description = "Match id")),
    responses((status = 200, description = "The match after the answer", body = MatchRecord), Errors),
    security(("bearer" = [])))]
pub async fn decline(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<MatchRecord>, ApiError> {
    let id = match_id(id)?;
    respond(&state.store, &actor, &id, Answer::Declined)
        .await
        .map(Json)
}

/// Records the caller's ready-check answer, tells the other players, and takes
/// the saga's next step when the answer ended the ready check. Returns the match
/// as it stands.
pub async fn respond(
    store: &Arc<dyn Store>,
    actor: &PlayerId,
    id: &MatchId,
    answer: Answer,
) -> Result<MatchRecord, ApiError> {
    let (pool, record) = read(&**store, actor, id).await?;
    let closed = |status: MatchStatus| {
        ApiError::conflict(
            Code::READY_CHECK_CLOSED,
            format!(
                "the ready check of match {id} is over; the match is {}",
                status.as_str()
            ),
        )
        .with("status", status.as_str())
    };
    if record.status != MatchStatus::RequiresAcceptance {
        return Err(closed(record.status));
    }
    let outcome = store.answer(&pool, id, actor, answer).await?;
    let mut events = Vec::new();
    let progress = |accepted: usize, total: usize| {
        record.matched.players().map(move |p| EventEnvelope {
            player: p.clone(),
            event: Event::Accepted {
                match_id: id.clone(),
                player_id: actor.clone(),
                accepted,
                total,
            },
        })
    };
    let mut step = false;
    match outcome {
        AnswerOutcome::Accepted { accepted, total } => events.extend(progress(accepted, total)),
        AnswerOutcome::AllAccepted { next, total } => {
            events.extend(progress(total, total));
            if next == MatchStatus::Placing {
                events.extend(record.matched.tickets.iter().flat_map(|t| {
                    t.players.iter().map(|p| EventEnvelope {
                        player: p.clone(),
                        event: Event::Placing {
                            ticket_id: t.ticket_id.clone(),
                            match_id: id.clone(),
                            matched: record.matched.clone(),
                        },
                    })
                }));
            }
            metrics::counter!(mm_telemetry::names::READY_CHECKS, "outcome" => "accepted")
                .increment(1);
            step = true;
        }
        AnswerOutcome::Declined => {
            metrics::counter!(mm_telemetry::names::READY_CHECKS, "outcome" => "declined")
                .increment(1);
            step = true
        }
        AnswerOutcome::Closed(status) => return Err(closed(status)),
        AnswerOutcome::NotFound => return Err(not_found()),
    }
    if let Err(e) = store.publish(&events).await {
        warn_store!(e, "could not publish ready-check progress");
    }
    if step {
        // The answer is recorded; the next step runs on its own so a slow
        // allocation does not hold the reply (the supervisor retries it if this
        // process dies).
        let (store, pool, id) = (store.clone(), pool.clone(), id.clone());
        tokio::spawn(async move {
            if let Err(e) = saga::drive(&*store, &pool, &id).await {
                warn_store!(e, match_id = %id, "saga step failed; the supervisor will retry");
            }
        });
    }
    let (_, now) = read(&**store, actor, id).await?;
    Ok(now)
}

/// Body of `GET /v1/players/{id}/assignment`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Assignment {
    pub match_id: MatchId,
    pub status: MatchStatus,
    /// Where to connect, once the match has a game server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerAssignment>,
    #[serde(rename = "match")]
    pub matched: mm_domain::Match,
    /// The ready check's deadline while it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
}

/// `GET /v1/players/{id}/assignment`.
#[utoipa::path(get, path = "/v1/players/{id}/assignment", tag = "matches",
    params(("id" = String, Path, description = "`me` or the caller's id")),
    responses((status = 200, description = "The caller's match that is not over", body = Assignment), Errors),
    security(("bearer" = [])))]
pub async fn assignment(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<Assignment>, ApiError> {
    if id != "me" && id != actor.as_str() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            Code::FORBIDDEN,
            "players can only read their own assignment",
        ));
    }
    let none = || ApiError::not_found(Code::NO_ASSIGNMENT, "the player is not in a match");
    let (pool, mid) = state.store.current_match(&actor).await?.ok_or_else(none)?;
    let (record, _) = state
        .store
        .match_record(&pool, &mid)
        .await?
        .ok_or_else(none)?;
    if record.status.is_terminal() {
        return Err(none());
    }
    Ok(Json(Assignment {
        match_id: mid,
        status: record.status,
        server: record.server,
        matched: record.matched,
        deadline: record
            .deadline
            .filter(|_| record.status == MatchStatus::RequiresAcceptance),
    }))
}
