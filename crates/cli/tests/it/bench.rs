//! The benches run end to end on small settings, so they keep working. Nothing
//! here asserts a speed: figures come from full runs (see the issue notes). What is
//! asserted is what a bench must get right whatever the machine: exactly as many
//! winners as slots in the contention race, every push delivered.

use crate::BIN;
use std::process::Command;

/// Runs `matchmaker bench ARGS` with its output in a temporary directory; checks
/// that it wrote `files` (CSV and PNG); returns stdout, failing with both streams.
fn bench(args: &[&str], files: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .arg("bench")
        .args(args)
        .arg("--out")
        .arg(dir.path())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "bench {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in files {
        let bytes = std::fs::read(dir.path().join(f))
            .unwrap_or_else(|e| panic!("bench {args:?} did not write {f}: {e}\n{stdout}"));
        if f.ends_with(".png") {
            assert_eq!(&bytes[1..4], b"PNG", "{f} is not a PNG");
        } else {
            let text = String::from_utf8(bytes).unwrap();
            assert!(text.lines().count() > 1, "{f} has no rows:\n{text}");
        }
    }
    stdout
}

/// A throughput run's row (`... answered, per s, errors`): answers, no errors.
fn answered_without_errors(out: &str, label: &str) {
    let cols: Vec<&str> = row(out, label).split_whitespace().collect();
    let n = cols.len();
    assert_eq!(cols[n - 1], "0", "errors in {label}:\n{out}");
    assert!(cols[n - 3].parse::<u64>().unwrap() > 0, "{label}:\n{out}");
}

fn row<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} row in:\n{out}"))
}

#[test]
fn contention_gives_exactly_the_free_slots() {
    let out = bench(
        &["contention", "--clients", "40", "--duration", "1s"],
        &["contention.csv", "contention.png"],
    );
    for label in ["ours, gRPC Allocate", "ours, store", "seed-001 lock"] {
        let line = row(&out, label);
        assert!(
            line.contains("exactly 3 won, held by the winners"),
            "{line}\n{out}"
        );
    }
    // The unlocked baseline is reported whatever it did; it usually oversells.
    row(&out, "no lock (read, write)");
    assert!(out.contains("ratio ours (store) / seed-001 lock"), "{out}");
}

#[test]
fn allocate_reports_every_run() {
    let out = bench(
        &[
            "allocate",
            "--duration",
            "1s",
            "--concurrency",
            "8",
            "--servers",
            "4",
            "--capacity",
            "4",
        ],
        &["allocate.csv", "allocate.png"],
    );
    for label in ["ours, Redis", "seed-001 lock, Redis", "ours, memory"] {
        let cols: Vec<&str> = row(&out, label).split_whitespace().collect();
        let n = cols.len();
        // ... allocated, allocs/s, no-cap, errors, redis us
        assert_eq!(cols[n - 2], "0", "errors in {label}:\n{out}");
        assert!(cols[n - 5].parse::<u64>().unwrap() > 0, "{label}:\n{out}");
    }
    assert!(out.contains("ratio ours / seed-001 lock on Redis"), "{out}");
}

#[test]
fn push_delivers_every_ready_check() {
    let out = bench(
        &[
            "push",
            "--players",
            "40",
            "--burst",
            "20",
            "--rounds",
            "4",
            "--claim-batch-size",
            "10",
        ],
        &["push.csv", "push.png"],
    );
    // Four rounds of 20 players, each seen once per kind.
    assert!(
        out.contains("latency to the socket (ms), 80 samples each"),
        "{out}"
    );
    assert!(out.contains("ours: match commit -> socket"), "{out}");
}

#[test]
fn drain_matches_nearly_everyone() {
    let out = bench(
        &[
            "drain",
            "--tickets",
            "1000",
            "--workers",
            "1",
            "--timeout",
            "20s",
            "--leader",
        ],
        &["drain.csv", "drain.png"],
    );
    // Ours, ours with pool leaders, then the seed-000 port (on its ticker, then
    // eager), then seed 000's settings and formation (FORMATION=seed000).
    for label in [
        "ours ",
        "ours, leader",
        "seed-000 port ",
        "seed-000 port, eager",
        "seed-000 settings",
    ] {
        let cols: Vec<&str> = row(&out, label).split_whitespace().collect();
        let n = cols.len();
        // run, batch, matched, left, t90, t99, all, rate, redis at 99% and at
        // 90%: a few outliers may wait for their window.
        let (matched, left): (u64, u64) =
            (cols[n - 8].parse().unwrap(), cols[n - 7].parse().unwrap());
        assert_eq!(matched + left, 1000, "{label}:\n{out}");
        assert!(matched >= 900, "{label}:\n{out}");
    }
    assert!(out.contains("worker peak RSS (MiB)"), "{out}");
    // What a ticket cost each process: one line per run, every part read.
    for label in ["ours ", "ours, leader", "seed-000 port, eager"] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(label) && l.contains(" all "))
            .unwrap_or_else(|| panic!("no CPU line for {label:?}:\n{out}"));
        for part in ["workers ", "redis ", "the bench "] {
            let figure = line
                .split(part)
                .nth(1)
                .and_then(|r| r.split([' ', ',']).next());
            let us: f64 = figure
                .and_then(|f| f.parse().ok())
                .unwrap_or_else(|| panic!("no {part:?} figure in {line:?}"));
            assert!(us >= 0.0, "{line}");
        }
        assert!(line.contains("/s"), "{line}");
    }
    // Every run says how often the drain found nothing in processing.
    for label in ["ours ", "seed-000 port ", "seed-000 port, eager"] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(label) && l.contains("zero at"))
            .unwrap_or_else(|| panic!("no processing line for {label:?}:\n{out}"));
        assert!(line.contains(" samples, peak "), "{line}");
    }
}

#[test]
fn drain_with_rules_runs_the_5v5_with_and_without() {
    let out = bench(
        &[
            "drain",
            "--tickets",
            "1000",
            "--workers",
            "1",
            "--timeout",
            "10s",
            "--no-baseline",
            "--rules",
        ],
        &["drain.csv", "drain.png"],
    );
    let counts = |label: &str| -> (u64, u64) {
        let cols: Vec<&str> = row(&out, label).split_whitespace().collect();
        let n = cols.len();
        (cols[n - 8].parse().unwrap(), cols[n - 7].parse().unwrap())
    };
    let (plain, plain_left) = counts("ours, 5v5  ");
    let (ruled, ruled_left) = counts("ours, 5v5 rules ");
    assert_eq!(plain + plain_left, 1000, "{out}");
    assert_eq!(ruled + ruled_left, 1000, "{out}");
    assert!(plain >= 900, "{out}");
    // At the rules' first step a share of the pool waits for crossplay (30 s)
    // or the roles to relax (60 s), past this run's 10 s; the rest match.
    assert!(ruled >= 100 && ruled < plain, "{out}");
}

#[test]
fn drain_with_backfill_runs_placed_with_and_without() {
    let out = bench(
        &[
            "drain",
            "--tickets",
            "1000",
            "--workers",
            "1",
            "--timeout",
            "10s",
            "--no-baseline",
            "--backfill",
        ],
        &["drain.csv"],
    );
    for label in ["ours, placed  ", "ours, placed, backfill "] {
        let cols: Vec<&str> = row(&out, label).split_whitespace().collect();
        let n = cols.len();
        let (matched, left): (u64, u64) =
            (cols[n - 8].parse().unwrap(), cols[n - 7].parse().unwrap());
        assert_eq!(matched + left, 1000, "{out}");
        assert!(matched >= 900, "{out}");
    }
    assert!(out.contains("(drain rate): "), "{out}");
}

#[test]
fn backfill_fills_every_seat_it_opens() {
    let out = bench(
        &[
            "backfill",
            "--matches",
            "20",
            "--waiting",
            "100",
            "--rate",
            "200",
            "--new-every",
            "5",
        ],
        &["backfill.csv"],
    );
    assert!(
        out.contains(
            "seats opened 100 at 200/s, filled 100, unfilled after 10 s 0; new matches 20, heard 20"
        ),
        "{out}"
    );
    assert!(!out.contains("matched no open seat"), "{out}");
}

#[test]
fn recovery_loses_and_duplicates_nothing() {
    // Killed the first time it is seen holding tickets: the drain cannot end first.
    // The leader run kills the pool's leader.
    let out = bench(
        &["recovery", "--no-baseline", "--leader", "--kill-after", "0"],
        &["recovery.csv", "recovery.png", "recovery-leader.png"],
    );
    for label in ["ours ", "ours, leader"] {
        let cols: Vec<&str> = row(&out, label)
            .trim_start_matches(label)
            .split_whitespace()
            .collect();
        // stranded, back after, next match, matched, waiting, lost, duplicated
        assert!(
            cols[0].parse::<u64>().unwrap() > 0,
            "{label}: nothing stranded:\n{out}"
        );
        assert!(cols[1].ends_with('s') && cols[1] != "never", "{out}");
        assert!(cols[2].ends_with('s') && cols[2] != "none", "{out}");
        assert_eq!((cols[5], cols[6]), ("0", "0"), "{label}:\n{out}");
    }
}

#[test]
fn recovery_of_the_seed000_port_reclaims_after_its_lease() {
    // Seed 000's 30 s lease: the run takes about 40 s.
    let out = bench(
        &[
            "recovery",
            "--baseline",
            "port",
            "--kill-after",
            "0",
            "--tickets",
            "2000",
        ],
        &["recovery.csv", "recovery-seed000-port.png"],
    );
    let label = "seed-000 port";
    let cols: Vec<&str> = row(&out, label)
        .trim_start_matches(label)
        .split_whitespace()
        .collect();
    let back: f64 = cols[1].trim_end_matches('s').parse().unwrap();
    assert!(cols[0].parse::<u64>().unwrap() > 0, "{out}");
    // Its supervisor reclaims once the 30 s lease is over, within one 5 s period.
    // The lease runs from the victim's last claim or heartbeat (every 2 s), which
    // may be up to 2 s before the kill: back after 28 s at the earliest (a run
    // read 28.90 s when this said 29).
    assert!((27.5..40.0).contains(&back), "{out}");
    // Nothing lost; the port may match a ticket twice (a worker killed between
    // saving a match and completing it), which the bench reports.
    assert_eq!(cols[5], "0", "{out}");
    let duplicated: u64 = cols[6].parse().unwrap();
    assert_eq!(
        duplicated > 0,
        out.contains("tickets in two matches"),
        "{out}"
    );
}

#[test]
fn throughput_creates_tickets_without_errors() {
    let out = bench(
        &["throughput", "--clients", "8", "--duration", "1s"],
        &["throughput.csv", "throughput.png"],
    );
    for label in [
        "redis (client ratings): POST /v1/tickets",
        "redis (rating lookups): POST /v1/tickets",
        "embedded (client ratings): POST /v1/tickets",
        "embedded (rating lookups): POST /v1/tickets",
        "embedded seed-000 settings: POST /v1/tickets",
    ] {
        answered_without_errors(&out, label);
    }
    // What an answer cost each process: on Redis the server, Redis and the
    // load generator are all read; embedded there is no Redis.
    let cpu = |label: &str| -> &str {
        out.lines()
            .find(|l| l.trim_start().starts_with(label) && l.contains(" all "))
            .unwrap_or_else(|| panic!("no CPU line for {label:?}:\n{out}"))
    };
    // The figures follow the label (which may hold "redis" itself).
    let figure = |line: &str, part: &str| -> Option<f64> {
        let (_, figures) = line.split_once("/v1/tickets")?;
        figures
            .split(part)
            .nth(1)?
            .split([' ', ',', ';'])
            .next()?
            .parse()
            .ok()
    };
    let redis = cpu("redis (client ratings): POST /v1/tickets");
    for part in ["server ", "redis ", "load generator "] {
        assert!(figure(redis, part).is_some_and(|us| us > 0.0), "{redis}");
    }
    let embedded = cpu("embedded (client ratings): POST /v1/tickets");
    assert!(
        figure(embedded, "server ").is_some_and(|us| us > 0.0),
        "{embedded}"
    );
    assert!(embedded.contains("redis -"), "{embedded}");
}

/// `--auth dev,jwt --interleave`: a round's deployments (dev tokens; signed tokens
/// with every limit checked) run side by side, the load moving between them; every
/// run of every round answers without errors, and the median of the rounds' ratios
/// is printed.
#[test]
fn throughput_interleaves_dev_and_signed_tokens() {
    let out = bench(
        &[
            "throughput",
            "--clients",
            "4",
            "--duration",
            "1s",
            "--deployments",
            "redis",
            "--ratings",
            "service",
            "--auth",
            "dev,jwt",
            "--rounds",
            "2",
            "--interleave",
            "250ms",
        ],
        &["throughput.csv", "throughput.png"],
    );
    for round in [1, 2] {
        for label in [
            format!("redis (rating lookups) #{round}: POST /v1/tickets"),
            format!("redis (rating lookups, jwt + limits) #{round}: POST /v1/tickets"),
        ] {
            answered_without_errors(&out, &label);
        }
    }
    assert!(
        out.contains("median of 2 rounds, redis (rating lookups, jwt + limits): POST /v1/tickets / redis (rating lookups): POST /v1/tickets"),
        "{out}"
    );
}

/// `--record-metrics on,off`: each run again with the process's metrics off, and
/// the on/off ratio printed.
#[test]
fn throughput_compares_metrics_on_and_off() {
    let out = bench(
        &[
            "throughput",
            "--clients",
            "4",
            "--duration",
            "1s",
            "--deployments",
            "embedded",
            "--ratings",
            "client",
            "--no-baseline",
            "--record-metrics",
            "on,off",
        ],
        &["throughput.csv"],
    );
    for label in [
        "embedded (client ratings): POST /v1/tickets",
        "embedded (client ratings, metrics off): POST /v1/tickets",
    ] {
        let cols: Vec<&str> = row(&out, label).split_whitespace().collect();
        let n = cols.len();
        assert_eq!(cols[n - 1], "0", "errors in {label}:\n{out}");
    }
    assert!(
        out.contains("ratio embedded (client ratings): POST /v1/tickets / embedded (client ratings, metrics off): POST /v1/tickets"),
        "{out}"
    );
}

/// The ratings bench on small figures: both runs apply every match, the latency
/// probes see their ratings, and the CSV and chart are written.
#[test]
fn ratings_applies_every_match_once_in_both_runs() {
    let out = bench(
        &[
            "ratings",
            "--matches",
            "200",
            "--players",
            "500",
            "--rate",
            "2000",
            "--duration",
            "2s",
        ],
        &["ratings.csv", "ratings.png"],
    );
    assert!(out.contains("(200 matches applied once each)"), "{out}");
    assert!(row(&out, "  seed 004:").contains("2000 updates"), "{out}");
    assert!(row(&out, "  at ").contains("p99"), "{out}");
    assert!(!out.contains("warnings of one process"), "{out}");
}

/// `--auth jwt`: ours with signed tokens, service ratings and every limit
/// checked queues and matches without an error (a token the service refused, a
/// rating it would not take, would show as errors), beside the port as before.
#[test]
fn latency_with_signed_tokens_matches_without_errors() {
    let out = bench(
        &[
            "latency", "--steps", "4", "--hold", "1s", "--period", "250ms", "--auth", "jwt",
        ],
        &["latency.csv", "latency-create.png", "latency-match.png"],
    );
    for label in [
        "ours, jwt + limits (redis)",
        "seed-000 settings (redis)",
        "seed-000 port, eager (redis)",
    ] {
        let cols: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix(label))
            .find(|rest| rest.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or_else(|| panic!("no {label:?} row:\n{out}"))
            .split_whitespace()
            .collect();
        assert_eq!(cols[0], "4", "{out}");
        assert!(cols[1].parse::<u64>().unwrap() > 0, "{out}");
        assert_eq!(cols[2], "0", "errors in {label}:\n{out}");
    }
    assert!(
        out.contains("ratio ours, jwt + limits (redis) / seed-000 port, eager (redis)"),
        "{out}"
    );
}

#[test]
fn latency_measures_every_step_of_both_runs() {
    let out = bench(
        &[
            "latency", "--steps", "4,8", "--hold", "1s", "--period", "250ms",
        ],
        &["latency.csv", "latency-create.png", "latency-match.png"],
    );
    for label in [
        "ours (redis)",
        "seed-000 settings (redis)",
        "seed-000 port (redis)",
        "seed-000 port, eager (redis)",
    ] {
        let rows: Vec<Vec<&str>> = out
            .lines()
            .filter_map(|l| l.strip_prefix(label))
            .filter(|rest| rest.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .map(|rest| rest.split_whitespace().collect())
            .collect();
        assert_eq!(rows.len(), 2, "{label}:\n{out}");
        for (cols, players) in rows.iter().zip(["4", "8"]) {
            // players, samples, errors, ...
            assert_eq!(cols[0], players, "{out}");
            assert!(cols[1].parse::<u64>().unwrap() > 0, "{out}");
            assert_eq!(cols[2], "0", "errors:\n{out}");
        }
    }
    assert!(
        out.contains("ratio ours (redis) / seed-000 settings (redis)"),
        "{out}"
    );
    // Every step of every run says what an instant matcher would give.
    assert_eq!(
        out.matches("floor (instant pairing of these arrivals)")
            .count(),
        8,
        "{out}"
    );
    for port in ["seed-000 port (redis)", "seed-000 port, eager (redis)"] {
        assert!(
            out.contains(&format!("ratio ours (redis) / {port}")),
            "{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_runs_against_a_deployment_given_by_url() {
    let d = crate::Deployment::embedded().await;
    let url = format!("http://{}", d.addr);
    let out = tokio::task::spawn_blocking(move || {
        bench(
            &[
                "latency",
                "--url",
                &url,
                "--mode",
                "1v1",
                "--steps",
                "4",
                "--hold",
                "1s",
                "--period",
                "250ms",
                "--rating-spread",
                "20",
            ],
            &["latency.csv", "latency-create.png", "latency-match.png"],
        )
    })
    .await
    .unwrap();
    let cols: Vec<&str> = row(&out, "given deployment").split_whitespace().collect();
    // given, deployment, players, samples, errors, ...
    assert_eq!(cols[2], "4", "{out}");
    assert!(cols[3].parse::<u64>().unwrap() > 0, "{out}");
    assert_eq!(cols[4], "0", "errors:\n{out}");
    drop(d);
}

#[test]
fn benches_refuse_a_deployment_off_loopback() {
    let out = Command::new(BIN)
        .args(["bench", "latency", "--url", "http://192.0.2.1:8080"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("loopback"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn drain_runs_twice_on_a_given_redis() {
    let redis = mm_testkit::RedisServer::start();
    for _ in 0..2 {
        let out = bench(
            &[
                "drain",
                "--redis-url",
                &redis.url(),
                "--no-baseline",
                "--tickets",
                "500",
                "--workers",
                "1",
                "--timeout",
                "20s",
            ],
            &["drain.csv", "drain.png"],
        );
        let cols: Vec<&str> = row(&out, "ours").split_whitespace().collect();
        let (matched, left): (u64, u64) = (cols[2].parse().unwrap(), cols[3].parse().unwrap());
        // Each run drains a pool of its own: the first run's leftovers do not count.
        assert_eq!(matched + left, 500, "{out}");
        assert!(matched >= 450, "{out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contention_runs_against_a_server_manager_given_by_url() {
    let d = crate::Deployment::embedded().await;
    let grpc = d.grpc.clone();
    let out = tokio::task::spawn_blocking(move || {
        bench(
            &[
                "contention",
                "--grpc-url",
                &grpc,
                "--mode",
                "1v1",
                "--clients",
                "20",
                "--duration",
                "1s",
            ],
            &["contention.csv", "contention.png"],
        )
    })
    .await
    .unwrap();
    let line = row(&out, "ours, gRPC Allocate");
    assert!(
        line.contains("exactly 3 won, held by the winners"),
        "{line}\n{out}"
    );
    assert!(!out.contains("seed-001 lock"), "{out}");
    drop(d);
}
