//! Backfill on the game-server plane (issue 34): a server opens, changes and
//! closes the backfill of a match it hosts, reports a player who left (which
//! opens a seat in a `backfill = "auto"` mode), keeps its backfills open with
//! its heartbeats, and learns the players who filled seats from the heartbeat's
//! answer. Every call acts as the server its credential allows, and only on
//! matches allocated to that server.

use super::{Service, internal, not_on};
use crate::backfill::{SeatsError, check_region, check_seats, one_more_seat};
use mm_domain::{MatchId, MatchRecord, PlayerId, Pool};
use mm_engine::{BackfillPolicy, Mode};
use mm_proto::v1 as pb;
use mm_store::{Allocation, Backfill, BackfillOutcome, FillMark, UnjoinOutcome};
use std::time::Duration;
use tonic::Status;

fn view(b: &Backfill) -> pb::BackfillResponse {
    pb::BackfillResponse {
        match_id: b.match_id.to_string(),
        open: b.open.clone(),
        generation: b.generation,
        expires_at_ms: b.expires_at,
    }
}

fn seats_status(e: SeatsError) -> Status {
    match e {
        SeatsError::Off(_) | SeatsError::Closed(_) | SeatsError::RegionClosed(_) => {
            Status::failed_precondition(e.to_string())
        }
        SeatsError::Invalid(m) => Status::invalid_argument(m),
    }
}

/// A store's answer to an open or a close as the server sees it.
fn answered(o: BackfillOutcome, id: &MatchId, server: &str) -> Result<Option<Backfill>, Status> {
    match o {
        BackfillOutcome::Open(b) => Ok(Some(b)),
        BackfillOutcome::Closed => Ok(None),
        BackfillOutcome::NoMatch | BackfillOutcome::NotYours => {
            Err(not_on("match", id.as_str(), server))
        }
        BackfillOutcome::NotRunning(status) => Err(Status::failed_precondition(format!(
            "match {id} is {}: only a match being played has seats to fill",
            status.as_str()
        ))),
    }
}

impl Service {
    /// The pool, id and mode of match `match_id` on `server`.
    async fn hosted(&self, server: &str, match_id: &str) -> Result<(Pool, MatchId, &Mode), Status> {
        let (pool, id) = self.held(server, match_id).await?;
        let mode = self
            .catalog
            .mode(&pool.mode)
            .ok_or_else(|| Status::failed_precondition(format!("unknown mode {}", pool.mode)))?;
        Ok((pool, id, mode))
    }

    /// `OpenBackfill` and `UpdateBackfill` (`update`: only a live one).
    pub(super) async fn open_seats(
        &self,
        r: pb::OpenBackfillRequest,
        update: bool,
    ) -> Result<pb::BackfillResponse, Status> {
        let (pool, id, mode) = self.hosted(&r.server_id, &r.match_id).await?;
        check_seats(mode, &r.open).map_err(seats_status)?;
        check_region(&self.catalog, &pool).map_err(seats_status)?;
        if update
            && self
                .store
                .backfill(&pool, &id)
                .await
                .map_err(internal)?
                .is_none()
        {
            return Err(Status::failed_precondition(format!(
                "match {id} has no open backfill: OpenBackfill opens one"
            )));
        }
        let ttl = Duration::from_millis(mode.backfill_ttl_ms);
        let o = self
            .store
            .open_backfill(&pool, &id, Some(&r.server_id), &r.open, ttl)
            .await
            .map_err(internal)?;
        let b = answered(o, &id, &r.server_id)?
            .ok_or_else(|| not_on("match", id.as_str(), &r.server_id))?;
        Ok(view(&b))
    }

    /// `CloseBackfill`.
    pub(super) async fn close_seats(&self, r: pb::CloseBackfillRequest) -> Result<(), Status> {
        let (pool, id) = self.held(&r.server_id, &r.match_id).await?;
        let o = self
            .store
            .close_backfill(&pool, &id, Some(&r.server_id))
            .await
            .map_err(internal)?;
        answered(o, &id, &r.server_id)?;
        Ok(())
    }

    /// `PlayerLeft`: in an `auto` mode, one more open seat on the leaver's team.
    pub(super) async fn left(
        &self,
        r: pb::PlayerLeftRequest,
    ) -> Result<pb::PlayerLeftResponse, Status> {
        let (pool, id, mode) = self.hosted(&r.server_id, &r.match_id).await?;
        let (record, _) = self
            .store
            .match_record(&pool, &id)
            .await
            .map_err(internal)?
            .ok_or_else(|| not_on("match", id.as_str(), &r.server_id))?;
        let player = PlayerId::new(r.player_id.clone()).map_err(|_| {
            Status::invalid_argument(format!("player {:?} is not in the match", r.player_id))
        })?;
        let team = record
            .matched
            .ticket_of(&player)
            .map(|t| t.team)
            .ok_or_else(|| {
                Status::invalid_argument(format!("player {player} is not in match {id}"))
            })?;
        tracing::info!(match_id = %id, player = %player, team, "a player left a running match");
        self.store
            .player_left(&pool, &id, Some(&r.server_id), &player)
            .await
            .map_err(internal)?;
        let current = self.store.backfill(&pool, &id).await.map_err(internal)?;
        if mode.backfill != BackfillPolicy::Auto
            || mode.closed
            || check_region(&self.catalog, &pool).is_err()
        {
            return Ok(pb::PlayerLeftResponse {
                seat_opened: false,
                backfill: current.as_ref().map(view),
            });
        }
        let open = one_more_seat(mode, current.as_ref().map(|b| b.open.as_slice()), team);
        let ttl = Duration::from_millis(mode.backfill_ttl_ms);
        let o = self
            .store
            .open_backfill(&pool, &id, Some(&r.server_id), &open, ttl)
            .await
            .map_err(internal)?;
        let b = answered(o, &id, &r.server_id)?;
        Ok(pb::PlayerLeftResponse {
            seat_opened: b.is_some(),
            backfill: b.as_ref().map(view),
        })
    }

    /// `AckBackfill`: the server takes fill `fill_id`'s players, or sends them
    /// back to the queue.
    pub(super) async fn ack(&self, r: pb::AckBackfillRequest) -> Result<(), Status> {
        let (pool, id) = self.held(&r.server_id, &r.match_id).await?;
        super::check_id("fill_id", &r.fill_id)?;
        let denied = || not_on("fill", &r.fill_id, &r.server_id);
        let fill = MatchId::new(r.fill_id.clone()).map_err(|_| denied())?;
        let (record, _) = self
            .store
            .match_record(&pool, &fill)
            .await
            .map_err(internal)?
            .ok_or_else(denied)?;
        if record.matched.fills().map(|f| &f.match_id) != Some(&id) || record.joined.is_none() {
            return Err(denied());
        }
        let over = || {
            Status::failed_precondition(format!(
                "fill {fill} was already acknowledged, sent back, or ended with its match"
            ))
        };
        if r.accept {
            let joined = record.joined.unwrap_or_default();
            if joined.acknowledged {
                return Ok(());
            }
            if !self
                .store
                .mark_fill(&pool, &fill, FillMark::Acknowledged)
                .await
                .map_err(internal)?
            {
                return Err(over());
            }
        } else {
            match self
                .store
                .unjoin_fill(&pool, &fill, mm_domain::reasons::BACKFILL_REFUSED)
                .await
                .map_err(internal)?
            {
                UnjoinOutcome::Done => {
                    metrics::counter!(mm_telemetry::names::BACKFILL_JOINS, "outcome" => "refused")
                        .increment(1);
                    tracing::info!(match_id = %id, fill = %fill, "the game server refused a fill's players; they go back to the queue");
                }
                UnjoinOutcome::Closed | UnjoinOutcome::Moved => return Err(over()),
            }
        }
        self.step(&pool, &fill).await;
        Ok(())
    }

    /// For a heartbeat of `server`: keeps the backfill of allocation `a` open
    /// (in a mode with backfill) and lists the players who filled its seats.
    /// A store failure here costs the heartbeat nothing: the next one retries.
    pub(super) async fn backfill_part(&self, server: &str, a: &Allocation) -> Vec<pb::FilledSeat> {
        let (Some(pool), Ok(id)) = (
            a.pool.as_deref().and_then(Pool::parse),
            MatchId::new(a.id.clone()),
        ) else {
            return Vec::new();
        };
        let Some(mode) = self.catalog.mode(&pool.mode) else {
            return Vec::new();
        };
        // A closed mode's backfills are not refreshed: they lapse.
        if mode.backfill == BackfillPolicy::Off || mode.closed {
            return Vec::new();
        }
        let ttl = Duration::from_millis(mode.backfill_ttl_ms);
        if let Err(e) = self
            .store
            .refresh_backfill(&pool, &id, Some(server), ttl)
            .await
        {
            warn_store!(e, match_id = %id, "could not refresh a backfill");
        }
        match self.filled(&pool, &id).await {
            Ok(seats) => seats,
            Err(e) => {
                warn_store!(e, match_id = %id, "could not list a match's filled seats");
                Vec::new()
            }
        }
    }

    /// The players who joined match `id` through fills, in the order they joined.
    async fn filled(
        &self,
        pool: &Pool,
        id: &MatchId,
    ) -> Result<Vec<pb::FilledSeat>, mm_store::StoreError> {
        let Some((record, _)) = self.store.match_record(pool, id).await? else {
            return Ok(Vec::new());
        };
        let fills = futures_util::future::try_join_all(
            record
                .fills
                .iter()
                .map(|f| self.store.match_record(pool, f)),
        )
        .await?;
        Ok(fills
            .iter()
            .flatten()
            .flat_map(|(f, _)| seats_of(f))
            .collect())
    }
}

/// Each player of fill `f` with their team.
fn seats_of(f: &MatchRecord) -> impl Iterator<Item = pb::FilledSeat> + '_ {
    f.matched.tickets.iter().flat_map(move |t| {
        t.players.iter().map(move |p| pb::FilledSeat {
            player_id: p.to_string(),
            team: t.team as u32,
            fill_id: f.matched.id.to_string(),
            role: f.matched.decided.roles.get(p).cloned().unwrap_or_default(),
        })
    })
}
