//! The memory store's own tests (the shared behaviour is in the conformance suite).

use super::*;
use mm_domain::MatchTicket;

const DAY: Millis = 24 * 3600 * 1000;

/// A match of `players`, one ticket each, created `age` ms ago.
fn played(id: &str, players: &[&str], age: Millis) -> Match {
    Match {
        id: MatchId::new(id).unwrap(),
        mode: "1v1".into(),
        region: "eu".into(),
        tickets: players
            .iter()
            .map(|p| MatchTicket {
                ticket_id: TicketId::new(format!("t-{id}-{p}")).unwrap(),
                players: vec![PlayerId::new(*p).unwrap()],
                rating: 1500.0,
                enqueued_at: 0,
                team: 0,
                skills: Vec::new(),
                attributes: Default::default(),
                player_attributes: Vec::new(),
            })
            .collect(),
        created_at: now_ms() - age,
        lifecycle: Default::default(),
        decided: Default::default(),
    }
}

/// A 1v1 ticket of `player`'s waiting in `regions` (the first its home).
fn solo(id: &str, player: &str, regions: &[&str]) -> Ticket {
    let mut t = Ticket::solo(
        TicketId::new(id).unwrap(),
        PlayerId::new(player).unwrap(),
        "1v1",
        regions[0],
        1500.0,
        now_ms(),
    );
    t.queues = regions
        .iter()
        .map(|r| mm_domain::RegionQueue {
            region: r.to_string(),
            eligible_at: t.enqueued_at,
        })
        .collect();
    t
}

/// Queues both tickets, then cancels `cancelled`.
async fn queue_and_cancel(s: &MemoryStore, cancelled: &Ticket, waits: &Ticket) {
    for t in [cancelled, waits] {
        assert_eq!(s.enqueue(t).await.unwrap(), EnqueueOutcome::Queued);
    }
    assert!(matches!(
        s.cancel(&cancelled.owner, &cancelled.id).await.unwrap(),
        CancelOutcome::Cancelled
    ));
}

fn history(s: &MemoryStore, player: &str) -> Vec<Arc<Match>> {
    let inner = s.lock();
    inner
        .players
        .get(&PlayerId::new(player).unwrap())
        .map(|p| p.history.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_match_is_kept_once_for_all_its_players() {
    let s = MemoryStore::new();
    let pool = Pool::new("1v1", "eu");
    s.fan_out(&pool, &[played("m-1", &["a", "b"], 0)])
        .await
        .unwrap();
    let (a, b) = (history(&s, "a"), history(&s, "b"));
    assert_eq!(a.len(), 1);
    assert!(Arc::ptr_eq(&a[0], &b[0]));
}

#[tokio::test]
async fn history_entries_last_as_long_as_on_redis() {
    let s = MemoryStore::new();
    let pool = Pool::new("1v1", "eu");
    let (old, new) = (
        played("m-old", &["a", "b"], 31 * DAY),
        played("m-new", &["a", "c"], DAY),
    );
    // Out of date already: never listed nor kept.
    s.fan_out(&pool, std::slice::from_ref(&old)).await.unwrap();
    let a = PlayerId::new("a").unwrap();
    assert!(s.player_matches(&a, 10).await.unwrap().is_empty());
    assert!(history(&s, "b").is_empty());
    let recent = played("m-recent", &["a", "b"], 20 * DAY);
    s.fan_out(&pool, std::slice::from_ref(&recent))
        .await
        .unwrap();
    s.fan_out(&pool, std::slice::from_ref(&new)).await.unwrap();
    assert_eq!(
        s.player_matches(&a, 10).await.unwrap(),
        vec![new.clone(), recent.clone()]
    );
    // Eleven days on, the 20-day-old match is past 30 days: b, whose newest match
    // it is, loses the whole history; a and c, with a newer one, keep theirs (a
    // drops the old entry when read or written).
    s.lock().forget_old_histories(now_ms() + 11 * DAY);
    assert!(history(&s, "b").is_empty());
    assert_eq!(history(&s, "a").len(), 2);
    assert_eq!(history(&s, "c").len(), 1);
}

/// A player's index of tickets forgets a ticket once every pool it waited in
/// has purged it, and keeps the tickets that wait: else it kept every ticket
/// the player ever queued.
#[tokio::test]
async fn purged_tickets_leave_their_players() {
    let s = MemoryStore::new();
    let (eu, us) = (Pool::new("1v1", "eu"), Pool::new("1v1", "us"));
    let regions = ["eu", "us"];
    let (gone, waits) = (
        solo("t-gone", "a", &regions),
        solo("t-waits", "b", &regions),
    );
    queue_and_cancel(&s, &gone, &waits).await;
    let a = PlayerId::new("a").unwrap();
    let indexed = |player: &str, id: &TicketId| {
        s.lock()
            .players
            .get(&PlayerId::new(player).unwrap())
            .and_then(|p| p.tickets.get(id).cloned())
    };
    s.purge(&eu, Duration::ZERO).await.unwrap();
    assert_eq!(indexed("a", &gone.id), Some(vec![us.clone()]));
    assert!(
        s.ticket(&a, &gone.id).await.unwrap().is_some(),
        "still in us"
    );
    s.purge(&us, Duration::ZERO).await.unwrap();
    assert_eq!(indexed("a", &gone.id), None);
    assert!(s.ticket(&a, &gone.id).await.unwrap().is_none());
    assert_eq!(indexed("b", &waits.id), Some(vec![eu, us]));
}

/// A player idle for the players' lifetime is forgotten whole, as their keys
/// expire on Redis; one still waiting, or banned, is kept and looked at again
/// a lifetime on.
#[tokio::test]
async fn idle_players_are_forgotten() {
    use crate::Results;
    let s = MemoryStore::new();
    let pool = Pool::new("1v1", "eu");
    let (cancelled, waits) = (
        solo("t-cancelled", "a", &["eu"]),
        solo("t-waits", "b", &["eu"]),
    );
    queue_and_cancel(&s, &cancelled, &waits).await;
    let a = PlayerId::new("a").unwrap();
    s.fan_out(&pool, &[played("m-1", &["a", "c"], 0)])
        .await
        .unwrap();
    s.mark_ratings(&[(PlayerId::new("d").unwrap(), "1v1".into(), 3)])
        .await
        .unwrap();
    s.lock()
        .players
        .get_mut(&PlayerId::new("d").unwrap())
        .unwrap()
        .banned_until = Some(now_ms() + 40 * DAY);
    let known = |p: &str| s.lock().players.contains_key(&PlayerId::new(p).unwrap());
    // A day short of the lifetime: everybody stays.
    s.lock().forget_idle_players(now_ms() + 29 * DAY);
    assert!(["a", "b", "c", "d"].iter().all(|p| known(p)));
    s.lock().forget_idle_players(now_ms() + 31 * DAY);
    assert!(!known("a"), "idle: cancelled, history past its lifetime");
    assert!(!known("c"), "idle: played only");
    assert!(known("b"), "still waiting");
    assert!(known("d"), "banned");
    assert!(s.player_matches(&a, 10).await.unwrap().is_empty());
    // Looked at again a lifetime on: the ban is over, the ticket still waits.
    s.lock().forget_idle_players(now_ms() + 62 * DAY);
    assert!(!known("d"));
    assert!(known("b"));
}
