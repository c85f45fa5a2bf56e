//! Party endpoints (seed 004's party service): parties form by invitation and
//! acceptance, and only a party's leader queues it with its members.
//!
//! - `POST /v1/parties`: create one, the caller leading (`409 already_in_party`).
//! - `GET /v1/parties/{id}`: for members and invitees; `404` for anyone else.
//! - `POST /v1/parties/{id}/invites` `{"player_id"}`: the leader invites.
//! - `POST /v1/parties/{id}/join`: an invitee accepts (`409 party_full`,
//!   `409 already_in_party`).
//! - `POST /v1/parties/{id}/leave`, `.../kick` `{"player_id"}` (leader),
//!   `DELETE /v1/parties/{id}` (leader: disband).
//! - `GET /v1/players/{id}/party` (`me`): the caller's party.
//!
//! Every change is a delta merged in the store ([`mm_store::Parties`]), so edits
//! through different ingresses converge. Members (and whoever a change concerns)
//! get `party.updated`; an invitee gets `party.invited`. A player leaving, kicked,
//! or a party disbanding cancels the live party tickets of the players concerned
//! (reason `party_changed`).

use super::Code;
use super::auth::TokenClaims;
use super::extract::ApiJson;
use super::openapi::Errors;
use super::{ApiError, AppState, Player};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mm_domain::{
    Attributes, Event, EventEnvelope, MAX_PARTY, MAX_PENDING_INVITES, Party, PartyId, PartyView,
    PlayerId, now_ms,
};
use mm_store::{PartyLimits, PartyMerge};
use serde::Deserialize;

/// Why party tickets are cancelled when the party changes.
pub const PARTY_CHANGED: &str = "party_changed";

/// Body of invites and kicks.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    #[schema(value_type = PlayerId)]
    pub player_id: String,
}

fn nonce() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The unique part of an edit's tag: a count of this process's edits, then a
/// random id. Tags order edits by time (ms) first, so two edits in the same
/// millisecond (two players joining one after the other) keep the order this
/// process made them in; edits of separate ingresses within one millisecond
/// order at random.
fn edit_nonce() -> String {
    static EDITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = EDITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{n:016x}{}", nonce())
}

fn not_found() -> ApiError {
    ApiError::not_found(Code::PARTY_NOT_FOUND, "no such party")
}

fn party_id(raw: String) -> Result<PartyId, ApiError> {
    PartyId::new(raw).map_err(|_| not_found())
}

fn target(t: Target) -> Result<PlayerId, ApiError> {
    PlayerId::new(t.player_id)
        .map_err(|e| ApiError::bad_request(Code::INVALID_PLAYER, e.to_string()))
}

fn not_leader() -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        Code::NOT_PARTY_LEADER,
        "only the party's leader may do this",
    )
}

/// The party, if it exists and is not disbanded.
async fn load(state: &AppState, id: &PartyId) -> Result<Party, ApiError> {
    match state.store.party(id).await? {
        Some(p) if !p.disbanded => Ok(p),
        _ => Err(not_found()),
    }
}

/// The party `player` is in, if any (a stale pointer reads as none).
pub async fn current(state: &AppState, player: &PlayerId) -> Result<Option<Party>, ApiError> {
    let Some(id) = state.store.player_party(player).await? else {
        return Ok(None);
    };
    Ok(state
        .store
        .party(&id)
        .await?
        .filter(|p| p.is_member(player)))
}

/// Points `player` at `id`, taking over a stale pointer; `409` if they are in
/// another party.
async fn claim(state: &AppState, player: &PlayerId, id: &PartyId) -> Result<(), ApiError> {
    let in_other = |other: &PartyId| {
        ApiError::conflict(
            Code::ALREADY_IN_PARTY,
            format!("player {player} is in party {other}; leave it first"),
        )
        .with("party_id", other.to_string())
    };
    let mut stale = None;
    loop {
        match state.store.claim_party(player, id, stale.as_ref()).await? {
            None => return Ok(()),
            Some(other) => {
                let live = state
                    .store
                    .party(&other)
                    .await?
                    .is_some_and(|p| p.is_member(player));
                if live || stale.as_ref() == Some(&other) {
                    return Err(in_other(&other));
                }
                stale = Some(other);
            }
        }
    }
}

fn too_many_invites(whose: &str) -> ApiError {
    ApiError::conflict(
        Code::TOO_MANY_INVITES,
        format!("{whose} at most {MAX_PENDING_INVITES} invites pending at once"),
    )
}

async fn merge(state: &AppState, delta: &Party) -> Result<Party, ApiError> {
    let limits = PartyLimits {
        members: MAX_PARTY,
        invites: MAX_PENDING_INVITES,
    };
    match state.store.merge_party(delta, limits).await? {
        PartyMerge::Merged(p) => Ok(p),
        PartyMerge::Full => Err(ApiError::conflict(
            Code::PARTY_FULL,
            format!("a party has at most {MAX_PARTY} members"),
        )),
        PartyMerge::TooManyInvites => Err(too_many_invites("a party has")),
    }
}

/// Notes with `who` that `party` invites them; `409 too_many_invites` when they
/// already have [`MAX_PENDING_INVITES`] pending from other parties. Notes of
/// invites since accepted, withdrawn or disbanded are forgotten on the way.
async fn note_invite(state: &AppState, who: &PlayerId, party: &PartyId) -> Result<(), ApiError> {
    for _ in 0..2 {
        let noted = match state
            .store
            .note_invite(who, party, MAX_PENDING_INVITES)
            .await?
        {
            Ok(()) => return Ok(()),
            Err(noted) => noted,
        };
        let mut forgot = false;
        for other in noted {
            let pending = state
                .store
                .party(&other)
                .await?
                .is_some_and(|p| p.is_invited(who));
            if !pending {
                state.store.forget_invite(who, &other).await?;
                forgot = true;
            }
        }
        if !forgot {
            break;
        }
    }
    Err(too_many_invites("a player has"))
}

/// Tells the party's members, and `also`, of a change.
async fn announce(
    state: &AppState,
    party: &Party,
    change: &str,
    who: &PlayerId,
    also: &[PlayerId],
) {
    let view = party.view();
    let mut to = party.members();
    for p in also {
        if !to.contains(p) {
            to.push(p.clone());
        }
    }
    let events: Vec<EventEnvelope> = to
        .into_iter()
        .map(|player| EventEnvelope {
            player,
            event: Event::PartyUpdated {
                party: view.clone(),
                change: change.to_string(),
                player_id: who.clone(),
                disbanded: party.disbanded,
            },
        })
        .collect();
    if let Err(e) = state.store.publish(&events).await {
        warn_store!(e, "could not publish party.updated");
    }
}

/// Cancels `player`'s live party tickets (those naming other players too), for
/// every player on them.
pub async fn cancel_party_tickets(state: &AppState, player: &PlayerId) -> Result<(), ApiError> {
    for id in state.store.live_tickets(player).await? {
        let Some(view) = state.store.ticket(player, &id).await? else {
            continue;
        };
        if view.players.len() < 2 || view.status.is_terminal() {
            continue;
        }
        if state
            .store
            .withdraw(player, &id, Some(PARTY_CHANGED))
            .await?
            == mm_store::CancelOutcome::Cancelled
        {
            super::tickets::announce_cancelled(state, &view.players, &id, Some(PARTY_CHANGED))
                .await;
        }
    }
    Ok(())
}

/// Keeps the claims of `player`'s token that modes take attributes from, for
/// the tickets their party's leader queues (nothing when no mode does).
async fn attest(state: &AppState, player: &PlayerId, claims: &Attributes) -> Result<(), ApiError> {
    let names: std::collections::BTreeSet<&String> = state
        .catalog
        .modes()
        .iter()
        .flat_map(|m| &m.from_claims)
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    let mut kept = Attributes::default();
    for n in names {
        if let Some(v) = claims.get(n) {
            kept.insert(n.clone(), v.clone());
        }
    }
    state.store.attest(player, &kept).await?;
    Ok(())
}

/// `POST /v1/parties` -> 201 with the party, the caller leading.
#[utoipa::path(post, path = "/v1/parties", operation_id = "create_party", tag = "parties",
    responses((status = 201, description = "The new party, led by the caller", body = PartyView), Errors),
    security(("bearer" = [])))]
pub async fn create(
    State(state): State<AppState>,
    Player(actor): Player,
    TokenClaims(claims): TokenClaims,
) -> Result<Response, ApiError> {
    attest(&state, &actor, &claims).await?;
    if let Some(p) = current(&state, &actor).await? {
        return Err(ApiError::conflict(
            Code::ALREADY_IN_PARTY,
            format!("player {actor} is in party {}; leave it first", p.id),
        )
        .with("party_id", p.id.to_string()));
    }
    let id = PartyId::random(&nonce());
    claim(&state, &actor, &id).await?;
    let party = Party::create(id, actor.clone(), now_ms(), &edit_nonce());
    let party = match merge(&state, &party).await {
        Ok(p) => p,
        Err(e) => {
            state.store.release_party(&actor, &party.id).await?;
            return Err(e);
        }
    };
    announce(&state, &party, "created", &actor, &[]).await;
    let location = format!("/v1/parties/{}", party.id);
    Ok((
        StatusCode::CREATED,
        [(axum::http::header::LOCATION, location)],
        Json(party.view()),
    )
        .into_response())
}

/// `GET /v1/parties/{id}`: members and invitees only.
#[utoipa::path(get, path = "/v1/parties/{id}", operation_id = "get_party", tag = "parties", params(("id" = String, Path, description = "Party id")),
    responses((status = 200, description = "The party", body = PartyView), Errors),
    security(("bearer" = [])))]
pub async fn get_one(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<PartyView>, ApiError> {
    let party = load(&state, &party_id(id)?).await?;
    if !party.is_member(&actor) && !party.is_invited(&actor) {
        return Err(not_found());
    }
    Ok(Json(party.view()))
}

/// `GET /v1/players/{id}/party` (`me`).
#[utoipa::path(get, path = "/v1/players/{id}/party", tag = "parties",
    params(("id" = String, Path, description = "`me` or the caller's id")),
    responses((status = 200, description = "The caller's party", body = PartyView), Errors),
    security(("bearer" = [])))]
pub async fn mine(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<PartyView>, ApiError> {
    if id != "me" && id != actor.as_str() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            Code::FORBIDDEN,
            "players can only read their own party",
        ));
    }
    current(&state, &actor)
        .await?
        .map(|p| Json(p.view()))
        .ok_or_else(|| ApiError::not_found(Code::NO_PARTY, "the player is in no party"))
}

/// The party, which the caller leads.
async fn led(state: &AppState, actor: &PlayerId, id: String) -> Result<Party, ApiError> {
    let party = load(state, &party_id(id)?).await?;
    if !party.is_member(actor) {
        return Err(not_found());
    }
    if party.leader != *actor {
        return Err(not_leader());
    }
    Ok(party)
}

/// `POST /v1/parties/{id}/invites`: the leader invites a player.
#[utoipa::path(post, path = "/v1/parties/{id}/invites", tag = "parties", params(("id" = String, Path, description = "Party id")), request_body = Target,
    responses((status = 200, description = "The party with the invite", body = PartyView), Errors),
    security(("bearer" = [])))]
pub async fn invite(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Target>,
) -> Result<Json<PartyView>, ApiError> {
    let mut party = led(&state, &actor, id).await?;
    let who = target(body)?;
    if party.is_member(&who) {
        return Err(ApiError::conflict(
            Code::ALREADY_MEMBER,
            format!("player {who} is already in the party"),
        ));
    }
    let again = party.is_invited(&who);
    note_invite(&state, &who, &party.id).await?;
    let delta = party.invite(who.clone(), now_ms(), &edit_nonce());
    let party = match merge(&state, &delta).await {
        Ok(p) => p,
        Err(e) => {
            if !again {
                state.store.forget_invite(&who, &party.id).await?;
            }
            return Err(e);
        }
    };
    announce(&state, &party, "invited", &who, &[]).await;
    let invited = EventEnvelope {
        player: who,
        event: Event::PartyInvited {
            party: party.view(),
            by: actor,
        },
    };
    if let Err(e) = state.store.publish(&[invited]).await {
        warn_store!(e, "could not publish party.invited");
    }
    Ok(Json(party.view()))
}

/// `POST /v1/parties/{id}/join`: an invitee accepts.
#[utoipa::path(post, path = "/v1/parties/{id}/join", tag = "parties", params(("id" = String, Path, description = "Party id")),
    responses((status = 200, description = "The party joined", body = PartyView), Errors),
    security(("bearer" = [])))]
pub async fn join(
    State(state): State<AppState>,
    Player(actor): Player,
    TokenClaims(claims): TokenClaims,
    Path(id): Path<String>,
) -> Result<Json<PartyView>, ApiError> {
    let mut party = load(&state, &party_id(id)?).await?;
    if party.is_member(&actor) {
        return Ok(Json(party.view()));
    }
    if !party.is_invited(&actor) {
        return Err(not_found());
    }
    if party.members().len() >= MAX_PARTY {
        return Err(ApiError::conflict(
            Code::PARTY_FULL,
            format!("a party has at most {MAX_PARTY} members"),
        ));
    }
    attest(&state, &actor, &claims).await?;
    claim(&state, &actor, &party.id).await?;
    let delta = party.join(actor.clone(), now_ms(), &edit_nonce());
    let party = match merge(&state, &delta).await {
        Ok(p) => p,
        Err(e) => {
            state.store.release_party(&actor, &party.id).await?;
            return Err(e);
        }
    };
    if let Err(e) = state.store.forget_invite(&actor, &party.id).await {
        // Only a note: forgotten later when it is found stale.
        warn_store!(e, "could not forget an accepted invite");
    }
    announce(&state, &party, "joined", &actor, &[]).await;
    Ok(Json(party.view()))
}

/// Takes `who` out of the party (leaving or kicked), cancelling their party
/// tickets first.
async fn remove(
    state: &AppState,
    mut party: Party,
    who: &PlayerId,
    change: &str,
) -> Result<Party, ApiError> {
    cancel_party_tickets(state, who).await?;
    let delta = party.remove(who, now_ms(), &edit_nonce());
    let party = merge(state, &delta).await?;
    state.store.release_party(who, &party.id).await?;
    announce(state, &party, change, who, std::slice::from_ref(who)).await;
    Ok(party)
}

/// `POST /v1/parties/{id}/leave`.
#[utoipa::path(post, path = "/v1/parties/{id}/leave", tag = "parties", params(("id" = String, Path, description = "Party id")),
    responses((status = 200, description = "The party without the caller", body = PartyView), Errors),
    security(("bearer" = [])))]
pub async fn leave(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<PartyView>, ApiError> {
    let party = load(&state, &party_id(id)?).await?;
    if !party.is_member(&actor) {
        return Err(not_found());
    }
    Ok(Json(remove(&state, party, &actor, "left").await?.view()))
}

/// `POST /v1/parties/{id}/kick`: the leader removes a member.
#[utoipa::path(post, path = "/v1/parties/{id}/kick", tag = "parties", params(("id" = String, Path, description = "Party id")), request_body = Target,
    responses((status = 200, description = "The party without the player", body = PartyView), Errors),
    security(("bearer" = [])))]
pub async fn kick(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Target>,
) -> Result<Json<PartyView>, ApiError> {
    let party = led(&state, &actor, id).await?;
    let who = target(body)?;
    if who == actor {
        return Err(ApiError::bad_request(
            Code::INVALID_PLAYER,
            "to leave your own party, use /leave",
        ));
    }
    if !party.is_member(&who) && !party.is_invited(&who) {
        // 409, not 404: the party (the resource named) exists.
        return Err(ApiError::conflict(
            Code::PLAYER_NOT_IN_PARTY,
            format!("player {who} is not in the party"),
        ));
    }
    Ok(Json(remove(&state, party, &who, "kicked").await?.view()))
}

/// `DELETE /v1/parties/{id}`: the leader disbands the party.
#[utoipa::path(delete, path = "/v1/parties/{id}", tag = "parties", params(("id" = String, Path, description = "Party id")),
    responses((status = 200, description = "The disbanded party", body = PartyView), Errors),
    security(("bearer" = [])))]
pub async fn disband(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<PartyView>, ApiError> {
    let mut party = led(&state, &actor, id).await?;
    let members = party.members();
    for m in &members {
        cancel_party_tickets(&state, m).await?;
    }
    let delta = party.disband();
    let after = merge(&state, &delta).await?;
    for m in &members {
        state.store.release_party(m, &after.id).await?;
    }
    announce(&state, &after, "disbanded", &actor, &members).await;
    Ok(Json(after.view()))
}
