//! The soak scenario: a Redis deployment (ingress, worker, supervisor, rating
//! service as processes) run for a long time under a steady population of players
//! who queue, accept, decline, ignore ready checks and cancel, with new players
//! arriving as others leave. Samples every process's RSS and Redis's key count and
//! memory; once warm (finished tickets and matches are forgotten after
//! `TICKET_RETENTION`, shortened here) both should stay flat. Players' own keys
//! (`mm:{u:...}`: their match history, kept 30 days) and the matches archived for
//! those histories (`mm:{p:...}:a:MATCH`, also 30 days) grow with the number of
//! distinct players and matches instead, so the key count is reported for them and
//! for the rest apart. Reports the growth from the end of the warm-up to the end, and
//! charts both.

use super::chart::{Lines, Series};
use super::deploy::rss_kib;
use super::{Output, matchmaker};
use anyhow::{Result, bail};
use clap::Args;
use mm_testkit::{Proc, RedisServer, free_port};
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A duel with a short ready check and a short ban, matched at once, not placed.
const SOAK_MODE: &str = r#"
[modes.soak]
teams = 2
team_size = 1
ready_check = "4s"
decline_ban = "2s"
disconnect_grace = "2s"
placement = "none"
"#;

#[derive(Debug, Clone, Args)]
pub struct SoakArgs {
    /// How long the whole run lasts.
    #[arg(long, default_value = "30m", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    /// Players playing at once (each a loop of queue, ready check, match).
    #[arg(long, default_value_t = 200)]
    pub players: usize,
    /// How long finished tickets and matches are kept (`TICKET_RETENTION`); the
    /// warm-up is twice this.
    #[arg(long, default_value = "2m", value_parser = humantime::parse_duration)]
    pub retention: Duration,
    /// Time between samples.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub sample_every: Duration,
    /// Seed of the players' choices.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Games a player plays before leaving for a new one (0: players never
    /// leave, so each queues ticket after ticket: what bounds a player's own
    /// keys shows).
    #[arg(long, default_value_t = 10)]
    pub games_per_player: usize,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Default)]
struct Counts {
    created: AtomicU64,
    cancelled: AtomicU64,
    accepted: AtomicU64,
    declined: AtomicU64,
    ignored: AtomicU64,
    errors: AtomicU64,
}

/// One sample: seconds since the start, RSS (KiB) per process, Redis keys and
/// used memory (bytes).
struct Sample {
    t: f64,
    rss_kib: Vec<u64>,
    keys: u64,
    /// Keys of players (`mm:{u:...}`), kept for 30 days after their last game,
    /// and matches archived for their histories (`mm:{p:...}:a:MATCH`, 30 days).
    player_keys: u64,
    redis_bytes: u64,
    /// The most fields a player's ticket index holds (`mm:{u:...}:tix`: their
    /// tickets and matches).
    largest_index: u64,
}

/// The most fields of any player's ticket index.
async fn largest_index(conn: &mut redis::aio::MultiplexedConnection) -> Result<u64> {
    let keys = scan_keys(conn, "mm:{u:*}:tix").await?;
    let mut most = 0;
    for chunk in keys.chunks(1000) {
        let mut pipe = redis::pipe();
        for k in chunk {
            pipe.hlen(k);
        }
        let lens: Vec<u64> = pipe.query_async(conn).await?;
        most = lens.into_iter().fold(most, u64::max);
    }
    Ok(most)
}

/// Keys matching `pattern`, counted with SCAN.
async fn count_keys(conn: &mut redis::aio::MultiplexedConnection, pattern: &str) -> Result<u64> {
    Ok(scan_keys(conn, pattern).await?.len() as u64)
}

/// Keys matching `pattern`, found with SCAN.
async fn scan_keys(
    conn: &mut redis::aio::MultiplexedConnection,
    pattern: &str,
) -> Result<Vec<String>> {
    let mut cursor: u64 = 0;
    let mut found = Vec::new();
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(conn)
            .await?;
        found.extend(keys);
        if next == 0 {
            return Ok(found);
        }
        cursor = next;
    }
}

pub async fn run(args: SoakArgs) -> Result<()> {
    if args.players < 2 || args.duration <= args.retention * 2 || args.sample_every.is_zero() {
        bail!("--players must be at least 2 and --duration longer than twice --retention");
    }
    let redis = RedisServer::start();
    let logs = tempfile::tempdir()?;
    let modes_file = logs.path().join("modes.toml");
    std::fs::write(&modes_file, SOAK_MODE)?;
    let addr = format!("127.0.0.1:{}", free_port());
    let names = ["ingress", "worker", "supervisor", "rating-service"];
    let mut procs = Vec::new();
    for name in names {
        let mut cmd = matchmaker(name, Some(&redis.url()), &modes_file, "soak", "eu")?;
        cmd.env(
            "TICKET_RETENTION",
            humantime::format_duration(args.retention).to_string(),
        )
        .env("SUPERVISE_INTERVAL", "1s")
        .env("LISTEN_ADDR", &addr)
        .env("ALLOW_CLIENT_RATINGS", "true");
        procs.push(Proc::spawn(name, cmd, logs.path()));
    }
    let base = format!("http://{addr}");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        if Instant::now() > deadline {
            bail!("the deployment did not get ready:\n{}", procs[0].log());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "soak: {} players for {:?}, retention {:?} (warm-up {:?}), a sample every {:?}",
        args.players,
        args.duration,
        args.retention,
        args.retention * 2,
        args.sample_every
    );

    let counts = Arc::new(Counts::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..args.players {
        let (http, base, counts, stop) = (http.clone(), base.clone(), counts.clone(), stop.clone());
        let seed = args.seed.wrapping_add(i as u64);
        let games = args.games_per_player;
        tasks.spawn(async move { play(&http, &base, i, seed, games, &counts, &stop).await });
    }

    let mut admin = redis::Client::open(redis.url())?
        .get_multiplexed_async_connection()
        .await?;
    let started = Instant::now();
    let mut samples = Vec::new();
    while started.elapsed() < args.duration {
        tokio::time::sleep(args.sample_every).await;
        let keys: u64 = redis::cmd("DBSIZE").query_async(&mut admin).await?;
        let player_keys = count_keys(&mut admin, "mm:{u:*").await?
            + count_keys(&mut admin, "mm:{p:*}:a:*").await?;
        let info: String = redis::cmd("INFO")
            .arg("memory")
            .query_async(&mut admin)
            .await?;
        let redis_bytes = info
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let largest_index = largest_index(&mut admin).await?;
        let mut rss = Vec::new();
        for p in &mut procs {
            if !p.running() {
                bail!("{} exited during the soak:\n{}", p.name(), p.log());
            }
            rss.push(rss_kib(p.pid()).unwrap_or(0));
        }
        let s = Sample {
            t: started.elapsed().as_secs_f64(),
            rss_kib: rss,
            keys,
            player_keys,
            redis_bytes,
            largest_index,
        };
        println!(
            "{:>6.0}s  keys {:>7} ({:>6} kept 30 days)  redis {:>6.1} MiB  largest ticket index {:>4}  rss MiB {}  created {} accepted {} declined {} ignored {} cancelled {} errors {}",
            s.t,
            s.keys,
            s.player_keys,
            s.redis_bytes as f64 / 1048576.0,
            s.largest_index,
            s.rss_kib
                .iter()
                .map(|k| format!("{:.1}", *k as f64 / 1024.0))
                .collect::<Vec<_>>()
                .join("/"),
            counts.created.load(Ordering::Relaxed),
            counts.accepted.load(Ordering::Relaxed),
            counts.declined.load(Ordering::Relaxed),
            counts.ignored.load(Ordering::Relaxed),
            counts.cancelled.load(Ordering::Relaxed),
            counts.errors.load(Ordering::Relaxed),
        );
        samples.push(s);
    }
    stop.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    report(&args, &names, &samples)
}

/// One player's life, again and again: queue; sometimes cancel; answer the ready
/// check (accept, decline or ignore); after `games_per_player` matches (0:
/// never), leave for a new player.
async fn play(
    http: &reqwest::Client,
    base: &str,
    slot: usize,
    seed: u64,
    games_per_player: usize,
    counts: &Counts,
    stop: &AtomicBool,
) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut generation = 0u64;
    let mut games = 0;
    while !stop.load(Ordering::Relaxed) {
        if games_per_player > 0 && games >= games_per_player {
            // This player leaves; a new one arrives in their place.
            generation += 1;
            games = 0;
        }
        let player = format!("soak-{slot}-{generation}");
        let rating = 1500.0 + rng.random_range(-300.0..300.0f64).round();
        let created = http
            .post(format!("{base}/v1/tickets"))
            .bearer_auth(&player)
            .json(
                &json!({"players": [player], "mode": "soak", "regions": ["eu"], "rating": rating}),
            )
            .send()
            .await;
        let ticket = match created {
            Ok(r) if r.status().as_u16() == 201 => {
                counts.created.fetch_add(1, Ordering::Relaxed);
                r.json::<Value>()
                    .await
                    .ok()
                    .and_then(|v| v["id"].as_str().map(String::from))
            }
            Ok(r) if r.status().as_u16() == 403 || r.status().as_u16() == 409 => {
                // Banned after a decline, or still in a match: wait it out.
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
            _ => {
                counts.errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        let Some(ticket) = ticket else { continue };
        if rng.random_bool(0.1) {
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..2000))).await;
            let _ = http
                .delete(format!("{base}/v1/tickets/{ticket}"))
                .bearer_auth(&player)
                .send()
                .await;
            counts.cancelled.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        // Wait for the ready check (or give up and cancel).
        let waited = Instant::now();
        let mut answered = false;
        while !stop.load(Ordering::Relaxed) && waited.elapsed() < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let Ok(r) = http
                .get(format!("{base}/v1/players/me/assignment"))
                .bearer_auth(&player)
                .send()
                .await
            else {
                continue;
            };
            if r.status().as_u16() != 200 {
                if answered {
                    break; // the match is over
                }
                continue;
            }
            let v: Value = r.json().await.unwrap_or_default();
            if answered || v["status"] != "requires_acceptance" {
                continue;
            }
            let Some(id) = v["match_id"].as_str() else {
                continue;
            };
            answered = true;
            games += 1;
            let roll: f64 = rng.random();
            let answer = if roll < 0.1 {
                counts.declined.fetch_add(1, Ordering::Relaxed);
                Some("decline")
            } else if roll < 0.15 {
                counts.ignored.fetch_add(1, Ordering::Relaxed);
                None
            } else {
                counts.accepted.fetch_add(1, Ordering::Relaxed);
                Some("accept")
            };
            if let Some(answer) = answer {
                let _ = http
                    .post(format!("{base}/v1/matches/{id}/{answer}"))
                    .bearer_auth(&player)
                    .send()
                    .await;
            }
        }
        if !answered {
            let _ = http
                .delete(format!("{base}/v1/tickets/{ticket}"))
                .bearer_auth(&player)
                .send()
                .await;
        }
    }
}

fn report(args: &SoakArgs, names: &[&str], samples: &[Sample]) -> Result<()> {
    let warm = (args.retention * 2).as_secs_f64();
    let (Some(first), Some(last)) = (samples.iter().find(|s| s.t >= warm), samples.last()) else {
        bail!("no sample after the warm-up");
    };
    let growth = |a: f64, b: f64| if a > 0.0 { 100.0 * (b - a) / a } else { 0.0 };
    println!(
        "\nfrom the end of the warm-up ({:.0}s) to the end ({:.0}s):",
        first.t, last.t
    );
    for (i, name) in names.iter().enumerate() {
        let (a, b) = (
            first.rss_kib[i] as f64 / 1024.0,
            last.rss_kib[i] as f64 / 1024.0,
        );
        println!(
            "  {name:<15} RSS {a:>7.1} -> {b:>7.1} MiB ({:+.1}%)",
            growth(a, b)
        );
    }
    let (a, b) = (first.keys - first.player_keys, last.keys - last.player_keys);
    println!(
        "  {:<15} keys other than players' and archived matches {a} -> {b} ({:+.1}%); those {} -> {}",
        "redis",
        growth(a as f64, b as f64),
        first.player_keys,
        last.player_keys
    );
    println!(
        "  {:<15} the largest player's ticket index {} -> {} fields",
        "redis", first.largest_index, last.largest_index
    );
    println!(
        "  {:<15} keys {} -> {} ({:+.1}%), memory {:.1} -> {:.1} MiB ({:+.1}%)",
        "redis",
        first.keys,
        last.keys,
        growth(first.keys as f64, last.keys as f64),
        first.redis_bytes as f64 / 1048576.0,
        last.redis_bytes as f64 / 1048576.0,
        growth(first.redis_bytes as f64, last.redis_bytes as f64)
    );
    args.output.csv(
        "soak.csv",
        &format!(
            "t_s,{},redis_keys,redis_player_keys,redis_used_bytes,largest_ticket_index",
            names
                .iter()
                .map(|n| format!("{n}_rss_kib"))
                .collect::<Vec<_>>()
                .join(",")
        ),
        samples.iter().map(|s| {
            let rss: Vec<String> = s.rss_kib.iter().map(u64::to_string).collect();
            format!(
                "{:.0},{},{},{},{},{}",
                s.t,
                rss.join(","),
                s.keys,
                s.player_keys,
                s.redis_bytes,
                s.largest_index
            )
        }),
    )?;
    let mut series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            label: format!("{name} RSS"),
            points: samples
                .iter()
                .map(|s| (s.t / 60.0, s.rss_kib[i] as f64 / 1024.0))
                .collect(),
            dashed: false,
            color: i,
        })
        .collect();
    series.push(Series {
        label: "redis used memory".into(),
        points: samples
            .iter()
            .map(|s| (s.t / 60.0, s.redis_bytes as f64 / 1048576.0))
            .collect(),
        dashed: true,
        color: names.len(),
    });
    args.output.lines(
        "soak-memory.png",
        &Lines {
            title: format!("Soak: memory, {} players", args.players),
            x_label: "minutes".into(),
            y_label: "MiB".into(),
            series,
            markers: vec![(warm / 60.0, "end of warm-up".into())],
            log_y: false,
        },
    )?;
    args.output.lines(
        "soak-keys.png",
        &Lines {
            title: format!("Soak: Redis keys, {} players", args.players),
            x_label: "minutes".into(),
            y_label: "keys".into(),
            series: vec![
                Series {
                    label: "players' keys and archived matches (kept 30 days)".into(),
                    points: samples
                        .iter()
                        .map(|s| (s.t / 60.0, s.player_keys as f64))
                        .collect(),
                    dashed: true,
                    color: 1,
                },
                Series {
                    label: "every other key (queues, tickets, matches)".into(),
                    points: samples
                        .iter()
                        .map(|s| (s.t / 60.0, (s.keys - s.player_keys) as f64))
                        .collect(),
                    dashed: false,
                    color: 0,
                },
            ],
            markers: vec![(warm / 60.0, "end of warm-up".into())],
            log_y: false,
        },
    )?;
    Ok(())
}
