//! The throughput scenario: how many tickets per second the ingress creates at
//! saturation. `--clients` concurrent HTTP/1.1 connections each send
//! `POST /v1/tickets` back to back for a fixed time, every request for a new
//! player. Deployments, each started by the command (or one given by `--url`):
//! - a `matchmaker ingress` process on a fresh `redis-server` (with `--workers`
//!   worker processes, none by default: the ingress alone);
//! - `matchmaker serve`, the embedded default (in-memory store; its worker matches
//!   the tickets in the same process meanwhile), with our worker settings and
//!   again with seed 000's, whose formation and batch run in the same process.
//!
//! Baseline, on the same deployment and connections right before: `GET /healthz`
//! at the same concurrency, the cost of an HTTP round trip through the same server
//! with nothing behind it.
//!
//! `--ratings client,service` (the default) runs each deployment twice: tickets
//! carrying the client's rating, and tickets rated by the rating service (every
//! request is a new player, so every lookup misses the ingress's cache and goes
//! to the database, batched): the ratio between the two is the cost of lookups.

use super::chart::{Lines, Series};
use super::deploy::{Deployment, Kind, Ratings, Settings};
use super::histogram::Latency;
use super::{Output, Target, callers};
use anyhow::{Result, bail};
use clap::Args;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Args)]
pub struct ThroughputArgs {
    /// Concurrent HTTP connections.
    #[arg(long, default_value_t = 64)]
    pub clients: usize,
    /// How long each run lasts.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    /// Deployments the command starts, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "redis,embedded"
    )]
    pub deployments: Vec<Kind>,
    /// Worker processes beside the Redis ingress (0: the ingress alone).
    #[arg(long, default_value_t = 0)]
    pub workers: usize,
    /// Skip the embedded run with seed 000's worker settings.
    #[arg(long)]
    pub no_baseline: bool,
    /// Where tickets get their ratings, comma-separated: each is a run of its own.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "client,service"
    )]
    pub ratings: Vec<Ratings>,
    #[command(flatten)]
    pub target: Target,
    #[command(flatten)]
    pub output: Output,
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
    /// (seconds since start, answers/s over the last sample period).
    rate: Vec<(f64, f64)>,
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
    // (name, what to start (none: --url), ratings, with the GET /healthz floor).
    type Planned = (String, Option<(Kind, Settings)>, Ratings, bool);
    let mut plan: Vec<Planned> = Vec::new();
    let named = |name: &str, r: Ratings| format!("{name} ({})", r.label());
    if let Some(url) = &args.target.url {
        for (i, &r) in args.ratings.iter().enumerate() {
            plan.push((named(url, r), None, r, i == 0));
        }
    } else {
        for &kind in &args.deployments {
            for (i, &r) in args.ratings.iter().enumerate() {
                plan.push((
                    named(kind.name(), r),
                    Some((kind, Settings::Ours)),
                    r,
                    i == 0,
                ));
            }
            if kind == Kind::Embedded && !args.no_baseline {
                plan.push((
                    format!("{} {}", kind.name(), Settings::Seed000.label()),
                    Some((kind, Settings::Seed000)),
                    Ratings::Client,
                    false,
                ));
            }
        }
    }
    let mut outcomes = Vec::new();
    for (name, start, ratings, with_floor) in plan {
        let mut d = match start {
            Some((kind, settings)) => Deployment::start(kind, settings, args.workers, ratings)?,
            None => Deployment::given(args.target.url.as_deref().unwrap_or(&name))?,
        };
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(args.clients)
            .build()?;
        let base = Arc::new(d.base.clone());
        if with_floor {
            let (tally, wall, rate) = hammer(&args, &client, &base, &name, None).await;
            outcomes.push(Outcome {
                label: format!("{name}: GET /healthz"),
                tally,
                wall,
                rate,
            });
        }
        let (tally, wall, rate) = hammer(&args, &client, &base, &name, Some(ratings)).await;
        d.check_alive()?;
        d.stop();
        outcomes.push(Outcome {
            label: format!("{name}: POST /v1/tickets"),
            tally,
            wall,
            rate,
        });
    }
    report(&args, &outcomes)
}

/// `--clients` request loops for `--duration`: ticket creations (with the client's
/// rating or without), or health checks (`create` none).
async fn hammer(
    args: &ThroughputArgs,
    client: &reqwest::Client,
    base: &Arc<String>,
    deployment: &str,
    create: Option<Ratings>,
) -> (Tally, Duration, Vec<(f64, f64)>) {
    let what = if create.is_some() {
        "POST /v1/tickets"
    } else {
        "GET /healthz"
    };
    let started = Instant::now();
    let deadline = started + args.duration;
    let answered = Arc::new(AtomicU64::new(0));
    let sampler = {
        let answered = answered.clone();
        tokio::spawn(async move {
            let mut rate = Vec::new();
            let (mut last_n, mut last_t) = (0u64, started);
            while Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let (n, t) = (answered.load(Ordering::Relaxed), Instant::now());
                let dt = (t - last_t).as_secs_f64();
                rate.push(((t - started).as_secs_f64(), (n - last_n) as f64 / dt));
                (last_n, last_t) = (n, t);
            }
            rate
        })
    };
    let tag = uuid::Uuid::new_v4().simple().to_string()[..6].to_string();
    let (client, base) = (client.clone(), base.clone());
    let (mode, region) = (
        Arc::new(args.target.mode.clone()),
        Arc::new(args.target.region.clone()),
    );
    let request = move |c: usize, i: u64| {
        let (client, base, answered) = (client.clone(), base.clone(), answered.clone());
        let (mode, region, tag) = (mode.clone(), region.clone(), tag.clone());
        async move {
            let player = format!("tp-{tag}-{c}-{i}");
            let request = match create {
                Some(ratings) => {
                    let mut body = serde_json::json!({
                        "mode": *mode,
                        "players": [player],
                        "regions": [*region],
                    });
                    if ratings == Ratings::Client {
                        body["rating"] = (1000 + (i % 1000)).into();
                    }
                    client
                        .post(format!("{base}/v1/tickets"))
                        .bearer_auth(&player)
                        .json(&body)
                }
                None => client.get(format!("{base}/healthz")),
            };
            let t0 = Instant::now();
            let expected = if create.is_some() { 201 } else { 200 };
            match request.send().await {
                Ok(r) if r.status().as_u16() == expected => {
                    // Read the body, as a client would.
                    let _ = r.bytes().await;
                    answered.fetch_add(1, Ordering::Relaxed);
                    Ok(t0.elapsed())
                }
                Ok(r) => Err(r.status().to_string()),
                Err(e) => Err(e.to_string()),
            }
        }
    };
    let (tally, wall) = callers::until(
        deployment,
        what,
        args.clients,
        args.duration,
        request,
        |t: &mut Tally, answer| match answer {
            Ok(took) => {
                t.latency.record(took);
                t.ok += 1;
            }
            Err(kind) => *t.errors.entry(kind).or_default() += 1,
        },
    )
    .await;
    (tally, wall, sampler.await.unwrap_or_default())
}

impl callers::Tally for Tally {
    fn merge(&mut self, other: Tally) {
        self.ok += other.ok;
        for (k, n) in other.errors {
            *self.errors.entry(k).or_default() += n;
        }
        self.latency.merge(&other.latency);
    }

    fn died(&mut self, why: String) {
        *self.errors.entry(why).or_default() += 1;
    }
}

fn report(args: &ThroughputArgs, outcomes: &[Outcome]) -> Result<()> {
    println!();
    println!(
        "{:<46} {:>10} {:>10} {:>7}",
        "run", "answered", "per s", "errors"
    );
    for o in outcomes {
        let errors: u64 = o.tally.errors.values().sum();
        println!(
            "{:<46} {:>10} {:>10.0} {:>7}",
            o.label,
            o.tally.ok,
            o.rate(),
            errors
        );
        for (kind, n) in &o.tally.errors {
            println!("{:<46}   error {kind}: {n}", "");
        }
    }
    println!("\nlatency (ms):");
    for o in outcomes {
        println!("  {:<46} {}", o.label, o.tally.latency.summary());
    }
    println!();
    let ratio = |a: &Outcome, b: &Outcome| {
        println!(
            "ratio {} / {}: {:.2}x the rate, {:.2}x the p99",
            a.label,
            b.label,
            a.rate() / b.rate().max(f64::MIN_POSITIVE),
            a.tally.latency.ms(0.99) / b.tally.latency.ms(0.99).max(f64::MIN_POSITIVE)
        );
    };
    for (i, o) in outcomes.iter().enumerate() {
        if o.label.ends_with("POST /v1/tickets") && i > 0 {
            let prev = &outcomes[i - 1];
            if prev.label.ends_with("GET /healthz") {
                ratio(o, prev);
            } else if o.label.contains(Settings::Seed000.label()) {
                // Ours with the same tickets (the client's ratings).
                let ours = o.label.replace(
                    Settings::Seed000.label(),
                    &format!("({})", Ratings::Client.label()),
                );
                if let Some(c) = outcomes.iter().find(|x| x.label == ours) {
                    ratio(c, o);
                }
            } else if o.label.contains(Ratings::Service.label()) {
                // Lookups against client ratings on the same kind of deployment.
                let client = o
                    .label
                    .replace(Ratings::Service.label(), Ratings::Client.label());
                if let Some(c) = outcomes.iter().find(|x| x.label == client) {
                    ratio(o, c);
                }
            }
        }
    }
    args.output.csv(
        "throughput.csv",
        "run,t_s,answers_per_s",
        outcomes.iter().flat_map(|o| {
            o.rate
                .iter()
                .map(move |(t, r)| format!("{},{t:.2},{r:.0}", o.label))
        }),
    )?;
    args.output.lines(
        "throughput.png",
        &Lines {
            title: format!("Answers/s at saturation, {} connections", args.clients),
            x_label: "seconds".into(),
            y_label: "answers/s".into(),
            series: outcomes
                .iter()
                .enumerate()
                .map(|(i, o)| Series {
                    label: o.label.clone(),
                    points: o.rate.clone(),
                    dashed: o.label.ends_with("GET /healthz"),
                    color: i / 2,
                })
                .collect(),
            markers: Vec::new(),
            log_y: false,
        },
    )?;
    Ok(())
}
