//! The throughput scenario: how many tickets per second the ingress creates at
//! saturation. `--clients` concurrent HTTP/1.1 connections each send
//! `POST /v1/tickets` back to back for a fixed time, every request for a new
//! player. Two deployments, each started by the command:
//! - a `matchmaker ingress` process on a fresh `redis-server` (no workers: the
//!   ingress alone);
//! - `matchmaker serve`, the embedded default (in-memory store; its worker matches
//!   the tickets in the same process meanwhile).
//!
//! Baseline, on the same deployment and connections right before: `GET /healthz`
//! at the same concurrency, the cost of an HTTP round trip through the same server
//! with nothing behind it.

use super::BENCH_MODE;
use super::latency::Latency;
use anyhow::{Result, bail};
use clap::Args;
use mm_testkit::{Proc, RedisServer, free_port, wait_for_port};
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct ThroughputArgs {
    /// Concurrent HTTP connections.
    #[arg(long, default_value_t = 64)]
    pub clients: usize,
    /// How long each run lasts.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
}

/// What one run counted.
#[derive(Default)]
struct Tally {
    ok: u64,
    /// Other answers, by status or error.
    errors: BTreeMap<String, u64>,
    latency: Latency,
}

struct Outcome {
    label: String,
    tally: Tally,
    wall: Duration,
}

impl Outcome {
    fn rate(&self) -> f64 {
        self.tally.ok as f64 / self.wall.as_secs_f64()
    }
}

pub async fn run(args: ThroughputArgs) -> Result<()> {
    if args.clients == 0 || args.duration.is_zero() {
        bail!("--clients and --duration must be more than zero");
    }
    println!(
        "throughput: {} connections for {:?} per run",
        args.clients, args.duration
    );
    let mut outcomes = Vec::new();
    for deployment in ["redis", "embedded"] {
        let redis = (deployment == "redis").then(RedisServer::start);
        let dir = tempfile::tempdir()?;
        let modes = dir.path().join("modes.toml");
        std::fs::write(&modes, BENCH_MODE)?;
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.arg(if redis.is_some() { "ingress" } else { "serve" })
            .env_remove("REDIS_URL")
            .env("LISTEN_ADDR", &addr)
            .env("GRPC_LISTEN_ADDR", format!("127.0.0.1:{}", free_port()))
            .env("MODES_FILE", &modes)
            .env("MODES", "bench")
            .env("REGIONS", "eu")
            .env("RUST_LOG", "warn");
        if let Some(r) = &redis {
            cmd.env("REDIS_URL", r.url());
        }
        let mut server = Proc::spawn(deployment, cmd, dir.path());
        if !wait_for_port(&addr, Duration::from_secs(20)) {
            bail!("{deployment}: the server did not start:\n{}", server.log());
        }
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(args.clients)
            .build()?;
        let base = Arc::new(format!("http://{addr}"));
        eprintln!("[{deployment}] GET /healthz for {:?} ...", args.duration);
        let floor = hammer(&args, &client, &base, deployment, false).await;
        eprintln!(
            "[{deployment}] POST /v1/tickets for {:?} ...",
            args.duration
        );
        let ours = hammer(&args, &client, &base, deployment, true).await;
        if !server.running() {
            bail!("{deployment}: the server died:\n{}", server.log());
        }
        server.terminate(Duration::from_secs(10));
        outcomes.push(Outcome {
            label: format!("{deployment}: GET /healthz"),
            tally: floor.0,
            wall: floor.1,
        });
        outcomes.push(Outcome {
            label: format!("{deployment}: POST /v1/tickets"),
            tally: ours.0,
            wall: ours.1,
        });
    }
    report(&outcomes);
    Ok(())
}

/// `--clients` request loops for `--duration`: ticket creations, or health checks.
async fn hammer(
    args: &ThroughputArgs,
    client: &reqwest::Client,
    base: &Arc<String>,
    deployment: &str,
    create: bool,
) -> (Tally, Duration) {
    let started = Instant::now();
    let deadline = started + args.duration;
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..args.clients {
        let (client, base) = (client.clone(), base.clone());
        let prefix = format!("tp-{deployment}-{c}");
        tasks.spawn(async move {
            let mut t = Tally::default();
            let mut i = 0u64;
            while Instant::now() < deadline {
                let player = format!("{prefix}-{i}");
                i += 1;
                let request = if create {
                    client
                        .post(format!("{base}/v1/tickets"))
                        .bearer_auth(&player)
                        .json(&serde_json::json!({
                            "mode": "bench",
                            "players": [player],
                            "rating": 1000 + (i % 1000),
                            "regions": ["eu"],
                        }))
                } else {
                    client.get(format!("{base}/healthz"))
                };
                let t0 = Instant::now();
                let answer = request.send().await;
                let expected = if create { 201 } else { 200 };
                match answer {
                    Ok(r) if r.status().as_u16() == expected => {
                        // Read the body, as a client would.
                        let _ = r.bytes().await;
                        t.latency.record(t0.elapsed());
                        t.ok += 1;
                    }
                    Ok(r) => *t.errors.entry(r.status().to_string()).or_default() += 1,
                    Err(e) => *t.errors.entry(e.to_string()).or_default() += 1,
                }
            }
            t
        });
    }
    let mut tally = Tally::default();
    while let Some(t) = tasks.join_next().await {
        match t {
            Ok(t) => {
                tally.ok += t.ok;
                for (k, n) in t.errors {
                    *tally.errors.entry(k).or_default() += n;
                }
                tally.latency.merge(&t.latency);
            }
            Err(e) => *tally.errors.entry(format!("client died: {e}")).or_default() += 1,
        }
    }
    (tally, started.elapsed())
}

fn report(outcomes: &[Outcome]) {
    println!();
    println!(
        "{:<28} {:>10} {:>10} {:>7}",
        "run", "answered", "per s", "errors"
    );
    for o in outcomes {
        let errors: u64 = o.tally.errors.values().sum();
        println!(
            "{:<28} {:>10} {:>10.0} {:>7}",
            o.label,
            o.tally.ok,
            o.rate(),
            errors
        );
        for (kind, n) in &o.tally.errors {
            println!("{:<28}   error {kind}: {n}", "");
        }
    }
    println!("\nlatency (ms):");
    for o in outcomes {
        println!("  {:<28} {}", o.label, o.tally.latency.summary());
    }
    println!();
    for pair in outcomes.chunks(2) {
        if let [floor, ours] = pair {
            println!(
                "ratio {} / {}: {:.2}x the rate, {:.2}x the p99",
                ours.label,
                floor.label,
                ours.rate() / floor.rate().max(f64::MIN_POSITIVE),
                ours.tally.latency.ms(0.99) / floor.tally.latency.ms(0.99).max(f64::MIN_POSITIVE)
            );
        }
    }
}
