//! SIGKILL a worker mid-batch: 3 worker processes and a supervisor with short
//! leases drain 10,000 tickets; one worker is frozen (SIGSTOP) at a moment it holds
//! claimed tickets, then killed. At the end every ticket is in exactly one match or
//! still queued (none lost, none twice), nothing is held, and the supervisor
//! returned the dead worker's tickets. Two supervisors run at once throughout.

use crate::{BIN, fast_env};
use mm_domain::{Match, PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_store::keys::PoolKeys;
use mm_store::{RedisStore, Store};
use mm_testkit::{Proc, RedisServer};
use redis::AsyncCommands;
use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

const N: usize = 10_000;

fn signal(pid: u32, sig: &str) {
    assert!(
        Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

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
        cmd.env("LOCK_TTL", "1s")
            .env("HEARTBEAT_INTERVAL", "200ms")
            .env("CLAIM_BATCH_SIZE", "50");
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
