//! Ticket endpoints: create, read, cancel, and a player's matches.

use super::Code;
use super::attributes;
use super::extract::{ApiJson, ApiQuery};
use super::limits::{Class, TicketCharge};
use super::openapi::Errors;
use super::{Actor, ApiError, AppState, Player};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mm_domain::{
    Attributes, EventEnvelope, MAX_RATING, MIN_RATING, Match, PlayerId, RegionLatency, RegionQueue,
    Skill, Ticket, TicketId, TicketStatus, TicketView, now_ms,
};
use mm_engine::{Mode, RegionChoice};
use mm_store::{CancelOutcome, EnqueueOutcome, RateCheck};
use mm_telemetry::names;
use serde::{Deserialize, Serialize};

mod spec;
pub use spec::{PlayerSpec, RatedPlayer, RegionSpec};

/// Most regions a ticket may list.
const MAX_REGIONS: usize = 8;
/// Highest latency a client may report (ms).
const MAX_LATENCY_MS: u32 = 10_000;

/// Body of `POST /v1/tickets`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTicket {
    /// The players of the ticket: the caller alone, or a party of up to 5
    /// (at most the mode's team size) that always plays on one team. Left
    /// out, the ticket is the authenticated player's alone (a trusted backend
    /// acting for no player must list them).
    #[serde(default)]
    #[schema(value_type = Vec<PlayerSpec>, min_items = 1, max_items = 5)]
    pub players: Option<Vec<PlayerSpec>>,
    pub mode: String,
    /// Acceptable regions (`region` is shorthand for one). Regions the
    /// deployment does not serve, or has closed, are passed over; at least one
    /// listed must be served (else `400 unknown_region`) and open (else `409
    /// region_closed`).
    #[serde(default)]
    #[schema(max_items = 8)]
    pub regions: Vec<RegionSpec>,
    #[serde(default)]
    pub region: Option<String>,
    /// Rating of players listed without their own (trusted backends only, or
    /// dev mode with ALLOW_CLIENT_RATINGS).
    #[serde(default)]
    #[schema(minimum = 0, maximum = 10000)]
    pub rating: Option<f64>,
    /// What the players run and want, read by the mode's rules: strings,
    /// numbers and lists of strings, e.g. `{"build": "1.4.2", "platform": "pc",
    /// "maps": ["dust", "harbor"], "level": 37}`. At most 32, named
    /// `[a-z0-9_]{1,32}`; strings up to 64 bytes, lists up to 32 items.
    #[serde(default)]
    #[schema(value_type = Option<Attributes>)]
    pub attributes: Option<attributes::Raw>,
}

fn check_rating(r: f64, who: &str) -> Result<f64, ApiError> {
    if !(MIN_RATING..=MAX_RATING).contains(&r) {
        return Err(ApiError::bad_request(
            Code::INVALID_RATING,
            format!("rating of {who} must be between {MIN_RATING} and {MAX_RATING}"),
        ));
    }
    Ok(r)
}

impl CreateTicket {
    /// A ticket from the request; its ratings are the client's when it sent them
    /// (and may), else left for [`enqueue_rated`] (the second value says which).
    fn validate(
        self,
        actor: &Actor,
        state: &AppState,
    ) -> Result<(Ticket, bool, attributes::Sent), ApiError> {
        let Some(mode) = state.catalog.mode(&self.mode) else {
            return Err(ApiError::bad_request(
                Code::UNKNOWN_MODE,
                format!(
                    "unknown mode {:?}; known modes: {}",
                    self.mode,
                    state.catalog.modes().names().collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        if mode.closed {
            return Err(ApiError::conflict(
                Code::MODE_CLOSED,
                format!("mode {:?} is closed: it takes no new tickets", self.mode),
            ));
        }
        let specs = match (self.players, &actor.player) {
            (Some(specs), _) if specs.is_empty() => {
                return Err(ApiError::bad_request(
                    Code::MISSING_PLAYER,
                    "players must list at least one player (leave it out to queue the authenticated player alone)",
                ));
            }
            (Some(specs), _) => specs,
            (None, Some(me)) => vec![PlayerSpec::Id(me.as_str().to_owned())],
            (None, None) => {
                return Err(ApiError::bad_request(
                    Code::MISSING_PLAYER,
                    "players must list the ticket's players: a trusted backend acts for no player of its own",
                ));
            }
        };
        if specs.len() > mode.max_party {
            return Err(ApiError::bad_request(
                Code::PARTY_TOO_LARGE,
                format!(
                    "mode {} accepts parties of at most {} players, got {}",
                    mode.name,
                    mode.max_party,
                    specs.len()
                ),
            ));
        }
        let from_client = self.rating.is_some()
            || specs.iter().any(|p| {
                matches!(
                    p,
                    PlayerSpec::Rated(RatedPlayer {
                        rating: Some(_),
                        ..
                    })
                )
            });
        if from_client && !state.client_ratings && !actor.trusted() {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                Code::RATING_NOT_ALLOWED,
                "ratings come from the rating service: leave rating out (only a trusted backend may send ratings; ALLOW_CLIENT_RATINGS=true allows them for tests and imports)",
            ));
        }
        let default_rating = self
            .rating
            .map(|r| check_rating(r, "the ticket"))
            .transpose()?;
        let mut players = Vec::with_capacity(specs.len());
        let mut player_ratings = Vec::with_capacity(specs.len());
        let mut sent = attributes::Sent {
            ticket: self.attributes,
            players: Vec::with_capacity(specs.len()),
        };
        for spec in specs {
            let (id, rating, own) = match spec {
                PlayerSpec::Id(id) => (id, None, None),
                PlayerSpec::Rated(p) => (p.id, p.rating, p.attributes),
            };
            sent.players.push(own);
            let id = PlayerId::new(id)
                .map_err(|e| ApiError::bad_request(Code::INVALID_PLAYER, e.to_string()))?;
            if players.contains(&id) {
                return Err(ApiError::bad_request(
                    Code::INVALID_PLAYER,
                    format!("player {id} is listed twice"),
                ));
            }
            let rating = match (rating, from_client) {
                (Some(r), _) => check_rating(r, id.as_str())?,
                // Filled in from the rating service before queueing.
                (None, false) => 0.0,
                (None, true) => default_rating.ok_or_else(|| {
                    ApiError::bad_request(
                        Code::MISSING_RATING,
                        format!("player {id} has no rating and the ticket gives none"),
                    )
                })?,
            };
            players.push(id);
            player_ratings.push(rating);
        }
        // The ticket's owner: the acting player, who must be one of its players (a
        // trusted backend naming nobody acts for the first).
        let owner = match &actor.player {
            Some(p) if players.contains(p) => p.clone(),
            Some(_) => {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    Code::NOT_YOUR_TICKET,
                    "a ticket's players must include the authenticated player",
                ));
            }
            None => players[0].clone(),
        };
        let mut regions: Vec<RegionLatency> = self
            .regions
            .into_iter()
            .map(|r| match r {
                RegionSpec::Name(region) => RegionLatency {
                    region,
                    latency_ms: None,
                },
                RegionSpec::Measured(m) => RegionLatency {
                    region: m.region,
                    latency_ms: m.latency_ms,
                },
            })
            .collect();
        if let Some(r) = self.region {
            if !regions.is_empty() {
                return Err(ApiError::bad_request(
                    Code::INVALID_REQUEST,
                    "give either region or regions, not both",
                ));
            }
            regions.push(RegionLatency {
                region: r,
                latency_ms: None,
            });
        }
        if regions.is_empty() {
            return Err(ApiError::bad_request(
                Code::MISSING_REGION,
                "regions must list at least one region",
            ));
        }
        if regions.len() > MAX_REGIONS {
            return Err(ApiError::bad_request(
                Code::INVALID_REQUEST,
                format!("at most {MAX_REGIONS} regions"),
            ));
        }
        for (i, r) in regions.iter().enumerate() {
            if regions[..i].iter().any(|x| x.region == r.region) {
                return Err(ApiError::bad_request(
                    Code::INVALID_REQUEST,
                    format!("region {:?} is listed twice", r.region),
                ));
            }
            if r.latency_ms.is_some_and(|l| l > MAX_LATENCY_MS) {
                return Err(ApiError::bad_request(
                    Code::INVALID_LATENCY,
                    format!("latency_ms must be at most {MAX_LATENCY_MS}"),
                ));
            }
        }
        // Regions this deployment does not serve are passed over while one it
        // does is listed: clients measure the regions they were shipped with,
        // and a region taken out of service (`REGIONS`) must not turn every
        // older client's ticket away.
        if !regions.iter().any(|r| state.catalog.has_region(&r.region)) {
            return Err(ApiError::bad_request(
                Code::UNKNOWN_REGION,
                format!(
                    "no region served here among {}; served regions: {}",
                    regions
                        .iter()
                        .map(|r| format!("{:?}", r.region))
                        .collect::<Vec<_>>()
                        .join(", "),
                    state.catalog.regions().join(", ")
                ),
            ));
        }
        // A closed region (being retired: `CLOSED_REGIONS`) is passed over
        // the same way; one listed with no open region beside it is refused.
        if !regions.iter().any(|r| state.catalog.region_open(&r.region)) {
            return Err(ApiError::conflict(
                Code::REGION_CLOSED,
                format!(
                    "every region served here among {} is closed; open regions: {}",
                    regions
                        .iter()
                        .filter(|r| state.catalog.has_region(&r.region))
                        .map(|r| format!("{:?}", r.region))
                        .collect::<Vec<_>>()
                        .join(", "),
                    state
                        .catalog
                        .regions()
                        .iter()
                        .filter(|r| state.catalog.region_open(r))
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        regions.retain(|r| state.catalog.region_open(&r.region));
        let enqueued_at = now_ms();
        let choices: Vec<RegionChoice> = regions
            .iter()
            .map(|r| RegionChoice {
                region: &r.region,
                latency_ms: r.latency_ms,
            })
            .collect();
        let queues = mm_engine::plan(mode, &choices, enqueued_at)
            .into_iter()
            .map(|(region, eligible_at)| RegionQueue {
                region: region.to_string(),
                eligible_at,
            })
            .collect();
        let ticket = Ticket {
            id: TicketId::random(&uuid::Uuid::new_v4().simple().to_string()),
            owner,
            rating: mode.party_rating.rate(&player_ratings),
            players,
            player_ratings,
            skills: Vec::new(),
            skills_fresh: false,
            mode: self.mode,
            regions,
            enqueued_at,
            queues,
            attributes: Attributes::default(),
            player_attributes: Vec::new(),
            blocks: Vec::new(),
            blocks_rev: 0,
            lane: 0,
        };
        Ok((ticket, from_client, sent))
    }
}

/// Fills in the ticket's ratings from the players' stored ones (`None`: never
/// rated): each player's skill in the mode (decayed if idle; the mode's initial
/// skill if never rated) as the snapshot the match is scored against, the figure
/// the mode matches on, and the ticket's rating per the mode's party policy.
/// `fresh`: the store need not check them against the freshness marks.
fn fill(mode: &Mode, ticket: &mut Ticket, stored: &[Option<mm_ratings::Stored>], fresh: bool) {
    let now = now_ms();
    let policy = mode.rating;
    ticket.skills = stored
        .iter()
        .map(|s| {
            s.map_or(policy.initial(), |s| {
                policy.decayed(s.skill, s.last_played, now)
            })
        })
        .collect::<Vec<Skill>>();
    ticket.player_ratings = ticket
        .skills
        .iter()
        .map(|s| policy.matching_value(s))
        .collect();
    ticket.rating = mode.party_rating.rate(&ticket.player_ratings);
    ticket.skills_fresh = fresh;
}

/// Queues a ticket rated by the rating service, with its players' block lists
/// (read as the store activates them, [`mm_store::Store::activate_apart`], or
/// with the ticket's queueing).
///
/// With every player's rating cached, the ticket is queued with them and the store
/// refuses it if a newer rating was applied since (the player's freshness mark is
/// higher); it is then rebuilt from a read that waits for any rating batch in
/// flight. Otherwise the database is read while the store activates the players
/// (so the read costs no time of its own), and the versions read are checked
/// against the marks the activation returned. Where the marks are complete
/// (`serve`), players without one were never rated: no read at all.
async fn enqueue_rated(
    state: &AppState,
    mode: &Mode,
    ticket: &mut Ticket,
    charge: Option<&RateCheck>,
) -> Result<EnqueueOutcome, ApiError> {
    if let Some(hit) = state.ratings.cached(&mode.name, &ticket.players) {
        fill(mode, ticket, &hit, false);
        let outcome = state.store.enqueue_new(ticket, charge).await?;
        if !matches!(outcome, EnqueueOutcome::StaleRating(_)) {
            return Ok(outcome);
        }
        let fresh = state.ratings.fresh(&mode.name, &ticket.players).await?;
        fill(mode, ticket, &fresh, true);
        return Ok(state.store.enqueue(ticket).await?);
    }
    if state.complete_marks {
        let marks = match state.store.activate_apart(ticket, charge).await? {
            Ok(activated) => {
                ticket.blocks = activated.blocks;
                activated.marks
            }
            Err(refused) => return Ok(refused),
        };
        if marks.iter().all(|m| *m == 0) {
            fill(mode, ticket, &vec![None; ticket.players.len()], true);
            state.store.enqueue_entries(ticket).await?;
            return Ok(EnqueueOutcome::Queued);
        }
        let read = state.ratings.skills(&mode.name, &ticket.players).await;
        return finish(state, mode, ticket, read, &marks).await;
    }
    let (read, activated) = tokio::join!(
        state.ratings.skills(&mode.name, &ticket.players),
        state.store.activate_apart(ticket, charge)
    );
    let marks = match activated? {
        Ok(activated) => {
            ticket.blocks = activated.blocks;
            activated.marks
        }
        Err(refused) => return Ok(refused),
    };
    finish(state, mode, ticket, read, &marks).await
}

/// Queues an activated ticket with the ratings `read`, read again past any batch
/// in flight if one is older than its player's mark; gives the activation back if
/// the ratings cannot be read.
async fn finish(
    state: &AppState,
    mode: &Mode,
    ticket: &mut Ticket,
    read: Result<Vec<Option<mm_ratings::Stored>>, crate::ratings::lookup::LookupError>,
    marks: &[u64],
) -> Result<EnqueueOutcome, ApiError> {
    let rated = async {
        let mut stored = read?;
        let behind = stored
            .iter()
            .zip(marks)
            .any(|(s, mark)| s.map_or(0, |s| s.skill.version) < *mark);
        if behind {
            stored = state.ratings.fresh(&mode.name, &ticket.players).await?;
        }
        Ok::<_, ApiError>(stored)
    }
    .await;
    match rated {
        Ok(stored) => {
            fill(mode, ticket, &stored, true);
            state.store.enqueue_entries(ticket).await?;
            Ok(EnqueueOutcome::Queued)
        }
        Err(e) => {
            if let Err(undo) = state.store.deactivate(ticket).await {
                tracing::warn!(error = %undo, "could not give back a ticket's activation");
            }
            Err(e)
        }
    }
}

/// `POST /v1/tickets` -> 201 with the ticket.
#[utoipa::path(post, path = "/v1/tickets", operation_id = "create_ticket", tag = "tickets", request_body = CreateTicket,
    params(("X-Player-Id" = Option<String>, Header, description = "Trusted backends only: the player to act for")),
    responses((status = 201, description = "Queued", body = TicketView), Errors),
    security(("bearer" = [])))]
pub async fn create(
    State(state): State<AppState>,
    actor: Actor,
    TicketCharge(charge): TicketCharge,
    ApiJson(body): ApiJson<CreateTicket>,
) -> Result<Response, ApiError> {
    let started = std::time::Instant::now();
    let (mut ticket, from_client, sent) = body.validate(&actor, &state)?;
    if !actor.trusted() && ticket.players.len() > 1 {
        party_ticket(&state, &ticket.owner, &ticket.players).await?;
    }
    let catalog = state.catalog.clone();
    let mode = catalog
        .mode(&ticket.mode)
        .ok_or_else(|| ApiError::bad_request(Code::UNKNOWN_MODE, "unknown mode"))?;
    // Members' token claims, kept when they joined the party, for the
    // attributes the mode takes from tokens.
    let mut attested = Vec::new();
    if !mode.from_claims.is_empty() && !actor.trusted() {
        for p in &ticket.players {
            attested.push(match Some(p) == actor.player.as_ref() {
                true => None,
                false => state.store.attested(p).await?,
            });
        }
    }
    let (attrs, own) = attributes::resolve(
        mode,
        sent,
        &ticket.players,
        actor.player.as_ref(),
        actor.trusted(),
        &actor.claims,
        &attested,
    )?;
    ticket.attributes = attrs;
    ticket.player_attributes = own;
    attributes::matchable(mode, &ticket, actor.trusted())?;
    // Kept apart for good by the mode's hard rules (builds), in a lane of its
    // own in the queues.
    ticket.lane = mode.lane(&ticket);
    let charge = charge.as_ref();
    // Either way the ticket carries whom its players may never meet, as the
    // store has it now.
    let outcome = if from_client {
        state.store.enqueue_new(&mut ticket, charge).await?
    } else {
        enqueue_rated(&state, mode, &mut ticket, charge).await?
    };
    match outcome {
        EnqueueOutcome::Queued => {}
        EnqueueOutcome::Limited(wait) => {
            return Err(super::limits::limited(Class::Tickets, "player", wait));
        }
        EnqueueOutcome::PlayerBusy(player, current) => {
            return Err(ApiError::conflict(
                Code::PLAYER_BUSY,
                format!(
                    "player {player} already has an active ticket {current}; cancel it or wait for it to finish"
                ),
            )
            .with("ticket_id", current.to_string()));
        }
        EnqueueOutcome::InMatch(player, mid) => {
            return Err(ApiError::conflict(
                Code::PLAYER_IN_MATCH,
                format!("player {player} is in match {mid}, which is not over"),
            )
            .with("match_id", mid.to_string()));
        }
        EnqueueOutcome::StaleRating(player) => {
            return Err(ApiError::conflict(
                Code::RATING_CHANGED,
                format!("the rating of player {player} changed while the ticket was queued; retry"),
            ));
        }
        EnqueueOutcome::Banned(player, until) => {
            let secs = until.saturating_sub(now_ms()).div_ceil(1000).max(1);
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                Code::QUEUE_BANNED,
                format!(
                    "player {player} declined or ignored a ready check and may not queue for {secs} more seconds (until {until} ms since the epoch)"
                ),
            )
            .with("player_id", player.to_string())
            .with("banned_until", until)
            .retry_after(secs));
        }
    }
    // A ticket of a mode that cancels offline players' tickets is looked at
    // once its grace has run, in case a player never opens a socket.
    state.online.queued(
        &state.catalog,
        &ticket.mode,
        &ticket.players,
        &ticket.id,
        ticket.enqueued_at,
    );
    // Just queued: no need to read it back from the store.
    let view = TicketView::new(&ticket, TicketStatus::Queued, ticket.enqueued_at);
    let location = format!("/v1/tickets/{}", ticket.id);
    metrics::counter!(names::TICKETS_CREATED, "mode" => ticket.mode.clone()).increment(1);
    metrics::histogram!(names::TICKET_CREATE_DURATION, "mode" => ticket.mode.clone())
        .record(started.elapsed().as_secs_f64());
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(view),
    )
        .into_response())
}

/// A ticket naming other players is a party's: only its leader queues it, and
/// only with members.
async fn party_ticket(
    state: &AppState,
    actor: &PlayerId,
    players: &[PlayerId],
) -> Result<(), ApiError> {
    let forbidden = |code, message: String| ApiError::new(StatusCode::FORBIDDEN, code, message);
    let Some(party) = super::parties::current(state, actor).await? else {
        return Err(forbidden(
            Code::NOT_IN_PARTY,
            "a ticket may name other players only if they are in your party (POST /v1/parties, then invite them)".into(),
        ));
    };
    if party.leader != *actor {
        return Err(forbidden(
            Code::NOT_PARTY_LEADER,
            format!("only the party's leader ({}) queues it", party.leader),
        ));
    }
    if let Some(outsider) = players.iter().find(|p| !party.is_member(p)) {
        return Err(forbidden(
            Code::NOT_PARTY_MEMBER,
            format!("player {outsider} is not in your party"),
        )
        .with("player_id", outsider.to_string()));
    }
    Ok(())
}

/// Tells each of `players` that ticket `id` was cancelled (with the matchmaker's
/// `reason`, if it withdrew it).
pub async fn announce_cancelled(
    state: &AppState,
    players: &[PlayerId],
    id: &TicketId,
    reason: Option<&str>,
) {
    let events = EventEnvelope::cancelled(players, id, reason);
    if let Err(e) = state.store.publish(&events).await {
        warn_store!(e, "could not publish ticket.cancelled");
    }
}

fn ticket_id(raw: String) -> Result<TicketId, ApiError> {
    TicketId::new(raw).map_err(|_| ApiError::not_found(Code::TICKET_NOT_FOUND, "no such ticket"))
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
        .ok_or_else(|| ApiError::not_found(Code::TICKET_NOT_FOUND, "no such ticket"))
}

/// `GET /v1/tickets/{id}`.
#[utoipa::path(get, path = "/v1/tickets/{id}", operation_id = "get_ticket", tag = "tickets",
    params(("id" = String, Path, description = "Ticket id")),
    responses((status = 200, description = "The ticket", body = TicketView), Errors),
    security(("bearer" = [])))]
pub async fn get_one(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<TicketView>, ApiError> {
    let id = ticket_id(id)?;
    let Json(mut view) = read(&state, &actor, &id).await?;
    super::queues::estimate_for(&state, &mut view).await;
    Ok(Json(view))
}

/// `DELETE /v1/tickets/{id}` -> the cancelled ticket; 409 once it is in a match.
#[utoipa::path(delete, path = "/v1/tickets/{id}", tag = "tickets",
    params(("id" = String, Path, description = "Ticket id")),
    responses((status = 200, description = "The cancelled ticket", body = TicketView), Errors),
    security(("bearer" = [])))]
pub async fn cancel(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
) -> Result<Json<TicketView>, ApiError> {
    let id = ticket_id(id)?;
    match state.store.cancel(&actor, &id).await? {
        CancelOutcome::Cancelled => {
            // Every player of the ticket hears of it (any of them may cancel).
            let view = read(&state, &actor, &id).await?;
            announce_cancelled(&state, &view.players, &id, None).await;
            return Ok(view);
        }
        CancelOutcome::AlreadyCancelled => {}
        CancelOutcome::Matched(mid) => {
            return Err(ApiError::conflict(
                Code::TICKET_MATCHED,
                format!("ticket is already in match {mid}"),
            ));
        }
        CancelOutcome::NotFound => {
            return Err(ApiError::not_found(
                Code::TICKET_NOT_FOUND,
                "no such ticket",
            ));
        }
    }
    read(&state, &actor, &id).await
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct MatchesQuery {
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct MatchList {
    pub player_id: PlayerId,
    pub matches: Vec<Match>,
}

/// `GET /v1/players/{id}/matches` (`id` may be `me`): the caller's own matches.
#[utoipa::path(get, path = "/v1/players/{id}/matches", tag = "matches",
    params(("id" = String, Path, description = "`me` or the caller's id"), MatchesQuery),
    responses((status = 200, description = "The caller's matches, newest first", body = MatchList), Errors),
    security(("bearer" = [])))]
pub async fn player_matches(
    State(state): State<AppState>,
    Player(actor): Player,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<MatchesQuery>,
) -> Result<Json<MatchList>, ApiError> {
    if id != "me" && id != actor.as_str() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            Code::FORBIDDEN,
            "players can only list their own matches",
        ));
    }
    let limit = q.limit.unwrap_or(20);
    if !(1..=mm_store::HISTORY_LEN).contains(&limit) {
        return Err(ApiError::bad_request(
            Code::INVALID_QUERY,
            format!("limit must be between 1 and {}", mm_store::HISTORY_LEN),
        ));
    }
    let matches = state.store.player_matches(&actor, limit).await?;
    Ok(Json(MatchList {
        player_id: actor,
        matches,
    }))
}
