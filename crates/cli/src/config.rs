//! Command-line and environment configuration. Every knob is a flag and an
//! environment variable (seed 000's names where it has them); values are checked
//! at start-up and refused with a message naming the variable.

use anyhow::{Result, bail};
use clap::Args;
use mm_engine::{Modes, WindowPolicy};
use mm_server::Catalog;
use mm_server::server_manager::ServerManagerConfig;
use mm_server::supervisor::{GiveUpAfter, SupervisorConfig};
use mm_server::worker::{Coordination, Formation, WorkerConfig};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

fn duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("{e} (use e.g. 30s, 500ms)"))
}

/// A duration of more than zero (an interval).
fn interval(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err("must be more than zero".into());
    }
    Ok(d)
}

/// The game modes: the shipped ones plus a user TOML file, and the default
/// search window for modes that do not set their own.
#[derive(Debug, Clone, Args)]
pub struct ModesArgs {
    /// TOML file of game modes; its modes replace or add to the shipped 1v1, 5v5
    /// and br100 (see `matchmaker modes` for the format).
    #[arg(long, env = "MODES_FILE")]
    pub modes_file: Option<PathBuf>,
    /// Modes to serve, comma-separated (default: every mode defined).
    #[arg(long, env = "MODES", value_delimiter = ',')]
    pub modes: Vec<String>,
    /// Initial half-width of a ticket's rating window, for modes without `window`.
    #[arg(long, env = "MMR_DELTA_INITIAL", default_value_t = 50.0)]
    pub mmr_delta_initial: f64,
    /// Growth of the window half-width per second of wait, for modes without `window`.
    #[arg(long, env = "MMR_SCALING_FACTOR", default_value_t = 10.0)]
    pub mmr_scaling_factor: f64,
    /// Largest window half-width, for modes without `window`.
    #[arg(long, env = "MMR_DELTA_MAX", default_value_t = 500.0)]
    pub mmr_delta_max: f64,
}

impl ModesArgs {
    pub fn window(&self) -> Result<WindowPolicy> {
        for (name, v) in [
            (
                "MMR_DELTA_INITIAL (--mmr-delta-initial)",
                self.mmr_delta_initial,
            ),
            (
                "MMR_SCALING_FACTOR (--mmr-scaling-factor)",
                self.mmr_scaling_factor,
            ),
            ("MMR_DELTA_MAX (--mmr-delta-max)", self.mmr_delta_max),
        ] {
            if !v.is_finite() || v < 0.0 {
                bail!("{name} must be a non-negative number, got {v}");
            }
        }
        if self.mmr_delta_max < self.mmr_delta_initial {
            bail!(
                "MMR_DELTA_MAX (--mmr-delta-max) must be at least MMR_DELTA_INITIAL (--mmr-delta-initial)"
            );
        }
        Ok(WindowPolicy {
            initial: self.mmr_delta_initial,
            per_second: self.mmr_scaling_factor,
            cap: self.mmr_delta_max,
        })
    }

    pub fn modes(&self) -> Result<Modes> {
        let window = self.window()?;
        let user = match &self.modes_file {
            None => None,
            Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("MODES_FILE (--modes-file) {}: {e}", path.display())
            })?),
        };
        let all = Modes::load(user.as_deref(), window)
            .map_err(|e| anyhow::anyhow!("MODES_FILE (--modes-file): {e}"))?;
        if self.modes.is_empty() {
            return Ok(all);
        }
        let mut chosen = Vec::new();
        for name in &self.modes {
            match all.get(name) {
                Some(m) if !chosen.contains(m) => chosen.push(m.clone()),
                Some(_) => bail!("MODES (--modes): {name:?} is listed twice"),
                None => bail!(
                    "MODES (--modes): unknown mode {name:?}; defined: {}",
                    all.names().collect::<Vec<_>>().join(", ")
                ),
            }
        }
        Modes::of(chosen).map_err(|e| anyhow::anyhow!("MODES (--modes): {e}"))
    }
}

/// Modes and regions served.
#[derive(Debug, Clone, Args)]
pub struct CatalogArgs {
    #[command(flatten)]
    pub modes: ModesArgs,
    /// Regions accepted in tickets, comma-separated.
    #[arg(
        long,
        env = "REGIONS",
        value_delimiter = ',',
        default_value = "eu,na,asia"
    )]
    pub regions: Vec<String>,
    /// Regions being retired, comma-separated, each also in `REGIONS`: they
    /// take no new ticket and form no match; a ticket waiting there leaves
    /// them, and ends `timed_out` (`region_closed`) if it waits in no open
    /// region; matches already formed there finish.
    #[arg(long, env = "CLOSED_REGIONS", value_delimiter = ',')]
    pub closed_regions: Vec<String>,
}

impl CatalogArgs {
    pub fn catalog(&self) -> Result<Catalog> {
        let modes = self.modes.modes()?;
        let closed = self
            .closed_regions
            .iter()
            .filter(|r| !r.is_empty())
            .cloned()
            .collect();
        Catalog::new(modes, self.regions.clone())
            .map_err(|e| anyhow::anyhow!("REGIONS (--regions): {e}"))?
            .with_closed(closed)
            .map_err(|e| anyhow::anyhow!("CLOSED_REGIONS (--closed-regions): {e}"))
    }
}

/// The HTTP listener.
#[derive(Debug, Clone, Args)]
pub struct HttpArgs {
    /// Address the HTTP/WebSocket API listens on.
    #[arg(
        long = "listen",
        env = "LISTEN_ADDR",
        value_name = "LISTEN_ADDR",
        default_value = "127.0.0.1:8080"
    )]
    pub listen: SocketAddr,
    /// Serve the live operator dashboard at /dashboard on the operator plane
    /// (OPS_LISTEN_ADDR; operators only).
    #[arg(long, env = "DASHBOARD", default_value_t = true, action = clap::ArgAction::Set)]
    pub dashboard: bool,
    /// Load balancers and proxies in front of the API (comma-separated networks
    /// or addresses, e.g. 10.0.0.0/8): from these peers only, the client address
    /// of the per-address rate limits is read from X-Forwarded-For (or
    /// Forwarded); anyone else's such headers are ignored.
    #[arg(long, env = "TRUSTED_PROXIES", default_value = "", value_parser = proxies)]
    pub trusted_proxies: mm_server::ingress::TrustedProxies,
    /// Web origins whose pages may call the API from a browser (CORS),
    /// comma-separated (`https://game.example.com`), or * for any; empty: none.
    /// Tokens travel in headers, not cookies, so no credentials are allowed.
    #[arg(long, env = "CORS_ALLOWED_ORIGINS", default_value = "", value_parser = origins)]
    pub cors_allowed_origins: mm_server::ingress::AllowedOrigins,
    /// How often this ingress notes itself alive, for modes with
    /// `cancel_offline_after`: the sockets it holds count as open while it
    /// lives. A note holds three intervals: the players of an ingress that
    /// crashed count as gone that long after it did.
    #[arg(long, env = "PRESENCE_RENEW", default_value = "10s", value_parser = interval)]
    pub presence_renew: Duration,
}

fn origins(s: &str) -> Result<mm_server::ingress::AllowedOrigins, String> {
    s.parse()
        .map_err(|e: mm_server::ingress::BadOrigin| e.to_string())
}

fn proxies(s: &str) -> Result<mm_server::ingress::TrustedProxies, String> {
    s.parse()
        .map_err(|e: mm_server::ingress::BadNetwork| e.to_string())
}

/// A worker's knobs.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// Unique id of this worker process (default: random).
    #[arg(long, env = "WORKER_ID")]
    pub worker_id: Option<String>,
    /// Consumer tasks per worker process (default: number of CPUs).
    #[arg(long, env = "WORKER_POOL_SIZE")]
    pub worker_pool_size: Option<usize>,
    /// Most tickets claimed per poll (1-2000); a mode's polls claim at least three
    /// full matches' worth (300 for br100).
    #[arg(long, env = "CLAIM_BATCH_SIZE", default_value_t = 100)]
    pub claim_batch_size: usize,
    /// Lease on claimed tickets; a worker silent this long is presumed dead.
    #[arg(long, env = "LOCK_TTL", default_value = "30s", value_parser = duration)]
    pub lock_ttl: Duration,
    /// How often a worker refreshes its leases; must be shorter than LOCK_TTL.
    #[arg(long, env = "HEARTBEAT_INTERVAL", default_value = "2s", value_parser = duration)]
    pub heartbeat_interval: Duration,
    /// Longest pause after a pass that formed no match (the pause starts at 5 ms
    /// and doubles with each idle pass up to this).
    #[arg(long, env = "POLL_INTERVAL", default_value = "100ms", value_parser = duration)]
    pub poll_interval: Duration,
    /// Match formation: `engine` (ours) or `seed000` (seed 000's tightest-spread
    /// runs over exactly CLAIM_BATCH_SIZE tickets; the benchmarks' baseline, solo
    /// modes only).
    #[arg(long, env = "FORMATION", default_value = "engine", value_parser = ["engine", "seed000"])]
    pub formation: String,
    /// Wake idle workers as soon as a ticket arrives in their pools (Redis
    /// Pub/Sub, or in-process for `serve`); `false`: poll only.
    #[arg(long, env = "WAKE_UPS", default_value_t = true, action = clap::ArgAction::Set)]
    pub wake_ups: bool,
    /// How workers share the pools: `claim` (every worker claims batches of
    /// CLAIM_BATCH_SIZE from any pool) or `leader` (one worker per pool leads it
    /// under a fenced lease of LOCK_TTL and matches over the whole pool). Every
    /// worker of a deployment must use the same.
    #[arg(long, env = "COORDINATION", default_value = "claim", value_parser = ["claim", "leader"])]
    pub coordination: String,
}

impl WorkerArgs {
    pub fn config(&self, catalog: &Catalog) -> Result<WorkerConfig> {
        if !(1..=2000).contains(&self.claim_batch_size) {
            bail!(
                "CLAIM_BATCH_SIZE (--claim-batch-size) must be between 1 and 2000, got {}",
                self.claim_batch_size
            );
        }
        if self.lock_ttl.is_zero() {
            bail!("LOCK_TTL (--lock-ttl) must be more than zero");
        }
        if self.heartbeat_interval.is_zero() || self.heartbeat_interval >= self.lock_ttl {
            bail!(
                "HEARTBEAT_INTERVAL (--heartbeat-interval) must be more than zero and shorter than LOCK_TTL (--lock-ttl)"
            );
        }
        if self.poll_interval.is_zero() {
            bail!("POLL_INTERVAL (--poll-interval) must be more than zero");
        }
        let pool_size = self.worker_pool_size.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        });
        if !(1..=1024).contains(&pool_size) {
            bail!(
                "WORKER_POOL_SIZE (--worker-pool-size) must be between 1 and 1024, got {pool_size}"
            );
        }
        let id = match &self.worker_id {
            Some(id) => {
                if id.is_empty()
                    || id.len() > 64
                    || !id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
                {
                    bail!(
                        "WORKER_ID (--worker-id) must be 1-64 characters of letters, digits, '-', '_' or '.'"
                    );
                }
                id.clone()
            }
            None => format!(
                "w-{}-{}",
                std::process::id(),
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            ),
        };
        let formation = match self.formation.as_str() {
            "seed000" => Formation::Seed000,
            _ => Formation::Engine,
        };
        if formation == Formation::Seed000
            && let Some(name) = catalog
                .modes()
                .names()
                .find(|n| catalog.mode(n).is_some_and(|m| m.team_size > 1))
        {
            bail!(
                "FORMATION=seed000 forms matches of solo tickets only; mode {name} has teams of more than one"
            );
        }
        Ok(WorkerConfig {
            formation,
            id,
            pools: catalog.open_pools(),
            pool_size,
            batch_size: self.claim_batch_size,
            lease: self.lock_ttl,
            heartbeat: self.heartbeat_interval,
            poll: self.poll_interval,
            modes: catalog.modes().clone(),
            wake_ups: self.wake_ups,
            coordination: match self.coordination.as_str() {
                "leader" => Coordination::Leader,
                _ => Coordination::Claim,
            },
        })
    }
}

/// A supervisor's knobs.
#[derive(Debug, Clone, Args)]
pub struct SupervisorArgs {
    /// Time between supervisor cycles.
    #[arg(long, env = "SUPERVISE_INTERVAL", default_value = "5s", value_parser = duration)]
    pub supervise_interval: Duration,
    /// How long finished tickets and matches stay readable.
    #[arg(long, env = "TICKET_RETENTION", default_value = "1h", value_parser = duration)]
    pub ticket_retention: Duration,
    /// A ticket its mode could no longer match ends after waiting this long:
    /// a party larger than the mode takes now (`max_party` or `team_size`
    /// lowered while it waited; `party_too_large`), or attributes its rules
    /// could never match (a rule added or tightened; `unmatchable`). Long
    /// enough for a rolling deploy that loosens a mode to reach every
    /// supervisor before one ends tickets newer ingresses already take.
    #[arg(long, env = "UNMATCHABLE_AFTER", default_value = "10m", value_parser = duration)]
    pub unmatchable_after: Duration,
}

impl SupervisorArgs {
    /// `lock_ttl` doubles as the grace before the supervisor fans out a match its
    /// worker did not: a worker silent that long is presumed dead.
    pub fn config(&self, catalog: &Catalog, lock_ttl: Duration) -> Result<SupervisorConfig> {
        if self.supervise_interval.is_zero() {
            bail!("SUPERVISE_INTERVAL (--supervise-interval) must be more than zero");
        }
        if self.ticket_retention.is_zero() {
            bail!("TICKET_RETENTION (--ticket-retention) must be more than zero");
        }
        Ok(SupervisorConfig {
            pools: catalog.pools(),
            interval: self.supervise_interval,
            outbox_grace: lock_ttl,
            retention: self.ticket_retention,
            worked: catalog.open_pools(),
            give_up: GiveUpAfter::of(catalog),
            offline: mm_server::offline::pools(catalog),
            misfit_after: self.unmatchable_after.as_millis() as mm_domain::Millis,
            fits: mm_server::supervisor::Fit::of(catalog),
        })
    }
}

/// The server manager's knobs.
#[derive(Debug, Clone, Args)]
pub struct ServerManagerArgs {
    /// Address the gRPC server manager listens on (game servers connect here).
    #[arg(
        long = "grpc-listen",
        env = "GRPC_LISTEN_ADDR",
        value_name = "GRPC_LISTEN_ADDR",
        default_value = "127.0.0.1:50051"
    )]
    pub grpc_listen: SocketAddr,
    /// How often game servers are asked to heartbeat.
    #[arg(long, env = "SERVER_HEARTBEAT_INTERVAL", default_value = "1s", value_parser = duration)]
    pub server_heartbeat_interval: Duration,
    /// A game server silent this long gets no new matches, and its matches fail.
    #[arg(long, env = "SERVER_HEARTBEAT_TIMEOUT", default_value = "5s", value_parser = duration)]
    pub server_heartbeat_timeout: Duration,
    /// TOML file of game-server (fleet) and allocator credentials every gRPC call
    /// must carry. Without it the gRPC API is open to anyone (dev mode), which is
    /// allowed on a loopback address only.
    #[arg(long, env = "FLEET_CREDENTIALS_FILE")]
    pub fleet_credentials_file: Option<PathBuf>,
    /// The server manager's TLS certificate chain (PEM); with GRPC_TLS_KEY, gRPC
    /// is served over TLS.
    #[arg(long, env = "GRPC_TLS_CERT", requires = "grpc_tls_key")]
    pub grpc_tls_cert: Option<PathBuf>,
    /// The private key of GRPC_TLS_CERT (PEM).
    #[arg(long, env = "GRPC_TLS_KEY", requires = "grpc_tls_cert")]
    pub grpc_tls_key: Option<PathBuf>,
    /// CA (PEM) that game servers' client certificates must chain to: mutual TLS,
    /// callers without such a certificate cannot connect. Needs GRPC_TLS_CERT.
    #[arg(long, env = "GRPC_CLIENT_CA", requires = "grpc_tls_cert")]
    pub grpc_client_ca: Option<PathBuf>,
}

impl ServerManagerArgs {
    pub fn config(&self) -> Result<ServerManagerConfig> {
        if self.server_heartbeat_interval.is_zero()
            || self.server_heartbeat_interval >= self.server_heartbeat_timeout
        {
            bail!(
                "SERVER_HEARTBEAT_INTERVAL (--server-heartbeat-interval) must be more than zero and shorter than SERVER_HEARTBEAT_TIMEOUT (--server-heartbeat-timeout)"
            );
        }
        Ok(ServerManagerConfig {
            heartbeat_interval: self.server_heartbeat_interval,
            heartbeat_timeout: self.server_heartbeat_timeout,
        })
    }

    /// TLS for the gRPC listener, mutual with GRPC_CLIENT_CA.
    pub fn tls(&self) -> Result<Option<tonic::transport::ServerTlsConfig>> {
        let (Some(cert), Some(key)) = (&self.grpc_tls_cert, &self.grpc_tls_key) else {
            return Ok(None);
        };
        let read = |var: &str, path: &PathBuf| {
            std::fs::read(path).map_err(|e| anyhow::anyhow!("{var} {}: {e}", path.display()))
        };
        let identity = tonic::transport::Identity::from_pem(
            read("GRPC_TLS_CERT (--grpc-tls-cert)", cert)?,
            read("GRPC_TLS_KEY (--grpc-tls-key)", key)?,
        );
        let mut tls = tonic::transport::ServerTlsConfig::new().identity(identity);
        if let Some(ca) = &self.grpc_client_ca {
            let ca = read("GRPC_CLIENT_CA (--grpc-client-ca)", ca)?;
            tls = tls.client_ca_root(tonic::transport::Certificate::from_pem(ca));
            tracing::info!(
                "gRPC over mutual TLS: callers need a client certificate from GRPC_CLIENT_CA"
            );
        } else {
            tracing::info!("gRPC over TLS");
        }
        Ok(Some(tls))
    }

    /// The credentials gRPC calls must carry; `None` (dev mode) only on loopback.
    pub fn credentials(&self) -> Result<Option<std::sync::Arc<mm_auth::FleetCredentials>>> {
        let Some(path) = &self.fleet_credentials_file else {
            if !self.grpc_listen.ip().is_loopback() {
                bail!(
                    "GRPC_LISTEN_ADDR (--grpc-listen) {} is not a loopback address, so the gRPC API needs credentials: set FLEET_CREDENTIALS_FILE (without it anyone could register game servers and report results)",
                    self.grpc_listen
                );
            }
            // Every start, so an open control plane is never a surprise.
            tracing::warn!(
                "gRPC API open to any caller (dev mode: no FLEET_CREDENTIALS_FILE, loopback only): anyone on this machine can register game servers and report results"
            );
            return Ok(None);
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!(
                "FLEET_CREDENTIALS_FILE (--fleet-credentials-file) {}: {e}",
                path.display()
            )
        })?;
        let creds = mm_auth::FleetCredentials::parse(&text).map_err(|e| {
            anyhow::anyhow!(
                "FLEET_CREDENTIALS_FILE (--fleet-credentials-file) {}: {e}",
                path.display()
            )
        })?;
        tracing::info!(
            credentials = creds.len(),
            "gRPC calls need a fleet or allocator credential"
        );
        Ok(Some(std::sync::Arc::new(creds)))
    }
}

/// Where ratings are kept and how the ingress reads them.
#[derive(Debug, Clone, Args)]
pub struct RatingArgs {
    /// Rating database: postgres://USER@HOST/DB for deployments of many processes,
    /// or sqlite://PATH (one machine). `serve` defaults to SQLite in DATA_DIR.
    #[arg(long = "database-url", env = "DATABASE_URL")]
    pub database_url: Option<String>,
    /// Where `serve` keeps its SQLite rating database when DATABASE_URL is unset.
    #[arg(long = "data-dir", env = "DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// How long the ingress caches a player's rating. A rating applied meanwhile is
    /// never missed: a ticket built from an older one is refused and read again.
    #[arg(long, env = "RATING_CACHE_TTL", default_value = "30s", value_parser = duration)]
    pub rating_cache_ttl: Duration,
    /// Let tickets carry the client's ratings instead of the rating service's (for
    /// tests and imports; never in production).
    #[arg(long, env = "ALLOW_CLIENT_RATINGS", default_value_t = false)]
    pub allow_client_ratings: bool,
}

impl RatingArgs {
    /// The rating database URL; with `embedded`, SQLite in DATA_DIR by default.
    pub fn url(&self, embedded: bool) -> Result<String> {
        if let Some(url) = &self.database_url {
            return Ok(url.clone());
        }
        if !embedded {
            bail!(
                "DATABASE_URL (--database-url) is required: the rating database (postgres://... shared by every process, or sqlite://PATH on one machine)"
            );
        }
        std::fs::create_dir_all(&self.data_dir).map_err(|e| {
            anyhow::anyhow!("DATA_DIR (--data-dir) {}: {e}", self.data_dir.display())
        })?;
        Ok(format!(
            "sqlite://{}",
            self.data_dir.join("ratings.db").display()
        ))
    }

    /// Opens the rating database (running its migrations).
    pub async fn open(
        &self,
        embedded: bool,
    ) -> Result<std::sync::Arc<dyn mm_ratings::RatingStore>> {
        let url = self.url(embedded)?;
        let shown = url.split('@').next_back().unwrap_or(&url).to_string();
        let store = mm_ratings::open(&url)
            .await
            .map_err(|e| anyhow::anyhow!("DATABASE_URL (--database-url) {shown}: {e}"))?;
        tracing::info!(database = %shown, "rating database ready");
        Ok(store)
    }
}

/// The rating consumer's knobs.
#[derive(Debug, Clone, Args)]
pub struct ConsumerArgs {
    /// Most match results applied in one database transaction.
    #[arg(long, env = "RATING_BATCH", default_value_t = 200)]
    pub rating_batch: usize,
    /// How long a consumer holds results it claimed before another may take them
    /// (a consumer that dies mid-batch is replaced after this long).
    #[arg(long, env = "RATING_LEASE", default_value = "10s", value_parser = duration)]
    pub rating_lease: Duration,
    /// Longest pause between looks for results when there are none.
    #[arg(long, env = "RATING_POLL_INTERVAL", default_value = "100ms", value_parser = duration)]
    pub rating_poll_interval: Duration,
    /// How often idle players' leaderboard figures are decayed (modes with decay).
    #[arg(long, env = "RATING_DECAY_INTERVAL", default_value = "1h", value_parser = duration)]
    pub rating_decay_interval: Duration,
}

impl ConsumerArgs {
    pub fn config(&self) -> Result<mm_server::ratings::ConsumerConfig> {
        if !(1..=5_000).contains(&self.rating_batch) {
            bail!("RATING_BATCH (--rating-batch) must be 1..=5000");
        }
        if self.rating_lease < Duration::from_secs(1) {
            bail!("RATING_LEASE (--rating-lease) must be at least 1s");
        }
        if self.rating_poll_interval.is_zero() || self.rating_decay_interval.is_zero() {
            bail!(
                "RATING_POLL_INTERVAL (--rating-poll-interval) and RATING_DECAY_INTERVAL (--rating-decay-interval) must be more than zero"
            );
        }
        Ok(mm_server::ratings::ConsumerConfig {
            batch: self.rating_batch,
            lease: self.rating_lease,
            idle: self.rating_poll_interval,
            decay_every: self.rating_decay_interval,
        })
    }
}

/// A class's limits: `PER_PLAYER,PER_ADDRESS`, each `N/PERIOD` (e.g. `30/1m`) or
/// `off`.
fn limit(s: &str) -> Result<mm_server::ingress::Limit, String> {
    let one = |part: &str| -> Result<Option<mm_store::Rate>, String> {
        let part = part.trim();
        if part == "off" {
            return Ok(None);
        }
        let (n, period) = part
            .split_once('/')
            .ok_or_else(|| format!("{part:?}: expected N/PERIOD (e.g. 30/1m) or off"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("{n:?} is not a whole number of calls"))?;
        let period = humantime::parse_duration(period.trim())
            .map_err(|e| format!("{period:?}: {e} (use e.g. 1s, 1m)"))?;
        if count == 0 || period.is_zero() {
            return Err(format!(
                "{part:?}: the count and period must be more than zero (or say off)"
            ));
        }
        Ok(Some(mm_store::Rate { count, period }))
    };
    let (player, address) = s
        .split_once(',')
        .ok_or_else(|| format!("{s:?}: expected PER_PLAYER,PER_ADDRESS (e.g. 30/1m,600/1m)"))?;
    Ok(mm_server::ingress::Limit {
        per_player: one(player)?,
        per_address: one(address)?,
    })
}

/// Rate limits per player and per client address (`N/PERIOD` each, or `off`);
/// shared by every ingress through the store. Trusted backends are not limited.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Ticket creations and cancels: per player, per address.
    #[arg(long, env = "RATE_LIMIT_TICKETS", default_value = "30/1m,600/1m", value_parser = limit)]
    pub rate_limit_tickets: mm_server::ingress::Limit,
    /// Ready-check answers over HTTP: per player, per address.
    #[arg(long, env = "RATE_LIMIT_ANSWERS", default_value = "30/1m,1200/1m", value_parser = limit)]
    pub rate_limit_answers: mm_server::ingress::Limit,
    /// Party invites: per player, per address.
    #[arg(long, env = "RATE_LIMIT_INVITES", default_value = "20/1m,600/1m", value_parser = limit)]
    pub rate_limit_invites: mm_server::ingress::Limit,
    /// Every other HTTP call (reads): per player, per address.
    #[arg(long, env = "RATE_LIMIT_READS", default_value = "300/1m,6000/1m", value_parser = limit)]
    pub rate_limit_reads: mm_server::ingress::Limit,
    /// WebSocket connects: per player, per address.
    #[arg(long, env = "RATE_LIMIT_CONNECTS", default_value = "20/1m,600/1m", value_parser = limit)]
    pub rate_limit_connects: mm_server::ingress::Limit,
    /// Messages on WebSockets: per player, per address.
    #[arg(long, env = "RATE_LIMIT_MESSAGES", default_value = "120/1m,6000/1m", value_parser = limit)]
    pub rate_limit_messages: mm_server::ingress::Limit,
}

impl LimitArgs {
    pub fn limits(&self) -> mm_server::ingress::RateLimits {
        mm_server::ingress::RateLimits {
            tickets: self.rate_limit_tickets,
            answers: self.rate_limit_answers,
            invites: self.rate_limit_invites,
            reads: self.rate_limit_reads,
            connects: self.rate_limit_connects,
            messages: self.rate_limit_messages,
        }
    }
}
