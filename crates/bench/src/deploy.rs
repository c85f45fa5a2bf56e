//! The deployments the HTTP benches run against: one the command starts itself on
//! loopback (an ingress, K workers and a supervisor on a fresh `redis-server`, or
//! `matchmaker serve`, the embedded default), with our settings or seed 000's,
//! tickets rated by the client or by the rating service; or one the user gives by
//! URL, which must be on loopback too.

use super::{BENCH_MODE, SEED000_SUPERVISE, SEED000_WORKER, matchmaker};
use anyhow::{Result, bail};
use clap::ValueEnum;
use mm_testkit::{PostgresServer, Proc, RedisServer, free_port, wait_for_port};
use std::net::{IpAddr, ToSocketAddrs};
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

/// A deployment the command starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// `matchmaker ingress` + worker processes + a supervisor on a local redis-server.
    Redis,
    /// `matchmaker serve`: one process, in-memory store.
    Embedded,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Redis => "redis",
            Kind::Embedded => "embedded",
        }
    }
}

/// Whose worker settings a started deployment runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settings {
    Ours,
    /// [`SEED000_WORKER`] and [`SEED000_SUPERVISE`].
    Seed000,
}

impl Settings {
    pub fn label(self) -> &'static str {
        match self {
            Settings::Ours => "ours",
            Settings::Seed000 => "seed-000 settings",
        }
    }
}

/// Where a started deployment's tickets get their ratings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Ratings {
    /// The client sends them (`ALLOW_CLIENT_RATINGS=true`).
    Client,
    /// The rating service: the ingress looks each player up (PostgreSQL for the
    /// Redis deployment, durable; SQLite for the embedded one).
    Service,
}

impl Ratings {
    pub fn label(self) -> &'static str {
        match self {
            Ratings::Client => "client ratings",
            Ratings::Service => "rating lookups",
        }
    }
}

/// A running deployment; stopped when dropped.
pub struct Deployment {
    /// `http://host:port`, no trailing slash (empty for the seed-000 port).
    pub base: String,
    /// The seed-000 port's Redis: its players enqueue there directly.
    port_redis: Option<String>,
    /// The process holding the players' sockets (none for a given URL).
    ingress: Option<Proc>,
    others: Vec<Proc>,
    redis: Option<RedisServer>,
    _postgres: Option<PostgresServer>,
    _dir: Option<TempDir>,
}

impl Deployment {
    /// Starts `kind` with `workers` worker processes (Redis) and `settings`, its
    /// tickets rated per `ratings`, with `front_env` added to the environment of
    /// the process serving the API.
    pub fn start_with(
        kind: Kind,
        settings: Settings,
        workers: usize,
        ratings: Ratings,
        front_env: &[(&str, String)],
    ) -> Result<Self> {
        let redis = (kind == Kind::Redis).then(RedisServer::start);
        let postgres = (kind == Kind::Redis && ratings == Ratings::Service)
            .then(PostgresServer::start_durable);
        let dir = tempfile::tempdir()?;
        let modes = dir.path().join("modes.toml");
        std::fs::write(&modes, BENCH_MODE)?;
        let addr = format!("127.0.0.1:{}", free_port());
        let url = redis.as_ref().map(RedisServer::url);
        let command = |sub: &str| -> Result<Command> {
            let mut cmd = matchmaker(sub, url.as_deref(), &modes, "bench", "eu")?;
            if settings == Settings::Seed000 {
                for (k, v) in SEED000_WORKER {
                    cmd.env(k, v);
                }
                cmd.env("SUPERVISE_INTERVAL", SEED000_SUPERVISE);
            }
            Ok(cmd)
        };
        let mut front = command(if redis.is_some() { "ingress" } else { "serve" })?;
        front
            .env("LISTEN_ADDR", &addr)
            .env("GRPC_LISTEN_ADDR", format!("127.0.0.1:{}", free_port()));
        if ratings == Ratings::Service {
            front.env("ALLOW_CLIENT_RATINGS", "false");
        }
        if let Some(pg) = &postgres {
            front.env("DATABASE_URL", pg.create_database("bench"));
        }
        for (k, v) in front_env {
            front.env(k, v);
        }
        let ingress = Proc::spawn("front", front, dir.path());
        let mut others = Vec::new();
        if redis.is_some() {
            others.push(Proc::spawn(
                "supervisor",
                command("supervisor")?,
                dir.path(),
            ));
            for i in 0..workers {
                let mut w = command("worker")?;
                w.env("WORKER_ID", format!("bench-w{i}"))
                    .env("WORKER_POOL_SIZE", "2");
                others.push(Proc::spawn(&format!("worker-{i}"), w, dir.path()));
            }
        }
        if !wait_for_port(&addr, Duration::from_secs(20)) {
            bail!(
                "{}: the server did not start:\n{}",
                kind.name(),
                ingress.log()
            );
        }
        for p in &mut others {
            if !p.running() {
                bail!("{}: a process died at start:\n{}", kind.name(), p.log());
            }
        }
        Ok(Self {
            base: format!("http://{addr}"),
            port_redis: None,
            ingress: Some(ingress),
            others,
            redis,
            _postgres: postgres,
            _dir: Some(dir),
        })
    }

    /// The seed-000 port ([`super::seed000`]) on a fresh redis-server: its
    /// supervisor and `workers` workers of two consumers each, with seed 000's
    /// settings, its consumers paced by `poll`, serving mode `bench` in region
    /// `eu`. It has no HTTP front: players enqueue into its Redis and hear of
    /// matches on its channel, as its ingress would.
    pub fn port(workers: usize, poll: super::seed000::worker::Poll) -> Result<Self> {
        use super::pipeline::{port_supervisor, port_worker};
        use super::seed000::{HEARTBEAT_INTERVAL, LOCK_TTL, SUPERVISE_INTERVAL};
        let redis = RedisServer::start();
        let dir = tempfile::tempdir()?;
        let url = redis.url();
        let pool = mm_domain::Pool::new("bench", "eu");
        let mut others = vec![Proc::spawn(
            "supervisor",
            port_supervisor(&url, LOCK_TTL, SUPERVISE_INTERVAL)?,
            dir.path(),
        )];
        for i in 0..workers {
            let cmd = port_worker(
                &url,
                &pool,
                &format!("bench-w{i}"),
                2,
                LOCK_TTL,
                HEARTBEAT_INTERVAL,
                poll,
            )?;
            others.push(Proc::spawn(&format!("worker-{i}"), cmd, dir.path()));
        }
        Ok(Self {
            base: String::new(),
            port_redis: Some(url),
            ingress: None,
            others,
            redis: Some(redis),
            _postgres: None,
            _dir: Some(dir),
        })
    }

    /// The Redis of the seed-000 port, if this is it.
    pub fn port_redis(&self) -> Option<&str> {
        self.port_redis.as_deref()
    }

    /// A deployment the user runs, at `url` (loopback only).
    pub fn given(url: &str) -> Result<Self> {
        Ok(Self {
            base: loopback_base(url)?,
            port_redis: None,
            ingress: None,
            others: Vec::new(),
            redis: None,
            _postgres: None,
            _dir: None,
        })
    }

    /// `ws://host:port`.
    pub fn ws_base(&self) -> String {
        self.base.replacen("http://", "ws://", 1)
    }

    /// Pid of the process holding the sockets, if the command started it.
    pub fn ingress_pid(&self) -> Option<u32> {
        self.ingress.as_ref().map(Proc::pid)
    }

    /// Pids of the worker and supervisor processes the command started.
    pub fn worker_pids(&self) -> Vec<u32> {
        self.others.iter().map(Proc::pid).collect()
    }

    /// The Redis the command started for the deployment, if any.
    pub fn redis_url(&self) -> Option<String> {
        self.redis.as_ref().map(RedisServer::url)
    }

    /// Fails with the logs of whatever the command started that died.
    pub fn check_alive(&mut self) -> Result<()> {
        for p in self.ingress.iter_mut().chain(self.others.iter_mut()) {
            if !p.running() {
                bail!("a process of the deployment died:\n{}", p.log());
            }
        }
        Ok(())
    }

    /// Stops what the command started, gently.
    pub fn stop(&mut self) {
        for p in self.others.iter_mut().chain(self.ingress.iter_mut()) {
            p.terminate(Duration::from_secs(10));
        }
    }
}

/// `http://host:port` of `url` if its host is a loopback address.
pub fn loopback_base(url: &str) -> Result<String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| anyhow::anyhow!("--url {url}: {e}"))?;
    if parsed.scheme() != "http" {
        bail!("--url must be http://HOST:PORT, got {url}");
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| anyhow::anyhow!("--url {url} has no host"))?;
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| anyhow::anyhow!("--url {url} has no port"))?;
    let host_ip = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<IpAddr> = (host_ip, port)
        .to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("--url {url}: {e}"))?
        .map(|a| a.ip())
        .collect();
    if addrs.is_empty() || !addrs.iter().all(IpAddr::is_loopback) {
        bail!("--url must be on loopback (the benches only talk to this machine), got {url}");
    }
    Ok(format!("http://{host}:{port}"))
}

/// Resident memory of process `pid`, in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_urls_are_taken() {
        assert_eq!(
            loopback_base("http://127.0.0.1:8080/").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            loopback_base("http://localhost:9000").unwrap(),
            "http://localhost:9000"
        );
        assert!(loopback_base("http://[::1]:8080").is_ok());
        assert!(loopback_base("http://10.1.2.3:8080").is_err());
        assert!(loopback_base("https://127.0.0.1:8080").is_err());
        assert!(loopback_base("not a url").is_err());
    }
}
