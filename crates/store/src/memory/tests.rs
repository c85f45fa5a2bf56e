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
