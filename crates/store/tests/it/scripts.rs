//! Redis-only behaviour of the scripts: they are called by SHA and reloaded when
//! Redis has forgotten them (restart, failover, SCRIPT FLUSH).

use crate::{pool, ticket};
use mm_store::{Online, RedisStore, Store};
use mm_testkit::RedisServer;
use std::time::Duration;

/// A redis-server of its own, a store on it, and a plain connection to look inside.
async fn bed() -> (RedisServer, RedisStore, redis::aio::MultiplexedConnection) {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.unwrap();
    let admin = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    (server, store, admin)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_reload_after_script_flush() {
    let (_server, store, mut admin) = bed().await;
    store.enqueue(&ticket(1, 1500.0)).await.unwrap();
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut admin)
        .await
        .unwrap();
    store.enqueue(&ticket(2, 1500.0)).await.unwrap();
    let claimed = store
        .claim("w1", &pool(), 10, 0.0, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(
        stats.contains("cmdstat_evalsha"),
        "scripts are called by SHA:\n{stats}"
    );
}

/// A history is kept in the player's ticket index (a field per match, which
/// lives as long as the index: no key of its own), as references to matches
/// archived once per match; a history zset written before (references, or
/// whole JSON before those) is still read, a match listed both ways once, and
/// a reference whose archived match has expired is left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_reads_references_and_old_json() {
    use crate::conformance::make_match;
    let (_server, store, mut admin) = bed().await;
    let lease = Duration::from_secs(30);
    let (a, b) = (ticket(1, 1500.0), ticket(2, 1510.0));
    store.enqueue(&a).await.unwrap();
    store.enqueue(&b).await.unwrap();
    let claimed = store.claim("w1", &pool(), 10, 0.0, lease).await.unwrap();
    let first = make_match(&[&claimed[0], &claimed[1]]);
    store
        .complete("w1", &pool(), std::slice::from_ref(&first), lease)
        .await
        .unwrap();
    store
        .fan_out(&pool(), std::slice::from_ref(&first))
        .await
        .unwrap();
    let index = format!("mm:{{u:{}}}:tix", a.owner);
    let entry: Option<String> = redis::cmd("HGET")
        .arg(&index)
        .arg(format!("m:{}", first.id))
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(entry, Some(format!("{}|ranked:eu", first.created_at)));
    let index_ttl: i64 = redis::cmd("TTL")
        .arg(&index)
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(
        index_ttl > 29 * 24 * 3600,
        "the index keeps the player's lifetime: {index_ttl}"
    );
    let history = format!("mm:{{u:{}}}:hist", a.owner);
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&history)
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(exists, 0, "no history key of its own");
    let archived = format!("mm:{{p:ranked:eu}}:a:{}", first.id);
    let ttl: i64 = redis::cmd("TTL")
        .arg(&archived)
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(
        ttl > 29 * 24 * 3600,
        "archived for the history's life: {ttl}"
    );

    // Entries of the old history zset: written whole, one of them the same
    // match (the upgrade's overlap), and a reference.
    let mut older = first.clone();
    older.id = mm_domain::MatchId::new("m-older").unwrap();
    older.created_at -= 1000;
    let mut same = first.clone();
    same.created_at -= 1;
    for m in [&older, &same] {
        let () = redis::cmd("ZADD")
            .arg(&history)
            .arg(m.created_at)
            .arg(serde_json::to_string(m).unwrap())
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let mut referred = first.clone();
    referred.id = mm_domain::MatchId::new("m-referred").unwrap();
    referred.created_at -= 500;
    let () = redis::cmd("SET")
        .arg(format!("mm:{{p:ranked:eu}}:a:{}", referred.id))
        .arg(serde_json::to_string(&referred).unwrap())
        .query_async(&mut admin)
        .await
        .unwrap();
    let () = redis::cmd("ZADD")
        .arg(&history)
        .arg(referred.created_at)
        .arg(format!("{}|ranked:eu", referred.id))
        .query_async(&mut admin)
        .await
        .unwrap();
    let listed = store.player_matches(&a.owner, 10).await.unwrap();
    assert_eq!(listed, vec![first.clone(), referred.clone(), older.clone()]);
    assert_eq!(
        store.history_pool(&a.owner, &referred.id).await.unwrap(),
        Some(pool())
    );
    assert_eq!(
        store.history_pool(&a.owner, &first.id).await.unwrap(),
        Some(pool())
    );
    // A whole old entry is found by id too.
    assert_eq!(
        store.history_pool(&a.owner, &older.id).await.unwrap(),
        Some(mm_domain::Pool::new(
            older.mode.clone(),
            older.region.clone()
        ))
    );
    assert_eq!(
        store.player_matches(&a.owner, 1).await.unwrap(),
        vec![first]
    );

    // The archive expired: the reference is skipped (the old whole copy stays).
    let () = redis::cmd("DEL")
        .arg(&archived)
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(
        store.player_matches(&a.owner, 10).await.unwrap(),
        vec![same, referred, older]
    );
    assert!(store.player_matches(&b.owner, 10).await.unwrap().is_empty());
}

/// The waiting-since index (a member per second of enqueue time, a set of tickets
/// per second) holds the tickets that wait: matched ones leave it at commit, a
/// cancelled one when its second is the oldest or when it is purged, and an entry
/// from before the index had seconds (a ticket id) is dropped when it is the oldest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_waiting_since_index_holds_the_tickets_that_wait() {
    use crate::conformance::make_match;
    use mm_domain::now_ms;
    use mm_store::keys::PoolKeys;
    let (_server, store, mut admin) = bed().await;
    let since = PoolKeys::new(&pool()).since;
    let second = |ms: u64| (ms / 1000).to_string();
    let members = async |admin: &mut redis::aio::MultiplexedConnection| -> Vec<String> {
        redis::cmd("ZRANGE")
            .arg(&since)
            .arg(0)
            .arg(-1)
            .query_async(admin)
            .await
            .unwrap()
    };
    let lease = Duration::from_secs(30);
    let base = now_ms() - 20_000;
    let ts: Vec<_> = (0..4)
        .map(|i| {
            let mut t = ticket(i, 1500.0 + i as f64);
            t.enqueued_at = base + 2000 * i as u64;
            t
        })
        .collect();
    for t in &ts[..3] {
        store.enqueue(t).await.unwrap();
    }
    let () = redis::cmd("ZADD")
        .arg(&since)
        .arg(base - 5000)
        .arg("t-from-before")
        .query_async(&mut admin)
        .await
        .unwrap();
    let mut want: Vec<String> = ts[..3].iter().map(|t| second(t.enqueued_at)).collect();
    let mut all = vec!["t-from-before".to_string()];
    all.extend(want.iter().cloned());
    assert_eq!(members(&mut admin).await, all);

    // The two oldest are matched: their seconds leave at commit.
    let mut claimed = store.claim("w1", &pool(), 10, 0.0, lease).await.unwrap();
    claimed.sort_by_key(|c| c.ticket.enqueued_at);
    let m = make_match(&[&claimed[0], &claimed[1]]);
    store
        .complete("w1", &pool(), std::slice::from_ref(&m), lease)
        .await
        .unwrap();
    want.drain(..2);
    let mut all = vec!["t-from-before".to_string()];
    all.extend(want.iter().cloned());
    assert_eq!(members(&mut admin).await, all);
    store
        .release("w1", &pool(), Some(&[claimed[2].ticket.id.clone()]))
        .await
        .unwrap();
    // The old entry goes at the first look; the third ticket waits on.
    let d = store.depths(&pool()).await.unwrap();
    assert_eq!(d.oldest_enqueued_at, Some(ts[2].enqueued_at));
    assert_eq!(members(&mut admin).await, want);

    // Cancelled, it stays until its second is looked at.
    store.cancel(&ts[2].owner, &ts[2].id).await.unwrap();
    assert_eq!(members(&mut admin).await, want);
    assert_eq!(
        store.depths(&pool()).await.unwrap().oldest_enqueued_at,
        None
    );
    assert!(members(&mut admin).await.is_empty());

    // Or until it is purged.
    store.enqueue(&ts[3]).await.unwrap();
    store.cancel(&ts[3].owner, &ts[3].id).await.unwrap();
    assert_eq!(members(&mut admin).await, vec![second(ts[3].enqueued_at)]);
    tokio::time::sleep(Duration::from_millis(5)).await;
    store.purge(&pool(), Duration::ZERO).await.unwrap();
    assert!(members(&mut admin).await.is_empty());
    let left: i64 = redis::cmd("EXISTS")
        .arg(format!("{since}:{}", second(ts[3].enqueued_at)))
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(left, 0);
}

/// A ticket put in a led pool's queue by a process that does not push it to
/// the arrivals list (one of an older release, in a rolling upgrade) reaches
/// the leader at its next count: the whole queue is handed over again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_queued_past_the_arrivals_list_reaches_the_leader_at_its_count() {
    use mm_store::keys::PoolKeys;
    use mm_store::{Leading, LockName, TokenLock};
    let (_server, store, mut admin) = bed().await;
    let lease = Duration::from_secs(30);
    let (p, keys) = (pool(), PoolKeys::new(&pool()));
    let (a, b) = (ticket(1, 1500.0), ticket(2, 1510.0));
    store.enqueue(&a).await.unwrap();
    let lock = TokenLock::new(LockName::pool_leader(&p), lease);
    let fence = lock.acquire(&store).await.unwrap().unwrap();
    store.adopt("l", &p, fence).await.unwrap();
    assert_eq!(
        store
            .lead_claim("l", &p, fence, 10, lease)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(store.lead_recount("l", &p, fence, 1).await.unwrap(), 0);

    // Queued the way enqueue.lua did before leaders read the queue.
    let () = redis::pipe()
        .hset(
            &keys.tickets,
            b.id.as_str(),
            serde_json::to_string(&b).unwrap(),
        )
        .ignore()
        .hset(&keys.state, b.id.as_str(), "q")
        .ignore()
        .zadd(&keys.queue, b.id.as_str(), b.rating)
        .ignore()
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(
        store
            .lead_claim("l", &p, fence, 10, lease)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.lead_recount("l", &p, fence, 1).await.unwrap(), 1);
    let again = store.lead_claim("l", &p, fence, 10, lease).await.unwrap();
    let mut got: Vec<_> = again
        .iter()
        .map(|c| (c.ticket.id.clone(), c.first_claim))
        .collect();
    got.sort();
    let mut want = vec![(a.id.clone(), false), (b.id.clone(), true)];
    want.sort();
    assert_eq!(got, want, "the whole queue again, the new one as new");
    assert_eq!(store.lead_recount("l", &p, fence, 2).await.unwrap(), 0);
}

/// `create.lua` on its own: a ticket id already there in the second of its
/// pools (a retried call: the long way handles it) is refused with nothing
/// written, the state it wrote in the first pool taken back; the same call for
/// a new id queues it in both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_ticket_whose_id_is_in_a_pool_already_changes_nothing() {
    use mm_domain::{PlayerId, Pool};
    use mm_store::keys::{PlayerKeys, PoolKeys};
    let (_server, _store, mut admin) = bed().await;
    let create = redis::Script::new(concat!(
        include_str!("../../src/lua/common.lua"),
        include_str!("../../src/lua/create.lua")
    ));
    let player = PlayerKeys::new(&PlayerId::new("ann").unwrap());
    let pools = [Pool::new("duel", "eu"), Pool::new("duel", "us")];
    let call = |id: &str| {
        let mut inv = create.key(&player.active);
        inv.key(&player.tickets)
            .key(&player.ban)
            .key(&player.in_match)
            .key(&player.marks)
            .key(&player.blocks)
            .key(&player.active);
        for p in &pools {
            let k = PoolKeys::new(p);
            inv.key(&k.queue)
                .key(&k.tickets)
                .key(&k.state)
                .key(&k.since)
                .key(&k.armed)
                .key(&k.leader)
                .key(&k.arrivals);
        }
        inv.arg(id)
            .arg("duel")
            .arg("duel:eu,duel:us")
            .arg(3600)
            .arg("")
            .arg(r#"{"id":"x"}"#)
            .arg("")
            .arg("")
            .arg(1500.0)
            .arg(1_764_270_001_234u64)
            .arg("mm:wake")
            .arg(mm_store::HISTORY_LEN)
            .arg("duel:eu")
            .arg("duel:us");
        inv
    };
    let (eu, us) = (PoolKeys::new(&pools[0]), PoolKeys::new(&pools[1]));
    let () = redis::cmd("HSET")
        .arg(&us.state)
        .arg("t-old")
        .arg("c")
        .query_async(&mut admin)
        .await
        .unwrap();
    let answer: String = call("t-old").invoke_async(&mut admin).await.unwrap();
    assert_eq!(answer, "!refused");
    let state = |k: &PoolKeys, id: &str| redis::cmd("HGET").arg(&k.state).arg(id).clone();
    let eu_state: Option<String> = state(&eu, "t-old").query_async(&mut admin).await.unwrap();
    assert_eq!(eu_state, None, "the first pool's state is taken back");
    let us_state: Option<String> = state(&us, "t-old").query_async(&mut admin).await.unwrap();
    assert_eq!(
        us_state.as_deref(),
        Some("c"),
        "the one there is left alone"
    );
    let exists: usize = redis::cmd("EXISTS")
        .arg(&[&eu.queue, &us.queue, &eu.tickets, &player.active])
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(exists, 0, "queues, data and the player untouched");

    let answer: String = call("t-new").invoke_async(&mut admin).await.unwrap();
    assert_eq!(answer, "=");
    for k in [&eu, &us] {
        let queued: Option<String> = state(k, "t-new").query_async(&mut admin).await.unwrap();
        assert_eq!(queued.as_deref(), Some("q"));
        let rank: Option<usize> = redis::cmd("ZRANK")
            .arg(&k.queue)
            .arg("t-new")
            .query_async(&mut admin)
            .await
            .unwrap();
        assert_eq!(rank, Some(0));
        // The waiting-since index files it under its second.
        let second: Option<f64> = redis::cmd("ZSCORE")
            .arg(&k.since)
            .arg("1764270001")
            .query_async(&mut admin)
            .await
            .unwrap();
        assert_eq!(second, Some(1_764_270_001_234.0));
    }
}

/// A long ticket index drops its oldest matches, one match in eight (by the
/// match id's last character), down to the history's length: its tickets'
/// fields and the newest matches stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_index_keeps_the_newest_matches() {
    use crate::conformance::make_match;
    let (_server, store, mut admin) = bed().await;
    let lease = Duration::from_secs(30);
    let a = ticket(1, 1500.0);
    store.enqueue(&a).await.unwrap();
    let index = format!("mm:{{u:{}}}:tix", a.owner);
    // Matches played before, older than any new one: twice the history's
    // length and more.
    let len = mm_store::HISTORY_LEN;
    for i in 0..2 * len + 10 {
        let () = redis::cmd("HSET")
            .arg(&index)
            .arg(format!("m:m-before-{i:03}"))
            .arg(format!("{}|ranked:eu", 1_000 + i))
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let claimed = store.claim("w1", &pool(), 10, 0.0, lease).await.unwrap();
    let mut m = make_match(&[&claimed[0]]);
    // A trimming id ('0' % 8 == 0).
    m.id = mm_domain::MatchId::new("m-trims-0").unwrap();
    store
        .complete("w1", &pool(), std::slice::from_ref(&m), lease)
        .await
        .unwrap();
    let fields: Vec<String> = redis::cmd("HKEYS")
        .arg(&index)
        .query_async(&mut admin)
        .await
        .unwrap();
    let played: Vec<&String> = fields.iter().filter(|f| f.starts_with("m:")).collect();
    assert_eq!(played.len(), len, "trimmed to the history's length");
    assert!(fields.contains(&format!("m:{}", m.id)), "the newest stays");
    assert!(fields.contains(&format!("m:m-before-{:03}", 2 * len + 9)));
    assert!(
        !fields.contains(&"m:m-before-000".to_string()),
        "the oldest go"
    );
    assert!(
        fields.contains(&a.id.as_str().to_string()),
        "the ticket's own field stays"
    );
}

/// A ticket index does not grow with every ticket its player ever queued (its
/// expiry moves with each new ticket): one creation in eight (by the ticket
/// id's last character) trims an index past twice the history's length. The
/// live tickets stay whatever their age, of the finished ones the newest half
/// the history's length (a field written before they carried a time counts as
/// the oldest), and the matches' newest. Both ways a ticket is activated: in
/// one call (`create.lua`) and the long way (`activate.lua`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_index_keeps_live_tickets_and_the_newest_finished() {
    use mm_domain::TicketId;
    let (_server, store, mut admin) = bed().await;
    let len = mm_store::HISTORY_LEN;
    for (way, last) in [("create", '8'), ("activate", '0')] {
        let mut t = ticket(1, 1500.0);
        t.id = TicketId::new(format!("t-{way}-{last}")).unwrap();
        let keys = mm_store::keys::PlayerKeys::new(&t.owner);
        let (index, active) = (&keys.tickets, &keys.active);
        let () = redis::cmd("DEL")
            .arg(index)
            .arg(active)
            .query_async(&mut admin)
            .await
            .unwrap();
        let mut fill = redis::cmd("HSET");
        fill.arg(index);
        // Finished tickets from before the time was written, then timed ones
        // (newer by their time), a live ticket of another mode from before, and
        // a few matches.
        for i in 0..len {
            fill.arg(format!("t-legacy-{i:03}")).arg("ranked:eu");
        }
        for i in 0..len {
            fill.arg(format!("t-timed-{i:03}"))
                .arg(format!("ranked:eu,ranked:us,@{}", 1_000 + i));
        }
        fill.arg("t-live").arg("casual:eu");
        for i in 0..10 {
            fill.arg(format!("m:m-{i}"))
                .arg(format!("{}|ranked:eu", 1_000 + i));
        }
        let () = fill.query_async(&mut admin).await.unwrap();
        let () = redis::cmd("HSET")
            .arg(active)
            .arg("casual")
            .arg("t-live|casual:eu")
            .query_async(&mut admin)
            .await
            .unwrap();
        let outcome = if way == "create" {
            store.enqueue_new(&mut t, None).await.unwrap()
        } else {
            store.enqueue(&t).await.unwrap()
        };
        assert_eq!(outcome, mm_store::EnqueueOutcome::Queued, "{way}");
        let fields: Vec<String> = redis::cmd("HKEYS")
            .arg(index)
            .query_async(&mut admin)
            .await
            .unwrap();
        let count = |prefix: &str| fields.iter().filter(|f| f.starts_with(prefix)).count();
        assert_eq!(
            count("t-legacy-"),
            0,
            "{way}: untimed finished tickets go first"
        );
        assert_eq!(
            count("t-timed-"),
            len / 2,
            "{way}: the newest finished stay"
        );
        assert!(fields.contains(&format!("t-timed-{:03}", len - 1)), "{way}");
        assert!(
            !fields.contains(&format!("t-timed-{:03}", len / 2 - 1)),
            "{way}"
        );
        assert!(
            fields.contains(&"t-live".to_string()),
            "{way}: a live ticket stays"
        );
        assert!(
            fields.contains(&t.id.to_string()),
            "{way}: the new ticket stays"
        );
        assert_eq!(count("m:"), 10, "{way}: the matches stay");
        // The new ticket's field names its pool and when it was activated, and
        // it is found by id through it.
        let value: String = redis::cmd("HGET")
            .arg(index)
            .arg(t.id.as_str())
            .query_async(&mut admin)
            .await
            .unwrap();
        let (pools, at) = value.split_once(",@").expect("a time");
        assert_eq!(pools, "ranked:eu", "{way}");
        assert!(
            at.parse::<u64>().unwrap() > 1_700_000_000_000,
            "{way}: {value}"
        );
        let read = store.ticket(&t.owner, &t.id).await.unwrap();
        assert!(read.is_some(), "{way}: read by id");
    }
}

/// A full Redis (`maxmemory` reached, `noeviction`) refuses every write with
/// `OOM`: callers take that as the store being unavailable (waited out with
/// backoff, answered 503, logged at most every 10 s), not as the call's own
/// fault; it is no outage (reads still work: each answer would end it and
/// each write begin another); once there is room the same write goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_redis_is_unavailable_not_a_bad_call() {
    let (_server, store, mut admin) = bed().await;
    let set = |value: &str| {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory")
            .arg(value)
            .clone()
    };
    let () = set("1").query_async(&mut admin).await.unwrap();
    let t = ticket(1, 1500.0);
    let err = store
        .enqueue(&t)
        .await
        .expect_err("a full Redis took a write");
    assert!(err.to_string().contains("OOM"), "{err}");
    assert!(err.is_unreachable(), "{err}");
    // (The outage state is the process's; no other test of this binary makes
    // Redis fail.)
    assert!(!mm_store::outage::is_down(), "a full Redis is no outage");
    let () = set("0").query_async(&mut admin).await.unwrap();
    assert_eq!(
        store.enqueue(&t).await.unwrap(),
        mm_store::EnqueueOutcome::Queued
    );
}

/// A player's socket notes are kept a day while a socket is noted open, and
/// a quarter of an hour once the last one closed: players who left do not
/// hold a key each for a day. A close that leaves another ingress's socket
/// open shortens nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socket_notes_are_kept_a_day_while_open_and_briefly_once_closed() {
    let (_server, store, admin) = bed().await;
    let ann = mm_domain::PlayerId::new("on-ann").unwrap();
    let key = mm_store::keys::player_key(&ann, mm_store::keys::player_suffix::ONLINE);
    let ttl = |mut admin: redis::aio::MultiplexedConnection, key: String| async move {
        let ms: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut admin)
            .await
            .unwrap();
        ms
    };
    let now = mm_domain::now_ms();
    store.hold("ingress-a", &ann, true, now).await.unwrap();
    store.hold("ingress-b", &ann, true, now).await.unwrap();
    let day = mm_store::OPEN_KEPT.as_millis() as i64;
    let quarter = mm_store::ONLINE_KEPT.as_millis() as i64;
    assert!(ttl(admin.clone(), key.clone()).await > day - 60_000);
    // Her socket on b closes; a's is open still.
    store.hold("ingress-b", &ann, false, now).await.unwrap();
    assert!(ttl(admin.clone(), key.clone()).await > day - 60_000);
    // And on a: she left.
    store.hold("ingress-a", &ann, false, now).await.unwrap();
    let left = ttl(admin.clone(), key.clone()).await;
    assert!(left > quarter - 60_000 && left <= quarter, "{left}");
    assert_eq!(store.last_seen(&ann).await.unwrap(), Some(now));
}
