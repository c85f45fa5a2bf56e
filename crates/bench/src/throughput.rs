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
//!
//! `--auth dev,jwt` runs each again with signed tokens (`AUTH=jwt`, HS256, a token
//! per player, minted before the clock starts) and every rate limit checked (set
//! high enough never to refuse, so the checks cost what they cost and no request
//! is turned away): the ratio to dev tokens is the cost of verifying and limiting.
//! Signed tokens allow no client ratings, so those runs use the rating service.
//!
//! `--record-metrics on,off` runs each again with the process's metrics off
//! (`METRICS=false`): the ratio on/off is the cost of recording them.
//!
//! Each run also reports what one answer cost each process on the CPU (the
//! server, its workers, its Redis, this load generator; see [`super::cpu`])
//! and so the most answers a second the machine's cores could give at that
//! cost: the load generator and Redis share the cores with the server, so a
//! ratio to `/healthz` is bounded by their cost per answer as well as the
//! server's.
//!
//! `--rounds N` runs the whole plan N times, interleaved, and prints the median of
//! each ratio: on a shared machine one pair of runs can be far off.
//!
//! `--interleave SLICE` goes further: a round's deployments all start together and
//! the load moves from one to the next every SLICE until each has had
//! `--duration` (the health-check floors still run first, whole). What the shared
//! machine's neighbours do over seconds then falls on every run alike, so a ratio
//! compares the runs, not the minutes they happened to run in.

use super::chart::{Lines, Series};
use super::cpu::{self, Spent};
use super::deploy::{Deployment, Kind, Ratings, Settings};
use super::histogram::Latency;
use super::redis_info::redis_cpu_usec;
use super::{Output, Switch, Target, callers};
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
    /// How callers are identified, comma-separated: each is a run of its own.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "dev")]
    pub auth: Vec<Auth>,
    /// Metrics of the deployment's processes, comma-separated: each is a run of
    /// its own.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "on")]
    pub record_metrics: Vec<super::Switch>,
    /// Runs every comparison this many times, interleaved, and reports the median
    /// of each ratio (a shared machine drifts between runs).
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Runs a round's deployments side by side and moves the load between them
    /// every SLICE (e.g. 1s) instead of one after the other. Fair to deployments
    /// that do nothing between requests (the Redis ingress alone); an embedded
    /// server's worker goes on matching what its slice queued while the next runs.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub interleave: Option<Duration>,
    #[command(flatten)]
    pub target: Target,
    #[command(flatten)]
    pub output: Output,
}

/// Identity of the bench's callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Auth {
    /// Dev tokens (the token is the player id), no rate limits.
    Dev,
    /// Signed HS256 tokens, and every rate limit checked.
    Jwt,
}

/// How a run with metrics off is labelled.
const METRICS_OFF: &str = ", metrics off";

/// The HS256 secret of the `jwt` runs.
const BENCH_SECRET: &[u8] = b"bench-secret-0123456789abcdef-0123456789";
/// A limit the bench never reaches.
const UNREACHED: &str = "1000000000/1s,1000000000/1s";

/// Environment of the process serving the API.
type FrontEnv = Vec<(&'static str, String)>;

/// What the front process needs for `auth`, and the signer of its tokens.
pub(crate) fn auth_env(
    auth: Auth,
    secret_file: &std::path::Path,
) -> Result<(FrontEnv, Option<mm_auth::TokenSigner>)> {
    if auth == Auth::Dev {
        return Ok((Vec::new(), None));
    }
    std::fs::write(secret_file, BENCH_SECRET)?;
    let mut env = vec![
        ("AUTH", "jwt".to_string()),
        ("JWT_SECRET_FILE", secret_file.display().to_string()),
        ("ALLOW_CLIENT_RATINGS", "false".to_string()),
    ];
    for var in [
        "RATE_LIMIT_TICKETS",
        "RATE_LIMIT_ANSWERS",
        "RATE_LIMIT_INVITES",
        "RATE_LIMIT_READS",
        "RATE_LIMIT_CONNECTS",
        "RATE_LIMIT_MESSAGES",
    ] {
        env.push((var, UNREACHED.to_string()));
    }
    let signer = mm_auth::TokenSigner::hs256(BENCH_SECRET, "matchmaker", "matchmaker")?;
    Ok((env, Some(signer)))
}

/// Tokens the load generator mints per connection and second of the run before
/// the clock starts (more than the Redis deployment answers here).
const MINTED_PER_CLIENT_PER_S: f64 = 400.0;

/// Signed tokens for the run's players, minted before the clock starts, as the
/// studio's login service would have issued them: signing is its work, not the
/// matchmaker's, and the load generator shares the machine with what it
/// measures. A connection that uses up its share signs more on the spot.
struct Tokens {
    signer: mm_auth::TokenSigner,
    /// Per connection, the tokens of its players 0, 1, ...
    minted: Vec<Vec<String>>,
}

impl Tokens {
    const TTL: Duration = Duration::from_secs(3600);

    /// Mints `per_client` tokens for each of `clients` connections, on every core.
    fn mint(signer: mm_auth::TokenSigner, tag: &str, clients: usize, per_client: u64) -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let per_thread = clients.div_ceil(threads).max(1);
        let mut minted: Vec<Vec<String>> = vec![Vec::new(); clients];
        std::thread::scope(|scope| {
            for (part, chunk) in minted.chunks_mut(per_thread).enumerate() {
                let (signer, first) = (&signer, part * per_thread);
                scope.spawn(move || {
                    for (k, tokens) in chunk.iter_mut().enumerate() {
                        let c = first + k;
                        *tokens = (0..per_client)
                            .map_while(|i| {
                                signer
                                    .sign(&format!("tp-{tag}-{c}-{i}"), None, Self::TTL)
                                    .ok()
                            })
                            .collect();
                    }
                });
            }
        });
        Self { signer, minted }
    }

    /// Connection `c`'s token for its `i`th player, `player`.
    fn get(&self, c: usize, i: u64, player: &str) -> Result<String, String> {
        match self.minted.get(c).and_then(|t| t.get(i as usize)) {
            Some(token) => Ok(token.clone()),
            None => self
                .signer
                .sign(player, None, Self::TTL)
                .map_err(|e| e.to_string()),
        }
    }
}

/// A deployment under test and what its load generator needs.
struct Live {
    name: String,
    deployment: Deployment,
    client: reqwest::Client,
    base: Arc<String>,
    ratings: Ratings,
    signer: Option<mm_auth::TokenSigner>,
    with_floor: bool,
    /// A connection to the deployment's Redis, for its CPU time.
    admin: Option<redis::aio::MultiplexedConnection>,
}

impl Live {
    /// The CPU time its processes, its Redis and this load generator have
    /// used so far.
    async fn spent(&mut self) -> Spent {
        let pids = self.deployment.worker_pids();
        let workers: Option<f64> = pids.iter().map(|&p| cpu::process_usec(p)).sum();
        let redis = match &mut self.admin {
            Some(admin) => redis_cpu_usec(admin).await.ok(),
            None => None,
        };
        Spent {
            server: self.deployment.ingress_pid().and_then(cpu::process_usec),
            workers: workers.filter(|_| !pids.is_empty()),
            redis,
            load: cpu::own_usec(),
        }
    }
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
    /// CPU time the run cost each process.
    cpu: Spent,
}

impl Outcome {
    fn rate(&self) -> f64 {
        self.tally.ok as f64 / self.wall.as_secs_f64()
    }
}

pub async fn run(args: ThroughputArgs) -> Result<()> {
    if args.clients == 0 || args.duration.is_zero() || args.rounds == 0 {
        bail!("--clients, --duration and --rounds must be more than zero");
    }
    println!(
        "throughput: {} connections for {:?} per run",
        args.clients, args.duration
    );
    // (name, what to start (none: --url), ratings, auth, metrics, with the GET
    // /healthz floor).
    type Planned = (
        String,
        Option<(Kind, Settings)>,
        Ratings,
        Auth,
        Switch,
        bool,
    );
    let mut plan: Vec<Planned> = Vec::new();
    let named = |name: &str, r: Ratings, a: Auth, m: Switch, round: usize| {
        let mut run = format!("{name} ({}", r.label());
        if a == Auth::Jwt {
            run.push_str(", jwt + limits");
        }
        if m == Switch::Off {
            run.push_str(METRICS_OFF);
        }
        run.push(')');
        if args.rounds > 1 {
            format!("{run} #{round}")
        } else {
            run
        }
    };
    // Signed tokens allow no client ratings.
    let mut combos: Vec<(Ratings, Auth, Switch)> = Vec::new();
    for &m in &args.record_metrics {
        for &a in &args.auth {
            for &r in &args.ratings {
                if !(a == Auth::Jwt && r == Ratings::Client) {
                    combos.push((r, a, m));
                }
            }
        }
    }
    if combos.is_empty() {
        bail!("--auth jwt needs --ratings service (signed tokens allow no client ratings)");
    }
    for round in 1..=args.rounds {
        if let Some(url) = &args.target.url {
            for (i, &(r, a, m)) in combos.iter().enumerate() {
                plan.push((named(url, r, a, m, round), None, r, a, m, i == 0));
            }
        } else {
            for &kind in &args.deployments {
                for (i, &(r, a, m)) in combos.iter().enumerate() {
                    plan.push((
                        named(kind.name(), r, a, m, round),
                        Some((kind, Settings::Ours)),
                        r,
                        a,
                        m,
                        i == 0,
                    ));
                }
                if kind == Kind::Embedded
                    && !args.no_baseline
                    && args.ratings.contains(&Ratings::Client)
                {
                    plan.push((
                        format!("{} {}", kind.name(), Settings::Seed000.label()),
                        Some((kind, Settings::Seed000)),
                        Ratings::Client,
                        Auth::Dev,
                        Switch::On,
                        false,
                    ));
                }
            }
        }
    }
    // Runs that share the machine at once: a round's when interleaved, else one.
    let at_once = match args.interleave {
        Some(_) => plan.len() / args.rounds,
        None => 1,
    };
    let secrets = tempfile::tempdir()?;
    let mut outcomes = Vec::new();
    let mut plan = plan.into_iter().enumerate().peekable();
    while plan.peek().is_some() {
        let mut live = Vec::new();
        for (n, (name, start, ratings, auth, metrics, with_floor)) in plan.by_ref().take(at_once) {
            let (mut env, signer) = auth_env(auth, &secrets.path().join(format!("secret-{n}")))?;
            if metrics == Switch::Off {
                env.push(("METRICS", "false".to_string()));
            }
            let deployment = match start {
                Some((kind, settings)) => {
                    Deployment::start_with(kind, settings, args.workers, ratings, &env)?
                }
                None => Deployment::given(args.target.url.as_deref().unwrap_or(&name))?,
            };
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(args.clients)
                .build()?;
            let base = Arc::new(deployment.base.clone());
            let admin = match deployment.redis_url() {
                Some(url) => Some(
                    redis::Client::open(url)?
                        .get_multiplexed_async_connection()
                        .await?,
                ),
                None => None,
            };
            live.push(Live {
                name,
                deployment,
                client,
                base,
                ratings,
                signer,
                with_floor,
                admin,
            });
        }
        let mut floors = Vec::new();
        for l in &mut live {
            floors.push(if l.with_floor {
                let before = l.spent().await;
                let (tally, wall, rate) = hammer(
                    &args,
                    args.duration,
                    &l.client,
                    &l.base,
                    &l.name,
                    None,
                    None,
                )
                .await;
                Some(Outcome {
                    label: format!("{}: GET /healthz", l.name),
                    tally,
                    wall,
                    rate,
                    cpu: l.spent().await - before,
                })
            } else {
                None
            });
        }
        let mut posts: Vec<Outcome> = live
            .iter()
            .map(|l| Outcome {
                label: format!("{}: POST /v1/tickets", l.name),
                tally: Tally::default(),
                wall: Duration::ZERO,
                rate: Vec::new(),
                cpu: Spent::default(),
            })
            .collect();
        // The load, all at once or a slice at a time on each deployment in turn.
        let slice = args
            .interleave
            .unwrap_or(args.duration)
            .max(Duration::from_millis(100));
        let mut given = Duration::ZERO;
        while given < args.duration {
            let this = slice.min(args.duration - given);
            for (l, post) in live.iter_mut().zip(&mut posts) {
                let before = l.spent().await;
                let (tally, wall, rate) = hammer(
                    &args,
                    this,
                    &l.client,
                    &l.base,
                    &l.name,
                    Some(l.ratings),
                    l.signer.clone(),
                )
                .await;
                let offset = post.wall.as_secs_f64();
                post.rate
                    .extend(rate.into_iter().map(|(t, r)| (t + offset, r)));
                callers::Tally::merge(&mut post.tally, tally);
                post.cpu += l.spent().await - before;
                post.wall += wall;
            }
            given += this;
        }
        for ((mut l, floor), post) in live.into_iter().zip(floors).zip(posts) {
            l.deployment.check_alive()?;
            l.deployment.stop();
            outcomes.extend(floor);
            outcomes.push(post);
        }
    }
    report(&args, &outcomes)
}

/// `--clients` request loops for `--duration`: ticket creations (with the client's
/// rating or without), or health checks (`create` none).
async fn hammer(
    args: &ThroughputArgs,
    duration: Duration,
    client: &reqwest::Client,
    base: &Arc<String>,
    deployment: &str,
    create: Option<Ratings>,
    signer: Option<mm_auth::TokenSigner>,
) -> (Tally, Duration, Vec<(f64, f64)>) {
    let what = if create.is_some() {
        "POST /v1/tickets"
    } else {
        "GET /healthz"
    };
    let tag = uuid::Uuid::new_v4().simple().to_string()[..6].to_string();
    let per_client = (duration.as_secs_f64() * MINTED_PER_CLIENT_PER_S).ceil() as u64;
    let tokens = Arc::new(signer.map(|s| Tokens::mint(s, &tag, args.clients, per_client)));
    let started = Instant::now();
    let deadline = started + duration;
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
    let (client, base) = (client.clone(), base.clone());
    let (mode, region) = (
        Arc::new(args.target.mode.clone()),
        Arc::new(args.target.region.clone()),
    );
    let request = move |c: usize, i: u64| {
        let (client, base, answered) = (client.clone(), base.clone(), answered.clone());
        let (mode, region, tag) = (mode.clone(), region.clone(), tag.clone());
        let tokens = tokens.clone();
        async move {
            let player = format!("tp-{tag}-{c}-{i}");
            let token = match &*tokens {
                Some(t) => t.get(c, i, &player)?,
                None => player.clone(),
            };
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
                        .bearer_auth(&token)
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
        duration,
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

/// A run's label without its round number.
fn unround(label: &str) -> String {
    match label.split_once(" #") {
        Some((run, rest)) => match rest.split_once(':') {
            Some((_, what)) => format!("{run}:{what}"),
            None => run.to_string(),
        },
        None => label.to_string(),
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
    // What an answer cost each process, and so how many answers a second the
    // machine's cores could give at most, whatever the server did.
    let cores = cpu::cores();
    println!(
        "\nCPU per answer (us), by process, and the most answers/s {cores} cores allow at that:"
    );
    for o in outcomes.iter().filter(|o| o.tally.ok > 0) {
        let each = o.cpu.per(o.tally.ok);
        let all = each.all();
        let most = if all > 0.0 {
            format!("{:.0}", cores as f64 * 1e6 / all)
        } else {
            "-".to_string()
        };
        println!("  {:<46} {}; at most {most}/s", o.label, each.describe());
    }
    println!();
    // Each comparison's rate ratios, one per round.
    let mut ratios: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut ratio = |a: &Outcome, b: &Outcome| {
        let rate = a.rate() / b.rate().max(f64::MIN_POSITIVE);
        println!(
            "ratio {} / {}: {rate:.2}x the rate, {:.2}x the p99",
            a.label,
            b.label,
            a.tally.latency.ms(0.99) / b.tally.latency.ms(0.99).max(f64::MIN_POSITIVE)
        );
        let comparison = format!("{} / {}", unround(&a.label), unround(&b.label));
        ratios.entry(comparison).or_default().push(rate);
    };
    for (i, o) in outcomes.iter().enumerate() {
        if o.label.ends_with("POST /v1/tickets") && i > 0 {
            let prev = &outcomes[i - 1];
            if prev.label.ends_with("GET /healthz") {
                ratio(o, prev);
            } else if o.label.contains(METRICS_OFF) {
                // Metrics on against off, everything else the same.
                let on = o.label.replace(METRICS_OFF, "");
                if let Some(c) = outcomes.iter().find(|x| x.label == on) {
                    ratio(c, o);
                }
            } else if o.label.contains(Settings::Seed000.label()) {
                // Ours with the same tickets (the client's ratings).
                let ours = o.label.replace(
                    Settings::Seed000.label(),
                    &format!("({})", Ratings::Client.label()),
                );
                if let Some(c) = outcomes.iter().find(|x| x.label == ours) {
                    ratio(c, o);
                }
            } else if o.label.contains(", jwt + limits)") {
                // Signed tokens and limits against dev tokens, same ratings.
                let dev = o.label.replace(", jwt + limits)", ")");
                if let Some(c) = outcomes.iter().find(|x| x.label == dev) {
                    ratio(o, c);
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
    if args.rounds > 1 {
        println!();
        for (comparison, r) in ratios {
            println!("{}", super::median_of_rounds(&comparison, "the rate", r));
        }
    }
    args.output.csv(
        "throughput.csv",
        "run,t_s,answers_per_s",
        outcomes.iter().flat_map(|o| {
            o.rate
                .iter()
                .map(move |(t, r)| format!("{},{t:.2},{r:.0}", super::csv_field(&o.label)))
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
