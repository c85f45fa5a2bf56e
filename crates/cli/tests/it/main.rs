//! Black-box tests of the `matchmaker` binary: real processes, a real redis-server,
//! real HTTP and WebSocket clients.

mod auth;
mod backfill;
mod bad_input;
mod bench;
mod blocks;
mod browser;
mod cli;
mod closing;
mod cors;
mod crash;
mod dashboard;
mod deploy;
mod e2e;
mod expiry;
mod faults;
mod fleet_auth;
mod fleet_checks;
mod fuzz;
mod leaders;
mod lifecycle;
mod limits;
mod metrics;
mod offline;
mod ops;
mod parties;
mod queues;
mod ratings;
mod redis_tls;
mod requeue;
mod rules;
mod sdk;

use futures_util::StreamExt;
use mm_testkit::{Proc, RedisCluster, RedisServer, free_port};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

pub const BIN: &str = env!("CARGO_BIN_EXE_matchmaker");

/// The modes of the tests. The shipped 1v1, 5v5 and br100 shapes with the
/// lifecycle off test matchmaking itself (a match completes when formed); `duel`,
/// `duo` and `rush` test the lifecycle with short timings (`rush`: no ready check).
pub const TEST_MODES: &str = r#"
[modes.1v1]
teams = 2
team_size = 1
window = { initial = 50, per_second = 10, cap = 500 }
cross_region_after = "10s"
ready_check = false
placement = "none"

[modes.5v5]
teams = 2
team_size = 5
party_rating = "highest"
window = { initial = 50, per_second = 10, cap = 500 }
cross_region_after = "10s"
ready_check = false
placement = "none"

[modes.br100]
teams = 100
team_size = 1
min_players = 60
start_below_max_after = "60s"
window = { initial = 150, per_second = 15, cap = 1000 }
ready_check = false
placement = "none"

[modes.duel]
teams = 2
team_size = 1
ready_check = "3s"
decline_ban = "30s"
disconnect_grace = "1s"

[modes.duo]
teams = 2
team_size = 2
ready_check = "3s"
decline_ban = "30s"
disconnect_grace = "1s"

[modes.rush]
teams = 2
team_size = 1
ready_check = false
placement_timeout = "1s"

[modes.fill]
teams = 2
team_size = 2
ready_check = false
backfill = "manual"

[modes.fillcheck]
teams = 2
team_size = 1
ready_check = "5s"
backfill = "manual"

[modes.refill]
teams = 2
team_size = 2
ready_check = false
backfill = "auto"
placement_timeout = "2s"
"#;

/// The test modes file, written once per test process.
pub fn test_modes_file() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| shared_file("test-modes", TEST_MODES))
}

/// A file holding `contents`, in the build's scratch folder and named after
/// them, so that the test processes (one per test under nextest) share one
/// file instead of leaving one each behind. Written to a file of this process
/// and renamed into place, so no process reads half of it.
pub fn shared_file(stem: &str, contents: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    contents.hash(&mut h);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("{stem}-{:016x}.toml", h.finish()));
    if std::fs::read_to_string(&path).ok().as_deref() != Some(contents) {
        let own = dir.join(format!("{stem}-{}.part", std::process::id()));
        std::fs::write(&own, contents).expect("write the shared file");
        std::fs::rename(&own, &path).expect("move the shared file into place");
    }
    path.to_string_lossy().into_owned()
}

/// A limit no test reaches.
pub const NO_LIMIT: &str = "1000000/1s,1000000/1s";

/// Settings that make a deployment react quickly in tests. Tickets may carry the
/// client's ratings (most tests match on chosen ratings); the rating tests switch
/// that off.
/// Sends `sig` (`-STOP`, `-CONT`, ...) to a process.
pub fn signal(pid: u32, sig: &str) {
    assert!(
        Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

pub fn fast_env(cmd: &mut Command) {
    cmd.env("RUST_LOG", "info")
        .env("AUTH", "dev")
        // Limits are checked on every call but never bind; the rate-limit tests
        // set their own.
        .env("RATE_LIMIT_TICKETS", NO_LIMIT)
        .env("RATE_LIMIT_ANSWERS", NO_LIMIT)
        .env("RATE_LIMIT_INVITES", NO_LIMIT)
        .env("RATE_LIMIT_READS", NO_LIMIT)
        .env("RATE_LIMIT_CONNECTS", NO_LIMIT)
        .env("RATE_LIMIT_MESSAGES", NO_LIMIT)
        .env("ALLOW_CLIENT_RATINGS", "true")
        .env("RATING_POLL_INTERVAL", "20ms")
        .env("RATING_LEASE", "2s")
        .env("MODES_FILE", test_modes_file())
        .env("SERVER_HEARTBEAT_INTERVAL", "200ms")
        .env("SERVER_HEARTBEAT_TIMEOUT", "1s")
        .env("POLL_INTERVAL", "20ms")
        .env("SUPERVISE_INTERVAL", "200ms")
        .env("LOCK_TTL", "2s")
        .env("HEARTBEAT_INTERVAL", "300ms")
        .env("WORKER_POOL_SIZE", "2");
}

/// A running deployment: either `serve` alone or Redis plus separate processes.
pub struct Deployment {
    pub addr: String,
    /// The server manager's gRPC address (`http://...`).
    pub grpc: String,
    pub procs: Vec<Proc>,
    pub redis: Option<RedisServer>,
    pub cluster: Option<RedisCluster>,
    /// The rating database (`serve`: SQLite in DATA_DIR, the logs folder).
    pub database_url: String,
    pub logs: tempfile::TempDir,
}

impl Deployment {
    /// `matchmaker serve` on the in-memory store.
    pub async fn embedded() -> Self {
        Self::embedded_with(&[]).await
    }

    /// The same with extra environment.
    pub async fn embedded_with(env: &[(&str, &str)]) -> Self {
        let logs = tempfile::tempdir().unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let grpc = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .env("LISTEN_ADDR", &addr)
            .env("GRPC_LISTEN_ADDR", &grpc)
            .env("DATA_DIR", logs.path());
        fast_env(&mut cmd);
        cmd.envs(env.iter().copied());
        let procs = vec![Proc::spawn("serve", cmd, logs.path())];
        let database_url = env
            .iter()
            .find(|(k, _)| *k == "DATABASE_URL")
            .map(|(_, v)| v.to_string())
            .unwrap_or_else(|| format!("sqlite://{}", logs.path().join("ratings.db").display()));
        let d = Self {
            addr,
            grpc: format!("http://{grpc}"),
            procs,
            redis: None,
            cluster: None,
            database_url,
            logs,
        };
        d.wait_ready().await;
        d
    }

    /// A redis-server plus separate ingress, worker and supervisor processes.
    pub async fn redis_processes() -> Self {
        Self::redis_processes_with(&[]).await
    }

    /// The same with extra environment for the worker only.
    pub async fn redis_processes_with(worker_env: &[(&str, &str)]) -> Self {
        let env: Vec<_> = worker_env.iter().map(|&(k, v)| ("worker", k, v)).collect();
        Self::redis_processes_env(&env).await
    }

    /// The same with extra environment per process: `(process, key, value)`, the
    /// process being `ingress`, `worker`, `supervisor`, `server-manager` or
    /// `rating-service` (`*`: every process).
    pub async fn redis_processes_env(env: &[(&str, &str, &str)]) -> Self {
        Self::over_redis(RedisServer::start(), env).await
    }

    /// Separate processes over a redis-server the test started (and may kill).
    pub async fn over_redis(redis: RedisServer, env: &[(&str, &str, &str)]) -> Self {
        let mut d = Self::processes(&redis.url(), false, env).await;
        d.redis = Some(redis);
        d
    }

    /// Separate processes over `redis` reached at `url` (its TLS port, say).
    pub async fn over_redis_at(redis: RedisServer, url: &str, env: &[(&str, &str, &str)]) -> Self {
        let mut d = Self::processes(url, false, env).await;
        d.redis = Some(redis);
        d
    }

    /// Starts process `name` (`worker`, `supervisor`, `server-manager`) again
    /// on the deployment's redis-server (single node), with `env` added, and
    /// waits until it runs. The old one should be dead (a server manager
    /// takes the same gRPC port).
    pub async fn respawn(&mut self, name: &str, env: &[(&str, &str)]) {
        let url = self
            .redis
            .as_ref()
            .expect("a deployment on one redis-server")
            .url();
        let mut cmd = Command::new(BIN);
        cmd.arg(name)
            .env("REDIS_URL", url)
            .env("REDIS_CLUSTER", "false")
            .env("DATABASE_URL", &self.database_url);
        fast_env(&mut cmd);
        if name == "server-manager" {
            cmd.env("GRPC_LISTEN_ADDR", self.grpc.trim_start_matches("http://"));
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let p = Proc::spawn(&format!("{name}-again"), cmd, self.logs.path());
        let deadline = Instant::now() + Duration::from_secs(20);
        while !p.log().contains("started") && !p.log().contains("listening") {
            assert!(
                Instant::now() < deadline,
                "{name} did not start:\n{}",
                p.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.procs.push(p);
    }

    /// The process named `name` (`ingress`, `worker`, `supervisor`, ...).
    pub fn proc(&mut self, name: &str) -> &mut Proc {
        let i = self.procs.iter().position(|p| p.name() == name);
        &mut self.procs[i.unwrap_or_else(|| panic!("no process {name}"))]
    }

    /// A six-node Redis Cluster plus separate ingress, two workers and a
    /// supervisor, each given one node to discover the cluster from.
    pub async fn cluster_processes() -> Self {
        Self::cluster_processes_env(&[]).await
    }

    /// The same with extra environment per process (see `redis_processes_env`).
    pub async fn cluster_processes_env(env: &[(&str, &str, &str)]) -> Self {
        let cluster = RedisCluster::start();
        let urls = cluster.urls();
        let mut d = Self::processes(&urls[..2].join(","), true, env).await;
        d.cluster = Some(cluster);
        d
    }

    /// Separate processes over a Redis Cluster whose nodes serve TLS, reached
    /// through two of its `rediss://` URLs.
    pub async fn tls_cluster_processes_env(env: &[(&str, &str, &str)]) -> Self {
        let cluster = RedisCluster::start_tls();
        let urls = cluster.tls_urls();
        let mut d = Self::processes(&urls[..2].join(","), true, env).await;
        d.cluster = Some(cluster);
        d
    }

    async fn processes(url: &str, cluster: bool, env: &[(&str, &str, &str)]) -> Self {
        let logs = tempfile::tempdir().unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let grpc = format!("127.0.0.1:{}", free_port());
        let mut procs = Vec::new();
        let workers: &[&str] = if cluster {
            &["worker", "worker2"]
        } else {
            &["worker"]
        };
        let names = ["ingress"]
            .iter()
            .chain(workers)
            .chain(&["supervisor", "server-manager", "rating-service"])
            .copied();
        // One rating database for every process (SQLite serves several processes
        // on one machine; a test may pass a PostgreSQL DATABASE_URL instead).
        let database_url = env
            .iter()
            .find(|(_, k, _)| *k == "DATABASE_URL")
            .map(|(_, _, v)| v.to_string())
            .unwrap_or_else(|| format!("sqlite://{}", logs.path().join("ratings.db").display()));
        for name in names {
            let mut cmd = Command::new(BIN);
            cmd.arg(name.trim_end_matches('2'))
                .env("REDIS_URL", url)
                .env("REDIS_CLUSTER", cluster.to_string())
                .env("DATABASE_URL", &database_url);
            fast_env(&mut cmd);
            if name == "ingress" {
                cmd.env("LISTEN_ADDR", &addr);
            }
            if name == "server-manager" {
                cmd.env("GRPC_LISTEN_ADDR", &grpc);
            }
            for &(_, k, v) in env.iter().filter(|(p, ..)| *p == name || *p == "*") {
                cmd.env(k, v);
            }
            procs.push(Proc::spawn(name, cmd, logs.path()));
        }
        let d = Self {
            addr,
            grpc: format!("http://{grpc}"),
            procs,
            redis: None,
            cluster: None,
            database_url,
            logs,
        };
        d.wait_ready().await;
        d
    }

    /// Waits until the API answers ready and the gRPC listener, if the
    /// deployment has one (the server manager's, a process of its own beside
    /// the ingress), takes connections.
    async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let url = format!("http://{}/readyz", self.addr);
        let grpc = self.grpc.trim_start_matches("http://");
        while Instant::now() < deadline {
            if let Ok(r) = reqwest::get(&url).await
                && r.status() == StatusCode::OK
                && (grpc.is_empty() || tokio::net::TcpStream::connect(grpc).await.is_ok())
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.dump_logs();
        panic!("deployment not ready at {url} and {grpc}");
    }

    pub fn dump_logs(&self) {
        for p in &self.procs {
            eprintln!("---- log ----\n{}", p.log());
        }
    }

    pub fn client(&self, token: &str) -> Client {
        Client {
            http: reqwest::Client::new(),
            base: format!("http://{}", self.addr),
            token: token.to_string(),
        }
    }

    /// Forms a party: `leader` creates it, invites each member, and each joins.
    /// Returns the party's id.
    pub async fn party(&self, leader: &str, members: &[&str]) -> String {
        let (status, party) = self
            .client(leader)
            .send(reqwest::Method::POST, "/v1/parties", None)
            .await;
        assert_eq!(status, StatusCode::CREATED, "{party}");
        let id = party["id"].as_str().unwrap().to_string();
        for m in members {
            let (status, body) = self
                .client(leader)
                .send(
                    reqwest::Method::POST,
                    &format!("/v1/parties/{id}/invites"),
                    Some(json!({"player_id": m})),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "invite {m}: {body}");
            let (status, body) = self
                .client(m)
                .send(
                    reqwest::Method::POST,
                    &format!("/v1/parties/{id}/join"),
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{m} joins: {body}");
        }
        id
    }

    /// Opens the player's event socket and waits for `session.ready`.
    pub async fn socket(&self, token: &str) -> Socket {
        let url = format!("ws://{}/v1/ws?token={token}", self.addr);
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("websocket");
        let mut s = Socket { ws };
        let hello = s.next_event(Duration::from_secs(5)).await.expect("hello");
        assert_eq!(hello["type"], "session.ready");
        s
    }
}

/// An HTTP client acting as one player.
pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub token: String,
}

impl Client {
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn create(&self, rating: f64) -> (StatusCode, Value) {
        let body =
            json!({"players": [self.token], "mode": "1v1", "regions": ["eu"], "rating": rating});
        self.send(reqwest::Method::POST, "/v1/tickets", Some(body))
            .await
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.send(reqwest::Method::DELETE, path, None).await
    }
}

/// A player's WebSocket.
pub struct Socket {
    ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
}

impl Socket {
    /// The next JSON event, or `None` on timeout or close.
    pub async fn next_event(&mut self, timeout: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let msg = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .ok()??
                .ok()?;
            match msg {
                Message::Text(t) => return serde_json::from_str(&t).ok(),
                Message::Close(_) => return None,
                _ => continue,
            }
        }
    }

    /// Sends a JSON text frame.
    pub async fn send(&mut self, v: Value) {
        use futures_util::SinkExt;
        self.ws
            .send(Message::Text(v.to_string().into()))
            .await
            .expect("send on the websocket");
    }

    /// Closes the socket (the client going away).
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }

    /// Waits for an event of the given type, skipping others.
    pub async fn wait_for(&mut self, kind: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.next_event(left).await {
                Some(e) if e["type"] == kind => return e,
                Some(_) => continue,
                None => break,
            }
        }
        panic!("no {kind} event within {timeout:?}");
    }
}
