//! The push scenario: how long a player waits, after their match commits, for the
//! `match.ready_check` on their WebSocket.
//!
//! A `matchmaker ingress` process on a fresh `redis-server` holds one socket per
//! player (`--players`, default 1,000). Each round queues a ticket for `--burst` of
//! them (default 100, one claim batch) at the same instant, taking the connected
//! players in turn, then runs the worker's own cycle (`mm_server::worker::cycle`, claim -> engine ->
//! commit -> settle -> publish) in this process, so the bench knows the instant each
//! commit landed. Once every player of the round has been told, they all accept
//! (players take seconds to click; their answers should not compete with the
//! pushes being measured), the matches complete and free the players, and the next
//! round starts.
//!
//! Baseline, in alternating rounds on the same sockets: the same events published
//! straight to Redis Pub/Sub (`Store::publish`) in batches of the same size, timed
//! from the publish call. That is the transport's floor (Redis -> ingress ->
//! socket) with nothing of the matchmaker in between.

use super::chart::{Lines, Series};
use super::deploy::rss_kib;
use super::histogram::Latency;
use super::{Output, matchmaker, progress};
use anyhow::{Context, Result, bail};
use clap::Args;
use futures_util::{SinkExt, StreamExt};
use mm_domain::{
    Event, EventEnvelope, Lifecycle, Match, MatchId, MatchTicket, PlayerId, Pool, Ticket, TicketId,
    now_ms,
};
use mm_engine::{Modes, WindowPolicy};
use mm_server::worker::{ClaimSizes, WorkerConfig, WorkerStats, cycle};
use mm_store::{EnqueueOutcome, RedisStore, Store};
use mm_testkit::{Proc, RedisServer, free_port, wait_for_port};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

const MODE: &str = "push";
const REGION: &str = "eu";
/// Match ids of the baseline's events start with this; sockets do not answer them.
const FLOOR: &str = "floor-";
/// A round that takes longer than this is reported as a failure.
const ROUND_TIMEOUT: Duration = Duration::from_secs(60);

/// 1v1 with the product's default ready check and no game server: a match
/// completes once both accept, which frees the players for the next round.
const PUSH_MODE: &str = r#"
[modes.push]
teams = 2
team_size = 1
ready_check = "30s"
placement = "none"
"#;

#[derive(Debug, Clone, Args)]
pub struct PushArgs {
    /// Connected players, one socket each (an even number).
    #[arg(long, default_value_t = 1000)]
    pub players: usize,
    /// Players matched at the same instant in a round (an even number, at most
    /// `--players`); rounds take the connected players in turn.
    #[arg(long, default_value_t = 100)]
    pub burst: usize,
    /// Rounds of each kind.
    #[arg(long, default_value_t = 50)]
    pub rounds: usize,
    /// Consumer tasks running the worker cycle (`WORKER_POOL_SIZE`).
    #[arg(long, default_value_t = 2)]
    pub consumers: usize,
    /// Tickets claimed per cycle (`CLAIM_BATCH_SIZE`); the baseline publishes
    /// batches of as many events.
    #[arg(long, default_value_t = 100)]
    pub claim_batch_size: usize,
    #[command(flatten)]
    pub output: Output,
}

/// What a socket saw, and when.
enum Seen {
    ReadyCheck {
        match_id: String,
        at: Instant,
    },
    Completed,
    /// The match ended otherwise, the socket closed, or an answer was refused.
    Trouble(String),
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub async fn run(args: PushArgs) -> Result<()> {
    if args.players < 2 || !args.players.is_multiple_of(2) {
        bail!("--players must be an even number of at least 2");
    }
    if args.burst < 2 || !args.burst.is_multiple_of(2) || args.burst > args.players {
        bail!("--burst must be an even number from 2 to --players");
    }
    if args.rounds == 0 || args.consumers == 0 || !(1..=2000).contains(&args.claim_batch_size) {
        bail!("--rounds and --consumers must be at least 1, --claim-batch-size 1..=2000");
    }
    let redis = RedisServer::start();
    let dir = tempfile::tempdir()?;
    let modes_file = dir.path().join("modes.toml");
    std::fs::write(&modes_file, PUSH_MODE)?;
    let addr = format!("127.0.0.1:{}", free_port());
    let mut cmd = matchmaker("ingress", Some(&redis.url()), &modes_file, MODE, REGION)?;
    cmd.env("LISTEN_ADDR", &addr);
    let mut ingress = Proc::spawn("ingress", cmd, dir.path());
    if !wait_for_port(&addr, Duration::from_secs(20)) {
        bail!("the ingress did not start:\n{}", ingress.log());
    }
    let store: Arc<dyn Store> = Arc::new(RedisStore::connect(&redis.url()).await?);

    eprintln!("opening {} sockets to {addr} ...", args.players);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    let mut readers = tokio::task::JoinSet::new();
    let mut accepts = Vec::with_capacity(args.players);
    for chunk in (0..args.players).collect::<Vec<_>>().chunks(100) {
        let opened = futures_util::future::try_join_all(chunk.iter().map(|&i| open(&addr, i)))
            .await
            .with_context(|| format!("ingress log:\n{}", ingress.log()))?;
        for (i, socket) in chunk.iter().zip(opened) {
            let (accept, to_accept) = mpsc::unbounded_channel();
            accepts.push(accept);
            readers.spawn(listen(*i, socket, tx.clone(), to_accept, stop.clone()));
        }
    }
    drop(tx);
    let rss_open = rss_kib(ingress.pid());

    let cfg = worker_config(&args)?;
    let mut ours = Latency::default();
    let mut floor = Latency::default();
    let bar = progress::counter(args.rounds as u64, "rounds of each kind");
    bar.set_prefix("push");
    for round in 0..args.rounds {
        let members: Vec<usize> = (0..args.burst)
            .map(|k| (round * args.burst + k) % args.players)
            .collect();
        let f = floor_round(&args, &*store, round, &members, &mut rx).await?;
        let o = pipeline_round(&args, &store, &cfg, round, &members, &accepts, &mut rx)
            .await
            .with_context(|| format!("ingress log:\n{}", ingress.log()))?;
        bar.inc(1);
        floor.merge(&f);
        ours.merge(&o);
    }
    let rss_end = rss_kib(ingress.pid());
    bar.finish_and_clear();
    stop.cancel();
    while readers.join_next().await.is_some() {}
    if !ingress.running() {
        bail!("the ingress died:\n{}", ingress.log());
    }
    ingress.terminate(Duration::from_secs(10));

    println!(
        "\npush: {} sockets open on one ingress; {} rounds, each matching {} of them at the same instant (1v1, ready check on)",
        args.players, args.rounds, args.burst
    );
    if let (Some(open), Some(end)) = (rss_open, rss_end) {
        println!(
            "ingress resident memory: {:.1} MiB with the sockets open, {:.1} MiB after the rounds",
            open as f64 / 1024.0,
            end as f64 / 1024.0
        );
    }
    println!("latency to the socket (ms), {} samples each:", ours.count());
    println!("  {:<34} {}", "floor: publish -> socket", floor.summary());
    println!(
        "  {:<34} {}",
        "ours: match commit -> socket",
        ours.summary()
    );
    println!(
        "\nratio ours / floor: {:.2}x the p50, {:.2}x the p99",
        ours.ms(0.5) / floor.ms(0.5).max(f64::MIN_POSITIVE),
        ours.ms(0.99) / floor.ms(0.99).max(f64::MIN_POSITIVE)
    );
    if args.burst > args.claim_batch_size {
        println!(
            "(the floor publishes its {} batches back to back; the worker commits them one cycle apart, so the floor queues more)",
            args.burst.div_ceil(args.claim_batch_size)
        );
    }
    write(&args, &ours, &floor)
}

/// The two latency distributions as CSV and as a percentile chart.
fn write(args: &PushArgs, ours: &Latency, floor: &Latency) -> Result<()> {
    const QUANTILES: [f64; 12] = [
        0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1.0,
    ];
    let kinds = [
        ("ours: match commit -> socket", ours),
        ("floor: publish -> socket", floor),
    ];
    args.output.csv(
        "push.csv",
        "run,percentile,ms",
        kinds.iter().flat_map(|(label, l)| {
            QUANTILES
                .iter()
                .map(move |q| format!("{label},{:.2},{:.3}", q * 100.0, l.ms(*q)))
        }),
    )?;
    args.output.lines(
        "push.png",
        &Lines {
            title: format!(
                "Match to socket: {} sockets, {} matched at once",
                args.players, args.burst
            ),
            x_label: "percentile (9s: 1 = p90, 2 = p99, 3 = p99.9)".into(),
            y_label: "ms".into(),
            series: kinds
                .iter()
                .enumerate()
                .map(|(i, (label, l))| Series {
                    label: label.to_string(),
                    points: QUANTILES[..QUANTILES.len() - 1]
                        .iter()
                        .map(|q| (-(1.0 - q).log10(), l.ms(*q)))
                        .collect(),
                    dashed: i > 0,
                    color: i,
                })
                .collect(),
            markers: Vec::new(),
            log_y: true,
        },
    )
}

fn worker_config(args: &PushArgs) -> Result<WorkerConfig> {
    let all = Modes::load(Some(PUSH_MODE), WindowPolicy::default())?;
    let mode = all.get(MODE).context("the push mode")?.clone();
    Ok(WorkerConfig {
        id: format!("bench-push-{}", std::process::id()),
        pools: vec![Pool::new(MODE, REGION)],
        pool_size: args.consumers,
        batch_size: args.claim_batch_size,
        lease: Duration::from_secs(30),
        heartbeat: Duration::from_secs(2),
        poll: Duration::from_millis(100),
        modes: Modes::of([mode])?,
        formation: Default::default(),
        wake_ups: true,
        coordination: Default::default(),
    })
}

fn player(i: usize) -> PlayerId {
    PlayerId::new(format!("push-{i}")).expect("valid id")
}

/// Connects player `i`'s socket and waits for `session.ready`.
async fn open(addr: &str, i: usize) -> Result<Socket> {
    let url = format!("ws://{addr}/v1/ws?token={}", player(i).as_str());
    // A small read buffer: tungstenite zero-fills all of it on every read poll.
    let config = WebSocketConfig::default().read_buffer_size(4 * 1024);
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .with_context(|| format!("socket of player {i}"))?;
    match ws.next().await {
        Some(Ok(Message::Text(t))) if t.contains("session.ready") => Ok(ws),
        other => bail!("player {i}: expected session.ready, got {other:?}"),
    }
}

/// Reads player `i`'s socket and reports what it sees; accepts the ready checks
/// it is told to.
async fn listen(
    i: usize,
    mut ws: Socket,
    tx: mpsc::UnboundedSender<(usize, Seen)>,
    mut accept: mpsc::UnboundedReceiver<String>,
    stop: CancellationToken,
) {
    loop {
        let msg = tokio::select! {
            _ = stop.cancelled() => break,
            Some(match_id) = accept.recv() => {
                let text = serde_json::json!({"type": "match.accept", "match_id": match_id});
                if ws.send(Message::text(text.to_string())).await.is_err() {
                    let _ = tx.send((i, Seen::Trouble("could not accept".into())));
                }
                continue;
            }
            m = ws.next() => m,
        };
        let at = Instant::now();
        let text = match msg {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(_)) => continue,
            other => {
                let _ = tx.send((i, Seen::Trouble(format!("socket ended: {other:?}"))));
                return;
            }
        };
        // A load generator should cost little: it shares the machine with what it
        // measures. The two fields it needs are read without parsing the frame.
        match field(&text, "type").unwrap_or_default() {
            "match.ready_check" => {
                let match_id = field(&text, "match_id").unwrap_or_default().to_string();
                let _ = tx.send((i, Seen::ReadyCheck { match_id, at }));
            }
            "match.completed" => {
                let _ = tx.send((i, Seen::Completed));
            }
            "match.cancelled" | "match.failed" | "error" => {
                let _ = tx.send((i, Seen::Trouble(text.to_string())));
            }
            _ => {}
        }
    }
    let _ = ws.close(None).await;
}

/// Baseline round: every player gets a ready check published straight to the store's
/// Pub/Sub, in batches of `--claim-batch-size` events.
async fn floor_round(
    args: &PushArgs,
    store: &dyn Store,
    round: usize,
    members: &[usize],
    rx: &mut mpsc::UnboundedReceiver<(usize, Seen)>,
) -> Result<Latency> {
    let now = now_ms();
    let events: Vec<EventEnvelope> = members
        .chunks(2)
        .enumerate()
        .flat_map(|(k, pair)| {
            let m = Match {
                id: MatchId::new(format!("{FLOOR}{round}-{k}")).expect("valid id"),
                mode: MODE.into(),
                region: REGION.into(),
                tickets: pair
                    .iter()
                    .enumerate()
                    .map(|(team, &i)| MatchTicket {
                        ticket_id: ticket_id(round, i),
                        players: vec![player(i)],
                        rating: 1500.0,
                        enqueued_at: now,
                        team,
                        skills: Vec::new(),
                        attributes: Default::default(),
                        player_attributes: Vec::new(),
                    })
                    .collect(),
                created_at: now,
                lifecycle: Lifecycle::default(),
                decided: Default::default(),
            };
            m.tickets
                .iter()
                .map(|t| EventEnvelope {
                    player: t.players[0].clone(),
                    event: Event::ReadyCheck {
                        ticket_id: t.ticket_id.clone(),
                        match_id: m.id.clone(),
                        deadline: now + 30_000,
                        matched: m.clone(),
                    },
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut sent: HashMap<String, Instant> = HashMap::new();
    for batch in events.chunks(args.claim_batch_size) {
        let t0 = Instant::now();
        store.publish(batch).await?;
        for e in batch {
            if let Event::ReadyCheck { match_id, .. } = &e.event {
                sent.insert(match_id.as_str().to_string(), t0);
            }
        }
    }
    let mut latency = Latency::default();
    let mut got = 0;
    let deadline = Instant::now() + ROUND_TIMEOUT;
    while got < members.len() {
        match next(rx, deadline, "baseline", got, members.len()).await? {
            (_, Seen::ReadyCheck { match_id, at }) => {
                if let Some(t0) = sent.get(&match_id) {
                    latency.record(at - *t0);
                    got += 1;
                }
            }
            (i, Seen::Trouble(what)) => bail!("baseline round: player {i}: {what}"),
            _ => {}
        }
    }
    Ok(latency)
}

/// One round through the matchmaker: queue everyone, run the worker cycle, time each
/// ready check from its match's commit; wait until every match completed.
async fn pipeline_round(
    args: &PushArgs,
    store: &Arc<dyn Store>,
    cfg: &WorkerConfig,
    round: usize,
    members: &[usize],
    accepts: &[mpsc::UnboundedSender<String>],
    rx: &mut mpsc::UnboundedReceiver<(usize, Seen)>,
) -> Result<Latency> {
    let now = now_ms();
    let tickets: Vec<Ticket> = members
        .iter()
        .map(|&i| {
            // Close ratings, so everyone is matched in the first cycles.
            let rating = 1500.0 + (i % 21) as f64 - 10.0;
            Ticket::solo(ticket_id(round, i), player(i), MODE, REGION, rating, now)
        })
        .collect();
    let queued = tickets.iter().map(|t| async move {
        match store.enqueue(t).await? {
            EnqueueOutcome::Queued => Ok(()),
            other => bail!("ticket {} not queued: {other:?}", t.id.as_str()),
        }
    });
    futures_util::future::try_join_all(queued).await?;

    let commits: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let done = CancellationToken::new();
    let stats = Arc::new(WorkerStats::default());
    let mut consumers = tokio::task::JoinSet::new();
    for _ in 0..args.consumers {
        let (store, cfg, stats) = (store.clone(), cfg.clone(), stats.clone());
        let (commits, done) = (commits.clone(), done.clone());
        consumers.spawn(async move {
            let pool = cfg.pools[0].clone();
            let mut sizes = ClaimSizes::default();
            while !done.is_cancelled() {
                let formed = cycle(&*store, &cfg, &stats, &pool, &mut sizes).await?;
                if let Some(at) = formed.committed_at {
                    let mut c = commits.lock().expect("not poisoned");
                    for m in &formed.matches {
                        c.insert(m.id.as_str().to_string(), at);
                    }
                }
                if formed.matches.is_empty() {
                    tokio::select! {
                        _ = done.cancelled() => {}
                        _ = tokio::time::sleep(cfg.poll) => {}
                    }
                }
            }
            Ok::<_, mm_store::StoreError>(())
        });
    }

    let want = members.len();
    let mut seen: Vec<(usize, String, Instant)> = Vec::with_capacity(want);
    let mut completed = 0;
    let deadline = Instant::now() + ROUND_TIMEOUT;
    let outcome = async {
        while seen.len() < want || completed < want {
            let got = seen.len() + completed;
            match next(rx, deadline, "matchmaker", got, 2 * want).await? {
                (i, Seen::ReadyCheck { match_id, at }) if !match_id.starts_with(FLOOR) => {
                    seen.push((i, match_id, at));
                    if seen.len() == want {
                        for (i, match_id, _) in &seen {
                            let _ = accepts[*i].send(match_id.clone());
                        }
                    }
                }
                (_, Seen::Completed) => completed += 1,
                (i, Seen::Trouble(what)) => bail!("player {i}: {what}"),
                _ => {}
            }
        }
        Ok(())
    }
    .await;
    done.cancel();
    while let Some(r) = consumers.join_next().await {
        r??;
    }
    outcome?;
    let commits = commits.lock().expect("not poisoned");
    let mut latency = Latency::default();
    for (_, match_id, at) in seen {
        let committed = commits.get(&match_id).with_context(|| {
            format!("a ready check for match {match_id}, which no cycle committed")
        })?;
        latency.record(at - *committed);
    }
    Ok(latency)
}

/// The string value of a top-level `"name":"..."` pair of a frame the server wrote
/// (compact JSON; ids and event types need no escapes). Nested fields come after
/// the top-level ones the bench reads, so the first occurrence is the right one.
fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("\"{name}\":\"");
    let start = text.find(&key)? + key.len();
    let len = text[start..].find('"')?;
    Some(&text[start..start + len])
}

fn ticket_id(round: usize, i: usize) -> TicketId {
    TicketId::new(format!("t-push-{round}-{i}")).expect("valid id")
}

/// The next thing a socket saw, or an error at the round's deadline.
async fn next(
    rx: &mut mpsc::UnboundedReceiver<(usize, Seen)>,
    deadline: Instant,
    what: &str,
    got: usize,
    want: usize,
) -> Result<(usize, Seen)> {
    match tokio::time::timeout_at(deadline.into(), rx.recv()).await {
        Ok(Some(seen)) => Ok(seen),
        Ok(None) => bail!("{what} round: every socket is gone"),
        Err(_) => bail!("{what} round: {got} of {want} events after {ROUND_TIMEOUT:?}"),
    }
}
