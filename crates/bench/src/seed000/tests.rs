//! The port's scripts and consumer cycle against a real redis-server, starting
//! with seed 000's own `TestClaim_NoDoubleBooking`.

use super::worker::{Poll, WorkerArgs, consume};
use super::*;
use mm_testkit::RedisServer;
use std::collections::HashMap;

const TTL: Duration = Duration::from_secs(30);

fn ticket(i: usize, mmr: f64) -> PortTicket {
    PortTicket {
        id: format!("t{i}"),
        player_id: format!("p{i}"),
        mmr,
        region: "us-east".into(),
        created_at: mm_domain::now_ms(),
    }
}

async fn port(redis: &RedisServer) -> Port {
    Port::connect(&redis.url(), "us-east").await.unwrap()
}

fn worker_args(redis: &RedisServer, poll: Poll, poll_interval: Duration) -> WorkerArgs {
    WorkerArgs {
        redis_url: redis.url(),
        region: "us-east".into(),
        worker_id: "w".into(),
        claim_batch_size: BATCH,
        worker_pool_size: 1,
        lock_ttl: TTL,
        heartbeat_interval: HEARTBEAT_INTERVAL,
        poll,
        poll_interval,
    }
}

async fn ttl_of(port: &mut Port, key: &str) -> i64 {
    redis::cmd("TTL")
        .arg(key)
        .query_async(&mut port.conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn four_workers_racing_never_claim_a_ticket_twice() {
    let redis = RedisServer::start();
    let mut p = port(&redis).await;
    for i in 0..20 {
        p.enqueue(&ticket(i, 1500.0)).await.unwrap();
    }
    let mut racers = tokio::task::JoinSet::new();
    for w in 0..4 {
        let mut p = port(&redis).await;
        racers.spawn(async move {
            let worker = format!("{}-{w}", uuid::Uuid::new_v4());
            let mut got = Vec::new();
            for _ in 0..3 {
                got.extend(p.claim(&worker, 10, TTL).await.unwrap());
            }
            (worker, got)
        });
    }
    let mut claims: HashMap<String, usize> = HashMap::new();
    let mut workers = Vec::new();
    while let Some(r) = racers.join_next().await {
        let (worker, got) = r.unwrap();
        workers.push(worker);
        for t in got {
            *claims.entry(t.id).or_default() += 1;
        }
    }
    assert_eq!(claims.len(), 20, "twelve claims of ten take all twenty");
    assert!(claims.values().all(|&n| n == 1), "{claims:?}");
    assert_eq!(p.depths(&workers).await.unwrap(), (0, 20));
}

#[tokio::test]
async fn a_claim_takes_the_lowest_ratings_and_skips_a_locked_ticket() {
    let redis = RedisServer::start();
    let mut p = port(&redis).await;
    for (i, mmr) in [1900.0, 1200.0, 1500.0, 1000.0].into_iter().enumerate() {
        p.enqueue(&ticket(i, mmr)).await.unwrap();
    }
    // Another worker's lock on t3 (1000) left behind in the queue.
    let () = redis::cmd("SET")
        .arg("mm:lock:t3")
        .arg("other")
        .query_async(&mut p.conn)
        .await
        .unwrap();
    let got = p.claim("w", 2, TTL).await.unwrap();
    let ids: Vec<&str> = got.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["t1"],
        "t3 is locked; the range's first two are t3 and t1"
    );
    assert_eq!(p.held("w").await.unwrap(), ["t1"]);
    assert!(ttl_of(&mut p, "mm:lock:t1").await > 0);
}

#[tokio::test]
async fn release_requeues_at_the_rating_and_complete_forgets() {
    let redis = RedisServer::start();
    let mut p = port(&redis).await;
    p.enqueue(&ticket(0, 1400.0)).await.unwrap();
    p.enqueue(&ticket(1, 1600.0)).await.unwrap();
    assert_eq!(p.claim("w", 10, TTL).await.unwrap().len(), 2);
    assert_eq!(p.complete("w", &["t0"]).await.unwrap(), 1);
    assert_eq!(p.release("w", &["t1"]).await.unwrap(), 1);
    assert_eq!(ttl_of(&mut p, "mm:lock:t0").await, -2);
    assert_eq!(ttl_of(&mut p, "mm:lock:t1").await, -2);
    assert_eq!(p.depths(&["w".into()]).await.unwrap(), (1, 0));
    let score: f64 = redis::cmd("ZSCORE")
        .arg("mm:queue:us-east")
        .arg("t1")
        .query_async(&mut p.conn)
        .await
        .unwrap();
    assert_eq!(score, 1600.0);
    // Released again by a worker that does not hold it: nothing happens.
    assert_eq!(p.release("w", &["t1"]).await.unwrap(), 0);
}

#[tokio::test]
async fn a_heartbeat_refreshes_every_lock_of_the_worker() {
    let redis = RedisServer::start();
    let mut p = port(&redis).await;
    for i in 0..3 {
        p.enqueue(&ticket(i, 1500.0)).await.unwrap();
    }
    p.claim("w", 3, Duration::from_secs(5)).await.unwrap();
    assert!(ttl_of(&mut p, "mm:lock:t0").await <= 5);
    assert_eq!(p.heartbeat("w", Duration::from_secs(60)).await.unwrap(), 3);
    for i in 0..3 {
        assert!(ttl_of(&mut p, &format!("mm:lock:t{i}")).await > 50);
    }
}

#[tokio::test]
async fn the_supervisor_reclaims_only_a_stale_workers_tickets() {
    let redis = RedisServer::start();
    let mut p = port(&redis).await;
    for i in 0..6 {
        p.enqueue(&ticket(i, 1000.0 + i as f64)).await.unwrap();
    }
    p.heartbeat("dead", TTL).await.unwrap();
    p.heartbeat("alive", TTL).await.unwrap();
    assert_eq!(p.claim("dead", 3, TTL).await.unwrap().len(), 3);
    assert_eq!(p.claim("alive", 3, TTL).await.unwrap().len(), 3);
    // Nobody is stale yet.
    assert_eq!(p.reclaim(TTL).await.unwrap(), 0);
    // The dead worker's last beat is a minute old.
    let () = redis::cmd("SET")
        .arg("mm:hb:dead")
        .arg(mm_domain::now_ms() - 60_000)
        .query_async(&mut p.conn)
        .await
        .unwrap();
    assert_eq!(p.reclaim(TTL).await.unwrap(), 3);
    assert_eq!(
        p.depths(&["dead".into(), "alive".into()]).await.unwrap(),
        (3, 3)
    );
    assert!(p.held("dead").await.unwrap().is_empty());
    assert_eq!(p.held("alive").await.unwrap().len(), 3);
    assert_eq!(
        p.queued().await.unwrap(),
        ["t0", "t1", "t2"].map(String::from).into_iter().collect()
    );
    // The reclaimed tickets can be claimed again.
    assert_eq!(p.claim("alive", 10, TTL).await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_consumer_cycle_saves_publishes_completes_and_releases() {
    let redis = RedisServer::start();
    let mut p = port(&redis).await;
    let client = redis::Client::open(redis.url()).unwrap();
    let mut sub = client.get_async_pubsub().await.unwrap();
    sub.subscribe(MATCH_CHANNEL).await.unwrap();
    // Two tight pairs and one outlier no window reaches.
    for (i, mmr) in [1500.0, 1510.0, 1800.0, 1805.0, 2900.0]
        .into_iter()
        .enumerate()
    {
        p.enqueue(&ticket(i, mmr)).await.unwrap();
    }
    let args = worker_args(&redis, Poll::Ticker, POLL_INTERVAL);
    assert_eq!(super::worker::one_cycle(&mut p, &args).await.unwrap(), 2);
    let mut matches = p.matches().await.unwrap();
    matches.sort();
    assert_eq!(matches, [vec!["t0", "t1"], vec!["t2", "t3"]]);
    assert_eq!(p.depths(&["w".into()]).await.unwrap(), (1, 0));
    assert_eq!(p.queued().await.unwrap(), ["t4".to_string()].into());
    use futures_util::StreamExt;
    let mut published = Vec::new();
    let mut stream = sub.on_message();
    for _ in 0..2 {
        let msg = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .unwrap()
            .unwrap();
        let m: PortMatch = serde_json::from_str(&msg.get_payload::<String>().unwrap()).unwrap();
        published.push(m.tickets);
    }
    published.sort();
    assert_eq!(published, matches);
}

/// `n` tickets queued, all rated 1500 (every claim of 10 is matched whole).
async fn queue_of_equals(redis: &RedisServer, n: usize) -> Port {
    let mut p = port(redis).await;
    for i in 0..n {
        p.enqueue(&ticket(i, 1500.0)).await.unwrap();
    }
    p
}

/// Tickets one consumer, paced by `poll`, takes out of a queue of 400 equal
/// ratings (every claim of 10 is matched whole) in `run`, and the number of ticks
/// of `every` in that time.
async fn taken_by_one_consumer(poll: Poll, every: Duration, run: Duration) -> (usize, u32) {
    let redis = RedisServer::start();
    let mut p = queue_of_equals(&redis, 400).await;
    let stop = tokio_util::sync::CancellationToken::new();
    let started = std::time::Instant::now();
    let consumer = tokio::spawn(consume(
        port(&redis).await,
        worker_args(&redis, poll, every),
        stop.clone(),
    ));
    tokio::time::sleep(run).await;
    stop.cancel();
    consumer.await.unwrap().unwrap();
    let ticks = (started.elapsed().as_nanos() / every.as_nanos()) as u32;
    (400 - p.queued().await.unwrap().len(), ticks)
}

#[tokio::test]
async fn a_ticker_consumer_claims_at_most_once_a_tick() {
    // Go's ticker: the first tick one interval after the start, ticks a slow cycle
    // spans are dropped. However slow the machine, no more than one claim of 10 per
    // tick; the first comes after one interval.
    let every = Duration::from_millis(50);
    let (taken, ticks) =
        taken_by_one_consumer(Poll::Ticker, every, Duration::from_millis(400)).await;
    assert!(
        taken <= 10 * ticks as usize,
        "{taken} tickets in {ticks} ticks"
    );
    assert!(taken >= 10, "not one cycle in {ticks} ticks");
    let (none, _) = taken_by_one_consumer(
        Poll::Ticker,
        Duration::from_secs(3600),
        Duration::from_millis(200),
    )
    .await;
    assert_eq!(none, 0, "claimed before the first tick");
}

#[tokio::test]
async fn an_eager_consumer_claims_again_at_once_after_a_match() {
    // With an hour between polls, only cycles that formed a match follow each
    // other: the eager consumer empties the queue without a tick.
    let redis = RedisServer::start();
    let mut p = queue_of_equals(&redis, 400).await;
    let stop = tokio_util::sync::CancellationToken::new();
    let args = worker_args(&redis, Poll::Eager, Duration::from_secs(3600));
    let consumer = tokio::spawn(consume(port(&redis).await, args, stop.clone()));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !p.queued().await.unwrap().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    consumer.await.unwrap().unwrap();
    assert!(p.queued().await.unwrap().is_empty());
}
