//! Rating endpoints: a player's ratings in every mode and their history (read
//! from the rating database as it is now: a player sees their own writes), and
//! leaderboards (cached for a few seconds; each answer says how old it is).

use super::Code;
use super::extract::ApiQuery;
use super::{ApiError, AppState, Player};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use mm_domain::{MatchId, Millis, PlayerId, RatingPolicy, Skill, now_ms};
use mm_ratings::BoardRow;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;

/// How long a leaderboard page is served from the cache.
pub const BOARD_TTL: Millis = 5_000;
/// Largest page of a leaderboard or history.
const MAX_LIMIT: usize = 100;

/// A leaderboard page's (mode, offset, size).
type PageKey = (String, u64, usize);

/// Leaderboard pages by (mode, first rank, size), with when they were read.
#[derive(Default)]
pub struct Boards {
    pages: Mutex<HashMap<PageKey, (Millis, Vec<BoardRow>)>>,
}

fn own(actor: &PlayerId, id: &str) -> Result<(), ApiError> {
    if id == "me" || id == actor.as_str() {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            Code::FORBIDDEN,
            "players can only read their own ratings",
        ))
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ModeRatingView {
    pub mode: String,
    /// `elo` or `weng_lin`.
    pub model: &'static str,
    /// Elo rating or the mean, after decay if the player is idle.
    pub rating: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<f64>,
    /// The figure the matchmaker matches on (and leaderboards rank by).
    pub matchmaking_rating: f64,
    pub games: u64,
    /// How many results changed the rating (0: never rated; the mode's default).
    pub version: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_played: Option<Millis>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RatingsView {
    pub player_id: PlayerId,
    pub ratings: Vec<ModeRatingView>,
}

fn view(
    mode: &str,
    policy: &RatingPolicy,
    stored: Option<mm_ratings::Stored>,
    now: Millis,
) -> ModeRatingView {
    let skill = stored.map_or(policy.initial(), |s| {
        policy.decayed(s.skill, s.last_played, now)
    });
    ModeRatingView {
        mode: mode.to_string(),
        model: policy.model_name(),
        rating: skill.rating,
        uncertainty: skill.uncertainty,
        matchmaking_rating: policy.matching_value(&skill),
        games: stored.map_or(0, |s| s.games),
        version: skill.version,
        last_played: stored.map(|s| s.last_played),
    }
}

/// `GET /v1/players/{id}/ratings`: every mode's rating (the default for modes the
/// player never played).
#[utoipa::path(get, path = "/v1/players/{id}/ratings", tag = "ratings",
    params(("id" = String, Path, description = "`me` or the caller's id")),
    responses((status = 200, description = "The caller's rating in every mode", body = RatingsView), crate::ingress::openapi::Errors),
    security(("bearer" = [])))]
pub async fn player(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<RatingsView>, ApiError> {
    own(&actor, &id)?;
    let stored = state.ratings.store().player(&actor).await?;
    let now = now_ms();
    let ratings = state
        .catalog
        .modes()
        .iter()
        .map(|m| {
            let s = stored.iter().find(|r| r.mode == m.name).map(|r| r.stored);
            view(&m.name, &m.rating, s, now)
        })
        .collect();
    Ok(Json(RatingsView {
        player_id: actor,
        ratings,
    }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    pub mode: String,
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HistoryItem {
    pub match_id: MatchId,
    pub old: Skill,
    pub new: Skill,
    /// The player's team's place (1 is best; equal places drew).
    pub rank: u32,
    pub abandoned: bool,
    pub at: Millis,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HistoryView {
    pub player_id: PlayerId,
    pub mode: String,
    pub history: Vec<HistoryItem>,
}

fn limit(l: Option<usize>, default: usize) -> Result<usize, ApiError> {
    let l = l.unwrap_or(default);
    if !(1..=MAX_LIMIT).contains(&l) {
        return Err(ApiError::bad_request(
            Code::INVALID_QUERY,
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    Ok(l)
}

fn known_mode<'a>(state: &'a AppState, mode: &str) -> Result<&'a mm_engine::Mode, ApiError> {
    state.catalog.mode(mode).ok_or_else(|| {
        ApiError::not_found(
            Code::UNKNOWN_MODE,
            format!(
                "unknown mode {mode:?}; known modes: {}",
                state.catalog.modes().names().collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

/// `GET /v1/players/{id}/ratings/history?mode=&limit=`: scored matches, newest first.
#[utoipa::path(get, path = "/v1/players/{id}/ratings/history", tag = "ratings",
    params(("id" = String, Path, description = "`me` or the caller's id"), HistoryQuery),
    responses((status = 200, description = "The caller's scored matches in a mode, newest first", body = HistoryView), crate::ingress::openapi::Errors),
    security(("bearer" = [])))]
pub async fn history(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> Result<Json<HistoryView>, ApiError> {
    own(&actor, &id)?;
    known_mode(&state, &q.mode)?;
    let limit = limit(q.limit, 20)?;
    let rows = state
        .ratings
        .store()
        .history(&actor, &q.mode, limit)
        .await?;
    Ok(Json(HistoryView {
        player_id: actor,
        mode: q.mode,
        history: rows
            .into_iter()
            .map(|h| HistoryItem {
                match_id: h.match_id,
                old: h.old,
                new: h.new,
                rank: h.rank,
                abandoned: h.abandoned,
                at: h.at,
            })
            .collect(),
    }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct BoardQuery {
    pub limit: Option<usize>,
    /// `me` (or the caller's id): the page around the caller's rank.
    pub around: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BoardEntry {
    pub rank: u64,
    pub player_id: PlayerId,
    /// What the board ranks by: the figure matched on, after decay.
    pub rating: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<f64>,
    pub games: u64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BoardView {
    pub mode: String,
    /// When the page was read from the rating database (ms since the epoch).
    pub as_of: Millis,
    /// How old the page is now; pages are read again after `max_age_ms`.
    pub age_ms: Millis,
    pub max_age_ms: Millis,
    pub entries: Vec<BoardEntry>,
    /// With `around=me`: the caller's rank now (`null` if never rated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player_rank: Option<Option<u64>>,
}

/// `GET /v1/leaderboards/{mode}?limit=&around=me`.
#[utoipa::path(get, path = "/v1/leaderboards/{mode}", tag = "ratings",
    params(("mode" = String, Path, description = "A mode"), BoardQuery),
    responses((status = 200, description = "A page of the leaderboard", body = BoardView), crate::ingress::openapi::Errors),
    security(("bearer" = [])))]
pub async fn leaderboard(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(mode): Path<String>,
    ApiQuery(q): ApiQuery<BoardQuery>,
) -> Result<Json<BoardView>, ApiError> {
    known_mode(&state, &mode)?;
    let limit = limit(q.limit, 10)?;
    let mut player_rank = None;
    let mut offset = 0;
    if let Some(around) = &q.around {
        if around != "me" && around != actor.as_str() {
            return Err(ApiError::bad_request(
                Code::INVALID_QUERY,
                "around takes `me` (leaderboards center on the caller only)",
            ));
        }
        let rank = state.ratings.store().rank(&mode, &actor).await?;
        if let Some(r) = rank {
            offset = r.saturating_sub(1).saturating_sub(limit as u64 / 2);
        }
        player_rank = Some(rank);
    }
    let now = now_ms();
    let key = (mode.clone(), offset, limit);
    let cached = state
        .boards
        .pages
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .filter(|(at, _)| now.saturating_sub(*at) < BOARD_TTL)
        .cloned();
    let (as_of, rows) = match cached {
        Some(page) => page,
        None => {
            let rows = state
                .ratings
                .store()
                .leaderboard(&mode, offset, limit)
                .await?;
            let mut pages = state.boards.pages.lock().unwrap_or_else(|e| e.into_inner());
            pages.retain(|_, (at, _)| now.saturating_sub(*at) < BOARD_TTL);
            pages.insert(key, (now, rows.clone()));
            (now, rows)
        }
    };
    Ok(Json(BoardView {
        mode,
        as_of,
        age_ms: now.saturating_sub(as_of),
        max_age_ms: BOARD_TTL,
        entries: rows
            .into_iter()
            .map(|r| BoardEntry {
                rank: r.rank,
                player_id: r.player,
                rating: r.value,
                uncertainty: r.skill.uncertainty,
                games: r.games,
            })
            .collect(),
        player_rank,
    }))
}
