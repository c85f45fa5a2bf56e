//! Ticket endpoints: create, read, cancel, and a player's matches.

use super::extract::{ApiJson, ApiQuery};
use super::{ApiError, AppState, Player};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mm_domain::{
    Event, EventEnvelope, MAX_RATING, MIN_RATING, Match, PlayerId, Ticket, TicketId, TicketStatus,
    TicketView, now_ms,
};
use mm_store::{CancelOutcome, EnqueueOutcome};
use serde::{Deserialize, Serialize};

/// Most regions a ticket may list.
const MAX_REGIONS: usize = 8;

/// Body of `POST /v1/tickets`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTicket {
    /// The players of the ticket; for now exactly one: the caller.
    #[serde(default)]
    pub players: Vec<String>,
    pub mode: String,
    /// Acceptable regions, most preferred first (`region` is shorthand for one).
    #[serde(default)]
    pub regions: Vec<String>,
    #[serde(default)]
    pub region: Option<String>,
    pub rating: f64,
}

impl CreateTicket {
    fn validate(self, actor: &PlayerId, state: &AppState) -> Result<Ticket, ApiError> {
        let players = match self.players.as_slice() {
            [] => {
                return Err(ApiError::bad_request(
                    "missing_player",
                    "players must list the ticket's player",
                ));
            }
            [one] => vec![
                PlayerId::new(one.clone())
                    .map_err(|e| ApiError::bad_request("invalid_player", e.to_string()))?,
            ],
            _ => {
                return Err(ApiError::bad_request(
                    "parties_unsupported",
                    "a ticket holds one player for now; party tickets are not supported yet",
                ));
            }
        };
        if &players[0] != actor {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "not_your_ticket",
                "a ticket's players must include the authenticated player",
            ));
        }
        if !state.catalog.has_mode(&self.mode) {
            return Err(ApiError::bad_request(
                "unknown_mode",
                format!(
                    "unknown mode {:?}; known modes: {}",
                    self.mode,
                    state.catalog.modes().join(", ")
                ),
            ));
        }
        let mut regions = self.regions;
        if let Some(r) = self.region {
            if !regions.is_empty() {
                return Err(ApiError::bad_request(
                    "invalid_request",
                    "give either region or regions, not both",
                ));
            }
            regions.push(r);
        }
        if regions.is_empty() {
            return Err(ApiError::bad_request(
                "missing_region",
                "regions must list at least one region",
            ));
        }
        if regions.len() > MAX_REGIONS {
            return Err(ApiError::bad_request(
                "invalid_request",
                format!("at most {MAX_REGIONS} regions"),
            ));
        }
        for (i, r) in regions.iter().enumerate() {
            if !state.catalog.has_region(r) {
                return Err(ApiError::bad_request(
                    "unknown_region",
                    format!(
                        "unknown region {r:?}; known regions: {}",
                        state.catalog.regions().join(", ")
                    ),
                ));
            }
            if regions[..i].contains(r) {
                return Err(ApiError::bad_request(
                    "invalid_request",
                    format!("region {r:?} is listed twice"),
                ));
            }
        }
        if !(MIN_RATING..=MAX_RATING).contains(&self.rating) {
            return Err(ApiError::bad_request(
                "invalid_rating",
                format!("rating must be between {MIN_RATING} and {MAX_RATING}"),
            ));
        }
        Ok(Ticket {
            id: TicketId::random(&uuid::Uuid::new_v4().simple().to_string()),
            owner: actor.clone(),
            players,
            mode: self.mode,
            regions,
            rating: self.rating,
            enqueued_at: now_ms(),
        })
    }
}

/// `POST /v1/tickets` -> 201 with the ticket.
pub async fn create(
    State(state): State<AppState>,
    Player(actor): Player,
    ApiJson(body): ApiJson<CreateTicket>,
) -> Result<Response, ApiError> {
    let ticket = body.validate(&actor, &state)?;
    match state.store.enqueue(&ticket).await? {
        EnqueueOutcome::Queued => {}
        EnqueueOutcome::PlayerBusy(current) => {
            return Err(ApiError::conflict(
                "player_busy",
                format!(
                    "player already has an active ticket {current}; cancel it or wait for it to finish"
                ),
            ));
        }
    }
    // Just queued: no need to read it back from the store.
    let view = TicketView::new(&ticket, TicketStatus::Queued, ticket.enqueued_at);
    let location = format!("/v1/tickets/{}", ticket.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(view),
    )
        .into_response())
}

fn ticket_id(raw: String) -> Result<TicketId, ApiError> {
    TicketId::new(raw).map_err(|_| ApiError::not_found("ticket_not_found", "no such ticket"))
}

/// The caller's ticket, or 404 (also for other players' tickets).
async fn read(
    state: &AppState,
    actor: &PlayerId,
    id: &TicketId,
) -> Result<Json<TicketView>, ApiError> {
    state
        .store
        .ticket(actor, id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("ticket_not_found", "no such ticket"))
}

/// `GET /v1/tickets/{id}`.
pub async fn get_one(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<TicketView>, ApiError> {
    let id = ticket_id(id)?;
    read(&state, &actor, &id).await
}

/// `DELETE /v1/tickets/{id}` -> the cancelled ticket; 409 once it is in a match.
pub async fn cancel(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<TicketView>, ApiError> {
    let id = ticket_id(id)?;
    match state.store.cancel(&actor, &id).await? {
        CancelOutcome::Cancelled => {
            let event = EventEnvelope {
                player: actor.clone(),
                event: Event::Cancelled {
                    ticket_id: id.clone(),
                },
            };
            if let Err(e) = state.store.publish(&[event]).await {
                tracing::warn!(error = %e, "could not publish ticket.cancelled");
            }
        }
        CancelOutcome::AlreadyCancelled => {}
        CancelOutcome::Matched(mid) => {
            return Err(ApiError::conflict(
                "ticket_matched",
                format!("ticket is already in match {mid}"),
            ));
        }
        CancelOutcome::NotFound => {
            return Err(ApiError::not_found("ticket_not_found", "no such ticket"));
        }
    }
    read(&state, &actor, &id).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchesQuery {
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct MatchList {
    pub player_id: PlayerId,
    pub matches: Vec<Match>,
}

/// `GET /v1/players/{id}/matches` (`id` may be `me`): the caller's own matches.
pub async fn player_matches(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<MatchesQuery>,
) -> Result<Json<MatchList>, ApiError> {
    if id != "me" && id != actor.as_str() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "players can only list their own matches",
        ));
    }
    let limit = q.limit.unwrap_or(20);
    if !(1..=mm_store::HISTORY_LEN).contains(&limit) {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("limit must be between 1 and {}", mm_store::HISTORY_LEN),
        ));
    }
    let matches = state.store.player_matches(&actor, limit).await?;
    Ok(Json(MatchList {
        player_id: actor,
        matches,
    }))
}
