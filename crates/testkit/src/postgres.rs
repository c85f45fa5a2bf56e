//! A throwaway PostgreSQL server for tests and benchmarks: `initdb` in a temp dir,
//! `pg_ctl start` on a free loopback port, `pg_ctl stop` on drop. `initdb` refuses
//! to run as root, so as root the server runs as the `postgres` user (created by
//! Debian's package; this creates it if missing). Binaries come from
//! `$PG_BIN`, else the newest `/usr/lib/postgresql/*/bin`, else `pg_config --bindir`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A real PostgreSQL server for one test (or one test binary).
pub struct PostgresServer {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    run_as: Option<String>,
    /// Commits reach the disk (fsync, full-page writes), as in production.
    durable: bool,
    /// Connections over TLS only (see [`PostgresServer::start_tls`]).
    tls: bool,
    dir: tempfile::TempDir,
}

fn bin_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return bin;
    }
    let out = Command::new("pg_config").arg("--bindir").output();
    match out {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        _ => panic!(
            "no PostgreSQL server binaries (initdb): install Debian's postgresql package (scripts/test.sh does) or set PG_BIN"
        ),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn ensure_user(user: &str) {
    let exists = Command::new("id")
        .arg(user)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !exists {
        let _ = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                user,
            ])
            .status();
    }
}

impl PostgresServer {
    /// Initialises a cluster in a temp dir and starts it on a free port, with
    /// `fsync` off (tests: a crash of the machine is not what they test).
    pub fn start() -> Self {
        Self::start_with(false)
    }

    /// The same with production durability: every commit is flushed to disk.
    /// For benchmarks, where the cost of a commit is part of what is measured.
    pub fn start_durable() -> Self {
        Self::start_with(true)
    }

    /// One that takes TCP connections over TLS only (`hostssl`), with
    /// [`crate::keys::tls`]'s server certificate (for 127.0.0.1): a client
    /// connects with `sslmode=verify-full&sslrootcert=` the test CA.
    pub fn start_tls() -> Self {
        Self::start_as(false, true)
    }

    fn start_with(durable: bool) -> Self {
        Self::start_as(durable, false)
    }

    fn start_as(durable: bool, tls: bool) -> Self {
        let bin = bin_dir();
        let run_as = is_root().then(|| {
            ensure_user("postgres");
            "postgres".to_string()
        });
        let dir = tempfile::Builder::new()
            .prefix("mm-pg-")
            .tempdir()
            .expect("temp dir");
        if let Some(user) = &run_as {
            let status = Command::new("chown")
                .arg(format!("{user}:"))
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(status.success(), "chown of the PostgreSQL temp dir failed");
        }
        let data = dir.path().join("data");
        let mut server = Self {
            bin,
            data,
            port: 0,
            run_as,
            durable,
            tls,
            dir,
        };
        let out = server
            .command("initdb")
            .arg("-D")
            .arg(&server.data)
            .args([
                "-A",
                "trust",
                "-U",
                "mm",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            ])
            .output()
            .expect("cannot run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if tls {
            server.serve_tls_only();
        }
        let mut last = String::new();
        for _ in 0..5 {
            server.port = crate::free_port();
            match server.try_start() {
                Ok(()) => return server,
                Err(e) => last = e,
            }
        }
        panic!("PostgreSQL did not start: {last}");
    }

    /// Puts the server's certificate and key in the data folder (the key
    /// readable by its owner alone, as PostgreSQL demands) and lets TCP clients
    /// in over TLS only.
    fn serve_tls_only(&self) {
        use std::os::unix::fs::PermissionsExt;
        for (name, pem, mode) in [
            ("server.pem", crate::keys::tls::SERVER_CERT, 0o644),
            ("server.key", crate::keys::tls::SERVER_KEY, 0o600),
        ] {
            let path = self.data.join(name);
            std::fs::write(&path, pem).expect("write the server certificate");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                .expect("chmod the server certificate");
            if let Some(user) = &self.run_as {
                let status = Command::new("chown")
                    .arg(format!("{user}:"))
                    .arg(&path)
                    .status()
                    .expect("chown");
                assert!(status.success(), "chown of the server certificate failed");
            }
        }
        std::fs::write(
            self.data.join("pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
        )
        .expect("write pg_hba.conf");
    }

    fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    fn try_start(&self) -> Result<(), String> {
        let durability = if self.durable {
            ""
        } else {
            " -c fsync=off -c full_page_writes=off"
        };
        let tls = if self.tls {
            " -c ssl=on -c ssl_cert_file=server.pem -c ssl_key_file=server.key"
        } else {
            ""
        };
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200{durability}{tls}",
            self.port,
            self.dir.path().display()
        );
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-o", &opts, "-l"])
            .arg(self.dir.path().join("postgres.log"))
            .args(["-w", "-t", "60", "start"])
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                self.log_tail()
            ))
        }
    }

    /// Starts the server again after [`PostgresServer::stop`], on the same port and data.
    pub fn restart(&self) {
        let mut last = String::new();
        for _ in 0..20 {
            match self.try_start() {
                Ok(()) => return,
                Err(e) => last = e,
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        panic!("PostgreSQL did not start again: {last}");
    }

    /// Stops the server at once (connections are cut; committed data stays).
    pub fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("postgres.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The URL of database `name` (see [`PostgresServer::create_database`]).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://mm@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates a fresh database and returns its URL. Names are made unique per
    /// server, so tests sharing a server do not share data.
    pub fn create_database(&self, prefix: &str) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!("{prefix}_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let out = self
            .command("createdb")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "mm"])
            .arg(&name)
            .output()
            .expect("cannot run createdb");
        assert!(
            out.status.success(),
            "createdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.url(&name)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.stop();
    }
}
