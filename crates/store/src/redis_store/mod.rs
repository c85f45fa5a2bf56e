//! [`Store`] on Redis, one node or a Redis Cluster: every atomic step is one Lua
//! script on one hash slot; the steps that cross slots (a match's players, their
//! other tickets, history, events) are idempotent and resumable (see [`cross`] and
//! the outbox in [`crate::keys`]).

mod backfill;
mod blocks;
mod conn;
mod create;
mod cross;
mod ending;
pub mod events;
mod eviction;
mod feed;
mod fleet;
mod history;
mod leading;
mod lifecycle;
mod limits;
mod locks;
mod online;
mod overdue;
mod parties;
mod players;
mod reading;
mod registry;
mod replicas;
mod results;

pub use eviction::RedisEviction;
pub use replicas::RedisPrimary;

use crate::keys::{EVENTS_CHANNEL, PlayerKeys, PoolKeys, WAKE_CHANNEL};
use crate::scripts::Scripts;
use crate::{CancelOutcome, Claimed, Depths, EnqueueOutcome, Hub, Store, StoreError};
use async_trait::async_trait;
use conn::Conn;
use create::Created;
use feed::Feed;
use futures_util::future::try_join_all;
use mm_domain::{
    EventEnvelope, Match, MatchId, MatchStatus, Millis, PlayerId, Pool, Ticket, TicketId,
    TicketView,
};
use redis::AsyncCommands;
use redis::aio::ConnectionManagerConfig;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

/// How long the player's ticket index and history live after their last write, and
/// a match's archived JSON (what histories point to) after its commit.
const PLAYER_TTL_SECS: i64 = crate::HISTORY_TTL.as_secs() as i64;
/// How long an untouched party's keys live.
const PARTY_TTL_MS: u64 = crate::PARTY_TTL.as_millis() as u64;
/// Largest batch purged per script call.
const PURGE_CHUNK: usize = 1000;

/// The rating version `ticket` carries for `player`, for the freshness check
/// (`''`: not checked, when the ticket has no snapshots or they were read fresh).
fn checked_version(ticket: &Ticket, player: &PlayerId) -> String {
    if ticket.skills_fresh {
        return String::new();
    }
    ticket
        .players
        .iter()
        .position(|p| p == player)
        .and_then(|i| ticket.skills.get(i))
        .map(|s| s.version.to_string())
        .unwrap_or_default()
}

/// What [`RedisStore::activate_player`] found.
enum Activation {
    /// Activated; the player's freshness mark for the mode, and whom they
    /// blocked or were blocked by.
    Done(u64, Vec<PlayerId>),
    Busy(TicketId),
    InMatch(MatchId),
    Banned(Millis),
    Stale,
    /// Over the player's ticket-creation limit: a call would be allowed after this.
    Limited(std::time::Duration),
}

pub struct RedisStore {
    /// For the events subscription (on a cluster: a client of one node; classic
    /// Pub/Sub messages reach every node).
    client: redis::Client,
    conn: Conn,
    scripts: Scripts,
    hub: Arc<Hub>,
    wakes: Arc<crate::Wakes>,
    /// The subscriptions feeding `hub` and `wakes`, each made on first use.
    events_feed: OnceCell<()>,
    wakes_feed: OnceCell<()>,
    /// Started on the first check (it needs the runtime).
    rates: std::sync::OnceLock<limits::RateChecks>,
    /// Replicas that must hold a new ticket before `enqueue` returns, and how
    /// long to wait for them (`WAIT`); none by default.
    replication: Option<(u32, Duration)>,
    /// Matches committed and settled in one step, until their fan-out.
    settled_at_commit: cross::SettledAtCommit,
}

/// The value of `name` in `INFO` text (`name:value` lines).
fn info_field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix(':'))
}

/// What a `rediss://` connection trusts and shows beyond the defaults: the
/// certificate authority the server's certificate must chain to (PEM; without
/// it the system's roots), and a client certificate and key (PEM) for a Redis
/// that requires one (`tls-auth-clients yes`).
#[derive(Debug, Clone, Default)]
pub struct RedisTls {
    pub ca: Option<Vec<u8>>,
    pub client: Option<(Vec<u8>, Vec<u8>)>,
}

impl RedisTls {
    fn certificates(&self) -> redis::TlsCertificates {
        redis::TlsCertificates {
            client_tls: self
                .client
                .as_ref()
                .map(|(cert, key)| redis::ClientTlsConfig {
                    client_cert: cert.clone(),
                    client_key: key.clone(),
                }),
            root_cert: self.ca.clone(),
        }
    }

    /// A client for `url`: with `tls`'s certificates (a `rediss://` URL) if given.
    fn client(url: &str, tls: Option<&Self>) -> Result<redis::Client, StoreError> {
        Ok(match tls {
            Some(tls) => redis::Client::build_with_tls(url, tls.certificates())?,
            None => redis::Client::open(url)?,
        })
    }
}

impl RedisStore {
    /// Connects to the Redis at `url` (e.g. `redis://127.0.0.1:6379`, or
    /// `rediss://` for TLS against the system's roots).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, None).await
    }

    /// The same, a `rediss://` connection with `tls`'s certificates if given.
    pub async fn connect_with(url: &str, tls: Option<&RedisTls>) -> Result<Self, StoreError> {
        let client = RedisTls::client(url, tls)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(Duration::from_secs(10)))
            // Fail fast while Redis is down (callers back off and the ingress
            // answers 503 at once) rather than hold every call through a long
            // reconnect loop; one quick retry rides over a dropped connection.
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(200));
        let conn = tokio::time::timeout(
            Duration::from_secs(15),
            client.get_connection_manager_with_config(config),
        )
        .await
        .map_err(|_| StoreError::Timeout)??;
        Ok(Self::with(client, Conn::Single(conn)))
    }

    /// Connects to a Redis Cluster through any of its nodes (`redis://host:port`).
    pub async fn connect_cluster(nodes: &[String]) -> Result<Self, StoreError> {
        Self::connect_cluster_with(nodes, None).await
    }

    /// The same, over TLS (`rediss://` nodes) with `tls`'s certificates if given.
    pub async fn connect_cluster_with(
        nodes: &[String],
        tls: Option<&RedisTls>,
    ) -> Result<Self, StoreError> {
        let first = nodes
            .first()
            .ok_or_else(|| StoreError::Corrupt("no cluster node given".into()))?;
        let client = RedisTls::client(first, tls)?;
        let mut builder = redis::cluster::ClusterClient::builder(nodes.iter().map(String::as_str))
            .connection_timeout(Duration::from_secs(5))
            .response_timeout(Duration::from_secs(10))
            .retries(6);
        if let Some(tls) = tls {
            builder = builder.certs(tls.certificates());
        }
        let cluster = builder.build()?;
        let conn = tokio::time::timeout(Duration::from_secs(15), cluster.get_async_connection())
            .await
            .map_err(|_| StoreError::Timeout)??;
        Ok(Self::with(client, Conn::Cluster(conn)))
    }

    /// Makes `enqueue` wait until `replicas` replicas hold each of the new
    /// ticket's writes (Redis `WAIT`, at most `timeout`, in the same pipeline as
    /// the write: see `replicas.rs`), so a failover right after a `201` cannot
    /// lose it. A ticket not replicated in time fails with
    /// [`StoreError::NotReplicated`] (it may be queued, and may still be lost).
    pub fn with_replication_wait(mut self, replicas: u32, timeout: Duration) -> Self {
        self.replication = (replicas > 0).then_some((replicas, timeout));
        self
    }

    /// Each primary's address and the replicas connected to it now (`INFO
    /// replication`): on one node that node, on a cluster every primary. What a
    /// process checks `with_replication_wait` against at start-up, since a
    /// primary with too few replicas answers every ticket's `WAIT` with a timeout.
    pub async fn primaries(&self) -> Result<Vec<RedisPrimary>, StoreError> {
        self.info_of_primaries("replication")
            .await?
            .into_iter()
            .map(|(address, text)| RedisPrimary::parse(address, &text))
            .collect()
    }

    /// What each primary would evict when full (`INFO memory`): on one node that
    /// node, on a cluster every primary. See [`RedisEviction`].
    pub async fn eviction(&self) -> Result<Vec<RedisEviction>, StoreError> {
        self.info_of_primaries("memory")
            .await?
            .into_iter()
            .map(|(address, text)| RedisEviction::parse(address, &text))
            .collect()
    }

    /// `INFO section` of every primary, by address (sorted).
    async fn info_of_primaries(&self, section: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut info = redis::cmd("INFO");
        info.arg(section);
        match &self.conn {
            Conn::Single(_) => {
                let text: String = info.query_async(&mut self.conn()).await?;
                let address = self.client.get_connection_info().addr().to_string();
                Ok(vec![(address, text)])
            }
            Conn::Cluster(c) => {
                use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo};
                let answer = c
                    .clone()
                    .route_command(
                        info,
                        RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None)),
                    )
                    .await?;
                let redis::Value::Map(nodes) = answer else {
                    return Err(StoreError::Corrupt(format!(
                        "INFO from every primary answered {answer:?}"
                    )));
                };
                let mut texts = nodes
                    .iter()
                    .map(|(address, text)| {
                        let address: String = redis::from_redis_value_ref(address)
                            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                        let text: String = redis::from_redis_value_ref(text)
                            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                        Ok((address, text))
                    })
                    .collect::<Result<Vec<_>, StoreError>>()?;
                texts.sort();
                Ok(texts)
            }
        }
    }

    /// As the shared store every component takes.
    pub fn into_store(self) -> Arc<dyn crate::Store> {
        Arc::new(self)
    }

    fn with(client: redis::Client, conn: Conn) -> Self {
        // Counters exist from the start, so rates and alerts see a zero, not no series.
        metrics::counter!(mm_telemetry::names::STORE_OUTAGES).increment(0);
        metrics::counter!(mm_telemetry::names::STORE_ERRORS, "command" => "EVALSHA").increment(0);
        Self {
            client,
            conn,
            scripts: Scripts::new(),
            hub: Arc::new(Hub::default()),
            wakes: Arc::new(crate::Wakes::default()),
            events_feed: OnceCell::new(),
            wakes_feed: OnceCell::new(),
            rates: std::sync::OnceLock::new(),
            replication: None,
            settled_at_commit: Default::default(),
        }
    }

    fn conn(&self) -> Conn {
        self.conn.clone()
    }

    /// Redis server time in ms: the clock leases are measured against.
    async fn server_now(&self) -> Result<Millis, StoreError> {
        let (secs, micros): (u64, u64) = redis::cmd("TIME").query_async(&mut self.conn()).await?;
        Ok(secs * 1000 + micros / 1000)
    }
}

#[async_trait]
impl crate::Limits for RedisStore {
    async fn check_rates(
        &self,
        checks: &[crate::RateCheck],
    ) -> Result<Vec<crate::Verdict>, StoreError> {
        self.rates
            .get_or_init(|| limits::RateChecks::start(self.conn(), self.scripts.rate.clone()))
            .check(checks)
            .await
    }
}

#[async_trait]
impl Store for RedisStore {
    async fn ping(&self) -> Result<(), StoreError> {
        let _: String = redis::cmd("PING").query_async(&mut self.conn()).await?;
        Ok(())
    }

    async fn enqueue(&self, ticket: &Ticket) -> Result<EnqueueOutcome, StoreError> {
        self.enqueue_charged(ticket, None).await
    }

    async fn enqueue_new(
        &self,
        ticket: &mut Ticket,
        charge: Option<&crate::RateCheck>,
    ) -> Result<EnqueueOutcome, StoreError> {
        let charge = match self.create_solo(ticket, charge).await? {
            Created::Done(outcome) => return Ok(outcome),
            Created::Blocks(blocks) => {
                ticket.blocks = blocks;
                charge
            }
            Created::Refused => None,
            Created::NotSolo => {
                return match self.activate_apart(ticket, charge).await? {
                    Err(refused) => Ok(refused),
                    Ok(activated) => {
                        ticket.blocks = activated.blocks;
                        self.enqueue_entries(ticket).await?;
                        Ok(EnqueueOutcome::Queued)
                    }
                };
            }
        };
        self.enqueue_charged(ticket, charge).await
    }

    async fn enqueue_charged(
        &self,
        ticket: &Ticket,
        charge: Option<&crate::RateCheck>,
    ) -> Result<EnqueueOutcome, StoreError> {
        if let Err(refused) = self.activate_charged(ticket, charge).await? {
            return Ok(refused);
        }
        self.enqueue_entries(ticket).await?;
        Ok(EnqueueOutcome::Queued)
    }

    async fn activate(
        &self,
        ticket: &Ticket,
    ) -> Result<Result<Vec<u64>, EnqueueOutcome>, StoreError> {
        self.activate_charged(ticket, None).await
    }

    async fn activate_charged(
        &self,
        ticket: &Ticket,
        charge: Option<&crate::RateCheck>,
    ) -> Result<Result<Vec<u64>, EnqueueOutcome>, StoreError> {
        Ok(self.activate_apart(ticket, charge).await?.map(|a| a.marks))
    }

    async fn activate_apart(
        &self,
        ticket: &Ticket,
        charge: Option<&crate::RateCheck>,
    ) -> Result<Result<crate::Activated, EnqueueOutcome>, StoreError> {
        // The limiter belongs to one of the players, who goes first: the charge is
        // made in that player's activation script, before anything else.
        let charged = match charge {
            None => None,
            Some((
                crate::RateKey {
                    who: crate::Who::Player(p),
                    ..
                },
                _,
            )) => ticket.players.iter().position(|q| q == p),
            Some(_) => None,
        };
        if charged.is_none()
            && let Some(wait) = crate::api::over(self, charge).await?
        {
            return Ok(Err(EnqueueOutcome::Limited(wait)));
        }
        let names = ticket
            .pools()
            .iter()
            .map(Pool::name)
            .collect::<Vec<_>>()
            .join(",");
        let n = ticket.players.len();
        let order = charged
            .into_iter()
            .chain((0..n).filter(|&i| Some(i) != charged));
        // Every player of the ticket takes it as their live ticket for the mode, one
        // after the other; if one is refused, the ones already taken are given back.
        let mut marks = vec![0; n];
        let mut blocks = std::collections::BTreeSet::new();
        let mut taken = Vec::with_capacity(n);
        for i in order {
            let player = &ticket.players[i];
            let charge = charge.filter(|_| Some(i) == charged);
            let refused = match self.activate_player(player, ticket, &names, charge).await? {
                Activation::Done(mark, apart) => {
                    marks[i] = mark;
                    blocks.extend(apart);
                    taken.push(player.clone());
                    continue;
                }
                Activation::Limited(wait) => EnqueueOutcome::Limited(wait),
                Activation::Busy(t) => EnqueueOutcome::PlayerBusy(player.clone(), t),
                Activation::InMatch(m) => EnqueueOutcome::InMatch(player.clone(), m),
                Activation::Banned(u) => EnqueueOutcome::Banned(player.clone(), u),
                Activation::Stale => EnqueueOutcome::StaleRating(player.clone()),
            };
            self.deactivate_players(ticket, &taken).await?;
            return Ok(Err(refused));
        }
        Ok(Ok(crate::Activated {
            marks,
            blocks: blocks.into_iter().collect(),
        }))
    }

    async fn enqueue_entries(&self, ticket: &Ticket) -> Result<(), StoreError> {
        let json = serde_json::to_string(ticket)?;
        let entries = ticket.pools().into_iter().map(|pool| {
            let keys = PoolKeys::new(&pool);
            let json = &json;
            async move {
                let mut call = self.scripts.enqueue.key(&keys.queue);
                call.key(&keys.tickets)
                    .key(&keys.state)
                    .key(&keys.since)
                    .key(&keys.armed)
                    .key(&keys.leader)
                    .key(&keys.arrivals)
                    .arg(ticket.id.as_str())
                    .arg(json)
                    .arg(ticket.queue_score())
                    .arg(ticket.enqueued_at)
                    .arg(WAKE_CHANNEL)
                    .arg(pool.name());
                // The ticket's last writes: acknowledged only once replicated
                // (with its players' activations, the whole ticket is).
                let _: i64 = self.invoke_durable(&call).await?;
                Ok::<_, StoreError>(())
            }
        });
        try_join_all(entries).await?;
        Ok(())
    }

    async fn deactivate(&self, ticket: &Ticket) -> Result<(), StoreError> {
        self.deactivate_players(ticket, &ticket.players).await
    }

    async fn ticket(
        &self,
        player: &PlayerId,
        id: &TicketId,
    ) -> Result<Option<TicketView>, StoreError> {
        self.read_ticket(player, id).await
    }

    async fn live_tickets(&self, player: &PlayerId) -> Result<Vec<TicketId>, StoreError> {
        let raw: Vec<String> = self.conn().hvals(PlayerKeys::new(player).active).await?;
        raw.iter()
            .filter_map(|v| v.split('|').next())
            .map(|t| TicketId::new(t).map_err(|e| StoreError::Corrupt(e.to_string())))
            .collect()
    }

    async fn withdraw(
        &self,
        player: &PlayerId,
        id: &TicketId,
        reason: Option<&str>,
    ) -> Result<CancelOutcome, StoreError> {
        self.end(player, id, reason.unwrap_or(""), false).await
    }

    async fn player_matches(
        &self,
        player: &PlayerId,
        limit: usize,
    ) -> Result<Vec<Match>, StoreError> {
        self.history(player, limit).await
    }

    async fn history_pool(
        &self,
        player: &PlayerId,
        id: &MatchId,
    ) -> Result<Option<Pool>, StoreError> {
        self.history_pool_of(player, id).await
    }

    async fn claim(
        &self,
        worker: &str,
        pool: &Pool,
        max: usize,
        start: f64,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        self.claim_as(worker, pool, (max, None), start, lease).await
    }

    async fn claim_part(
        &self,
        worker: &str,
        pool: &Pool,
        max: usize,
        floor: usize,
        start: f64,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        self.claim_as(worker, pool, (max, Some(floor)), start, lease)
            .await
    }

    async fn complete(
        &self,
        worker: &str,
        pool: &Pool,
        matches: &[Match],
        lease: Duration,
    ) -> Result<Vec<MatchId>, StoreError> {
        if matches.is_empty() {
            return Ok(Vec::new());
        }
        self.commit(worker, pool, None, matches, lease).await
    }

    async fn release(
        &self,
        worker: &str,
        pool: &Pool,
        ids: Option<&[TicketId]>,
    ) -> Result<usize, StoreError> {
        self.release_as(worker, pool, None, ids).await
    }

    async fn heartbeat(
        &self,
        worker: &str,
        pool: &Pool,
        lease: Duration,
    ) -> Result<usize, StoreError> {
        self.heartbeat_as(worker, pool, None, lease).await
    }

    async fn expired_workers(&self, pool: &Pool) -> Result<Vec<String>, StoreError> {
        let keys = PoolKeys::new(pool);
        let now = self.server_now().await?;
        Ok(self
            .conn()
            .zrangebyscore(&keys.leases, "-inf", format!("({now}"))
            .await?)
    }

    async fn reclaim(&self, worker: &str, pool: &Pool) -> Result<Option<usize>, StoreError> {
        let keys = PoolKeys::new(pool);
        let n: i64 = self
            .scripts
            .reclaim
            .key(&keys.queue)
            .key(&keys.state)
            .key(keys.held(worker))
            .key(&keys.leases)
            .key(&keys.armed)
            .key(&keys.leader)
            .key(&keys.arrivals)
            .arg(worker)
            .arg(WAKE_CHANNEL)
            .arg(pool.name())
            .invoke_async(&mut self.conn())
            .await?;
        Ok((n >= 0).then_some(n as usize))
    }

    async fn fan_out(&self, pool: &Pool, matches: &[Match]) -> Result<(), StoreError> {
        self.fan_out_first(pool, matches, &HashSet::new()).await
    }

    async fn fan_out_first(
        &self,
        pool: &Pool,
        matches: &[Match],
        first: &HashSet<TicketId>,
    ) -> Result<(), StoreError> {
        if matches.is_empty() {
            return Ok(());
        }
        self.settle(pool, matches, first).await
    }

    async fn stale_outbox(
        &self,
        pool: &Pool,
        older_than: Duration,
    ) -> Result<Vec<Match>, StoreError> {
        let keys = PoolKeys::new(pool);
        let cutoff = self
            .server_now()
            .await?
            .saturating_sub(older_than.as_millis() as Millis);
        let ids: Vec<String> = self
            .conn()
            .zrangebyscore_limit(&keys.outbox, "-inf", cutoff, 0, 1000)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let raw: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(&keys.matches)
            .arg(&ids)
            .query_async(&mut self.conn())
            .await?;
        let mut out = Vec::new();
        for (id, json) in ids.iter().zip(raw) {
            match json {
                Some(j) => out.push(serde_json::from_str(&j)?),
                None => {
                    // Purged already: nothing left to fan out.
                    let _: i64 = self.conn().zrem(&keys.outbox, id).await?;
                }
            }
        }
        Ok(out)
    }

    async fn purge(&self, pool: &Pool, older_than: Duration) -> Result<usize, StoreError> {
        let keys = PoolKeys::new(pool);
        let cutoff = self
            .server_now()
            .await?
            .saturating_sub(older_than.as_millis() as Millis);
        let mut total = 0;
        loop {
            let n: usize = self
                .scripts
                .purge
                .key(&keys.tickets)
                .key(&keys.state)
                .key(&keys.matches)
                .key(&keys.done)
                .key(&keys.decisions)
                .key(&keys.since)
                .key(&keys.backfills)
                .arg(cutoff)
                .arg(PURGE_CHUNK)
                .arg(&keys.life_prefix)
                .invoke_async(&mut self.conn())
                .await?;
            total += n;
            if n < PURGE_CHUNK {
                return Ok(total);
            }
        }
    }

    async fn publish(&self, events: &[EventEnvelope]) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for message in events::encode(events)? {
            pipe.publish(EVENTS_CHANNEL, message).ignore();
        }
        let () = pipe.query_async(&mut self.conn()).await?;
        Ok(())
    }

    async fn wake_ups(&self) -> Result<crate::WakeUps, StoreError> {
        let wake_ups = self.wakes.subscribe();
        self.ensure_feed(Feed::Wakes(self.wakes.clone())).await?;
        Ok(wake_ups)
    }

    async fn subscribe(&self, player: &PlayerId) -> Result<crate::Events, StoreError> {
        self.ensure_feed(Feed::Events(self.hub.clone())).await?;
        Ok(self.hub.subscribe(player))
    }

    async fn depths(&self, pool: &Pool) -> Result<Depths, StoreError> {
        let keys = PoolKeys::new(pool);
        let (queued, processing, oldest): (u64, u64, i64) = self
            .scripts
            .depths
            .key(&keys.queue)
            .key(&keys.leases)
            .key(&keys.since)
            .key(&keys.state)
            .arg(keys.held(""))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(Depths {
            queued,
            processing,
            oldest_enqueued_at: u64::try_from(oldest).ok(),
        })
    }

    async fn recent_matches(&self, pool: &Pool, n: usize) -> Result<Vec<Match>, StoreError> {
        let keys = PoolKeys::new(pool);
        let n = n.min(crate::RECENT_MATCHES);
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn();
        let ids: Vec<String> = conn.lrange(&keys.recent, 0, n as isize - 1).await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let found: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(&keys.matches)
            .arg(&ids)
            .query_async(&mut conn)
            .await?;
        found
            .into_iter()
            .flatten()
            .map(|json| Ok(serde_json::from_str(&json)?))
            .collect()
    }
}
