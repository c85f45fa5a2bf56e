//! Pool leaders (`COORDINATION=leader`) as real processes over a real Redis:
//! SIGKILL the leader under load and a follower leads within the lease, losing
//! nothing and matching nothing twice; freeze a leader (SIGSTOP) in the middle of
//! a commit past its lease, let a follower take over, thaw it (SIGCONT), and its
//! commit is refused: the pair it had matched is matched once, by the new leader.
//!
//! Each pool's owner is `mm_server::leader::owner` of the live leader workers, so the
//! tests know which worker leads. A few tickets too far apart ever to match stay
//! in the pool throughout: whoever has read them leads. A claim worker started
//! beside a leader leaves it the pool, and takes the pool once no leader is left.

use crate::{BIN, fast_env, signal};
use mm_domain::{Match, PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_server::leader::owner;
use mm_store::keys::PoolKeys;
use mm_store::{RedisStore, Store};
use mm_testkit::{Proc, RedisServer};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

const POOL: &str = "1v1:eu";
/// Tickets nobody can match (ratings 2,000 apart; the window caps at 500).
const PARKED: usize = 6;

fn ticket(name: &str, i: usize, rating: f64) -> Ticket {
    Ticket::solo(
        TicketId::new(format!("t-{name}-{i}")).unwrap(),
        PlayerId::new(format!("{name}-{i}")).unwrap(),
        "1v1",
        "eu",
        rating,
        now_ms(),
    )
}

fn parked() -> Vec<Ticket> {
    (0..PARKED)
        .map(|i| ticket("parked", i, 10_000.0 + 2_000.0 * i as f64))
        .collect()
}

fn spawn(redis: &RedisServer, logs: &Path, name: &str, sub: &str, extra: &[(&str, &str)]) -> Proc {
    let mut cmd = Command::new(BIN);
    cmd.arg(sub)
        .env("REDIS_URL", redis.url())
        .env("MODES", "1v1")
        .env("REGIONS", "eu");
    fast_env(&mut cmd);
    cmd.env("LOCK_TTL", "1s")
        .env("HEARTBEAT_INTERVAL", "200ms")
        .env("COORDINATION", "leader");
    if sub == "worker" {
        cmd.env("WORKER_ID", name);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    Proc::spawn(name, cmd, logs)
}

async fn conn(redis: &RedisServer) -> MultiplexedConnection {
    redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

/// What every test here starts from: a redis-server with the parked tickets
/// queued, a store and a connection on it, a folder for the processes' logs.
struct Bed {
    redis: RedisServer,
    logs: tempfile::TempDir,
    store: Arc<dyn Store>,
    conn: MultiplexedConnection,
    keys: PoolKeys,
    /// Every ticket queued so far (a test adds its own).
    all: Vec<Ticket>,
}

async fn bed() -> Bed {
    let redis = RedisServer::start();
    let store: Arc<dyn Store> = Arc::new(RedisStore::connect(&redis.url()).await.unwrap());
    let all = parked();
    for t in &all {
        store.enqueue(t).await.unwrap();
    }
    Bed {
        conn: conn(&redis).await,
        redis,
        logs: tempfile::tempdir().unwrap(),
        store,
        keys: PoolKeys::new(&Pool::new("1v1", "eu")),
        all,
    }
}

/// Waits until `worker` leads the pool and has read every ticket in it: the
/// lock is its, its lease is live (set by each of its reads) and nothing
/// queued is left for it to read.
async fn wait_leading(conn: &mut MultiplexedConnection, worker: &str, procs: &[&Proc]) -> Instant {
    let keys = PoolKeys::new(&Pool::new("1v1", "eu"));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let holder: Option<String> = conn.get(&keys.leader).await.unwrap();
        let lease: Option<f64> = conn.zscore(&keys.leases, worker).await.unwrap();
        let unread: usize = conn.llen(&keys.arrivals).await.unwrap();
        let (now, _): (u64, u64) = redis::cmd("TIME").query_async(conn).await.unwrap();
        let led = holder.is_some_and(|h| h.starts_with(&format!("{worker}.")))
            && lease.is_some_and(|l| l > (now * 1000) as f64)
            && unread == 0;
        if led {
            return Instant::now();
        }
        if Instant::now() > deadline {
            let logs: Vec<String> = procs.iter().map(|p| p.log()).collect();
            panic!("{worker} never led the pool:\n{}", logs.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Every ticket is in one match at most, matched or back in the queue (none
/// lost), nothing is held, and no player is in two matches.
async fn audit(conn: &mut MultiplexedConnection, tickets: &[Ticket]) -> usize {
    let keys = PoolKeys::new(&Pool::new("1v1", "eu"));
    let matches: HashMap<String, String> = conn.hgetall(&keys.matches).await.unwrap();
    let mut in_match: HashMap<String, usize> = HashMap::new();
    let mut players: HashMap<String, usize> = HashMap::new();
    for json in matches.values() {
        let m: Match = serde_json::from_str(json).unwrap();
        for t in &m.tickets {
            *in_match.entry(t.ticket_id.to_string()).or_default() += 1;
            for p in &t.players {
                *players.entry(p.to_string()).or_default() += 1;
            }
        }
    }
    if let Some((p, n)) = players.iter().find(|(_, n)| **n > 1) {
        panic!("{p} is in {n} matches");
    }
    let states: HashMap<String, String> = conn.hgetall(&keys.state).await.unwrap();
    let queued: Vec<String> = conn.zrange(&keys.queue, 0, -1).await.unwrap();
    let held_sets: Vec<String> = conn.keys(format!("{}*", keys.held(""))).await.unwrap();
    assert!(held_sets.is_empty(), "held sets left: {held_sets:?}");
    let outbox: usize = conn.zcard(&keys.outbox).await.unwrap();
    assert_eq!(outbox, 0, "every match fanned out");
    for t in tickets {
        let id = t.id.to_string();
        let state = states.get(&id).unwrap_or_else(|| panic!("{id} lost"));
        match in_match.get(&id).copied().unwrap_or(0) {
            0 => assert!(
                queued.contains(&id),
                "{id} neither matched nor queued ({state})"
            ),
            1 => assert!(state.starts_with("m:"), "{id} in a match but state {state}"),
            n => panic!("{id} in {n} matches"),
        }
    }
    assert_eq!(in_match.len() + queued.len(), tickets.len());
    matches.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_the_leader_under_load_and_a_follower_leads_within_the_lease() {
    const N: usize = 3_000;
    let Bed {
        redis,
        logs,
        store,
        mut conn,
        keys,
        mut all,
    } = bed().await;
    let ids = ["lead-a", "lead-b", "lead-c"];
    let mut supervisor = spawn(&redis, logs.path(), "supervisor", "supervisor", &[]);
    let mut workers: Vec<Proc> = ids
        .iter()
        .map(|id| spawn(&redis, logs.path(), id, "worker", &[]))
        .collect();
    let first = owner(POOL, ids).unwrap();
    let k = ids.iter().position(|w| *w == first).unwrap();
    wait_leading(&mut conn, first, &workers.iter().collect::<Vec<_>>()).await;

    // Load: pairs arriving steadily for a few seconds.
    let stream: Vec<Ticket> = (0..N)
        .map(|i| ticket("load", i, 1_450.0 + (i % 100) as f64))
        .collect();
    all.extend(stream.iter().cloned());
    let producer = {
        let store = store.clone();
        tokio::spawn(async move {
            for chunk in stream.chunks(10) {
                for t in chunk {
                    store.enqueue(t).await.unwrap();
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    // Kill the leader once it has been matching for a while.
    loop {
        let n: usize = conn.hlen(&keys.matches).await.unwrap();
        if n >= 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    workers[k].kill();
    let killed = Instant::now();
    let before: usize = conn.hlen(&keys.matches).await.unwrap();
    let survivors: Vec<&str> = ids.iter().copied().filter(|w| *w != first).collect();
    let next = owner(POOL, survivors.iter().copied()).unwrap();
    let led = wait_leading(&mut conn, next, &workers.iter().collect::<Vec<_>>()).await;
    let matched = loop {
        let n: usize = conn.hlen(&keys.matches).await.unwrap();
        if n > before {
            break Instant::now();
        }
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "no match after the kill"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    eprintln!(
        "{next} led {:?} after the SIGKILL of {first}; the next match {:?} after (lease 1s)",
        led - killed,
        matched - killed
    );
    // The lease runs out within 1s of the kill and survivors look every 200 ms;
    // the bound only catches a follower that waits for something else.
    assert!(
        led - killed < Duration::from_secs(3),
        "took {:?}",
        led - killed
    );

    producer.await.unwrap();
    // Drain: what can match has matched (an odd leftover may stay).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let q: usize = conn.zcard(&keys.queue).await.unwrap();
        // A leader's tickets stay in the queue until matched.
        if q <= PARKED + 1 {
            break;
        }
        assert!(Instant::now() < deadline, "did not drain: {q} queued");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (i, w) in workers.iter_mut().enumerate() {
        if i != k {
            assert!(
                w.terminate(Duration::from_secs(10)),
                "clean stop:\n{}",
                w.log()
            );
        }
    }
    supervisor.terminate(Duration::from_secs(10));
    let formed = audit(&mut conn, &all).await;
    assert!(formed >= N / 2 - 1, "{formed} matches of {N} tickets");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_frozen_mid_commit_past_its_lease_cannot_write_when_thawed() {
    let Bed {
        redis,
        logs,
        store,
        mut conn,
        keys,
        mut all,
    } = bed().await;
    let ids = ["frozen-a", "frozen-b"];
    let a = owner(POOL, ids).unwrap();
    let b = ids.into_iter().find(|w| *w != a).unwrap();
    let mut leader = spawn(
        &redis,
        logs.path(),
        a,
        "worker",
        &[("MATCHMAKER_FAILPOINT", "leader-stall-before-commit")],
    );
    let mut follower = spawn(&redis, logs.path(), b, "worker", &[]);
    wait_leading(&mut conn, a, &[&leader, &follower]).await;

    // A pair arrives; the leader matches it and stalls before the commit: freeze
    // it there, past its lease.
    let pair = [ticket("pair", 0, 1_500.0), ticket("pair", 1, 1_510.0)];
    all.extend(pair.iter().cloned());
    for t in &pair {
        store.enqueue(t).await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while !leader
        .log()
        .contains("failpoint leader-stall-before-commit")
    {
        assert!(
            Instant::now() < deadline,
            "never stalled:\n{}",
            leader.log()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    signal(leader.pid(), "-STOP");
    let fence_before: u64 = conn.get(&keys.fence).await.unwrap();

    // The follower takes the pool, the frozen leader's tickets with it, and
    // matches the pair itself.
    wait_leading(&mut conn, b, &[&leader, &follower]).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n: usize = conn.hlen(&keys.matches).await.unwrap();
        if n == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the follower never matched the pair"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let fence_after: u64 = conn.get(&keys.fence).await.unwrap();
    assert!(fence_after > fence_before, "{fence_after} > {fence_before}");

    // Thawed, the old leader finishes its commit: refused.
    signal(leader.pid(), "-CONT");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !leader.log().contains("fenced off") {
        assert!(Instant::now() < deadline, "no refusal:\n{}", leader.log());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let n: usize = conn.hlen(&keys.matches).await.unwrap();
    assert_eq!(n, 1, "the frozen leader's match was refused");

    // It is the pool's owner, so it leads again, with a new fencing token.
    wait_leading(&mut conn, a, &[&leader, &follower]).await;
    let fence_now: u64 = conn.get(&keys.fence).await.unwrap();
    assert!(fence_now > fence_after);
    assert!(
        leader.terminate(Duration::from_secs(10)),
        "{}",
        leader.log()
    );
    assert!(
        follower.terminate(Duration::from_secs(10)),
        "{}",
        follower.log()
    );
    assert_eq!(audit(&mut conn, &all).await, 1);
}

/// Waits until `proc`'s log says `what`.
async fn wait_log(proc: &Proc, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !proc.log().contains(what) {
        assert!(
            Instant::now() < deadline,
            "{} never said {what:?}:\n{}",
            proc.name(),
            proc.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A claim worker (`COORDINATION=claim`) started beside a leader on the same Redis
/// leaves the led pool to the leader: it says so (in its log and its
/// `matchmaker_pool_left_to_leader` gauge), claims nothing, and the leader,
/// although the claim worker would own the pool were it a candidate, keeps it.
/// When the leader dies and its lock runs out, the claim worker claims the pool
/// again. Nothing is lost or matched twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_worker_beside_a_leader_leaves_it_the_pool() {
    let Bed {
        redis,
        logs,
        store,
        mut conn,
        keys,
        mut all,
    } = bed().await;
    let mut supervisor = spawn(&redis, logs.path(), "supervisor", "supervisor", &[]);
    let mut leader = spawn(&redis, logs.path(), "lead-a", "worker", &[]);
    wait_leading(&mut conn, "lead-a", &[&leader]).await;
    let plain_id = (0..)
        .map(|i| format!("plain-{i}"))
        .find(|p| owner(POOL, ["lead-a", p.as_str()]) == Some(p.as_str()))
        .unwrap();
    let metrics = format!("127.0.0.1:{}", mm_testkit::free_port());
    let mut plain = spawn(
        &redis,
        logs.path(),
        &plain_id,
        "worker",
        &[("COORDINATION", "claim"), ("METRICS_ADDR", &metrics)],
    );
    wait_log(&plain, "leaves it to the leader").await;
    let left = r#"matchmaker_pool_left_to_leader{pool="1v1:eu"}"#;
    let (_, text) = crate::metrics::scrape(&metrics).await;
    assert!(text.contains(&format!("{left} 1")), "{text}");

    let pairs: Vec<Ticket> = (0..200)
        .map(|i| ticket("mixed", i, 1_450.0 + (i / 2) as f64))
        .collect();
    all.extend(pairs.iter().cloned());
    for t in &pairs {
        store.enqueue(t).await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let q: usize = conn.zcard(&keys.queue).await.unwrap();
        let plain_held: usize = conn.zcard(keys.held(&plain_id)).await.unwrap();
        assert_eq!(plain_held, 0, "the claim worker claimed from a led pool");
        if q <= PARKED {
            break;
        }
        assert!(Instant::now() < deadline, "did not drain: {q} queued");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !leader.log().contains("handed the pool over"),
        "the leader handed the pool to a worker that does not lead:\n{}",
        leader.log()
    );

    // The leader dies: once its lock runs out, the claim worker takes the pool.
    leader.kill();
    wait_log(&plain, "claiming it again").await;
    let (_, text) = crate::metrics::scrape(&metrics).await;
    assert!(text.contains(&format!("{left} 0")), "{text}");
    let late = [ticket("late", 0, 1_500.0), ticket("late", 1, 1_505.0)];
    all.extend(late.iter().cloned());
    let before: usize = conn.hlen(&keys.matches).await.unwrap();
    for t in &late {
        store.enqueue(t).await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while conn.hlen::<_, usize>(&keys.matches).await.unwrap() == before {
        assert!(Instant::now() < deadline, "the claim worker never matched");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        plain.terminate(Duration::from_secs(10)),
        "clean stop:\n{}",
        plain.log()
    );
    // The dead leader's tickets never left the queue (a leader takes a ticket
    // out when its match commits): nothing to hand back (the audit checks no
    // held set is left).
    supervisor.terminate(Duration::from_secs(10));
    let formed = audit(&mut conn, &all).await;
    assert_eq!(formed, 101, "100 pairs by the leader, the late pair after");
}
