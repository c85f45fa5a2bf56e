//! The latency scenario (seed 000's "Latency vs. Concurrent Players"): simulated
//! players ramp from 10 to 1,000 concurrent. Each player opens a WebSocket and
//! keeps it; from then on it queues a ticket over HTTP every `--period` on a fixed
//! schedule (open loop: a late answer does not delay the next arrival, and every
//! time is measured from the arrival's intended start, so a slow server cannot
//! hide its latency behind fewer requests), and waits for its match on the socket.
//!
//! New players join one every `--spawn-every` (seed 000: 10 ms) until the next
//! step's count is reached; the step is then held for `--hold`, and only the
//! arrivals intended inside the hold count for it. Per step it reports, in ms:
//! - creation: intended start -> `201 Created`;
//! - time to match: intended start -> the match on the socket;
//! - after formation: the match's `created_at` -> its arrival on the socket
//!   (wall clock, whole milliseconds: the engine stamps the match in ms);
//! - last in: time to match of each match's last-arriving member (its intended
//!   start -> the match on its socket): how fast the service reacts to the ticket
//!   that makes a match possible, without the wait for partners to arrive;
//! - floor: the time to match an instant matcher would give the same arrivals,
//!   pairing each arrival with the one waiting, if any ([`pairing_floor`]): the
//!   wait for a partner to arrive, which no service can shorten.
//!
//! Ratings are drawn uniformly from `--rating-spread` centred on 1500 (default 50:
//! any two players fit each other's opening window of +-50), so time to match
//! measures the service, not how long an outlier waits for a partner.
//!
//! Baselines in the same command: the same deployment and traffic with seed 000's
//! worker settings and formation ([`super::SEED000_WORKER`]); and, on Redis, the
//! seed-000 port ([`super::seed000`]) with the same traffic, its consumers on
//! their ticker and then eager. The port has no HTTP
//! front, so its players enqueue straight into its Redis (its ingress's one
//! round trip) and hear of their match on its Pub/Sub channel: it is spared the
//! HTTP and WebSocket hops ours pays, which flatters it.
//!
//! `--auth jwt` runs ours with signed tokens (HS256, minted before the clock
//! starts, as a studio's login service would have issued them) and every rate
//! limit checked (set beyond reach: the cost of checking, not of refusing), so
//! ratings come from the rating service (PostgreSQL on Redis), not the client.
//! The baselines are unchanged.
//!
//! `--flood F` instead compares the run with itself plus one more player who
//! queues tickets at F times their per-player limit the whole time (both runs
//! with the per-player ticket limit [`FLOOD_LIMIT`], per-address limits off: every
//! simulated player shares the load generator's address): how far one abusive
//! client moves everyone else's latency.
//!
//! The seed-000 port's side of the players is in [`port`], what is printed and
//! written in [`report`].

use super::deploy::{Deployment, Kind, Ratings, Settings, rss_kib};
use super::histogram::Latency;
use super::seed000::worker::Poll;
use super::throughput::{Auth, auth_env};
use super::{Output, Target, progress};
use anyhow::{Context, Result, bail};
use clap::Args;
use futures_util::StreamExt;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

mod port;
mod report;

use port::{PortLink, one_port_ticket};
use report::report;

#[derive(Debug, Clone, Args)]
pub struct LatencyArgs {
    /// Concurrent players at each step, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "10,50,100,250,500,1000")]
    pub steps: Vec<usize>,
    /// How long each step is held (its arrivals are the step's samples).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub hold: Duration,
    /// Each player queues a ticket this often.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub period: Duration,
    /// A new player joins this often during a ramp.
    #[arg(long, default_value = "10ms", value_parser = humantime::parse_duration)]
    pub spawn_every: Duration,
    /// Players' ratings lie within this range centred on 1500.
    #[arg(long, default_value_t = 50.0)]
    pub rating_spread: f64,
    /// The deployment the command starts.
    #[arg(long, value_enum, default_value = "redis")]
    pub deployment: Kind,
    /// Worker processes of the Redis deployment.
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    #[command(flatten)]
    pub target: Target,
    /// Skip the baselines (seed 000's settings, and the seed-000 port on Redis).
    #[arg(long)]
    pub no_baseline: bool,
    /// Seed of the rating generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Compare with a run that adds one player flooding ticket creations at this
    /// many times their limit (instead of the seed-000 baseline).
    #[arg(long)]
    pub flood: Option<u32>,
    /// How ours identifies players: dev tokens (the player id, client ratings)
    /// or signed tokens with every rate limit checked (service ratings).
    #[arg(long, value_enum, default_value = "dev")]
    pub auth: Auth,
    #[command(flatten)]
    pub output: Output,
}

/// One arrival: a ticket queued and waited for.
struct Sample {
    intended: Instant,
    outcome: Result<Timings, String>,
}

struct Timings {
    create: Duration,
    matched: Duration,
    match_id: String,
    /// Match `created_at` to its arrival, ms (wall clock).
    after_formation_ms: u64,
}

/// Everything measured at one step of one run.
#[derive(Default, Clone)]
struct Step {
    players: usize,
    create: Latency,
    matched: Latency,
    after_formation: Latency,
    /// Time to match of each match's last-arriving member.
    last_in: Latency,
    /// Time to match of an instant pairing of the same arrivals.
    floor: Latency,
    errors: BTreeMap<String, u64>,
}

impl Step {
    /// p50, p95, p99 (ms) of creation, time to match and after formation.
    fn quantiles(&self) -> [f64; 9] {
        let mut out = [0.0; 9];
        for (i, l) in [&self.create, &self.matched, &self.after_formation]
            .into_iter()
            .enumerate()
        {
            for (j, q) in [0.5, 0.95, 0.99].into_iter().enumerate() {
                out[3 * i + j] = l.ms(q);
            }
        }
        out
    }

    fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// The per-player ticket limit of the `--flood` runs (players queue every
/// `--period`, at most 1 s, so they stay under it).
const FLOOD_LIMIT: mm_store::Rate = mm_store::Rate {
    count: 2,
    period: Duration::from_secs(1),
};

/// What the flooder got back.
#[derive(Default, Clone)]
struct Flood {
    sent: u64,
    refused: u64,
    other: u64,
}

struct Run {
    label: String,
    steps: Vec<Step>,
    flood: Option<Flood>,
    /// Peak RSS of the process holding the sockets, KiB.
    ingress_rss_kib: Option<u64>,
}

/// The time to match of each arrival (by intended start) under an instant
/// matcher that puts an arrival with the one waiting, if any, into a match of
/// two: the first of each pair waits for the second to arrive, the second waits
/// nothing. With every two players fitting each other's window and matches of
/// two allowed (the bench mode, the default `--rating-spread`), nothing can match
/// these arrivals sooner: a ticket needs a partner present.
fn pairing_floor(mut arrivals: Vec<Instant>) -> Vec<(Instant, Duration)> {
    arrivals.sort();
    let mut out = Vec::with_capacity(arrivals.len());
    // An odd last arrival of the run has nobody left to pair with.
    for pair in arrivals.chunks_exact(2) {
        out.push((pair[0], pair[1] - pair[0]));
        out.push((pair[1], Duration::ZERO));
    }
    out
}

/// How long a player waits for its match before counting an error.
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);
/// How long players keep queuing after the last step's hold.
const TAIL: Duration = Duration::from_secs(2);

pub async fn run(args: LatencyArgs) -> Result<()> {
    if args.steps.is_empty() || args.steps.contains(&0) || !args.steps.is_sorted() {
        bail!("--steps must be rising player counts above zero");
    }
    if args.hold.is_zero() || args.period.is_zero() || args.spawn_every.is_zero() {
        bail!("--hold, --period and --spawn-every must be more than zero");
    }
    if *args.steps.last().expect("not empty") > 5000 {
        bail!("--steps above 5,000 players are beyond what one load generator measures well");
    }
    if args.auth == Auth::Jwt && (args.flood.is_some() || args.target.url.is_some()) {
        bail!("--auth jwt starts its own deployment: not with --flood or --url");
    }
    if args.flood == Some(0) || (args.flood.is_some() && args.period > Duration::from_secs(1)) {
        bail!(
            "--flood must be above zero, with --period at most 1s (players stay under the limit)"
        );
    }
    let mut runs = Vec::new();
    if let Some(url) = &args.target.url {
        let d = Deployment::given(url)?;
        runs.push(measure(&args, d, "given deployment", None, None).await?);
    } else if let Some(factor) = args.flood {
        let per_player = format!(
            "{}/{}s,off",
            FLOOD_LIMIT.count,
            FLOOD_LIMIT.period.as_secs()
        );
        let env = [
            ("RATE_LIMIT_TICKETS", per_player),
            ("RATE_LIMIT_ANSWERS", "30/1m,off".to_string()),
            ("RATE_LIMIT_READS", "300/1m,off".to_string()),
            ("RATE_LIMIT_CONNECTS", "20/1m,off".to_string()),
            ("RATE_LIMIT_MESSAGES", "120/1m,off".to_string()),
        ];
        for flood in [None, Some(factor)] {
            let d = Deployment::start_with(
                args.deployment,
                Settings::Ours,
                args.workers,
                Ratings::Client,
                &env,
            )?;
            let label = match flood {
                None => format!("limits ({})", args.deployment.name()),
                Some(f) => format!("limits + flood {f}x ({})", args.deployment.name()),
            };
            runs.push(measure(&args, d, &label, flood, None).await?);
        }
    } else {
        let mut settings = vec![Settings::Ours];
        if !args.no_baseline {
            settings.push(Settings::Seed000);
        }
        let secrets = tempfile::tempdir()?;
        for s in settings {
            // Ours with the `--auth` asked for; the baselines as always.
            let auth = if s == Settings::Ours {
                args.auth
            } else {
                Auth::Dev
            };
            let (env, signer) = auth_env(auth, &secrets.path().join("secret"))?;
            let ratings = if signer.is_some() {
                Ratings::Service
            } else {
                Ratings::Client
            };
            let d = Deployment::start_with(args.deployment, s, args.workers, ratings, &env)?;
            let label = match auth {
                Auth::Dev => format!("{} ({})", s.label(), args.deployment.name()),
                Auth::Jwt => format!("{}, jwt + limits ({})", s.label(), args.deployment.name()),
            };
            runs.push(measure(&args, d, &label, None, signer.as_ref()).await?);
        }
        if !args.no_baseline && args.deployment == Kind::Redis {
            for (poll, label) in [
                (Poll::Ticker, "seed-000 port (redis)"),
                (Poll::Eager, "seed-000 port, eager (redis)"),
            ] {
                let d = Deployment::port(args.workers, poll)?;
                runs.push(measure(&args, d, label, None, None).await?);
            }
        }
    }
    report(&args, &runs)
}

/// One player queuing tickets `factor` times faster than [`FLOOD_LIMIT`] allows
/// until `stop`.
async fn flooder(
    base: String,
    args: LatencyArgs,
    factor: u32,
    stopping: Arc<std::sync::atomic::AtomicBool>,
) -> Flood {
    let client = reqwest::Client::new();
    let every = FLOOD_LIMIT.interval() / factor;
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut calls = tokio::task::JoinSet::new();
    let mut flood = Flood::default();
    while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
        tick.tick().await;
        let request = client
            .post(format!("{base}/v1/tickets"))
            .bearer_auth("flooder")
            .json(&serde_json::json!({
                "mode": args.target.mode,
                "players": ["flooder"],
                "rating": 1500,
                "regions": [args.target.region],
            }))
            .send();
        calls.spawn(async move { request.await.map(|r| r.status().as_u16()) });
        flood.sent += 1;
        while let Some(done) = calls.try_join_next() {
            match done {
                Ok(Ok(429)) => flood.refused += 1,
                _ => flood.other += 1,
            }
        }
    }
    while let Some(done) = calls.join_next().await {
        match done {
            Ok(Ok(429)) => flood.refused += 1,
            _ => flood.other += 1,
        }
    }
    flood
}

/// One run against `d`; with `signer`, players carry signed tokens (minted as
/// they join, before their first arrival) and send no rating.
async fn measure(
    args: &LatencyArgs,
    mut d: Deployment,
    label: &str,
    flood: Option<u32>,
    signer: Option<&mm_auth::TokenSigner>,
) -> Result<Run> {
    let players_max = *args.steps.last().expect("not empty");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()?;
    let (tx, mut rx) = mpsc::unbounded_channel::<Sample>();
    let stop = Arc::new(tokio::sync::Notify::new());
    let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let mut players = tokio::task::JoinSet::new();
    let mut holds: Vec<(Instant, Instant)> = Vec::new();
    let total: Duration =
        args.hold * args.steps.len() as u32 + args.spawn_every * players_max as u32;
    let bar = progress::clock(total, "players ramping");
    bar.set_prefix(label.to_string());
    let run_tag = &uuid::Uuid::new_v4().simple().to_string()[..6];
    let mut peak_rss = None;
    let mut joined = 0usize;
    let flooding =
        flood.map(|f| tokio::spawn(flooder(d.base.clone(), args.clone(), f, stopping.clone())));
    let port = match d.port_redis() {
        Some(url) => Some(PortLink::connect(url, &args.target.region).await?),
        None => None,
    };
    for &target in &args.steps {
        while joined < target {
            let player = format!("lat-{run_tag}-{joined}");
            let token = match signer {
                Some(s) => s.sign(&player, None, TOKEN_TTL)?,
                None => player.clone(),
            };
            let link = match &port {
                Some(p) => Link::Port(p.clone()),
                None => Link::Ws(Box::new(connect(&d, &player, &token, label).await?)),
            };
            let rating = 1500.0 + args.rating_spread * (rng.random::<f64>() - 0.5);
            // Each player's schedule starts at a random point of the period, so
            // arrivals are spread evenly rather than in waves.
            let phase = args.period.mul_f64(rng.random::<f64>());
            players.spawn(play(
                PlayerCtx {
                    player,
                    token,
                    rating: signer.is_none().then(|| rating.round()),
                    base: d.base.clone(),
                    mode: args.target.mode.clone(),
                    region: args.target.region.clone(),
                    period: args.period,
                    phase,
                    client: client.clone(),
                    tx: tx.clone(),
                    stopping: stopping.clone(),
                    stop: stop.clone(),
                },
                link,
            ));
            joined += 1;
            tokio::time::sleep(args.spawn_every).await;
        }
        bar.set_message(format!("holding {target} players"));
        let start = Instant::now();
        // Sample the socket holder's memory while the step is held.
        while start.elapsed() < args.hold {
            tokio::time::sleep(Duration::from_millis(250).min(args.hold)).await;
            if let Some(kib) = d.ingress_pid().and_then(rss_kib) {
                peak_rss = Some(peak_rss.unwrap_or(0).max(kib));
            }
        }
        holds.push((start, start + args.hold));
    }
    // Players keep queuing a while, so the last step's tickets find partners.
    bar.set_message("tail: the last step's tickets find partners");
    tokio::time::sleep(TAIL.max(args.period * 2)).await;
    bar.set_message("waiting for the last matches");
    stopping.store(true, std::sync::atomic::Ordering::Relaxed);
    stop.notify_waiters();
    drop(tx);
    let mut steps: Vec<Step> = args
        .steps
        .iter()
        .map(|&players| Step {
            players,
            ..Step::default()
        })
        .collect();
    // Per match: its step, and the last member's time to match (by intended start).
    let mut last_in: BTreeMap<String, (usize, Instant, Duration)> = BTreeMap::new();
    let mut arrivals: Vec<Instant> = Vec::new();
    let collect = async {
        while let Some(s) = rx.recv().await {
            arrivals.push(s.intended);
            let Some(i) = holds
                .iter()
                .position(|(a, b)| s.intended >= *a && s.intended < *b)
            else {
                continue;
            };
            let step = &mut steps[i];
            match s.outcome {
                Ok(t) => {
                    step.create.record(t.create);
                    step.matched.record(t.matched);
                    let last = last_in
                        .entry(t.match_id.clone())
                        .or_insert((i, s.intended, t.matched));
                    if s.intended > last.1 {
                        *last = (i, s.intended, t.matched);
                    }
                    step.after_formation
                        .record(Duration::from_millis(t.after_formation_ms));
                }
                Err(e) => *step.errors.entry(e).or_default() += 1,
            }
        }
    };
    collect.await;
    for (i, _, matched) in last_in.into_values() {
        steps[i].last_in.record(matched);
    }
    for (at, wait) in pairing_floor(arrivals) {
        if let Some(i) = holds.iter().position(|(a, b)| at >= *a && at < *b) {
            steps[i].floor.record(wait);
        }
    }
    while players.join_next().await.is_some() {}
    let flood = match flooding {
        Some(f) => Some(f.await.unwrap_or_default()),
        None => None,
    };
    bar.finish_and_clear();
    d.check_alive()?;
    d.stop();
    Ok(Run {
        label: label.to_string(),
        steps,
        flood,
        ingress_rss_kib: peak_rss,
    })
}

struct PlayerCtx {
    player: String,
    /// What it authenticates with: its id (dev tokens) or a signed token.
    token: String,
    /// The rating it sends (none: the rating service's).
    rating: Option<f64>,
    base: String,
    mode: String,
    region: String,
    period: Duration,
    /// Delay of the first arrival.
    phase: Duration,
    client: reqwest::Client,
    tx: mpsc::UnboundedSender<Sample>,
    stopping: Arc<std::sync::atomic::AtomicBool>,
    stop: Arc<tokio::sync::Notify>,
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How a player reaches the deployment.
enum Link {
    /// HTTP for tickets, its own WebSocket for matches.
    Ws(Box<Socket>),
    /// The seed-000 port's Redis.
    Port(PortLink),
}

/// A player's socket, once the session is ready.
async fn connect(d: &Deployment, player: &str, token: &str, label: &str) -> Result<Socket> {
    let url = format!("{}/v1/ws?token={token}", d.ws_base());
    let config = WebSocketConfig::default().read_buffer_size(4 * 1024);
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(&url, Some(config), true)
        .await
        .with_context(|| format!("{label}: socket of {player}"))?;
    match ws.next().await {
        Some(Ok(Message::Text(t))) if t.contains("session.ready") => Ok(ws),
        other => bail!("{label}: {player}: expected session.ready, got {other:?}"),
    }
}

/// One player: a ticket every `period` from now on, each waited for on its link.
async fn play(ctx: PlayerCtx, mut link: Link) {
    let origin = Instant::now() + ctx.phase;
    for k in 0u32.. {
        let intended = origin + ctx.period * k;
        tokio::select! {
            _ = tokio::time::sleep_until(intended.into()) => {}
            _ = ctx.stop.notified() => break,
        }
        if ctx.stopping.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let outcome = match &mut link {
            Link::Ws(ws) => one_ticket(&ctx, ws, intended).await,
            Link::Port(port) => one_port_ticket(&ctx, port, intended, k).await,
        };
        let broken = matches!(&outcome, Err(e) if e.starts_with("socket"));
        if ctx.tx.send(Sample { intended, outcome }).is_err() || broken {
            break;
        }
    }
    if let Link::Ws(ws) = &mut link {
        let _ = ws.close(None).await;
    }
}

/// What a socket frame says about a match, if anything: (ticket id, match
/// `created_at`, match id, needs an accept).
fn match_event(text: &str) -> Option<(String, u64, String, bool)> {
    if !text.contains("\"match.") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let kind = v.get("type")?.as_str()?;
    let ready_check = match kind {
        "match.ready_check" => true,
        "match.completed" | "match.placing" | "match.assigned" => false,
        _ => return None,
    };
    Some((
        v.get("ticket_id")?.as_str()?.to_string(),
        v.get("match")?.get("created_at")?.as_u64()?,
        v.get("match_id")?.as_str()?.to_string(),
        ready_check,
    ))
}

/// The ticket a player queues: its rating only with dev tokens.
fn ticket_body(ctx: &PlayerCtx) -> serde_json::Value {
    let mut body = serde_json::json!({
        "mode": ctx.mode,
        "players": [ctx.player],
        "regions": [ctx.region],
    });
    if let Some(rating) = ctx.rating {
        body["rating"] = rating.into();
    }
    body
}

/// Lifetime of the signed tokens of `--auth jwt` (longer than any run).
const TOKEN_TTL: Duration = Duration::from_secs(3600);

async fn one_ticket(
    ctx: &PlayerCtx,
    ws: &mut Socket,
    intended: Instant,
) -> Result<Timings, String> {
    let post = ctx
        .client
        .post(format!("{}/v1/tickets", ctx.base))
        .bearer_auth(&ctx.token)
        .json(&ticket_body(ctx))
        .send();
    tokio::pin!(post);
    // Match events read while the request is in flight, with their arrival.
    let mut early: Vec<(String, u64, String, bool, Instant, u64)> = Vec::new();
    let deadline = tokio::time::Instant::from(intended + MATCH_TIMEOUT);
    let answer = loop {
        tokio::select! {
            r = &mut post => break r,
            m = ws.next() => match m {
                Some(Ok(Message::Text(t))) => {
                    if let Some((tid, formed, mid, rc)) = match_event(&t) {
                        early.push((tid, formed, mid, rc, Instant::now(), mm_domain::now_ms()));
                    }
                }
                Some(Ok(_)) => {}
                other => return Err(format!("socket closed: {other:?}")),
            },
            _ = tokio::time::sleep_until(deadline) => return Err("request timed out".into()),
            _ = ctx.stop.notified() => return Err("stopped before the match".into()),
        }
    };
    let response = answer.map_err(|e| format!("request failed: {e}"))?;
    let status = response.status();
    let created = Instant::now();
    let body = response.bytes().await.map_err(|e| format!("body: {e}"))?;
    if status.as_u16() != 201 {
        let code = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("error")?.get("code")?.as_str().map(String::from))
            .unwrap_or_default();
        return Err(format!("HTTP {} {code}", status.as_u16()));
    }
    let ticket_id = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("id")?.as_str().map(String::from))
        .ok_or("201 without a ticket id")?;
    let found = match early.into_iter().find(|e| e.0 == ticket_id) {
        Some(e) => e,
        None => loop {
            let m = tokio::select! {
                m = ws.next() => m,
                _ = tokio::time::sleep_until(deadline) => return Err("no match within 30 s".into()),
                _ = ctx.stop.notified() => return Err("stopped before the match".into()),
            };
            match m {
                Some(Ok(Message::Text(t))) => {
                    if let Some((tid, formed, mid, rc)) = match_event(&t)
                        && tid == ticket_id
                    {
                        break (tid, formed, mid, rc, Instant::now(), mm_domain::now_ms());
                    }
                }
                Some(Ok(_)) => {}
                other => return Err(format!("socket closed: {other:?}")),
            }
        },
    };
    let (_, formed_ms, match_id, ready_check, at, at_ms) = found;
    if ready_check {
        // A given deployment's mode may hold a ready check: accept at once so the
        // player is free for its next ticket.
        let text = serde_json::json!({"type": "match.accept", "match_id": match_id});
        use futures_util::SinkExt;
        ws.send(Message::text(text.to_string()))
            .await
            .map_err(|e| format!("socket: accept failed: {e}"))?;
    }
    Ok(Timings {
        create: created - intended,
        matched: at.saturating_duration_since(intended),
        match_id: match_id.to_string(),
        after_formation_ms: at_ms.saturating_sub(formed_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_pairs_each_arrival_with_the_next_and_only_the_first_waits() {
        let t0 = Instant::now();
        let ms = |m| t0 + Duration::from_millis(m);
        // Given out of order; the odd last one is left out.
        let got = pairing_floor(vec![ms(250), ms(0), ms(100), ms(130), ms(900)]);
        let want = vec![
            (ms(0), Duration::from_millis(100)),
            (ms(100), Duration::ZERO),
            (ms(130), Duration::from_millis(120)),
            (ms(250), Duration::ZERO),
        ];
        assert_eq!(got, want);
    }
}
