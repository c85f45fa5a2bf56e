//! The ratings scenario (issue 13): how fast finished matches become ratings in
//! PostgreSQL, and how soon a reported result is readable through the API.
//!
//! Everything runs on loopback: a throwaway PostgreSQL server with production
//! durability (fsync on: a commit costs what it costs in production; two
//! databases, one each for ours and the baseline, both seeded with `--players`
//! players at 1500),
//! a `redis-server`, `--consumers` `matchmaker rating-service` processes and an
//! ingress. Matches are 5v5 (ten rating updates each) between random players.
//!
//! 1. Capacity: `--matches` results are queued in the store at once (the same
//!    record `ReportResult` writes) and the consumers drain them: rating updates/s.
//!    Baseline, seed 004's way, on the same server: `--consumers` writers, one
//!    transaction per match, `SELECT ... FOR UPDATE` then one `UPDATE` per player
//!    (no history, no exactly-once record: less work per match than ours).
//! 2. Latency at load: results are offered open-loop at `--rate` updates/s for
//!    `--duration`, and every 20 ms a probe match is queued; the time from its
//!    result being stored (when `ReportResult` would be acknowledged) to the new
//!    rating being readable through `GET /v1/players/me/ratings` is recorded
//!    (polled every 2 ms).

use super::chart::Bars;
use super::histogram::Latency;
use super::{Output, matchmaker};
use anyhow::{Context, Result, bail};
use clap::Args;
use mm_domain::{
    Lifecycle, Match, MatchId, MatchResult, MatchTicket, Outcome, PlayerId, Pool, RatingJob,
    RatingPolicy, TeamResult, TicketId,
};
use mm_ratings::Policies;
use mm_store::{RedisStore, Results};
use mm_testkit::{PostgresServer, Proc, RedisServer, free_port, wait_for_port};
use rand::{Rng, SeedableRng};
use sqlx::Row;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const MODE: &str = "bench5";
const REGION: &str = "eu";
const MODES: &str = r#"
[modes.bench5]
teams = 2
team_size = 5
ready_check = false
placement = "none"
rating = { model = "elo", k = 32, initial = 1500, min = 0, max = 3000 }
"#;

#[derive(Debug, Clone, Args)]
pub struct RatingsArgs {
    /// 5v5 matches queued at once in the capacity run (ten updates each).
    #[arg(long, default_value_t = 4000)]
    pub matches: usize,
    /// Players the matches draw from.
    #[arg(long, default_value_t = 20_000)]
    pub players: usize,
    /// Rating consumer processes (ours) and concurrent writers (baseline).
    #[arg(long, default_value_t = 2)]
    pub consumers: usize,
    /// Offered load of the latency run, in rating updates per second.
    #[arg(long, default_value_t = 10_000)]
    pub rate: u64,
    /// Length of the latency run.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    #[command(flatten)]
    pub output: Output,
}

/// A 5v5 match of ten distinct random players from `0..players`, won by a random team.
fn game(id: String, players: &[PlayerId], rng: &mut impl Rng) -> RatingJob {
    let mut picked: Vec<usize> = Vec::with_capacity(10);
    while picked.len() < 10 {
        let i = rng.random_range(0..players.len());
        if !picked.contains(&i) {
            picked.push(i);
        }
    }
    let tickets = picked
        .iter()
        .enumerate()
        .map(|(k, &i)| MatchTicket {
            ticket_id: TicketId::new(format!("t-{id}-{k}")).expect("valid id"),
            players: vec![players[i].clone()],
            rating: 1500.0,
            enqueued_at: 0,
            team: k % 2,
            skills: Vec::new(),
            attributes: Default::default(),
            player_attributes: Vec::new(),
        })
        .collect();
    RatingJob {
        matched: Match {
            id: MatchId::new(id).expect("valid id"),
            mode: MODE.into(),
            region: REGION.into(),
            tickets,
            created_at: mm_domain::now_ms(),
            lifecycle: Lifecycle::default(),
            decided: Default::default(),
        },
        result: MatchResult {
            teams: vec![TeamResult {
                team: rng.random_range(0..2),
                outcome: Some(Outcome::Win),
                placement: None,
            }],
            ..Default::default()
        },
    }
}

fn pool() -> Pool {
    Pool::new(MODE, REGION)
}

/// Rows for every player at the initial rating, as an existing game would have.
async fn seed_players(url: &str, players: &[PlayerId]) -> Result<sqlx::PgPool> {
    mm_ratings::PgRatings::connect(url, 2).await?; // the schema
    let db = sqlx::postgres::PgPoolOptions::new()
        .max_connections(8)
        .connect(url)
        .await?;
    let ids: Vec<&str> = players.iter().map(PlayerId::as_str).collect();
    sqlx::query(
        "INSERT INTO ratings (mode, player_id, rating, uncertainty, display, version, games, last_played_ms)
         SELECT $1, p, 1500, NULL, 1500, 0, 0, 0 FROM UNNEST($2::text[]) AS t(p)",
    )
    .bind(MODE)
    .bind(ids)
    .execute(&db)
    .await?;
    Ok(db)
}

/// Queues `jobs` in the store, `concurrency` at a time.
async fn queue_all(
    store: &Arc<RedisStore>,
    jobs: Vec<RatingJob>,
    concurrency: usize,
) -> Result<()> {
    let jobs = Arc::new(jobs);
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (store, jobs, next) = (store.clone(), jobs.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(j) = jobs.get(i) else { return Ok(()) };
                    store.queue_result(&pool(), j).await?;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await
            .context("queue task")?
            .map_err(|e: mm_store::StoreError| anyhow::anyhow!(e))?;
    }
    Ok(())
}

async fn wait_drained(store: &RedisStore, limit: Duration) -> Result<()> {
    let deadline = Instant::now() + limit;
    while store.pending_results(&pool()).await? > 0 {
        if Instant::now() > deadline {
            bail!("the rating consumers did not drain the results within {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

/// Seed 004's `update_ratings_for_match`: one transaction per match, the rows
/// locked with `FOR UPDATE`, one `UPDATE` per player. Returns (seconds, deadlocks
/// retried).
async fn baseline(db: &sqlx::PgPool, jobs: Vec<RatingJob>, writers: usize) -> Result<(f64, usize)> {
    let jobs = Arc::new(jobs);
    let next = Arc::new(AtomicUsize::new(0));
    let retries = Arc::new(AtomicUsize::new(0));
    let policies = Policies::new([(MODE.to_string(), RatingPolicy::ELO)]);
    let started = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|_| {
            let (db, jobs, next, retries, policies) = (
                db.clone(),
                jobs.clone(),
                next.clone(),
                retries.clone(),
                policies.clone(),
            );
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else {
                        return Ok::<_, sqlx::Error>(());
                    };
                    loop {
                        match seed004_apply(&db, job, &policies).await {
                            Ok(()) => break,
                            Err(sqlx::Error::Database(e))
                                if e.code().as_deref() == Some("40P01") =>
                            {
                                retries.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => return Err(e),
                        }
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.context("baseline writer")??;
    }
    Ok((
        started.elapsed().as_secs_f64(),
        retries.load(Ordering::Relaxed),
    ))
}

async fn seed004_apply(
    db: &sqlx::PgPool,
    job: &RatingJob,
    policies: &Policies,
) -> Result<(), sqlx::Error> {
    let mut tx = db.begin().await?;
    let ids: Vec<&str> = job.matched.players().map(PlayerId::as_str).collect();
    let rows = sqlx::query(
        "SELECT player_id, rating, version FROM ratings WHERE mode = $1 AND player_id = ANY($2) FOR UPDATE",
    )
    .bind(MODE)
    .bind(&ids)
    .fetch_all(&mut *tx)
    .await?;
    let mut current = HashMap::new();
    for r in &rows {
        let p = PlayerId::new(r.try_get::<String, _>("player_id")?)
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        current.insert(
            p,
            mm_domain::Skill {
                rating: r.try_get("rating")?,
                uncertainty: None,
                version: r.try_get::<i64, _>("version")? as u64,
            },
        );
    }
    let changes = mm_ratings::model::score(&policies.get(MODE), job, &current)
        .map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
    for c in changes {
        sqlx::query(
            "UPDATE ratings SET rating = $1, display = $1, last_played_ms = $2, version = version + 1
             WHERE mode = $3 AND player_id = $4",
        )
        .bind(c.new.rating)
        .bind(mm_domain::now_ms() as i64)
        .bind(MODE)
        .bind(c.player.as_str())
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

pub async fn run(args: RatingsArgs) -> Result<()> {
    if args.matches == 0 || args.players < 10 || args.consumers == 0 || args.rate < 10 {
        bail!(
            "--matches and --consumers must be more than zero, --players at least 10, --rate at least 10"
        );
    }
    println!(
        "ratings: {} 5v5 matches over {} players, {} consumers; then {} updates/s for {:?}",
        args.matches, args.players, args.consumers, args.rate, args.duration
    );
    let dir = tempfile::tempdir()?;
    let pg = PostgresServer::start_durable();
    let ours_url = pg.create_database("ours");
    let base_url = pg.create_database("seed004");
    let players: Vec<PlayerId> = (0..args.players)
        .map(|i| PlayerId::new(format!("p{i}")).expect("valid id"))
        .collect();
    let ours_db = seed_players(&ours_url, &players).await?;
    let base_db = seed_players(&base_url, &players).await?;
    let redis = RedisServer::start();
    let store = Arc::new(RedisStore::connect(&redis.url()).await?);
    let modes = dir.path().join("modes.toml");
    std::fs::write(&modes, MODES)?;
    let addr = format!("127.0.0.1:{}", free_port());
    let mut procs: Vec<Proc> = Vec::new();
    let mut ingress = matchmaker("ingress", Some(&redis.url()), &modes, MODE, REGION)?;
    ingress
        .env("DATABASE_URL", &ours_url)
        .env("LISTEN_ADDR", &addr);
    procs.push(Proc::spawn("ingress", ingress, dir.path()));
    for i in 0..args.consumers {
        let mut c = matchmaker("rating-service", Some(&redis.url()), &modes, MODE, REGION)?;
        c.env("DATABASE_URL", &ours_url);
        procs.push(Proc::spawn(&format!("rating-service-{i}"), c, dir.path()));
    }
    if !wait_for_port(&addr, Duration::from_secs(20)) {
        bail!("the ingress did not start:\n{}", procs[0].log());
    }
    let mut rng = rand::rng();

    // 1. Capacity.
    let jobs: Vec<RatingJob> = (0..args.matches)
        .map(|i| game(format!("m-cap-{i}"), &players, &mut rng))
        .collect();
    let updates = (args.matches * 10) as f64;
    let started = Instant::now();
    queue_all(&store, jobs.clone(), 16).await?;
    wait_drained(&store, Duration::from_secs(600)).await?;
    let ours_secs = started.elapsed().as_secs_f64();
    let applied: i64 = sqlx::query("SELECT COUNT(*) AS n FROM rated_matches")
        .fetch_one(&ours_db)
        .await?
        .try_get("n")?;
    if applied as usize != args.matches {
        bail!("ours applied {applied} of {} matches", args.matches);
    }
    let ours_rate = updates / ours_secs;
    println!(
        "  ours:     {updates} updates in {ours_secs:.2} s = {ours_rate:.0} updates/s ({} matches applied once each)",
        applied
    );
    let (base_secs, deadlocks) = baseline(&base_db, jobs, args.consumers).await?;
    let base_rate = updates / base_secs;
    println!(
        "  seed 004: {updates} updates in {base_secs:.2} s = {base_rate:.0} updates/s ({deadlocks} deadlocks retried)"
    );
    println!("  ratio: {:.2}x", ours_rate / base_rate);

    // 2. Latency at load.
    let client = reqwest::Client::new();
    let base = format!("http://{addr}");
    let matches_per_tick = args.rate as f64 / 10.0 / 100.0; // every 10 ms
    let until = Instant::now() + args.duration;
    let feeder = {
        let (store, players) = (store.clone(), players.clone());
        tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::from_os_rng();
            let mut owed = 0.0;
            let mut n = 0usize;
            let mut tick = tokio::time::interval(Duration::from_millis(10));
            while Instant::now() < until {
                tick.tick().await;
                owed += matches_per_tick;
                while owed >= 1.0 {
                    owed -= 1.0;
                    let j = game(format!("m-load-{n}"), &players, &mut rng);
                    n += 1;
                    let store = store.clone();
                    tokio::spawn(async move { store.queue_result(&pool(), &j).await });
                }
            }
            n
        })
    };
    let mut probes = Vec::new();
    let mut k = 0usize;
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    while Instant::now() < until {
        tick.tick().await;
        let probe_players: Vec<PlayerId> = (0..10)
            .map(|i| PlayerId::new(format!("probe{k}-{i}")).expect("valid id"))
            .collect();
        let job = game(format!("m-probe-{k}"), &probe_players, &mut rng);
        k += 1;
        let (store, client, base) = (store.clone(), client.clone(), base.clone());
        let who = probe_players[0].to_string();
        probes.push(tokio::spawn(async move {
            store.queue_result(&pool(), &job).await?;
            let stored = Instant::now();
            loop {
                let r: serde_json::Value = client
                    .get(format!("{base}/v1/players/me/ratings"))
                    .bearer_auth(&who)
                    .send()
                    .await?
                    .json()
                    .await?;
                let seen = r["ratings"]
                    .as_array()
                    .and_then(|m| m.iter().find(|x| x["mode"] == MODE))
                    .and_then(|x| x["version"].as_u64())
                    .unwrap_or(0);
                if seen >= 1 {
                    return Ok::<_, anyhow::Error>(stored.elapsed());
                }
                if stored.elapsed() > Duration::from_secs(30) {
                    bail!("probe never became readable");
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }));
    }
    let fed = feeder.await?;
    let mut latency = Latency::default();
    for p in probes {
        latency.record(p.await??);
    }
    let load_start = Instant::now();
    wait_drained(&store, Duration::from_secs(120)).await?;
    let backlog = load_start.elapsed();
    let offered = (fed * 10) as f64 / args.duration.as_secs_f64();
    println!(
        "  at {offered:.0} updates/s offered: result stored -> rating readable via the API (ms): {}",
        latency.summary()
    );
    println!(
        "  backlog left when the load stopped drained in {:.2} s",
        backlog.as_secs_f64()
    );

    args.output.csv(
        "ratings.csv",
        "measure,ours,seed004,ratio",
        [
            format!(
                "updates_per_s,{ours_rate:.0},{base_rate:.0},{:.3}",
                ours_rate / base_rate
            ),
            format!("readable_p50_ms,{:.3},,", latency.ms(0.5)),
            format!("readable_p95_ms,{:.3},,", latency.ms(0.95)),
            format!("readable_p99_ms,{:.3},,", latency.ms(0.99)),
            format!("offered_updates_per_s,{offered:.0},,"),
        ],
    )?;
    args.output.bars(
        "ratings.png",
        &Bars {
            title: format!(
                "Rating updates/s into PostgreSQL ({} consumers, 5v5)",
                args.consumers
            ),
            y_label: "rating updates/s".into(),
            bars: vec![
                ("ours (batched)".into(), ours_rate),
                ("seed 004 (txn per match)".into(), base_rate),
            ],
            log_y: false,
        },
    )?;
    for p in &mut procs {
        if !p.running() {
            bail!("a process died:\n{}", p.log());
        }
        let warnings: Vec<String> = p
            .log()
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            // The bench runs in dev mode on purpose; the process says so at start.
            .filter(|l| !l.contains("(AUTH=dev)") && !l.contains("gRPC API open to any caller"))
            .map(String::from)
            .collect();
        if !warnings.is_empty() {
            println!("  warnings of one process ({}):", warnings.len());
            for w in warnings.iter().take(5) {
                println!("    {w}");
            }
        }
    }
    drop(procs);
    drop(pg);
    Ok(())
}
