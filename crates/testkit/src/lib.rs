//! Test harness: starts real servers and processes for integration tests.
//!
//! - [`RedisServer`]: a throwaway `redis-server` on a free loopback port, killed on drop.
//! - [`RedisCluster`]: six of them (three primaries, three replicas) formed into a
//!   Redis Cluster with `redis-cli --cluster create`.
//! - [`PostgresServer`]: a throwaway PostgreSQL cluster (`initdb` + `pg_ctl`) on a
//!   free loopback port, run as a non-root user when the tests run as root.
//! - [`Proc`]: a child process (usually the `matchmaker` binary) logging to a file,
//!   SIGKILLed on drop unless stopped first.
//! - [`keys`]: throwaway signing keys for token tests.

mod postgres;

/// Throwaway private keys (PEM) that sign the tokens test suites send; never
/// use them anywhere else.
pub mod keys {
    pub const RSA1: &[u8] = include_bytes!("../keys/rsa1.pem");
    pub const RSA2: &[u8] = include_bytes!("../keys/rsa2.pem");
    pub const ED1: &[u8] = include_bytes!("../keys/ed1.pem");
    /// An HS256 secret (32 bytes or more).
    pub const SECRET: &[u8] = b"test-secret-0123456789abcdef-0123456789";

    /// A test CA, a server certificate for 127.0.0.1/localhost and a client
    /// certificate it signed, and a client certificate from another CA.
    pub mod tls {
        pub const CA: &[u8] = include_bytes!("../keys/tls/ca.pem");
        pub const SERVER_CERT: &[u8] = include_bytes!("../keys/tls/server.pem");
        pub const SERVER_KEY: &[u8] = include_bytes!("../keys/tls/server.key");
        pub const CLIENT_CERT: &[u8] = include_bytes!("../keys/tls/client.pem");
        pub const CLIENT_KEY: &[u8] = include_bytes!("../keys/tls/client.key");
        pub const ROGUE_CLIENT_CERT: &[u8] = include_bytes!("../keys/tls/rogue-client.pem");
        pub const ROGUE_CLIENT_KEY: &[u8] = include_bytes!("../keys/tls/rogue-client.key");
        /// Another CA, and a certificate it signed for 127.0.0.1 that serves
        /// as server and client both: what Redis Cluster nodes over TLS show
        /// each other.
        pub const CLUSTER_CA: &[u8] = include_bytes!("../keys/tls/cluster-ca.pem");
        pub const CLUSTER_NODE_CERT: &[u8] = include_bytes!("../keys/tls/cluster-node.pem");
        pub const CLUSTER_NODE_KEY: &[u8] = include_bytes!("../keys/tls/cluster-node.key");
    }
}

pub use postgres::PostgresServer;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1 (free when asked; bind it soon), never one this
/// process was given before, nor one another test process on this machine was given
/// in the last ten minutes: the kernel may hand the same port to two binds in a row
/// once the first is closed, so a test that asks for two ports (HTTP and gRPC)
/// before binding either could get one port twice, and two test processes (nextest
/// runs each test in its own) could each get the same port.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|p| p.into_inner());
    let shared = std::env::temp_dir().join("mm-testkit-ports");
    for _ in 0..100 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("no free port on loopback");
        if !given.contains(&port) && reserve_port(&shared, port, PORT_HELD) {
            given.push(port);
            return port;
        }
    }
    panic!("no new free port on loopback after 100 tries")
}

/// How long a port given to one test process is kept from the others.
const PORT_HELD: Duration = Duration::from_secs(600);

/// Marks `port` as given, in directory `dir` shared by every process on the machine
/// (a file per port, created exclusively). False when another process marked it less
/// than `held` ago; a mark older than that is taken over. True when the mark cannot
/// be written at all (the kernel's word is all there is then).
fn reserve_port(dir: &Path, port: u16, held: Duration) -> bool {
    let path = dir.join(port.to_string());
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
    };
    if std::fs::create_dir_all(dir).is_err() {
        return true;
    }
    match create() {
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let fresh = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().unwrap_or_default() < held);
            // Stale: one process removes it and creates it anew; a second racing it
            // finds the new mark.
            !fresh && std::fs::remove_file(&path).is_ok() && create().is_ok()
        }
        Err(_) => true,
    }
}

/// A real redis-server for one test.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    /// Options after the defaults, kept for [`RedisServer::restart`].
    extra: Vec<String>,
    dir: tempfile::TempDir,
    /// The TLS port and the folder of its certificates (see
    /// [`RedisServer::start_tls`]).
    tls: Option<(u16, tempfile::TempDir)>,
}

impl RedisServer {
    /// Whether `redis-server` (or `$REDIS_SERVER_BIN`) can be run here: what
    /// a caller that would rather report than panic asks before
    /// [`RedisServer::start`]. The error names the binary and how to install it.
    pub fn available() -> Result<(), String> {
        let bin = Self::binary();
        match Command::new(&bin).arg("--version").output() {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!("{bin} --version exited with {}", out.status)),
            Err(e) => Err(Self::missing(&bin, &e)),
        }
    }

    /// `redis-server`, or `$REDIS_SERVER_BIN`.
    fn binary() -> String {
        std::env::var("REDIS_SERVER_BIN").unwrap_or_else(|_| "redis-server".into())
    }

    /// What to say when `bin` cannot be run: the error and how to install it.
    fn missing(bin: &str, e: &std::io::Error) -> String {
        format!(
            "cannot run {bin}: {e}. Install it (scripts/test.sh does: apt-get install -y redis-server)"
        )
    }

    /// Starts `redis-server` (or `$REDIS_SERVER_BIN`) on a free port with no persistence.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts one that writes every change to its append-only file before
    /// answering (`appendfsync always`), so a restart loses nothing it acknowledged.
    pub fn start_aof() -> Self {
        Self::start_with(&["--appendonly", "yes", "--appendfsync", "always"])
    }

    /// Starts one that also serves TLS on a port of its own ([`RedisServer::tls_url`])
    /// with [`keys::tls`]'s server certificate (for 127.0.0.1); with
    /// `client_certs` a TLS client must show a certificate that test CA signed.
    /// The plain port stays open for the test's own look inside.
    pub fn start_tls(client_certs: bool) -> Self {
        let pems = [keys::tls::CA, keys::tls::SERVER_CERT, keys::tls::SERVER_KEY];
        let auth = if client_certs { "yes" } else { "no" };
        Self::start_tls_with(pems, &["--tls-auth-clients", auth])
    }

    /// Starts one serving TLS as well, with `pems` (CA, certificate, key) and
    /// `extra` options.
    fn start_tls_with(pems: [&[u8]; 3], extra: &[&str]) -> Self {
        let files = tempfile::tempdir().expect("temp dir");
        let names = ["ca.pem", "server.pem", "server.key"];
        for (name, pem) in names.iter().zip(pems) {
            std::fs::write(files.path().join(name), pem).expect("write a certificate");
        }
        let tls_port = free_port();
        let path = |name: &str| files.path().join(name).display().to_string();
        let mut args = vec![
            "--tls-port".to_string(),
            tls_port.to_string(),
            "--tls-cert-file".into(),
            path("server.pem"),
            "--tls-key-file".into(),
            path("server.key"),
            "--tls-ca-cert-file".into(),
            path("ca.pem"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut server = Self::start_with(&args);
        server.tls = Some((tls_port, files));
        server
    }

    /// Same, with extra server options.
    fn start_with(extra: &[&str]) -> Self {
        let mut last_err = String::new();
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("temp dir");
            let port = free_port();
            if !extra.is_empty() && (port > 55_000 || !port_free(port + 10_000)) {
                // A cluster node also listens on port + 10000 (the cluster bus).
                continue;
            }
            let mut server = RedisServer {
                child: None,
                port,
                extra: extra.iter().map(|s| s.to_string()).collect(),
                dir,
                tls: None,
            };
            match server.launch() {
                Ok(()) => return server,
                Err(e) => {
                    last_err = e;
                    server.kill();
                }
            }
        }
        panic!("redis-server did not start: {last_err}");
    }

    /// Starts the server process on this server's port and folder; waits for PONG.
    fn launch(&mut self) -> Result<(), String> {
        let bin = Self::binary();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("redis.log"))
            .expect("log file");
        let child = Command::new(&bin)
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no", "--protected-mode", "no"])
            .args(&self.extra)
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}", Self::missing(&bin, &e)));
        self.child = Some(child);
        self.wait_ready(Duration::from_secs(10))
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                return Err(format!("exited with {status}"));
            }
            if ping(self.port).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err("no PONG in time".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILLs the server, as a crash: nothing is flushed that was not already.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port and folder (an AOF server reloads its
    /// file). Panics if it does not come back.
    pub fn restart(&mut self) {
        self.kill();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !port_free(self.port) {
            assert!(Instant::now() < deadline, "port {} stayed busy", self.port);
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Err(e) = self.launch() {
            panic!("redis-server did not restart: {e}\n{}", self.log());
        }
    }

    /// The server's log so far (every run of it).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The TLS port's URL (`rediss://`) of a server [`RedisServer::start_tls`] started.
    pub fn tls_url(&self) -> String {
        let (port, _) = self.tls.as_ref().expect("started with start_tls");
        format!("rediss://127.0.0.1:{port}")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn port_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// A real six-node Redis Cluster for one test: three primaries with a replica each.
/// What makes a redis-server a cluster node here.
const CLUSTER_NODE: [&str; 8] = [
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    "--cluster-node-timeout",
    "5000",
    // Replicas sync at once rather than after the default 5 s.
    "--repl-diskless-sync-delay",
    "0",
];

pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts six cluster-enabled servers and forms the cluster; returns once every
    /// node reports `cluster_state:ok`.
    pub fn start() -> Self {
        Self::form(
            (0..6)
                .map(|_| RedisServer::start_with(&CLUSTER_NODE))
                .collect(),
        )
    }

    /// The same with every node also serving TLS ([`RedisCluster::tls_urls`];
    /// [`keys::tls::CLUSTER_NODE_CERT`], signed by [`keys::tls::CLUSTER_CA`]),
    /// the nodes talking to each other over TLS: a client that connects over
    /// TLS is told the other nodes' TLS ports, a plain one their plain ports.
    pub fn start_tls() -> Self {
        let pems = [
            keys::tls::CLUSTER_CA,
            keys::tls::CLUSTER_NODE_CERT,
            keys::tls::CLUSTER_NODE_KEY,
        ];
        let mut extra = CLUSTER_NODE.to_vec();
        extra.extend([
            "--tls-cluster",
            "yes",
            "--tls-replication",
            "yes",
            "--tls-auth-clients",
            "no",
        ]);
        Self::form(
            (0..6)
                .map(|_| RedisServer::start_tls_with(pems, &extra))
                .collect(),
        )
    }

    /// Forms a cluster of `nodes` (three primaries, a replica each).
    fn form(nodes: Vec<RedisServer>) -> Self {
        let cli = std::env::var("REDIS_CLI_BIN").unwrap_or_else(|_| "redis-cli".into());
        let out = Command::new(&cli)
            .arg("--cluster")
            .arg("create")
            .args(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)))
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .output()
            .unwrap_or_else(|e| panic!("cannot run {cli}: {e}"));
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        for n in &nodes {
            loop {
                let info = Command::new(&cli)
                    .args(["-p", &n.port.to_string(), "cluster", "info"])
                    .output()
                    .expect("redis-cli cluster info");
                if String::from_utf8_lossy(&info.stdout).contains("cluster_state:ok") {
                    break;
                }
                assert!(Instant::now() < deadline, "cluster not ok in time");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        // Every replica holds its primary's data (a replica that never synced
        // cannot take over).
        for n in &nodes {
            loop {
                let info = Command::new(&cli)
                    .args(["-p", &n.port.to_string(), "info", "replication"])
                    .output()
                    .expect("redis-cli info replication");
                let text = String::from_utf8_lossy(&info.stdout).to_string();
                if !text.contains("role:slave") || text.contains("master_link_status:up") {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "a replica did not sync in time:\n{text}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Self { nodes }
    }

    /// `redis://` URLs of every node.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// `rediss://` URLs of every node of a cluster [`RedisCluster::start_tls`] started.
    pub fn tls_urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::tls_url).collect()
    }

    /// The port of the live primary serving `key`'s slot, as a live node sees the
    /// cluster (None while no live primary serves it, e.g. mid-failover).
    pub fn primary_of(&self, key: &str) -> Option<u16> {
        let cli = std::env::var("REDIS_CLI_BIN").unwrap_or_else(|_| "redis-cli".into());
        let live = self.nodes.iter().find(|n| n.child.is_some())?.port;
        let out = Command::new(&cli)
            .args(["-p", &live.to_string(), "cluster", "keyslot", key])
            .output()
            .ok()?;
        let slot: u16 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
        // `CLUSTER NODES`: id addr@bus flags master ping pong epoch state slots...
        let out = Command::new(&cli)
            .args(["-p", &live.to_string(), "cluster", "nodes"])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.lines()
            .filter(|l| l.contains("master") && !l.contains("fail"))
            .find(|l| {
                l.split_whitespace().skip(8).any(|range| {
                    let (a, b) = range.split_once('-').unwrap_or((range, range));
                    matches!((a.parse::<u16>(), b.parse::<u16>()), (Ok(a), Ok(b)) if a <= slot && slot <= b)
                })
            })
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|addr| addr.split('@').next())
            .and_then(|addr| addr.rsplit(':').next())
            .and_then(|p| p.parse::<u16>().ok())
    }

    /// `CLUSTER NODES` as a live node reports it (for failure messages).
    pub fn describe(&self) -> String {
        let cli = std::env::var("REDIS_CLI_BIN").unwrap_or_else(|_| "redis-cli".into());
        let Some(live) = self.nodes.iter().find(|n| n.child.is_some()) else {
            return "no live node".into();
        };
        let mut text = Command::new(&cli)
            .args(["-p", &live.port.to_string(), "cluster", "nodes"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default();
        for n in &self.nodes {
            let log = n.log();
            let tail: Vec<&str> = log.lines().rev().take(8).collect();
            text.push_str(&format!("--- node {} log tail:\n", n.port));
            for line in tail.into_iter().rev() {
                text.push_str(line);
                text.push('\n');
            }
        }
        text
    }

    /// SIGKILLs the primary that serves `key`'s slot, as a crash; its replica takes
    /// over after the cluster node timeout (5 s here). Returns the dead node's port.
    pub fn kill_primary_of(&mut self, key: &str) -> u16 {
        let port = self
            .primary_of(key)
            .unwrap_or_else(|| panic!("no primary serves {key}"));
        self.nodes
            .iter_mut()
            .find(|n| n.port == port)
            .expect("the primary is one of ours")
            .kill();
        port
    }

    /// Starts a killed node again on its port and folder; it rejoins the cluster
    /// (as a replica if its replica took over meanwhile).
    pub fn restart_node(&mut self, port: u16) {
        self.nodes
            .iter_mut()
            .find(|n| n.port == port)
            .expect("one of ours")
            .restart();
    }

    /// Whether every live node reports `cluster_state:ok`.
    pub fn is_ok(&self) -> bool {
        let cli = std::env::var("REDIS_CLI_BIN").unwrap_or_else(|_| "redis-cli".into());
        self.nodes.iter().filter(|n| n.child.is_some()).all(|n| {
            Command::new(&cli)
                .args(["-p", &n.port.to_string(), "cluster", "info"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok"))
        })
    }
}

fn ping(port: u16) -> std::io::Result<()> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_millis(500)))?;
    s.write_all(b"PING\r\n")?;
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf)?;
    if &buf == b"+PONG\r\n" {
        Ok(())
    } else {
        Err(std::io::Error::other("not ready"))
    }
}

/// A child process whose output goes to a log file; SIGKILLed on drop.
pub struct Proc {
    child: Option<Child>,
    name: String,
    log: PathBuf,
}

impl Proc {
    /// Spawns `cmd` with stdout and stderr appended to `log_dir/name.log`.
    pub fn spawn(name: &str, mut cmd: Command, log_dir: &Path) -> Self {
        let log = log_dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Self {
            child: Some(child),
            name: name.into(),
            log,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// The process's output so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL, as a crash.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the process; whether the signal
    /// was sent.
    pub fn freeze(&self, frozen: bool) -> bool {
        let Some(c) = &self.child else {
            return false;
        };
        let sig = if frozen { "-STOP" } else { "-CONT" };
        Command::new("kill")
            .args([sig, &c.id().to_string()])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// SIGTERM, then wait up to `timeout` for a clean exit (SIGKILL after that).
    /// Returns whether it exited successfully by itself. The signal is sent once
    /// the process catches it (or after a second): a process still starting, before
    /// its `main` has installed a handler, would die of it as any program does, and
    /// a test that stops processes right after they were spawned (the ingress
    /// ready, the others maybe not yet) would see that instead of the shutdown.
    pub fn terminate(&mut self, timeout: Duration) -> bool {
        let Some(mut c) = self.child.take() else {
            return false;
        };
        let waiting = Instant::now() + Duration::from_secs(1).min(timeout / 2);
        while Instant::now() < waiting && !catches_sigterm(c.id()) {
            if let Ok(Some(status)) = c.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status();
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = c.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("{} did not stop after SIGTERM; killing", self.name);
        let _ = c.kill();
        let _ = c.wait();
        false
    }

    /// True while the process runs.
    pub fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

/// Whether process `pid` has a handler for SIGTERM (its `SigCgt` mask in
/// `/proc/PID/status`, where signal N is bit N - 1).
fn catches_sigterm(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:"))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .is_some_and(|mask| mask & (1 << (15 - 1)) != 0)
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits until a TCP connect to `addr` succeeds.
pub fn wait_for_port(addr: &str, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if TcpStream::connect(addr).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{PORT_HELD, free_port, reserve_port};
    use std::time::Duration;

    #[test]
    fn free_ports_are_never_given_twice() {
        // 500 draws from the ~28,000 ephemeral ports: without the check, two would
        // match in about 99 runs of 100.
        let mut ports: Vec<u16> = (0..500).map(|_| free_port()).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), 500);
    }

    #[test]
    fn a_port_marked_by_one_process_is_not_given_to_another() {
        let dir = tempfile::tempdir().unwrap();
        assert!(reserve_port(dir.path(), 40001, PORT_HELD));
        // Another process (the same call again: the mark is on disk, not in memory).
        assert!(!reserve_port(dir.path(), 40001, PORT_HELD));
        assert!(reserve_port(dir.path(), 40002, PORT_HELD));
        // A mark older than it is held for is taken over, once.
        std::thread::sleep(Duration::from_millis(20));
        assert!(reserve_port(dir.path(), 40001, Duration::from_millis(10)));
        assert!(!reserve_port(dir.path(), 40001, PORT_HELD));
    }
}
