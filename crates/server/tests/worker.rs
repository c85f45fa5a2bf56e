//! One worker cycle with each formation: ours claims at least three full matches'
//! worth per poll, seed 000's baseline exactly its batch, and both commit only
//! matches that fit the mode and every member's window. An idle worker is woken
//! by new tickets long before its next poll, and without wake-ups it is not. Two
//! pool leaders in one process take turns on the memory store; a leader commits
//! a big backlog split by builds part by part, every ticket once.

use mm_domain::{PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_engine::{Modes, WindowPolicy};
use mm_server::worker::{ClaimSizes, Coordination, Formation, WorkerConfig, WorkerStats, cycle};
use mm_store::{MemoryStore, Store};
use std::sync::atomic::Ordering;
use std::time::Duration;

const MODE: &str = r#"
[modes.ffa]
teams = 8
team_size = 1
min_players = 2
start_below_max_after = "0s"
ready_check = false
placement = "none"
"#;

fn config(formation: Formation, batch_size: usize) -> WorkerConfig {
    let modes = Modes::load(Some(MODE), WindowPolicy::default()).unwrap();
    let ffa = modes.get("ffa").unwrap().clone();
    WorkerConfig {
        id: "w".into(),
        pools: vec![Pool::new("ffa", "eu")],
        pool_size: 1,
        batch_size,
        lease: Duration::from_secs(30),
        heartbeat: Duration::from_secs(2),
        poll: Duration::from_millis(100),
        modes: Modes::of([ffa]).unwrap(),
        formation,
        wake_ups: true,
        coordination: Default::default(),
    }
}

/// 60 solo tickets: six clusters of ten, 1,000 rating apart (no window spans two).
async fn seeded() -> MemoryStore {
    let store = MemoryStore::new();
    let now = now_ms();
    for i in 0..60 {
        let t = Ticket::solo(
            TicketId::new(format!("t-{i}")).unwrap(),
            PlayerId::new(format!("p-{i}")).unwrap(),
            "ffa",
            "eu",
            (i % 6) as f64 * 1000.0 + (i / 6) as f64,
            now,
        );
        store.enqueue(&t).await.unwrap();
    }
    store
}

async fn one_cycle(formation: Formation, batch: usize) -> (u64, Vec<mm_domain::Match>) {
    let store = seeded().await;
    let cfg = config(formation, batch);
    let stats = WorkerStats::default();
    let mut sizes = ClaimSizes::default();
    let formed = cycle(&store, &cfg, &stats, &cfg.pools[0], &mut sizes)
        .await
        .unwrap();
    (stats.claimed.load(Ordering::Relaxed), formed.matches)
}

fn check(matches: &[mm_domain::Match]) {
    assert!(!matches.is_empty());
    for m in matches {
        let n = m.player_count();
        assert!((2..=8).contains(&n), "{n} players");
        // The window at time zero is +-50: nobody more than 50 from anyone.
        assert!(m.rating_spread() <= 50.0, "spread {}", m.rating_spread());
        let mut teams: Vec<usize> = m.tickets.iter().map(|t| t.team).collect();
        teams.sort_unstable();
        teams.dedup();
        assert_eq!(teams.len(), n, "one player per team");
    }
}

#[tokio::test]
async fn seed000_formation_claims_exactly_its_batch_and_takes_tight_runs() {
    let (claimed, matches) = one_cycle(Formation::Seed000, 10).await;
    assert_eq!(claimed, 10);
    check(&matches);
    assert!(matches.iter().map(|m| m.player_count()).sum::<usize>() <= 10);
}

#[tokio::test]
async fn engine_formation_claims_three_full_matches_worth() {
    let (claimed, matches) = one_cycle(Formation::Engine, 10).await;
    assert_eq!(claimed, 24);
    check(&matches);
}

/// A 1v1 (`duo`) whose builds are kept apart, claiming batches of `batch`.
fn duo_config(batch: usize) -> WorkerConfig {
    const DUO: &str = r#"
[modes.duo]
teams = 2
team_size = 1
ready_check = false
placement = "none"
rules = [{ kind = "equal", attribute = "build" }]
"#;
    let modes = Modes::load(Some(DUO), WindowPolicy::default()).unwrap();
    let mut cfg = config(Formation::Engine, batch);
    cfg.pools = vec![Pool::new("duo", "eu")];
    cfg.modes = Modes::of([modes.get("duo").unwrap().clone()]).unwrap();
    cfg
}

/// In a mode whose builds are kept apart, a batch of four builds holds a
/// quarter of the pairs that may meet: after a claim that formed matches, the
/// consumer's next claim of the pool takes about four times the batch; after
/// one that formed none, the batch (and a mode without such rules keeps its
/// batch).
#[tokio::test]
async fn a_pool_split_by_builds_is_claimed_in_bigger_batches() {
    let cfg = duo_config(40);
    let store = MemoryStore::new();
    let now = now_ms();
    // Tickets in eights 1,000 rating apart, each eight two of each of four
    // builds (0, 0, 1, 1, ...): a claim matches the pairs it holds whole.
    let enqueue = |i: usize, build: usize, rating: f64| {
        let mut t = Ticket::solo(
            TicketId::new(format!("t-{i}")).unwrap(),
            PlayerId::new(format!("p-{i}")).unwrap(),
            "duo",
            "eu",
            rating,
            now,
        );
        let build = mm_domain::Value::Text(format!("1.{build}"));
        t.attributes.insert("build", build);
        let store = &store;
        async move { store.enqueue(&t).await.unwrap() }
    };
    for i in 0..2000 {
        enqueue(i, (i % 8) / 2, (i / 8) as f64 * 1000.0 + (i % 8) as f64).await;
    }
    let stats = WorkerStats::default();
    let mut sizes = ClaimSizes::default();
    let mut claim = async || {
        let before = stats.claimed.load(Ordering::Relaxed);
        let formed = cycle(&store, &cfg, &stats, &cfg.pools[0], &mut sizes)
            .await
            .unwrap();
        (
            stats.claimed.load(Ordering::Relaxed) - before,
            formed.matches.len(),
        )
    };
    // A rating-contiguous run of 40 holds about ten of each build: kinship
    // about 1/4.
    let (first, formed) = claim().await;
    assert_eq!(first, 40);
    assert!(formed > 0);
    for _ in 0..2 {
        let (claimed, formed) = claim().await;
        assert!((130..=160).contains(&claimed), "claimed {claimed}");
        assert!(formed > 0);
    }
    // Without the rule, the batch.
    let (claimed, _) = one_cycle(Formation::Engine, 40).await;
    assert_eq!(claimed, 40);
}

/// After a claim that formed no match the next claim takes the batch again:
/// a queue of tickets that cannot meet yet is not claimed in big batches.
#[tokio::test]
async fn a_claim_that_formed_nothing_keeps_the_batch() {
    let cfg = duo_config(40);
    let store = MemoryStore::new();
    let now = now_ms();
    // Builds take turns, ratings 1,000 apart in fours: no two of one build
    // are ever in one window.
    for i in 0..1000 {
        let mut t = Ticket::solo(
            TicketId::new(format!("t-{i}")).unwrap(),
            PlayerId::new(format!("p-{i}")).unwrap(),
            "duo",
            "eu",
            (i / 4) as f64 * 1000.0 + (i % 4) as f64,
            now,
        );
        t.attributes
            .insert("build", mm_domain::Value::Text(format!("1.{}", i % 4)));
        store.enqueue(&t).await.unwrap();
    }
    let stats = WorkerStats::default();
    let mut sizes = ClaimSizes::default();
    for _ in 0..3 {
        let before = stats.claimed.load(Ordering::Relaxed);
        let formed = cycle(&store, &cfg, &stats, &cfg.pools[0], &mut sizes)
            .await
            .unwrap();
        assert!(formed.matches.is_empty());
        assert_eq!(stats.claimed.load(Ordering::Relaxed) - before, 40);
    }
}

/// A worker idle long enough that its pause has grown past 5 s (5, 10, ... ms,
/// doubling: the pause from 5.1 s to 10.2 s), then two tickets that match: are
/// they matched within 3 s? Tokio's clock is paused (it jumps when every task
/// waits), so the answer depends on the wake-up alone, not on the machine's speed.
async fn matched_soon_after_an_idle_spell(wake_ups: bool) -> bool {
    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(MemoryStore::new());
    let mut cfg = config(Formation::Engine, 10);
    cfg.poll = Duration::from_secs(3600);
    cfg.wake_ups = wake_ups;
    let shutdown = tokio_util::sync::CancellationToken::new();
    let worker = tokio::spawn(mm_server::worker::run(store.clone(), cfg, shutdown.clone()));
    tokio::time::sleep(Duration::from_secs(6)).await;
    let tickets: Vec<Ticket> = (0..2)
        .map(|i| {
            Ticket::solo(
                TicketId::new(format!("late-{i}")).unwrap(),
                PlayerId::new(format!("late-{i}")).unwrap(),
                "ffa",
                "eu",
                1500.0,
                now_ms(),
            )
        })
        .collect();
    for t in &tickets {
        store.enqueue(t).await.unwrap();
    }
    let mut matched = false;
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let view = store
            .ticket(&tickets[0].owner, &tickets[0].id)
            .await
            .unwrap();
        if view.is_some_and(|v| v.match_id.is_some()) {
            matched = true;
            break;
        }
    }
    shutdown.cancel();
    worker.await.unwrap();
    matched
}

#[tokio::test(start_paused = true)]
async fn a_new_ticket_wakes_an_idle_worker() {
    assert!(matched_soon_after_an_idle_spell(true).await);
}

#[tokio::test(start_paused = true)]
async fn without_wake_ups_an_idle_worker_waits_for_its_poll() {
    assert!(!matched_soon_after_an_idle_spell(false).await);
}

/// `serve`'s store with `COORDINATION=leader`: of two workers, the pool's owner
/// leads and matches the whole pool; stopped, it hands the pool over and the other
/// leads. Every player ends in one match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_leaders_in_one_process_take_turns() {
    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(seeded().await);
    let pool = Pool::new("ffa", "eu");
    let leader = |id: &str| {
        let mut c = config(Formation::Engine, 10);
        c.id = id.into();
        c.coordination = Coordination::Leader;
        c.lease = Duration::from_millis(500);
        c.heartbeat = Duration::from_millis(50);
        c.poll = Duration::from_millis(20);
        c
    };
    let ids = ["lead-a", "lead-b"];
    let stops = [
        tokio_util::sync::CancellationToken::new(),
        tokio_util::sync::CancellationToken::new(),
    ];
    let mut workers: Vec<_> = ids
        .iter()
        .zip(&stops)
        .map(|(id, stop)| {
            Some(tokio::spawn(mm_server::worker::run(
                store.clone(),
                leader(id),
                stop.clone(),
            )))
        })
        .collect();
    let drained = |store: std::sync::Arc<dyn Store>, pool: Pool| async move {
        for _ in 0..500 {
            let d = store.depths(&pool).await.unwrap();
            if d.queued + d.processing == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("not drained: {:?}", store.depths(&pool).await.unwrap());
    };
    drained(store.clone(), pool.clone()).await;

    // The owner stops (whichever led first, the owner leads once both are live):
    // it hands the pool over, and the other leads.
    let first = mm_server::leader::owner(&pool.name(), ids).unwrap();
    let k = ids.iter().position(|w| *w == first).unwrap();
    stops[k].cancel();
    let stats = workers[k].take().unwrap().await.unwrap();
    let before = stats.matches.load(Ordering::Relaxed);
    for i in 0..2 {
        let t = Ticket::solo(
            TicketId::new(format!("after-{i}")).unwrap(),
            PlayerId::new(format!("after-{i}")).unwrap(),
            "ffa",
            "eu",
            1500.0,
            now_ms(),
        );
        store.enqueue(&t).await.unwrap();
    }
    drained(store.clone(), pool.clone()).await;
    stops[1 - k].cancel();
    let stats = workers[1 - k].take().unwrap().await.unwrap();
    let after = stats.matches.load(Ordering::Relaxed);
    assert!(after >= 1, "the other led after the owner stopped");

    let matches = store.recent_matches(&pool, 100).await.unwrap();
    let mut players: Vec<_> = matches.iter().flat_map(|m| m.players().cloned()).collect();
    assert_eq!(players.len(), 62);
    assert_eq!(matches.len() as u64, before + after);
    players.sort();
    players.dedup();
    assert_eq!(players.len(), 62, "no player twice");
}

/// Runs `cfg`'s worker as a pool leader on `store` until `pool` is empty (ten
/// seconds at most), then stops it: its counts.
async fn lead_until_drained(
    store: &std::sync::Arc<dyn Store>,
    mut cfg: WorkerConfig,
    pool: &Pool,
) -> std::sync::Arc<WorkerStats> {
    cfg.coordination = Coordination::Leader;
    cfg.heartbeat = Duration::from_millis(50);
    cfg.poll = Duration::from_millis(20);
    let stop = tokio_util::sync::CancellationToken::new();
    let worker = tokio::spawn(mm_server::worker::run(store.clone(), cfg, stop.clone()));
    for _ in 0..500 {
        let d = store.depths(pool).await.unwrap();
        if d.queued + d.processing == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    worker.await.unwrap()
}

/// A leader commits a whole pool's matches in steps of about
/// [`mm_server::leader::COMMIT_STEP_PLAYERS`] players: 300 matches formed in
/// one cycle (24 steps) all commit. The 2,400 tickets are more than one claim
/// step takes: the claims that follow a full one go several at once, and each
/// ticket is claimed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_commits_more_matches_than_one_step_holds() {
    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(MemoryStore::new());
    let pool = Pool::new("ffa", "eu");
    let matches = 300;
    assert!(matches * 8 > 20 * mm_server::leader::COMMIT_STEP_PLAYERS);
    let now = now_ms();
    // Groups of eight equal ratings, 1,000 apart: one full match each.
    for i in 0..matches * 8 {
        let t = Ticket::solo(
            TicketId::new(format!("t-{i}")).unwrap(),
            PlayerId::new(format!("p-{i}")).unwrap(),
            "ffa",
            "eu",
            (i / 8) as f64 * 1000.0,
            now,
        );
        store.enqueue(&t).await.unwrap();
    }
    let stats = lead_until_drained(&store, config(Formation::Engine, 10), &pool).await;
    assert_eq!(stats.matches.load(Ordering::Relaxed), matches as u64);
    assert_eq!(
        stats.matched_tickets.load(Ordering::Relaxed),
        matches as u64 * 8
    );
    assert!(matches * 8 > 4 * mm_server::leader::CLAIM_STEP);
    assert_eq!(stats.claimed.load(Ordering::Relaxed), matches as u64 * 8);
    let d = store.depths(&pool).await.unwrap();
    assert_eq!(d.queued + d.processing, 0);
}

/// A leader's backlog big enough to be formed part by part (builds kept
/// apart): the parts' matches commit as each part is formed, every ticket is
/// claimed and matched once, and no match crosses builds, although each
/// ticket's nearest neighbours in rating are of other builds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_commits_a_big_split_backlog_part_by_part() {
    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(MemoryStore::new());
    let cfg = duo_config(10);
    let pool = cfg.pools[0].clone();
    let tickets = 6_000;
    assert!(tickets > mm_engine::SPLIT_FROM);
    let now = now_ms();
    // Eights 1,000 rating apart, builds 0, 1, 2, 3, 0, 1, 2, 3 in rating
    // order: each ticket's partner is four places up or down.
    for i in 0..tickets {
        let mut t = Ticket::solo(
            TicketId::new(format!("t-{i}")).unwrap(),
            PlayerId::new(format!("p-{i}")).unwrap(),
            "duo",
            "eu",
            (i / 8) as f64 * 1000.0 + (i % 8) as f64,
            now,
        );
        let build = mm_domain::Value::Text(format!("1.{}", i % 4));
        t.attributes.insert("build", build);
        store.enqueue(&t).await.unwrap();
    }
    let stats = lead_until_drained(&store, cfg, &pool).await;
    assert_eq!(stats.claimed.load(Ordering::Relaxed), tickets as u64);
    assert_eq!(
        stats.matched_tickets.load(Ordering::Relaxed),
        tickets as u64
    );
    assert_eq!(stats.matches.load(Ordering::Relaxed), tickets as u64 / 2);
    let recent = store.recent_matches(&pool, 500).await.unwrap();
    assert!(!recent.is_empty());
    for m in &recent {
        let ids: Vec<usize> = m
            .tickets
            .iter()
            .map(|t| t.ticket_id.as_str()[2..].parse().unwrap())
            .collect();
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[0] % 4, ids[1] % 4, "one build: {ids:?}");
    }
}
