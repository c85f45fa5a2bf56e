//! The command line: help lists every option with its variable; bad values are
//! refused at start-up with a message naming the variable.

use crate::BIN;
use std::process::Command;

fn run(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let data = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("REDIS_URL")
        .env_remove("DATABASE_URL")
        .env("DATA_DIR", data.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn help_lists_every_option_with_its_variable() {
    let (ok, top) = run(&["--help"], &[]);
    assert!(ok);
    for sub in [
        "serve",
        "ingress",
        "worker",
        "supervisor",
        "bench",
        "simulate",
        "modes",
        "token",
    ] {
        assert!(top.contains(sub), "{sub} missing from --help");
    }
    let (_, serve) = run(&["serve", "--help"], &[]);
    for var in [
        "REDIS_URL",
        "LISTEN_ADDR",
        "MMR_DELTA_INITIAL",
        "MMR_SCALING_FACTOR",
        "LOCK_TTL",
        "HEARTBEAT_INTERVAL",
        "CLAIM_BATCH_SIZE",
        "MODES_FILE",
        "MODES",
        "REGIONS",
        "CLOSED_REGIONS",
        "WORKER_POOL_SIZE",
        "SUPERVISE_INTERVAL",
        "AUTH",
        "JWT_SECRET_FILE",
        "JWT_JWKS_FILE",
        "JWT_ISSUER",
        "JWT_AUDIENCE",
    ] {
        assert!(
            serve.contains(&format!("[env: {var}")),
            "serve --help lacks {var}:\n{serve}"
        );
    }
    let (_, worker) = run(&["worker", "--help"], &[]);
    assert!(worker.contains("[env: REDIS_URL") && worker.contains("[env: LOCK_TTL"));
    let (_, sup) = run(&["supervisor", "--help"], &[]);
    assert!(sup.contains("[env: SUPERVISE_INTERVAL"));
    let (_, ingress) = run(&["ingress", "--help"], &[]);
    assert!(ingress.contains("[env: LISTEN_ADDR"));
}

#[test]
fn invalid_values_are_refused_naming_the_variable() {
    let cases: &[(&str, &str, &str)] = &[
        ("LOCK_TTL", "soon", "LOCK_TTL"),
        ("HEARTBEAT_INTERVAL", "1m", "HEARTBEAT_INTERVAL"),
        ("CLAIM_BATCH_SIZE", "0", "CLAIM_BATCH_SIZE"),
        ("CLAIM_BATCH_SIZE", "many", "CLAIM_BATCH_SIZE"),
        ("MODES_FILE", "/nonexistent/modes.toml", "MODES_FILE"),
        ("MMR_DELTA_MAX", "10", "MMR_DELTA_MAX"),
        ("MMR_DELTA_INITIAL", "-3", "MMR_DELTA_INITIAL"),
        ("MMR_SCALING_FACTOR", "NaN", "MMR_SCALING_FACTOR"),
        ("WORKER_POOL_SIZE", "0", "WORKER_POOL_SIZE"),
        ("LISTEN_ADDR", "nowhere", "LISTEN_ADDR"),
        ("MODES", "Ranked!", "MODES"),
        ("SUPERVISE_INTERVAL", "0s", "SUPERVISE_INTERVAL"),
        ("PRESENCE_RENEW", "0s", "PRESENCE_RENEW"),
        ("UNMATCHABLE_AFTER", "later", "UNMATCHABLE_AFTER"),
        // A closed region must be served; one region at least stays open.
        ("CLOSED_REGIONS", "mars", "CLOSED_REGIONS"),
        ("CLOSED_REGIONS", "eu,na,asia", "CLOSED_REGIONS"),
    ];
    for (var, value, named) in cases {
        let (ok, text) = run(&["serve"], &[(var, value)]);
        assert!(!ok, "{var}={value} was accepted");
        assert!(
            text.contains(named),
            "{var}={value}: message does not name {named}:\n{text}"
        );
    }
    let (ok, text) = run(&["worker"], &[]);
    assert!(
        !ok && text.contains("REDIS_URL"),
        "worker without REDIS_URL:\n{text}"
    );
    let (ok, text) = run(
        &["worker", "--redis-url", "redis://127.0.0.1:1"],
        &[("REDIS_STARTUP_WAIT", "1s")],
    );
    assert!(
        !ok && text.contains("REDIS_URL"),
        "unreachable Redis:\n{text}"
    );
}

#[test]
fn a_user_modes_file_adds_a_mode_and_bad_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("modes.toml");
    std::fs::write(&good, "[modes.3v3]\nteams = 2\nteam_size = 3\n").unwrap();
    let (ok, shipped) = run(&["modes"], &[]);
    assert!(ok && shipped.contains("[modes.5v5]"), "{shipped}");
    // The simulator refuses a scenario whose mode the file lacks, and runs with it.
    let (ok, text) = run(
        &["simulate", "--scenario", "nope"],
        &[("MODES_FILE", good.to_str().unwrap())],
    );
    assert!(!ok && text.contains("unknown scenario"), "{text}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[modes.3v3]\nteams = 2\nteam_size = 3\nmin_players = 4\n",
    )
    .unwrap();
    let (ok, text) = run(&["serve"], &[("MODES_FILE", bad.to_str().unwrap())]);
    assert!(
        !ok && text.contains("MODES_FILE") && text.contains("3v3"),
        "{text}"
    );
    let (ok, text) = run(&["serve"], &[("MODES", "1v1,7v7")]);
    assert!(!ok && text.contains("7v7"), "{text}");
}

#[test]
fn dev_tokens_are_refused_off_loopback_and_jwt_needs_keys() {
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short");
    std::fs::write(&short, "too-short").unwrap();
    let good = dir.path().join("secret");
    std::fs::write(&good, mm_testkit::keys::SECRET).unwrap();
    let (short, good) = (short.to_str().unwrap(), good.to_str().unwrap());
    /// Arguments, environment, and what the refusal must say.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: &[Case] = &[
        (
            &["serve"],
            &[("AUTH", "dev"), ("LISTEN_ADDR", "0.0.0.0:1")],
            &["AUTH=dev", "loopback"],
        ),
        (
            &["serve"],
            &[("LISTEN_ADDR", "0.0.0.0:1")],
            &["not a loopback address", "AUTH=jwt"],
        ),
        (
            &["serve"],
            &[("AUTH", "jwt")],
            &["JWT_SECRET_FILE", "JWT_JWKS_FILE"],
        ),
        (
            &["serve"],
            &[("AUTH", "jwt"), ("JWT_SECRET_FILE", short)],
            &["JWT_SECRET_FILE", "32 bytes"],
        ),
        (
            &["serve"],
            &[("AUTH", "jwt"), ("JWT_JWKS_FILE", "/nonexistent/jwks.json")],
            &["JWT_JWKS_FILE", "/nonexistent/jwks.json"],
        ),
        (
            &["serve"],
            &[
                ("AUTH", "jwt"),
                ("JWT_SECRET_FILE", good),
                ("ALLOW_CLIENT_RATINGS", "true"),
            ],
            &["ALLOW_CLIENT_RATINGS"],
        ),
        (
            &["ingress"],
            &[
                ("REDIS_URL", "redis://127.0.0.1:1"),
                ("DATABASE_URL", "sqlite::memory:"),
            ],
            &["AUTH (--auth) is required"],
        ),
        (
            &["ingress"],
            &[
                ("AUTH", "dev"),
                ("LISTEN_ADDR", "0.0.0.0:1"),
                ("REDIS_URL", "redis://127.0.0.1:1"),
                ("DATABASE_URL", "sqlite::memory:"),
            ],
            &["AUTH=dev", "loopback"],
        ),
        (
            &["serve"],
            &[("GRPC_LISTEN_ADDR", "0.0.0.0:1")],
            &["GRPC_LISTEN_ADDR", "FLEET_CREDENTIALS_FILE"],
        ),
        (
            &["serve"],
            &[("FLEET_CREDENTIALS_FILE", short)],
            &["FLEET_CREDENTIALS_FILE"],
        ),
        (&["token", "alice"], &[], &["--secret-file"]),
        (
            &["token", "not a player", "--secret-file", good],
            &[],
            &["PLAYER"],
        ),
    ];
    for (args, env, wanted) in cases {
        let (ok, text) = run(args, env);
        assert!(!ok, "{args:?} {env:?} was accepted:\n{text}");
        for w in *wanted {
            assert!(text.contains(w), "{args:?} {env:?}: no {w:?} in:\n{text}");
        }
    }
}

#[test]
fn the_simulator_backfills_when_players_leave() {
    let stream = [
        "simulate",
        "--rate",
        "30",
        "--duration",
        "40s",
        "--mode",
        "5v5",
    ];
    let with = |extra: &[&str]| {
        let args: Vec<&str> = stream.iter().chain(extra).copied().collect();
        run(&args, &[])
    };
    let (ok, text) = with(&["--leave-rate", "0.2", "--match-duration", "2m"]);
    assert!(ok, "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("| backfill: seats opened / filled |"))
        .unwrap_or_else(|| panic!("{text}"));
    // Ours fill seats; the baseline has no backfill.
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let filled = |cell: &str| cell.split(" / ").nth(1).unwrap().parse::<u64>().unwrap();
    assert!(filled(cells[2]) > 0 && filled(cells[3]) > 0, "{row}");
    assert_eq!(filled(cells[4]), 0, "{row}");
    let (ok, off) = with(&[
        "--leave-rate",
        "0.2",
        "--match-duration",
        "2m",
        "--backfill",
        "off",
    ]);
    assert!(
        ok && off.contains("| backfill: seat open to filled p50 / p95 (s) | - | - | - |"),
        "{off}"
    );
    // Without --leave-rate nothing leaves and no backfill row is shown.
    let (ok, plain) = with(&[]);
    assert!(ok && !plain.contains("backfill"), "{plain}");
    let (ok, bad) = with(&["--leave-rate", "1.5"]);
    assert!(!ok && bad.contains("--leave-rate"), "{bad}");
    let (ok, alone) = with(&["--backfill", "off"]);
    assert!(!ok && alone.contains("--leave-rate"), "{alone}");
}

#[test]
fn the_simulator_replays_a_trace_and_a_stream_of_ones_own() {
    let dir = tempfile::tempdir().unwrap();
    // Ten 1v1 players in two regions, a party of two for 5v5 that gives up, and
    // players who will never find five opponents.
    let mut lines = String::from("# a studio's own traffic\n");
    for i in 0..10 {
        lines.push_str(&format!(
            "{{\"at_ms\": {}, \"players\": [\"p{i}\"], \"ratings\": [{}], \"mode\": \"1v1\", \"latency_ms\": {{\"eu\": 30, \"na\": 95}}}}\n",
            i * 200,
            1500 + i * 5
        ));
    }
    lines.push_str("{\"at_ms\": 50, \"ratings\": [1400, 1420], \"modes\": [\"5v5\"], \"latency_ms\": {\"na\": 40}, \"cancel_at_ms\": 20000}\n");
    let trace = dir.path().join("trace.jsonl");
    std::fs::write(&trace, &lines).unwrap();
    let (ok, text) = run(&["simulate", "--trace", trace.to_str().unwrap()], &[]);
    assert!(ok, "{text}");
    assert!(text.contains("### trace"), "{text}");
    assert!(
        text.contains("| metric | ours, leader | ours, claim | seed-000 baseline |"),
        "{text}"
    );
    assert!(
        text.contains("| players arrived | 12 | 12 | 12 |"),
        "{text}"
    );
    assert!(
        text.contains("| players matched | 10 | 10 | 10 |"),
        "{text}"
    );
    assert!(text.contains("| groups cancelled | 1 |"), "{text}");
    // The same traffic as CSV gives the same report.
    let mut rows = String::from(
        "# the same, from a spreadsheet\nat_ms,players,ratings,modes,latency_ms.eu,latency_ms.na,cancel_at_ms\n",
    );
    for i in 0..10 {
        rows.push_str(&format!("{},p{i},{},1v1,30,95,\n", i * 200, 1500 + i * 5));
    }
    rows.push_str("50,,1400;1420,5v5,,40,20000\n");
    let csv = dir.path().join("trace.csv");
    std::fs::write(&csv, &rows).unwrap();
    let (ok, from_csv) = run(&["simulate", "--trace", csv.to_str().unwrap()], &[]);
    assert!(ok, "{from_csv}");
    let report = |t: &str| t[t.find("| metric").unwrap()..].to_string();
    assert_eq!(report(&from_csv), report(&text));
    // A bad line is refused with its number; an unknown mode by name.
    std::fs::write(&trace, format!("{lines}{{\"at_ms\": 1}}\n")).unwrap();
    let (ok, text) = run(&["simulate", "--trace", trace.to_str().unwrap()], &[]);
    assert!(!ok && text.contains("line 13"), "{text}");
    std::fs::write(&trace, lines.replace("1v1", "2v2")).unwrap();
    let (ok, text) = run(&["simulate", "--trace", trace.to_str().unwrap()], &[]);
    assert!(!ok && text.contains("2v2"), "{text}");
    // A generated stream of one's own.
    let (ok, text) = run(
        &[
            "simulate",
            "--rate",
            "20",
            "--duration",
            "30s",
            "--mode",
            "1v1",
            "--party-mix",
            "1",
        ],
        &[],
    );
    assert!(
        ok && text.contains("### custom (1v1, 20 players/s for 30s"),
        "{text}"
    );
    let (ok, text) = run(&["simulate", "--rate=0"], &[]);
    assert!(!ok && text.contains("--rate"), "{text}");
    // The strategies run with the worker settings given, named in the heading.
    let (ok, text) = run(
        &[
            "simulate",
            "--trace",
            csv.to_str().unwrap(),
            "--wake-ups",
            "false",
        ],
        &[("POLL_INTERVAL", "250ms"), ("CLAIM_BATCH_SIZE", "40")],
    );
    assert!(
        ok && text.contains("consumers of 40 tickets; POLL_INTERVAL 250ms, wake-ups off"),
        "{text}"
    );
    let (ok, text) = run(&["simulate", "--poll-interval", "0s"], &[]);
    assert!(!ok && text.contains("POLL_INTERVAL"), "{text}");
    let (ok, text) = run(&["simulate", "--claim-batch-size", "0"], &[]);
    assert!(!ok && text.contains("CLAIM_BATCH_SIZE"), "{text}");
}

/// A Redis that evicts keys when full (a memory limit and any policy but
/// `noeviction`) is refused at start-up, naming the policy and the way out;
/// with `REDIS_ALLOW_EVICTION=true` the process starts and warns instead.
#[test]
fn a_redis_that_may_evict_keys_is_refused_at_start_up() {
    use mm_testkit::{Proc, RedisServer};
    use std::time::{Duration, Instant};
    let redis = RedisServer::start();
    let mut admin = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    for (key, value) in [("maxmemory", "100mb"), ("maxmemory-policy", "volatile-lru")] {
        let () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(key)
            .arg(value)
            .query(&mut admin)
            .unwrap();
    }
    let logs = tempfile::tempdir().unwrap();
    let worker = |allow: bool| {
        let mut cmd = Command::new(BIN);
        cmd.arg("worker")
            .env("REDIS_URL", redis.url())
            .env("REDIS_ALLOW_EVICTION", allow.to_string())
            .env("DATA_DIR", logs.path());
        Proc::spawn(if allow { "allowed" } else { "refused" }, cmd, logs.path())
    };
    let wait_for = |p: &mut Proc, what: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !p.log().contains(what) {
            assert!(Instant::now() < deadline, "no {what:?} in:\n{}", p.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    };

    let mut refused = worker(false);
    wait_for(&mut refused, "REDIS_ALLOW_EVICTION=true to start anyway");
    let deadline = Instant::now() + Duration::from_secs(10);
    while refused.running() {
        assert!(
            Instant::now() < deadline,
            "still running:\n{}",
            refused.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = refused.log();
    assert!(log.contains("maxmemory-policy volatile-lru"), "{log}");
    assert!(
        log.contains(&format!("127.0.0.1:{}", redis.port())),
        "{log}"
    );

    let mut allowed = worker(true);
    wait_for(&mut allowed, "starting anyway");
    std::thread::sleep(Duration::from_millis(500));
    assert!(allowed.running(), "{}", allowed.log());

    // With noeviction (or no limit) there is nothing to say.
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query(&mut admin)
        .unwrap();
    let mut plain = {
        let mut cmd = Command::new(BIN);
        cmd.arg("worker")
            .env("REDIS_URL", redis.url())
            .env("DATA_DIR", logs.path());
        Proc::spawn("plain", cmd, logs.path())
    };
    std::thread::sleep(Duration::from_secs(2));
    assert!(plain.running(), "{}", plain.log());
    assert!(!plain.log().contains("maxmemory"), "{}", plain.log());
}
