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
//! caller may do anything.

use crate::{Catalog, saga};
use mm_auth::{FleetCredentials, Grant};
use mm_domain::{
    MatchId, MatchResult, MatchStatus, Outcome, PlayerId, PlayerResult, Pool, RatingJob,
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

fn internal(e: mm_store::StoreError) -> Status {
    tracing::error!(error = %e, "store error");
    Status::unavailable("the matchmaking store is unavailable; retry shortly")
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

fn to_pb(a: &Allocation) -> pb::Allocation {
    pb::Allocation {
        match_id: a.id.clone(),
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
    }
}

impl Service {
    /// The match allocation `match_id` on `server`, with its pool.
    async fn held(
        &self,
        server: &str,
        match_id: &str,
    ) -> Result<Option<(Allocation, Pool, MatchId)>, Status> {
        check_id("server_id", server)?;
        check_id("match_id", match_id)?;
        let Some(a) = self.store.allocation(match_id).await.map_err(internal)? else {
            return Ok(None);
        };
        if a.server.server_id != server {
            return Err(Status::permission_denied(format!(
                "match {match_id} is not allocated to server {server}"
            )));
        }
        let pool = a.pool.as_deref().and_then(Pool::parse);
        let id = MatchId::new(match_id.to_string()).ok();
        Ok(match (pool, id) {
            (Some(pool), Some(id)) => Some((a, pool, id)),
            _ => None,
        })
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
            Some(allocations) => Ok(Response::new(pb::HeartbeatResponse {
                allocations: allocations.iter().map(to_pb).collect(),
            })),
        }
    }

    async fn report_result(
        &self,
        request: Request<pb::ReportResultRequest>,
    ) -> Result<Response<pb::ReportResultResponse>, Status> {
        self.as_server(&request, &request.get_ref().server_id)?;
        let r = request.into_inner();
        let Some((_, pool, id)) = self.held(&r.server_id, &r.match_id).await? else {
            return Err(Status::not_found(format!(
                "no match {} on server {}",
                r.match_id, r.server_id
            )));
        };
        let (record, _) = self
            .store
            .match_record(&pool, &id)
            .await
            .map_err(internal)?
            .ok_or_else(|| Status::not_found("no such match"))?;
        let teams = record
            .matched
            .tickets
            .iter()
            .map(|t| t.team + 1)
            .max()
            .unwrap_or(0);
        let mut result = MatchResult {
            reported_at: now_ms(),
            ..Default::default()
        };
        for t in &r.teams {
            if t.team as usize >= teams {
                return Err(Status::invalid_argument(format!(
                    "team {} out of range (the match has {teams})",
                    t.team
                )));
            }
            result.teams.push(TeamResult {
                team: t.team as usize,
                outcome: outcome(t.outcome)?,
                placement: (t.placement > 0).then_some(t.placement),
            });
        }
        let member = |raw: &str| -> Result<PlayerId, Status> {
            PlayerId::new(raw)
                .ok()
                .filter(|p| record.matched.players().any(|q| q == p))
                .ok_or_else(|| {
                    Status::invalid_argument(format!("player {raw:?} is not in the match"))
                })
        };
        for p in &r.players {
            result.players.push(PlayerResult {
                player_id: member(&p.player_id)?,
                outcome: outcome(p.outcome)?,
                placement: (p.placement > 0).then_some(p.placement),
            });
        }
        for p in &r.abandoned {
            result.abandoned.push(member(p)?);
        }
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
        if r.match_id.is_empty() {
            if !self.store.leave(&r.server_id).await.map_err(internal)? {
                return Err(Status::not_found("unknown server"));
            }
            tracing::info!(server = %r.server_id, "game server left the pool");
            return Ok(Response::new(pb::ReleaseResponse {}));
        }
        if let Some((_, pool, id)) = self.held(&r.server_id, &r.match_id).await? {
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
        }
        self.store
            .release_slot(&r.server_id, &r.match_id)
            .await
            .map_err(internal)?;
        Ok(Response::new(pb::ReleaseResponse {}))
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
            id: r.allocation_id,
            server: Default::default(),
            region: r.region,
            mode: r.mode,
            pool: None,
            teams: Vec::new(),
            allocated_at: 0,
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
