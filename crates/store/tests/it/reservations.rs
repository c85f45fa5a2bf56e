//! Redis-only: how a match treats a player reservation left by another match (see
//! `redis_store/cross.rs`). The reservation values are written by hand here, as a
//! worker that died between reserving and committing would have left them.

use mm_domain::{Match, MatchId, PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_store::{RedisStore, Store};
use mm_testkit::RedisServer;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(2);

struct Setup {
    _server: RedisServer,
    store: RedisStore,
    admin: redis::aio::MultiplexedConnection,
    pool: Pool,
    m: Match,
}

/// Two queued solo tickets (p1, p2) claimed by `w1`, and the match of them.
async fn setup() -> Setup {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.unwrap();
    let admin = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let pool = Pool::new("ranked", "eu");
    let tickets: Vec<Ticket> = ["p1", "p2"]
        .iter()
        .map(|p| {
            Ticket::solo(
                TicketId::new(format!("t-{p}")).unwrap(),
                PlayerId::new(*p).unwrap(),
                "ranked",
                "eu",
                1500.0,
                now_ms(),
            )
        })
        .collect();
    for t in &tickets {
        store.enqueue(t).await.unwrap();
    }
    store.claim("w1", &pool, 10, 0.0, LEASE).await.unwrap();
    let refs: Vec<&Ticket> = tickets.iter().collect();
    let mut m = crate::several::make_match(&pool, &refs);
    m.id = MatchId::new("m-new").unwrap();
    Setup {
        _server: server,
        store,
        admin,
        pool,
        m,
    }
}

async fn redis_now(admin: &mut redis::aio::MultiplexedConnection) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query_async(admin).await.unwrap();
    s * 1000 + us / 1000
}

async fn set(admin: &mut redis::aio::MultiplexedConnection, key: &str, value: &str) {
    let () = redis::cmd("SET")
        .arg(key)
        .arg(value)
        .query_async(admin)
        .await
        .unwrap();
}

async fn get(admin: &mut redis::aio::MultiplexedConnection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query_async(admin).await.unwrap()
}

async fn hget(admin: &mut redis::aio::MultiplexedConnection, key: &str, f: &str) -> Option<String> {
    redis::cmd("HGET")
        .arg(key)
        .arg(f)
        .query_async(admin)
        .await
        .unwrap()
}

impl Setup {
    /// Leaves `player` reserved by `holder` of a casual pool at `at` (Redis ms).
    async fn reserved_by(&mut self, player: &str, holder: &str, at: u64) -> String {
        let value = format!("{holder}|casual:eu|{at}");
        set(&mut self.admin, &format!("mm:{{u:{player}}}:resv"), &value).await;
        value
    }

    /// Tries to commit `m` as worker `w1`.
    async fn commit(&self, m: &Match) -> Vec<MatchId> {
        self.store
            .complete("w1", &self.pool, std::slice::from_ref(m), LEASE)
            .await
            .unwrap()
    }

    /// The one-time decision recorded for match `id` in `pool`.
    async fn decision(&mut self, pool: &str, id: &str) -> Option<String> {
        hget(&mut self.admin, &format!("mm:{{p:{pool}}}:dec"), id).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_reservation_of_a_dead_worker_is_taken_over() {
    let mut s = setup().await;
    let old = redis_now(&mut s.admin).await - 10 * LEASE.as_millis() as u64;
    s.reserved_by("p1", "m-dead", old).await;
    let done = s.commit(&s.m.clone()).await;
    assert_eq!(done, vec![s.m.id.clone()]);
    // The dead match is aborted for good: it can never commit now.
    assert_eq!(
        s.decision("casual:eu", "m-dead").await.as_deref(),
        Some("a")
    );
    assert_eq!(s.decision("ranked:eu", "m-new").await.as_deref(), Some("c"));
    // Settling frees both players.
    s.store
        .fan_out(&s.pool, std::slice::from_ref(&s.m))
        .await
        .unwrap();
    assert_eq!(get(&mut s.admin, "mm:{u:p1}:resv").await, None);
    assert_eq!(get(&mut s.admin, "mm:{u:p2}:resv").await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_live_reservation_wins_until_it_goes_stale() {
    let mut s = setup().await;
    // Reserved a moment ago: older than the match below, well within the lease.
    let at = redis_now(&mut s.admin).await - 100;
    s.reserved_by("p2", "m-older", at).await;
    // The younger match gives up and keeps nothing reserved...
    let done = s.commit(&s.m.clone()).await;
    assert!(done.is_empty());
    assert_eq!(get(&mut s.admin, "mm:{u:p1}:resv").await, None);
    assert_eq!(s.decision("ranked:eu", "m-new").await.as_deref(), Some("a"));
    // ...and a new attempt (a new match id) wins once the holder is past its lease.
    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    let mut retry = s.m.clone();
    retry.id = MatchId::new("m-retry").unwrap();
    let done = s.commit(&retry).await;
    assert_eq!(done, vec![retry.id.clone()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_younger_live_reservation_is_wounded() {
    let mut s = setup().await;
    let later = redis_now(&mut s.admin).await + 60_000;
    s.reserved_by("p1", "m-young", later).await;
    let done = s.commit(&s.m.clone()).await;
    assert_eq!(done, vec![s.m.id.clone()]);
    assert_eq!(
        s.decision("casual:eu", "m-young").await.as_deref(),
        Some("a")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_reservation_is_never_taken() {
    let mut s = setup().await;
    let old = redis_now(&mut s.admin).await - 10 * LEASE.as_millis() as u64;
    let held = s.reserved_by("p1", "m-done", old).await;
    let () = redis::cmd("HSET")
        .arg("mm:{p:casual:eu}:dec")
        .arg("m-done")
        .arg("c")
        .query_async(&mut s.admin)
        .await
        .unwrap();
    let done = s.commit(&s.m.clone()).await;
    assert!(done.is_empty(), "p1 is in m-done, stale or not");
    assert_eq!(
        get(&mut s.admin, "mm:{u:p1}:resv").await.as_deref(),
        Some(held.as_str())
    );
}
