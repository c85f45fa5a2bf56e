//! SIGKILL a worker mid-batch: 3 worker processes and a supervisor with short
//! leases drain 10,000 tickets; one worker is frozen (SIGSTOP) at a moment it holds
//! claimed tickets, then killed. At the end every ticket is in exactly one match or
//! still queued (none lost, none twice), nothing is held, and the supervisor
//! returned the dead worker's tickets. Two supervisors run at once throughout.

use crate::{BIN, fast_env, signal};
use mm_domain::{Match, PlayerId, Pool, RegionQueue, Ticket, TicketId, now_ms};
use mm_store::keys::{PlayerKeys, PoolKeys};
use mm_store::{RedisStore, Store};
use mm_testkit::{Proc, RedisServer};
use redis::AsyncCommands;
use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

const N: usize = 10_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_a_worker_mid_batch_loses_nothing() {
    let redis = RedisServer::start();
    let logs = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(RedisStore::connect(&redis.url()).await.unwrap());
    let pool = Pool::new("1v1", "eu");
    let keys = PoolKeys::new(&pool);

    // Dense ratings so everything can pair within the initial window.
    let tickets: Vec<Ticket> = (0..N)
        .map(|i| {
            let p = PlayerId::new(format!("crash-{i}")).unwrap();
            Ticket::solo(
                TicketId::new(format!("t-crash-{i}")).unwrap(),
                p,
                "1v1",
                "eu",
                1450.0 + (i % 100) as f64,
                now_ms(),
            )
        })
        .collect();
    let mut set = tokio::task::JoinSet::new();
    for chunk in tickets.chunks(N / 32) {
        let (store, chunk) = (store.clone(), chunk.to_vec());
        set.spawn(async move {
            for t in &chunk {
                store.enqueue(t).await.unwrap();
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }

    let spawn = |name: &str, sub: &str, extra: &[(&str, &str)]| {
        let mut cmd = Command::new(BIN);
        cmd.arg(sub)
            .env("REDIS_URL", redis.url())
            .env("MODES", "1v1")
            .env("REGIONS", "eu");
        fast_env(&mut cmd);
        // Claim workers, whatever the environment says: the test catches one
        // holding a batch (leaders.rs kills a pool leader).
        cmd.env("LOCK_TTL", "1s")
            .env("HEARTBEAT_INTERVAL", "200ms")
            .env("CLAIM_BATCH_SIZE", "50")
            .env("COORDINATION", "claim");
        for (k, v) in extra {
            cmd.env(k, v);
        }
        Proc::spawn(name, cmd, logs.path())
    };
    // Two supervisors at once: reclaim must be safe to race.
    let mut supervisor = spawn("supervisor", "supervisor", &[]);
    let mut supervisor2 = spawn("supervisor2", "supervisor", &[]);
    let mut victim = spawn("w0", "worker", &[("WORKER_ID", "w0")]);
    let mut w1 = spawn("w1", "worker", &[("WORKER_ID", "w1")]);
    let mut w2 = spawn("w2", "worker", &[("WORKER_ID", "w2")]);

    // Freeze the victim until it is caught holding tickets, then kill it.
    let mut conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let held_key = keys.held("w0");
    let deadline = Instant::now() + Duration::from_secs(60);
    let held_at_kill = loop {
        assert!(Instant::now() < deadline, "never caught w0 holding tickets");
        signal(victim.pid(), "-STOP");
        tokio::time::sleep(Duration::from_millis(20)).await;
        let held: usize = conn.zcard(&held_key).await.unwrap();
        if held > 0 {
            break held;
        }
        signal(victim.pid(), "-CONT");
        tokio::time::sleep(Duration::from_millis(3)).await;
    };
    victim.kill();
    eprintln!("killed w0 holding {held_at_kill} tickets");

    // Wait for the rest to drain (an odd leftover may stay queued).
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let d = store.depths(&pool).await.unwrap();
        let held: usize = conn.zcard(&held_key).await.unwrap();
        if d.queued + d.processing <= 1 && held == 0 {
            break;
        }
        if Instant::now() > deadline {
            eprintln!("{}\n{}\n{}", supervisor.log(), w1.log(), w2.log());
            panic!("did not drain: {d:?}, w0 holds {held}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        w1.terminate(Duration::from_secs(10)),
        "w1 clean stop:\n{}",
        w1.log()
    );
    assert!(
        w2.terminate(Duration::from_secs(10)),
        "w2 clean stop:\n{}",
        w2.log()
    );
    // Whichever supervisor got there first did the reclaim.
    let reclaim_logs = format!("{}{}", supervisor.log(), supervisor2.log());
    assert!(
        reclaim_logs.contains("reclaimed tickets of a dead worker"),
        "{reclaim_logs}"
    );
    supervisor.terminate(Duration::from_secs(10));
    supervisor2.terminate(Duration::from_secs(10));

    // Audit the whole pool.
    let matches: HashMap<String, String> = conn.hgetall(&keys.matches).await.unwrap();
    let mut in_match: HashMap<String, usize> = HashMap::new();
    for json in matches.values() {
        let m: Match = serde_json::from_str(json).unwrap();
        assert!(m.tickets.len() >= 2);
        for t in &m.tickets {
            *in_match.entry(t.ticket_id.to_string()).or_default() += 1;
        }
    }
    let states: HashMap<String, String> = conn.hgetall(&keys.state).await.unwrap();
    let queued: Vec<String> = conn.zrange(&keys.queue, 0, -1).await.unwrap();
    let held_sets: Vec<String> = conn.keys(format!("{}*", keys.held(""))).await.unwrap();
    assert!(held_sets.is_empty(), "held sets left: {held_sets:?}");
    let outbox: usize = conn.zcard(&keys.outbox).await.unwrap();
    assert_eq!(outbox, 0, "every match fanned out");
    for t in &tickets {
        let id = t.id.to_string();
        let n = in_match.get(&id).copied().unwrap_or(0);
        let state = states.get(&id).unwrap_or_else(|| panic!("{id} lost"));
        match n {
            0 => {
                assert!(
                    queued.contains(&id),
                    "{id} is neither matched nor queued (state {state})"
                );
                assert_eq!(state, "r");
            }
            1 => assert!(state.starts_with("m:"), "{id} in a match but state {state}"),
            _ => panic!("{id} in {n} matches"),
        }
    }
    assert!(queued.len() <= 1);
    assert_eq!(in_match.len() + queued.len(), N);
    // Every matched player's history has the match exactly once.
    for t in tickets.iter().step_by(97) {
        let hist = store.player_matches(&t.owner, 100).await.unwrap();
        assert!(hist.len() <= 1, "{} has {} matches", t.owner, hist.len());
    }
}

/// SIGKILL a worker between reserving its players and committing (the cross-pool
/// step). Every ticket waits in two regions, so each match reserves players that
/// other pools also hold. The dead worker's reservations must not block those
/// players for good, and its matches must never commit: the survivors take the
/// players over once the reservations are older than the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_between_reserve_and_commit_blocks_nobody() {
    const PLAYERS: usize = 400;
    let redis = RedisServer::start();
    let logs = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(RedisStore::connect(&redis.url()).await.unwrap());
    let pools = [Pool::new("1v1", "eu"), Pool::new("1v1", "na")];
    let now = now_ms();
    let tickets: Vec<Ticket> = (0..PLAYERS)
        .map(|i| {
            let mut t = Ticket::solo(
                TicketId::new(format!("t-resv-{i}")).unwrap(),
                PlayerId::new(format!("resv-{i}")).unwrap(),
                "1v1",
                "eu",
                1450.0 + (i % 50) as f64,
                now,
            );
            t.queues = ["eu", "na"]
                .iter()
                .map(|r| RegionQueue {
                    region: r.to_string(),
                    eligible_at: now,
                })
                .collect();
            t
        })
        .collect();
    for t in &tickets {
        store.enqueue(t).await.unwrap();
    }

    let spawn = |name: &str, sub: &str, extra: &[(&str, &str)]| {
        let mut cmd = Command::new(BIN);
        cmd.arg(sub)
            .env("REDIS_URL", redis.url())
            .env("MODES", "1v1")
            .env("REGIONS", "eu,na");
        fast_env(&mut cmd);
        cmd.env("LOCK_TTL", "1s")
            .env("HEARTBEAT_INTERVAL", "200ms")
            .env("CLAIM_BATCH_SIZE", "20");
        for (k, v) in extra {
            cmd.env(k, v);
        }
        Proc::spawn(name, cmd, logs.path())
    };
    let mut victim = spawn(
        "w0",
        "worker",
        &[
            ("WORKER_ID", "w0"),
            ("MATCHMAKER_FAILPOINT", "pause-after-reserve"),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !victim.log().contains("failpoint pause-after-reserve") {
        assert!(
            Instant::now() < deadline,
            "w0 never reserved:\n{}",
            victim.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Let its second consumer reach the failpoint too, then kill it there.
    tokio::time::sleep(Duration::from_millis(300)).await;
    victim.kill();

    // What the dead worker left: reserved players and held tickets.
    let mut conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut stranded: HashMap<PlayerId, String> = HashMap::new();
    for t in &tickets {
        let key = PlayerKeys::new(&t.owner).reservation;
        let r: Option<String> = conn.get(&key).await.unwrap();
        if let Some(r) = r {
            stranded.insert(t.owner.clone(), r);
        }
    }
    assert!(!stranded.is_empty(), "w0 reserved nobody");
    let dead_matches: std::collections::BTreeSet<String> = stranded
        .values()
        .map(|r| r.split('|').next().unwrap().to_string())
        .collect();
    eprintln!(
        "w0 died holding {} reservations of {} matches",
        stranded.len(),
        dead_matches.len()
    );

    let mut supervisor = spawn("supervisor", "supervisor", &[]);
    let mut w1 = spawn("w1", "worker", &[("WORKER_ID", "w1")]);
    let mut w2 = spawn("w2", "worker", &[("WORKER_ID", "w2")]);
    // Drained: every player matched (an even count, dense ratings).
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let mut live = 0;
        for p in &pools {
            let d = store.depths(p).await.unwrap();
            live += d.queued + d.processing;
        }
        let outbox: usize = conn.zcard(PoolKeys::new(&pools[0]).outbox).await.unwrap();
        if live == 0 && outbox == 0 {
            break;
        }
        if Instant::now() > deadline {
            panic!(
                "did not drain ({live} live):\n{}\n{}\n{}",
                supervisor.log(),
                w1.log(),
                w2.log()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(w1.terminate(Duration::from_secs(10)), "{}", w1.log());
    assert!(w2.terminate(Duration::from_secs(10)), "{}", w2.log());
    supervisor.terminate(Duration::from_secs(10));

    // Audit both pools: each player in exactly one match, none of the dead
    // worker's matches committed, and nobody is left reserved.
    let mut match_of: HashMap<PlayerId, String> = HashMap::new();
    for p in &pools {
        let keys = PoolKeys::new(p);
        let matches: HashMap<String, String> = conn.hgetall(&keys.matches).await.unwrap();
        let decisions: HashMap<String, String> = conn.hgetall(&keys.decisions).await.unwrap();
        for dead in &dead_matches {
            assert!(!matches.contains_key(dead), "dead match {dead} committed");
            assert_ne!(decisions.get(dead).map(String::as_str), Some("c"));
        }
        for json in matches.values() {
            let m: Match = serde_json::from_str(json).unwrap();
            for pl in m.players() {
                if let Some(prev) = match_of.insert(pl.clone(), m.id.to_string()) {
                    panic!("{pl} in {prev} and {}", m.id);
                }
            }
        }
    }
    assert_eq!(match_of.len(), PLAYERS, "every player matched once");
    for t in &tickets {
        let v = store.ticket(&t.owner, &t.id).await.unwrap().unwrap();
        assert_eq!(v.status, mm_domain::TicketStatus::Completed, "{v:?}");
        let r: Option<String> = conn
            .get(PlayerKeys::new(&t.owner).reservation)
            .await
            .unwrap();
        assert_eq!(r, None, "{} still reserved", t.owner);
    }
    // The stranded players were taken over, not just waited out by luck.
    assert!(stranded.keys().all(|p| match_of.contains_key(p)));
}
