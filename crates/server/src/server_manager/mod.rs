//! The server manager: the gRPC control plane for game servers
//! (`proto/matchmaker/v1/server_manager.proto`). Game servers register, heartbeat
//! (and learn their matches from the answer), report results and release slots;
//! outside callers may allocate slots as with Agones' allocator. All state is in
//! the store ([`mm_store::Fleet`]), so any number of server managers may run.
//!
//! Every call carries a credential (`authorization: Bearer <token>` metadata,
//! checked against [`FleetCredentials`]): a fleet token acts only for the servers
//! it binds, and a server only on the matches allocated to it; `Allocate` needs an
//! allocator token. Without credentials configured (dev mode, loopback only) any
//! caller may do anything. Backfill calls are in [`backfill`].

use crate::{Catalog, saga};

mod backfill;
mod expiry;
use mm_auth::{FleetCredentials, Grant};
use mm_domain::{
    Match, MatchId, MatchResult, MatchStatus, Outcome, PlayerId, PlayerResult, Pool, RatingJob,
    TeamResult, now_ms, reasons,
};
use mm_proto::v1 as pb;
use mm_proto::v1::server_manager_server::{ServerManager, ServerManagerServer};
use mm_store::{AllocateOutcome, Allocation, GameServer, Store, Transition};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status};

/// Largest capacity a server may declare.
const MAX_CAPACITY: u32 = 10_000;

/// How game servers are kept.
#[derive(Debug, Clone)]
pub struct ServerManagerConfig {
    /// How often game servers should heartbeat (told at registration).
    pub heartbeat_interval: Duration,
    /// A server silent this long gets no new matches, and its matches fail.
    pub heartbeat_timeout: Duration,
}

/// The gRPC service.
pub struct Service {
    store: Arc<dyn Store>,
    catalog: Arc<Catalog>,
    cfg: ServerManagerConfig,
    /// `None`: dev mode, no credential needed.
    credentials: Option<Arc<FleetCredentials>>,
}

impl Service {
    /// A service in dev mode; see [`Service::with_credentials`].
    pub fn new(store: Arc<dyn Store>, catalog: Arc<Catalog>, cfg: ServerManagerConfig) -> Self {
        Self {
            store,
            catalog,
            cfg,
            credentials: None,
        }
    }

    /// Requires a credential from `credentials` on every call (`None`: dev mode).
    pub fn with_credentials(mut self, credentials: Option<Arc<FleetCredentials>>) -> Self {
        self.credentials = credentials;
        self
    }

    /// What the call's credential grants; `UNAUTHENTICATED` without a valid one.
    fn grant<T>(&self, request: &Request<T>) -> Result<Grant, Status> {
        let Some(credentials) = &self.credentials else {
            return Ok(Grant::Dev);
        };
        let token = request
            .metadata()
            .get("authorization")
            .ok_or_else(|| {
                Status::unauthenticated("missing 'authorization: Bearer <token>' metadata")
            })?
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| Status::unauthenticated("authorization must be 'Bearer <token>'"))?;
        credentials
            .identify(token.as_bytes())
            .cloned()
            .ok_or_else(|| Status::unauthenticated("unknown credential"))
    }

    /// The grant of a call acting as game server `server_id`.
    fn as_server<T>(&self, request: &Request<T>, server_id: &str) -> Result<Grant, Status> {
        let grant = self.grant(request)?;
        check_id("server_id", server_id)?;
        if !grant.may_act_for(server_id) {
            return Err(Status::permission_denied(format!(
                "credential {:?} may not act for server {server_id}",
                grant.name()
            )));
        }
        Ok(grant)
    }
}

/// A store failure as the caller sees it. An unreachable store is logged once
/// per outage by the store itself (`mm_store::outage`), so a fleet heartbeating
/// through an outage costs a few lines, not one per call.
fn internal(e: mm_store::StoreError) -> Status {
    if e.is_unreachable() {
        tracing::debug!(error = %e, "store unreachable");
    } else {
        tracing::error!(error = %e, "store error");
    }
    Status::unavailable("the matchmaking store is unavailable; retry shortly")
}

/// Where slots taken through `Allocate` are kept in the store: apart from match
/// ids (which never contain ':'), so an allocation id can never name a match.
const OUTSIDE: &str = "alloc:";

fn outside_id(allocation_id: &str) -> String {
    format!("{OUTSIDE}{allocation_id}")
}

/// `PERMISSION_DENIED` for a match (or allocation) the server does not hold:
/// the same answer whether or not it exists elsewhere.
fn not_on(what: &str, id: &str, server: &str) -> Status {
    Status::permission_denied(format!("{what} {id} is not on server {server}"))
}

fn check_id(what: &str, id: &str) -> Result<(), Status> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Status::invalid_argument(format!(
            "{what} must be 1-128 characters of letters, digits, '-', '_', '.' or ':'"
        )))
    }
}

fn outcome(raw: i32) -> Result<Option<Outcome>, Status> {
    match pb::Outcome::try_from(raw) {
        Ok(pb::Outcome::Unspecified) => Ok(None),
        Ok(pb::Outcome::Win) => Ok(Some(Outcome::Win)),
        Ok(pb::Outcome::Loss) => Ok(Some(Outcome::Loss)),
        Ok(pb::Outcome::Draw) => Ok(Some(Outcome::Draw)),
        Err(_) => Err(Status::invalid_argument(format!("unknown outcome {raw}"))),
    }
}

/// The result a `ReportResult` call reports for `matched`, checked: a team or a
/// player the match does not have, or a result that cannot be this match's
/// ([`MatchResult::check`]), is `INVALID_ARGUMENT` naming the problem.
fn result(r: &pb::ReportResultRequest, matched: &Match) -> Result<MatchResult, Status> {
    let mut result = MatchResult {
        reported_at: now_ms(),
        ..Default::default()
    };
    for t in &r.teams {
        result.teams.push(TeamResult {
            team: t.team as usize,
            outcome: outcome(t.outcome)?,
            placement: (t.placement > 0).then_some(t.placement),
        });
    }
    let player = |raw: &str| {
        PlayerId::new(raw)
            .map_err(|_| Status::invalid_argument(format!("player {raw:?} is not in the match")))
    };
    for p in &r.players {
        result.players.push(PlayerResult {
            player_id: player(&p.player_id)?,
            outcome: outcome(p.outcome)?,
            placement: (p.placement > 0).then_some(p.placement),
        });
    }
    for p in &r.abandoned {
        result.abandoned.push(player(p)?);
    }
    result
        .check(matched)
        .map_err(|e| Status::invalid_argument(format!("result refused: {e}")))?;
    Ok(result)
}

fn to_pb(a: &Allocation) -> pb::Allocation {
    let (match_id, allocation_id) = match a.id.strip_prefix(OUTSIDE) {
        Some(outside) => (String::new(), outside.to_string()),
        None => (a.id.clone(), String::new()),
    };
    pb::Allocation {
        match_id,
        allocation_id,
        chosen: a.decided.chosen.clone().into_iter().collect(),
        roles: a
            .decided
            .roles
            .iter()
            .map(|(p, r)| (p.to_string(), r.clone()))
            .collect(),
        mode: a.mode.clone(),
        region: a.region.clone(),
        teams: a
            .teams
            .iter()
            .enumerate()
            .map(|(i, players)| pb::Team {
                index: i as u32,
                player_ids: players.clone(),
            })
            .collect(),
        allocated_at_ms: a.allocated_at,
        filled: Vec::new(),
        expires_at_ms: 0,
    }
}

impl Service {
    /// Match `match_id`, which must be allocated to `server`, with its pool.
    /// `PERMISSION_DENIED` otherwise: whether the match does not exist, is still
    /// in its ready check, or is on another server, the caller learns nothing.
    async fn held(&self, server: &str, match_id: &str) -> Result<(Pool, MatchId), Status> {
        check_id("server_id", server)?;
        check_id("match_id", match_id)?;
        let denied = || not_on("match", match_id, server);
        let id = MatchId::new(match_id.to_string()).map_err(|_| denied())?;
        let a = self
            .store
            .allocation(id.as_str())
            .await
            .map_err(internal)?
            .filter(|a| a.server.server_id == server)
            .ok_or_else(denied)?;
        let pool = a.pool.as_deref().and_then(Pool::parse).ok_or_else(denied)?;
        Ok((pool, id))
    }

    async fn step(&self, pool: &Pool, id: &MatchId) {
        if let Err(e) = saga::advance(&*self.store, pool, id).await {
            warn_store!(e, match_id = %id, "saga step failed; the supervisor will retry");
        }
    }
}

#[tonic::async_trait]
impl ServerManager for Service {
    async fn register(
        &self,
        request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        let r = request.into_inner();
        if !self.catalog.has_region(&r.region) {
            return Err(Status::invalid_argument(format!(
                "unknown region {:?}; known regions: {}",
                r.region,
                self.catalog.regions().join(", ")
            )));
        }
        let modes: Vec<String> = if r.modes.is_empty() {
            self.catalog.modes().names().map(String::from).collect()
        } else {
            r.modes.clone()
        };
        for m in &modes {
            if self.catalog.mode(m).is_none() {
                return Err(Status::invalid_argument(format!("unknown mode {m:?}")));
            }
        }
        if !(1..=MAX_CAPACITY).contains(&r.capacity) {
            return Err(Status::invalid_argument(format!(
                "capacity must be 1..={MAX_CAPACITY}"
            )));
        }
        if r.address.is_empty() || r.address.len() > 256 || r.address.contains('|') {
            return Err(Status::invalid_argument(
                "address must be 1-256 characters without '|'",
            ));
        }
        let server = GameServer {
            id: r.server_id,
            region: r.region,
            modes,
            capacity: r.capacity,
            address: r.address,
        };
        self.store
            .register_server(&server, self.cfg.heartbeat_timeout)
            .await
            .map_err(internal)?;
        tracing::info!(server = %server.id, region = %server.region, capacity = server.capacity, "game server registered");
        Ok(Response::new(pb::RegisterResponse {
            heartbeat_interval_ms: self.cfg.heartbeat_interval.as_millis() as u64,
            heartbeat_timeout_ms: self.cfg.heartbeat_timeout.as_millis() as u64,
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        let r = request.into_inner();
        match self
            .store
            .server_heartbeat(&r.server_id, self.cfg.heartbeat_timeout)
            .await
            .map_err(internal)?
        {
            None => Err(Status::not_found(
                "unknown server (never registered, or removed after missing heartbeats): register again",
            )),
            Some(allocations) => {
                let allocations = self.expire(&r.server_id, allocations, now_ms()).await;
                // Each match's backfill part at once, not one after another.
                let filled = futures_util::future::join_all(
                    allocations
                        .iter()
                        .map(|(a, _)| self.backfill_part(&r.server_id, a)),
                )
                .await;
                let out = allocations
                    .iter()
                    .zip(filled)
                    .map(|((a, expires_at_ms), filled)| pb::Allocation {
                        filled,
                        expires_at_ms: *expires_at_ms,
                        ..to_pb(a)
                    })
                    .collect();
                Ok(Response::new(pb::HeartbeatResponse { allocations: out }))
            }
        }
    }

    async fn report_result(
        &self,
        request: Request<pb::ReportResultRequest>,
    ) -> Result<Response<pb::ReportResultResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        let r = request.into_inner();
        let (pool, id) = self.held(&r.server_id, &r.match_id).await?;
        let (record, _) = self
            .store
            .match_record(&pool, &id)
            .await
            .map_err(internal)?
            .ok_or_else(|| not_on("match", &r.match_id, &r.server_id))?;
        let result = result(&r, &record.matched)?;
        let mut t = Transition::new(&[MatchStatus::Assigned], MatchStatus::Completed).due(now_ms());
        // Queued for the rating service in the same step: acknowledged means kept.
        t.rating = Some(RatingJob {
            matched: record.matched.clone(),
            result: result.clone(),
        });
        t.result = Some(result);
        let recorded = self
            .store
            .transition(&pool, &id, t)
            .await
            .map_err(internal)?;
        if !recorded && record.status != MatchStatus::Completed {
            return Err(Status::failed_precondition(format!(
                "match {id} is {}, not assigned",
                record.status.as_str()
            )));
        }
        self.step(&pool, &id).await;
        Ok(Response::new(pb::ReportResultResponse { recorded }))
    }

    async fn release(
        &self,
        request: Request<pb::ReleaseRequest>,
    ) -> Result<Response<pb::ReleaseResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        let r = request.into_inner();
        if !r.allocation_id.is_empty() {
            check_id("allocation_id", &r.allocation_id)?;
            let id = outside_id(&r.allocation_id);
            if !self
                .store
                .release_slot(&r.server_id, &id)
                .await
                .map_err(internal)?
            {
                return Err(not_on("allocation", &r.allocation_id, &r.server_id));
            }
            return Ok(Response::new(pb::ReleaseResponse {}));
        }
        if r.match_id.is_empty() {
            if !self.store.leave(&r.server_id).await.map_err(internal)? {
                return Err(Status::not_found("unknown server"));
            }
            tracing::info!(server = %r.server_id, "game server left the pool");
            return Ok(Response::new(pb::ReleaseResponse {}));
        }
        let (pool, id) = self.held(&r.server_id, &r.match_id).await?;
        // Released without a result: the match did not finish properly.
        let t = Transition::new(&[MatchStatus::Assigned], MatchStatus::Failed)
            .reason(reasons::RELEASED)
            .due(now_ms());
        if self
            .store
            .transition(&pool, &id, t)
            .await
            .map_err(internal)?
        {
            self.step(&pool, &id).await;
        }
        self.store
            .release_slot(&r.server_id, id.as_str())
            .await
            .map_err(internal)?;
        Ok(Response::new(pb::ReleaseResponse {}))
    }

    async fn open_backfill(
        &self,
        request: Request<pb::OpenBackfillRequest>,
    ) -> Result<Response<pb::BackfillResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        Ok(Response::new(
            self.open_seats(request.into_inner(), false).await?,
        ))
    }

    async fn update_backfill(
        &self,
        request: Request<pb::OpenBackfillRequest>,
    ) -> Result<Response<pb::BackfillResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        Ok(Response::new(
            self.open_seats(request.into_inner(), true).await?,
        ))
    }

    async fn close_backfill(
        &self,
        request: Request<pb::CloseBackfillRequest>,
    ) -> Result<Response<pb::CloseBackfillResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        self.close_seats(request.into_inner()).await?;
        Ok(Response::new(pb::CloseBackfillResponse {}))
    }

    async fn player_left(
        &self,
        request: Request<pb::PlayerLeftRequest>,
    ) -> Result<Response<pb::PlayerLeftResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        Ok(Response::new(self.left(request.into_inner()).await?))
    }

    async fn ack_backfill(
        &self,
        request: Request<pb::AckBackfillRequest>,
    ) -> Result<Response<pb::AckBackfillResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        self.ack(request.into_inner()).await?;
        Ok(Response::new(pb::AckBackfillResponse {}))
    }

    async fn allocate(
        &self,
        request: Request<pb::AllocateRequest>,
    ) -> Result<Response<pb::AllocateResponse>, Status> {
        let grant = self.grant(&request)?;
        if !grant.may_allocate() {
            return Err(Status::permission_denied(format!(
                "credential {:?} may not allocate (an allocator credential may)",
                grant.name()
            )));
        }
        let r = request.into_inner();
        check_id("allocation_id", &r.allocation_id)?;
        if !self.catalog.has_region(&r.region) {
            return Err(Status::invalid_argument(format!(
                "unknown region {:?}",
                r.region
            )));
        }
        if self.catalog.mode(&r.mode).is_none() {
            return Err(Status::invalid_argument(format!(
                "unknown mode {:?}",
                r.mode
            )));
        }
        let request = Allocation {
            id: outside_id(&r.allocation_id),
            server: Default::default(),
            region: r.region,
            mode: r.mode,
            pool: None,
            teams: Vec::new(),
            allocated_at: 0,
            decided: Default::default(),
        };
        let outcome = self.store.allocate(&request).await.map_err(internal)?;
        let label = match outcome {
            AllocateOutcome::Allocated(_) => "allocated",
            AllocateOutcome::NoCapacity => "no_capacity",
        };
        metrics::counter!(mm_telemetry::names::ALLOCATIONS, "region" => request.region.clone(), "outcome" => label)
            .increment(1);
        match outcome {
            AllocateOutcome::Allocated(a) => Ok(Response::new(pb::AllocateResponse {
                server_id: a.server.server_id,
                address: a.server.address,
            })),
            AllocateOutcome::NoCapacity => Err(Status::resource_exhausted(format!(
                "no live game server in {} for {} has a free slot",
                request.region, request.mode
            ))),
        }
    }
}

/// Serves the gRPC service on `listener` until `shutdown` is cancelled; over TLS
/// (mutual when the config names a client CA) when `tls` is given.
pub async fn serve(
    listener: TcpListener,
    service: Service,
    shutdown: CancellationToken,
    tls: Option<tonic::transport::ServerTlsConfig>,
) -> Result<(), tonic::transport::Error> {
    let mut server = tonic::transport::Server::builder();
    if let Some(tls) = tls {
        server = server.tls_config(tls)?;
    }
    server
        .add_service(ServerManagerServer::new(service))
        .serve_with_incoming_shutdown(
            tonic::transport::server::TcpIncoming::from(listener),
            shutdown.cancelled_owned(),
        )
        .await
}
