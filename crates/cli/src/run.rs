//! The long-running subcommands: build the store and configs, start the
//! components, stop them on SIGTERM or Ctrl-C.

use crate::auth::AuthArgs;
use crate::config::{
    CatalogArgs, ConsumerArgs, HttpArgs, LimitArgs, RatingArgs, ServerManagerArgs, SupervisorArgs,
    WorkerArgs,
};
use anyhow::{Context, Result};
use clap::Args;
use mm_server::ingress::{self, AppState};
use mm_server::ratings::{self, Lookup};
use mm_server::{server_manager, supervisor, worker};
use mm_store::outage::Backoff;
use mm_store::{MemoryStore, RedisStore, Store};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long shutdown waits for WebSockets to close.
const DRAIN: Duration = Duration::from_secs(5);

/// How a process uses Redis, beside where it is.
#[derive(Debug, Clone, Args)]
pub struct RedisOptions {
    /// REDIS_URL names nodes of a Redis Cluster.
    #[arg(long = "redis-cluster", env = "REDIS_CLUSTER", default_value_t = false)]
    pub redis_cluster: bool,
    /// How long a process starting while Redis is unreachable waits for it
    /// before giving up (it retries with backoff meanwhile).
    #[arg(long = "redis-startup-wait", env = "REDIS_STARTUP_WAIT", default_value = "60s", value_parser = humantime::parse_duration)]
    pub redis_startup_wait: Duration,
    /// Replicas that must hold a new ticket before the ingress answers 201 (Redis
    /// WAIT; 0: none). With 1 a failover loses no acknowledged ticket.
    #[arg(
        long = "redis-wait-replicas",
        env = "REDIS_WAIT_REPLICAS",
        default_value_t = 0
    )]
    pub redis_wait_replicas: u32,
    /// How long the ingress waits for those replicas before answering 503.
    #[arg(long = "redis-wait-timeout", env = "REDIS_WAIT_TIMEOUT", default_value = "1s", value_parser = humantime::parse_duration)]
    pub redis_wait_timeout: Duration,
    /// Start even when Redis may evict keys when full (a memory limit and a
    /// `maxmemory-policy` other than `noeviction`), with a warning. Eviction can
    /// drop a player's in-match mark or a ticket's state: a player matched
    /// twice, a ticket lost. Without this a process refuses to start there.
    #[arg(
        long = "redis-allow-eviction",
        env = "REDIS_ALLOW_EVICTION",
        default_value_t = false
    )]
    pub redis_allow_eviction: bool,
    /// The certificate authority (PEM) a `rediss://` Redis's certificate must
    /// chain to, when it is not one the system trusts (a private CA).
    #[arg(long = "redis-tls-ca-file", env = "REDIS_TLS_CA_FILE")]
    pub redis_tls_ca_file: Option<std::path::PathBuf>,
    /// A client certificate (PEM) for a `rediss://` Redis that requires one
    /// (`tls-auth-clients yes`); with REDIS_TLS_KEY_FILE.
    #[arg(long = "redis-tls-cert-file", env = "REDIS_TLS_CERT_FILE")]
    pub redis_tls_cert_file: Option<std::path::PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long = "redis-tls-key-file", env = "REDIS_TLS_KEY_FILE")]
    pub redis_tls_key_file: Option<std::path::PathBuf>,
}

impl RedisOptions {
    /// Connects to `url` (waiting for it at start-up) as these options say.
    async fn connect(&self, url: &str) -> Result<Arc<dyn Store>> {
        let tls = self.tls(url)?;
        let store = redis(
            url,
            self.redis_cluster,
            self.redis_startup_wait,
            tls.as_ref(),
        )
        .await?;
        check_eviction(&store, self.redis_allow_eviction).await?;
        if self.redis_wait_replicas > 0 {
            check_replicas(&store, self.redis_wait_replicas).await;
        }
        Ok(store
            .with_replication_wait(self.redis_wait_replicas, self.redis_wait_timeout)
            .into_store())
    }
}

impl RedisOptions {
    /// The certificates REDIS_TLS_* name, read now: none when none is set.
    fn tls(&self, url: &str) -> Result<Option<mm_store::RedisTls>> {
        let read = |path: &std::path::Path, var: &str| {
            std::fs::read(path).with_context(|| format!("{var}: cannot read {}", path.display()))
        };
        let client = match (&self.redis_tls_cert_file, &self.redis_tls_key_file) {
            (None, None) => None,
            (Some(cert), Some(key)) => Some((
                read(cert, "REDIS_TLS_CERT_FILE")?,
                read(key, "REDIS_TLS_KEY_FILE")?,
            )),
            _ => anyhow::bail!("REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE go together"),
        };
        let ca = match &self.redis_tls_ca_file {
            Some(path) => Some(read(path, "REDIS_TLS_CA_FILE")?),
            None => None,
        };
        if ca.is_none() && client.is_none() {
            return Ok(None);
        }
        if url
            .split(',')
            .map(str::trim)
            .any(|node| !node.is_empty() && !node.starts_with("rediss://"))
        {
            anyhow::bail!(
                "REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE need a TLS \
                 REDIS_URL (rediss://host:port)"
            );
        }
        Ok(Some(mm_store::RedisTls { ca, client }))
    }
}

/// Whether `e` is a TLS handshake that failed (a certificate authority not
/// trusted, a client certificate refused or missing, TLS spoken to a port that
/// does not): the TLS layer reports those as invalid data, and waiting for
/// Redis does not mend them, so start-up stops at once with the reason.
fn tls_refused(e: &mm_store::StoreError) -> bool {
    let mm_store::StoreError::Redis(e) = e else {
        return false;
    };
    type Shared = std::sync::Arc<dyn std::error::Error + Send + Sync>;
    let invalid_data = |io: &std::io::Error| io.kind() == std::io::ErrorKind::InvalidData;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        // The redis crate keeps an I/O error behind an `Arc` of its own.
        let io = s.downcast_ref::<std::io::Error>().or_else(|| {
            s.downcast_ref::<Shared>()
                .and_then(|shared| shared.downcast_ref::<std::io::Error>())
        });
        if io.is_some_and(invalid_data) {
            return true;
        }
        source = s.source();
    }
    false
}

/// `url` (one or more comma-separated nodes) with any password masked, for
/// logs and errors.
fn redacted(url: &str) -> String {
    url.split(',')
        .map(|node| {
            let Some((scheme, rest)) = node.split_once("://") else {
                return node.to_string();
            };
            match rest.split_once('@') {
                Some((user, host)) if !user.is_empty() => {
                    let name = user.split_once(':').map_or("", |(name, _)| name);
                    format!("{scheme}://{name}:***@{host}")
                }
                _ => node.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Warns, once at start-up, of every primary with fewer replicas connected than
/// REDIS_WAIT_REPLICAS asks for: until they connect, every new ticket there waits
/// REDIS_WAIT_TIMEOUT and is answered 503 `not_replicated`. A warning, not a
/// refusal: a replica may be restarting, and the process serves once it is back.
async fn check_replicas(store: &RedisStore, wanted: u32) {
    match store.primaries().await {
        Ok(primaries) => {
            for p in primaries.iter().filter(|p| p.replicas < wanted) {
                tracing::warn!(
                    primary = %p.address,
                    replicas = p.replicas,
                    wanted,
                    "REDIS_WAIT_REPLICAS={wanted} but this primary has {} replica(s) connected: \
                     every ticket it holds will be answered 503 not_replicated until enough \
                     replicas connect (or set REDIS_WAIT_REPLICAS lower)",
                    p.replicas
                );
            }
        }
        Err(e) => tracing::warn!(
            error = %e,
            "could not count the replicas REDIS_WAIT_REPLICAS={wanted} asks for"
        ),
    }
}

/// Refuses to start on a Redis primary that may evict the store's keys when
/// full (see `mm_store::RedisEviction`), unless `allow`ed: then it warns. A
/// Redis that does not answer `INFO memory` (a managed service may rename it)
/// is warned of, not refused.
async fn check_eviction(store: &RedisStore, allow: bool) -> Result<()> {
    let primaries = match store.eviction().await {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(
                error = %e,
                "could not read Redis's eviction policy (INFO memory); it must be \
                 maxmemory-policy noeviction, or keys this service relies on may vanish"
            );
            return Ok(());
        }
    };
    for p in primaries.iter().filter(|p| p.evicts()) {
        let what = format!(
            "Redis at {} has maxmemory {} bytes with maxmemory-policy {}: when full it \
             evicts keys, and an evicted in-match mark, reservation or ticket state can \
             match a player twice or lose a ticket. Set maxmemory-policy noeviction \
             (a full Redis then refuses writes, which this service answers 503)",
            p.address, p.maxmemory, p.policy
        );
        if !allow {
            anyhow::bail!("{what}; or set REDIS_ALLOW_EVICTION=true to start anyway");
        }
        tracing::warn!(primary = %p.address, policy = %p.policy, "{what} (REDIS_ALLOW_EVICTION=true: starting anyway)");
    }
    Ok(())
}

#[derive(Debug, Clone, Args)]
pub struct RedisArgs {
    /// Redis to share state through, e.g. redis://127.0.0.1:6379 (with REDIS_CLUSTER:
    /// one or more cluster nodes, comma-separated).
    #[arg(long = "redis-url", env = "REDIS_URL")]
    pub redis_url: String,
    #[command(flatten)]
    pub options: RedisOptions,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub ops: crate::ops::OpsArgs,
    /// Redis to use instead of the in-memory store (with REDIS_CLUSTER: one or more
    /// cluster nodes, comma-separated).
    #[arg(long = "redis-url", env = "REDIS_URL")]
    pub redis_url: Option<String>,
    #[command(flatten)]
    pub redis: RedisOptions,
    #[command(flatten)]
    pub http: HttpArgs,
    #[command(flatten)]
    pub auth: AuthArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub worker: WorkerArgs,
    #[command(flatten)]
    pub supervisor: SupervisorArgs,
    #[command(flatten)]
    pub servers: ServerManagerArgs,
    #[command(flatten)]
    pub ratings: RatingArgs,
    #[command(flatten)]
    pub consumer: ConsumerArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RatingServiceCmd {
    #[command(flatten)]
    pub redis: RedisArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub ratings: RatingArgs,
    #[command(flatten)]
    pub consumer: ConsumerArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ServerManagerCmd {
    #[command(flatten)]
    pub redis: RedisArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub servers: ServerManagerArgs,
}

#[derive(Debug, Clone, Args)]
pub struct IngressArgs {
    #[command(flatten)]
    pub ops: crate::ops::OpsArgs,
    #[command(flatten)]
    pub redis: RedisArgs,
    #[command(flatten)]
    pub http: HttpArgs,
    #[command(flatten)]
    pub auth: AuthArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub ratings: RatingArgs,
}

#[derive(Debug, Clone, Args)]
pub struct WorkerCmd {
    #[command(flatten)]
    pub redis: RedisArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

#[derive(Debug, Clone, Args)]
pub struct SupervisorCmd {
    #[command(flatten)]
    pub redis: RedisArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    #[command(flatten)]
    pub supervisor: SupervisorArgs,
    /// Workers' lease; a committed match not fanned out after this long is fanned out here.
    #[arg(long, env = "LOCK_TTL", default_value = "30s", value_parser = humantime::parse_duration)]
    pub lock_ttl: Duration,
}

/// Connects to Redis, waiting for it up to `wait` (with backoff, logged once) while
/// it is unreachable: a process may start before Redis or during its restart. Any
/// other failure (a bad URL, refused credentials) ends the process at once.
async fn redis(
    url: &str,
    cluster: bool,
    wait: Duration,
    tls: Option<&mm_store::RedisTls>,
) -> Result<RedisStore> {
    let shown = redacted(url);
    let give_up = tokio::time::Instant::now() + wait;
    let nodes: Vec<String> = url
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect();
    let mut backoff = Backoff::new(Duration::from_millis(200), mm_server::MAX_BACKOFF);
    let mut waited = false;
    loop {
        let attempt = if cluster {
            RedisStore::connect_cluster_with(&nodes, tls).await
        } else {
            RedisStore::connect_with(url, tls).await
        };
        match attempt {
            Ok(store) => {
                if waited {
                    tracing::info!(url = %shown, "Redis answers; starting");
                }
                return Ok(store);
            }
            Err(e)
                if e.is_unreachable()
                    && !tls_refused(&e)
                    && tokio::time::Instant::now() < give_up =>
            {
                if !waited {
                    tracing::warn!(error = %e, url = %shown, ?wait, "Redis is unreachable; waiting for it (REDIS_STARTUP_WAIT)");
                    waited = true;
                }
                tokio::time::sleep(backoff.failed()).await;
            }
            Err(e) if cluster => {
                return Err(e).with_context(|| {
                    format!("REDIS_URL (--redis-url) with REDIS_CLUSTER: cannot connect to the cluster at {shown}")
                });
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("REDIS_URL (--redis-url): cannot connect to {shown}")
                });
            }
        }
    }
}

/// Cancels the returned token on SIGTERM or Ctrl-C. Each subcommand calls it
/// first: both handlers are in place when it returns, so a stop that comes while
/// the process starts (waiting for Redis, opening the rating database) ends it
/// cleanly too (see [`starting`]).
fn shutdown_on_signal() -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    let mut stop = crate::signals::Stop::new();
    tokio::spawn(async move {
        stop.recv().await;
        tracing::info!("shutting down");
        t.cancel();
    });
    token
}

/// Runs the start-up `steps` unless a stop comes first (then `None`: the process
/// ends cleanly without starting).
async fn starting<T>(
    shutdown: &CancellationToken,
    steps: impl std::future::Future<Output = Result<T>>,
) -> Result<Option<T>> {
    tokio::select! {
        out = steps => out.map(Some),
        () = shutdown.cancelled() => {
            tracing::info!("stopped while starting");
            Ok(None)
        }
    }
}

async fn listen_grpc(args: &ServerManagerArgs) -> Result<tokio::net::TcpListener> {
    let listener = tokio::net::TcpListener::bind(args.grpc_listen)
        .await
        .with_context(|| {
            format!(
                "GRPC_LISTEN_ADDR (--grpc-listen): cannot listen on {}",
                args.grpc_listen
            )
        })?;
    tracing::info!(addr = %listener.local_addr()?, "server manager listening (gRPC)");
    Ok(listener)
}

async fn listen(http: &HttpArgs, dev: bool) -> Result<tokio::net::TcpListener> {
    let listener = tokio::net::TcpListener::bind(http.listen)
        .await
        .with_context(|| format!("LISTEN_ADDR (--listen): cannot listen on {}", http.listen))?;
    if dev {
        // Every start, even on loopback: a deployment must never run this way
        // unnoticed.
        tracing::warn!(addr = %listener.local_addr()?, "listening with dev tokens (AUTH=dev): the bearer token is the player id, anyone can act as anyone");
    } else {
        tracing::info!(addr = %listener.local_addr()?, "listening");
    }
    Ok(listener)
}

/// The authenticator, refusing client ratings outside dev mode.
fn identity(
    auth: &AuthArgs,
    http: &HttpArgs,
    ratings: &RatingArgs,
    dev_default: bool,
) -> Result<crate::auth::Identity> {
    let identity = auth.identity(http.listen, dev_default)?;
    if ratings.allow_client_ratings && !identity.auth.is_dev() {
        anyhow::bail!(
            "ALLOW_CLIENT_RATINGS is for dev mode; with AUTH=jwt a trusted backend passes ratings with a service token (matchmaker token --service)"
        );
    }
    Ok(identity)
}

/// What the API's state is built from, beside the store and identity.
struct ApiArgs<'a> {
    ratings: &'a RatingArgs,
    limits: &'a LimitArgs,
    http: &'a HttpArgs,
}

impl ServeArgs {
    fn api(&self) -> ApiArgs<'_> {
        ApiArgs {
            ratings: &self.ratings,
            limits: &self.limits,
            http: &self.http,
        }
    }
}

impl IngressArgs {
    fn api(&self) -> ApiArgs<'_> {
        ApiArgs {
            ratings: &self.ratings,
            limits: &self.limits,
            http: &self.http,
        }
    }
}

/// The state every API handler shares.
fn api_state(
    store: &Arc<dyn Store>,
    catalog: mm_server::Catalog,
    identity: &crate::auth::Identity,
    lookup: Arc<Lookup>,
    shutdown: &CancellationToken,
    args: &ApiArgs<'_>,
) -> AppState {
    AppState::new(
        store.clone(),
        catalog,
        identity.auth.clone(),
        lookup,
        shutdown.clone(),
    )
    .with_client_ratings(args.ratings.allow_client_ratings)
    .with_limits(args.limits.limits())
    .with_proxies(args.http.trusted_proxies.clone())
    .with_cors(args.http.cors_allowed_origins.clone())
    .with_presence_renewal(args.http.presence_renew)
}

/// The operator plane's contents for a process serving the API.
fn plane(
    metrics: mm_telemetry::Metrics,
    http: &HttpArgs,
    store: &Arc<dyn Store>,
    state: &AppState,
) -> crate::ops::Plane {
    crate::ops::Plane {
        metrics,
        dashboard: http.dashboard.then(|| {
            let pools = state.catalog.pools().into_iter();
            let shown = pools.map(|p| {
                let closed = !state.catalog.pool_open(&p);
                (p, closed)
            });
            (store.clone(), shown.collect())
        }),
        proxies: http.trusted_proxies.clone(),
        tokens: state.auth.clone(),
    }
}

pub async fn serve(
    args: ServeArgs,
    metrics: mm_telemetry::Metrics,
    ops_addr: Option<std::net::SocketAddr>,
) -> Result<()> {
    let shutdown = shutdown_on_signal();
    let catalog = args.catalog.catalog()?;
    let worker_cfg = args.worker.config(&catalog)?;
    let supervisor_cfg = args.supervisor.config(&catalog, args.worker.lock_ttl)?;
    let servers_cfg = args.servers.config()?;
    let fleet = args.servers.credentials()?;
    let grpc_tls = args.servers.tls()?;
    let consumer_cfg = args.consumer.config()?;
    let identity = identity(&args.auth, &args.http, &args.ratings, true)?;
    let opened = starting(&shutdown, async {
        let rating_store = args.ratings.open(true).await?;
        let store: Arc<dyn Store> = match &args.redis_url {
            Some(url) => args.redis.connect(url).await?,
            None => {
                tracing::info!("using the in-memory store (state is lost when the process stops)");
                Arc::new(MemoryStore::new())
            }
        };
        Ok((rating_store, store))
    });
    let Some((rating_store, store)) = opened.await? else {
        return Ok(());
    };
    // In one process the freshness marks can be complete: seeded from the rating
    // database here, raised by the in-process consumer before every commit. Then a
    // player without one was never rated and their tickets need no lookup.
    let complete_marks = args.redis_url.is_none();
    if complete_marks {
        let versions = rating_store
            .versions()
            .await
            .context("reading the rating database's versions")?;
        for chunk in versions.chunks(10_000) {
            store.mark_ratings(chunk).await?;
        }
        tracing::info!(ratings = versions.len(), "rating freshness marks seeded");
    }
    let listener = listen(&args.http, identity.auth.is_dev()).await?;
    let grpc = listen_grpc(&args.servers).await?;
    identity.watch(&args.auth, shutdown.clone());
    let lookup = Lookup::new(rating_store.clone(), args.ratings.rating_cache_ttl);
    let state = api_state(&store, catalog, &identity, lookup, &shutdown, &args.api())
        .with_complete_marks(complete_marks);
    let single_port = identity.auth.is_dev() && args.http.listen.ip().is_loopback();
    let ops = crate::ops::start(
        &args.ops,
        ops_addr,
        plane(metrics, &args.http, &store, &state),
        single_port,
        shutdown.clone(),
    )
    .await?;
    let consumer = tokio::spawn(ratings::consumer::run(
        store.clone(),
        rating_store,
        state.catalog.clone(),
        consumer_cfg,
        shutdown.clone(),
    ));
    let manager = server_manager::Service::new(store.clone(), state.catalog.clone(), servers_cfg)
        .with_credentials(fleet);
    let grpc = tokio::spawn(server_manager::serve(
        grpc,
        manager,
        shutdown.clone(),
        grpc_tls,
    ));
    let sup = tokio::spawn(supervisor::run(
        store.clone(),
        supervisor_cfg,
        shutdown.clone(),
    ));
    let work = tokio::spawn(worker::run(store.clone(), worker_cfg, shutdown.clone()));
    let http = ingress::serve(listener, state, ops, DRAIN).await;
    shutdown.cancel();
    let _ = work.await;
    let _ = sup.await;
    let _ = consumer.await;
    match grpc.await {
        Ok(Err(e)) => tracing::warn!(error = %e, "server manager failed"),
        Err(e) => tracing::warn!(error = %e, "server manager task failed"),
        Ok(Ok(())) => {}
    }
    http.context("HTTP server failed")
}

pub async fn server_manager(args: ServerManagerCmd) -> Result<()> {
    let shutdown = shutdown_on_signal();
    let catalog = Arc::new(args.catalog.catalog()?);
    let cfg = args.servers.config()?;
    let fleet = args.servers.credentials()?;
    let tls = args.servers.tls()?;
    let connect = args.redis.options.connect(&args.redis.redis_url);
    let Some(store) = starting(&shutdown, connect).await? else {
        return Ok(());
    };
    let listener = listen_grpc(&args.servers).await?;
    let service = server_manager::Service::new(store, catalog, cfg).with_credentials(fleet);
    server_manager::serve(listener, service, shutdown, tls)
        .await
        .context("server manager failed")
}

pub async fn ingress(
    args: IngressArgs,
    metrics: mm_telemetry::Metrics,
    ops_addr: Option<std::net::SocketAddr>,
) -> Result<()> {
    let shutdown = shutdown_on_signal();
    let catalog = args.catalog.catalog()?;
    let identity = identity(&args.auth, &args.http, &args.ratings, false)?;
    let opened = starting(&shutdown, async {
        let rating_store = args.ratings.open(false).await?;
        let store = args.redis.options.connect(&args.redis.redis_url).await?;
        Ok((rating_store, store))
    });
    let Some((rating_store, store)) = opened.await? else {
        return Ok(());
    };
    let listener = listen(&args.http, identity.auth.is_dev()).await?;
    identity.watch(&args.auth, shutdown.clone());
    let lookup = Lookup::new(rating_store, args.ratings.rating_cache_ttl);
    let state = api_state(&store, catalog, &identity, lookup, &shutdown, &args.api());
    let plane = plane(metrics, &args.http, &store, &state);
    crate::ops::start(&args.ops, ops_addr, plane, false, shutdown).await?;
    ingress::serve(listener, state, None, DRAIN)
        .await
        .context("HTTP server failed")
}

pub async fn worker(args: WorkerCmd) -> Result<()> {
    let shutdown = shutdown_on_signal();
    let catalog = args.catalog.catalog()?;
    let cfg = args.worker.config(&catalog)?;
    let connect = args.redis.options.connect(&args.redis.redis_url);
    if let Some(store) = starting(&shutdown, connect).await? {
        worker::run(store, cfg, shutdown).await;
    }
    Ok(())
}

pub async fn supervisor(args: SupervisorCmd) -> Result<()> {
    let shutdown = shutdown_on_signal();
    let catalog = args.catalog.catalog()?;
    let cfg = args.supervisor.config(&catalog, args.lock_ttl)?;
    let connect = args.redis.options.connect(&args.redis.redis_url);
    if let Some(store) = starting(&shutdown, connect).await? {
        supervisor::run(store, cfg, shutdown).await;
    }
    Ok(())
}

pub async fn rating_service(args: RatingServiceCmd) -> Result<()> {
    let shutdown = shutdown_on_signal();
    let catalog = Arc::new(args.catalog.catalog()?);
    let cfg = args.consumer.config()?;
    let opened = starting(&shutdown, async {
        let rating_store = args.ratings.open(false).await?;
        let store = args.redis.options.connect(&args.redis.redis_url).await?;
        Ok((rating_store, store))
    });
    if let Some((rating_store, store)) = opened.await? {
        ratings::consumer::run(store, rating_store, catalog, cfg, shutdown).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn passwords_in_redis_urls_are_masked() {
        assert_eq!(redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert_eq!(
            redacted("rediss://:s3cret@cache.example.com:6380"),
            "rediss://:***@cache.example.com:6380"
        );
        assert_eq!(
            redacted("redis://app:s3cret@a:7000,redis://app:s3cret@b:7001"),
            "redis://app:***@a:7000,redis://app:***@b:7001"
        );
        assert_eq!(redacted("rediss://token@h:1"), "rediss://:***@h:1");
    }
}
