//! The saga in states that only a crash at the wrong moment produces, on the
//! in-memory store and on a real redis-server.

use mm_domain::{
    Lifecycle, Match, MatchId, MatchStatus, MatchTicket, Placement, PlayerId, Pool, Ticket,
    TicketId, now_ms, reasons,
};
use mm_server::saga::{self, Progress};
use mm_store::{AllocateOutcome, Allocation, EnqueueOutcome, GameServer, Store, Transition};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

fn pool() -> Pool {
    Pool::new("duel", "eu")
}

/// Ticket `t`'s place on `team` of a match.
fn on_team(t: &Ticket, team: usize) -> MatchTicket {
    MatchTicket {
        ticket_id: t.id.clone(),
        players: t.players.clone(),
        rating: t.rating,
        enqueued_at: t.enqueued_at,
        team,
        skills: Vec::new(),
        attributes: Default::default(),
        player_attributes: Vec::new(),
    }
}

/// A committed 1v1 match with placement on game servers and no ready check.
async fn placing_match(s: &dyn Store) -> Match {
    let now = now_ms();
    let tickets: Vec<Ticket> = ["a", "b"]
        .iter()
        .map(|p| {
            Ticket::solo(
                TicketId::new(format!("t-{p}")).unwrap(),
                PlayerId::new(*p).unwrap(),
                "duel",
                "eu",
                1500.0,
                now,
            )
        })
        .collect();
    for t in &tickets {
        assert_eq!(s.enqueue(t).await.unwrap(), EnqueueOutcome::Queued);
    }
    assert_eq!(
        s.claim("w", &pool(), 10, 0.0, LEASE).await.unwrap().len(),
        2
    );
    let m = Match {
        id: MatchId::new("m-orphan").unwrap(),
        mode: "duel".into(),
        region: "eu".into(),
        tickets: tickets
            .iter()
            .enumerate()
            .map(|(team, t)| on_team(t, team))
            .collect(),
        created_at: now,
        lifecycle: Lifecycle {
            ready_check_ms: None,
            placement: Placement::Servers,
            ..Lifecycle::default()
        },
        decided: Default::default(),
    };
    let committed = s
        .complete("w", &pool(), std::slice::from_ref(&m), LEASE)
        .await
        .unwrap();
    assert_eq!(committed, vec![m.id.clone()]);
    s.fan_out(&pool(), std::slice::from_ref(&m)).await.unwrap();
    let (record, _) = s.match_record(&pool(), &m.id).await.unwrap().unwrap();
    assert_eq!(record.status, MatchStatus::Placing);
    m
}

/// A game server with one slot.
async fn register_one_slot(s: &dyn Store) {
    let server = GameServer {
        id: "gs".into(),
        region: "eu".into(),
        modes: vec!["duel".into()],
        capacity: 1,
        address: "10.0.0.1:7777".into(),
    };
    s.register_server(&server, Duration::from_secs(60))
        .await
        .unwrap();
}

fn request(id: &str) -> Allocation {
    Allocation {
        id: id.into(),
        server: Default::default(),
        region: "eu".into(),
        mode: "duel".into(),
        pool: Some(pool().name()),
        teams: Vec::new(),
        allocated_at: 0,
        decided: Default::default(),
    }
}

/// A driver took the match's slot and died before recording it; meanwhile another
/// driver failed the match (placement timed out). Finishing the saga gives the slot
/// back, so the server can host another match.
async fn a_slot_left_by_a_dead_driver_is_given_back_when_the_match_fails(s: &dyn Store) {
    let m = placing_match(s).await;
    register_one_slot(s).await;
    // The dead driver's allocation.
    assert!(matches!(
        s.allocate(&request(m.id.as_str())).await.unwrap(),
        AllocateOutcome::Allocated(_)
    ));
    // The other driver, which had found no slot, gave up.
    let failed = Transition::new(&[MatchStatus::Placing], MatchStatus::Failed)
        .reason(reasons::NO_SERVER)
        .due(now_ms());
    assert!(s.transition(&pool(), &m.id, failed).await.unwrap());

    let progress = saga::advance(s, &pool(), &m.id).await.unwrap();
    assert!(
        matches!(progress, Progress::Over(MatchStatus::Failed)),
        "{progress:?}"
    );
    assert_eq!(s.allocation(m.id.as_str()).await.unwrap(), None);
    assert!(matches!(
        s.allocate(&request("m-next")).await.unwrap(),
        AllocateOutcome::Allocated(_)
    ));
}

/// A completed match keeps its slot: the game server releases it when it is done.
async fn a_completed_match_keeps_its_slot_until_the_server_releases_it(s: &dyn Store) {
    let m = placing_match(s).await;
    register_one_slot(s).await;
    let progress = saga::advance(s, &pool(), &m.id).await.unwrap();
    assert!(
        matches!(progress, Progress::Waiting(MatchStatus::Assigned)),
        "{progress:?}"
    );
    let done = Transition::new(&[MatchStatus::Assigned], MatchStatus::Completed).due(now_ms());
    assert!(s.transition(&pool(), &m.id, done).await.unwrap());
    let progress = saga::advance(s, &pool(), &m.id).await.unwrap();
    assert!(
        matches!(progress, Progress::Over(MatchStatus::Completed)),
        "{progress:?}"
    );
    assert!(s.allocation(m.id.as_str()).await.unwrap().is_some());
}

/// In a `backfill = "auto"` mode a match placed below full opens a backfill
/// for its empty seats.
async fn a_match_placed_below_full_opens_its_empty_seats(s: &dyn Store) {
    let m = placing_match(s).await;
    // The same match as if its mode were 2v2 with automatic backfill (the
    // lifecycle travels with the match).
    let mut auto = m.clone();
    auto.id = MatchId::new("m-below-full").unwrap();
    auto.lifecycle.auto_backfill = Some(mm_domain::AutoBackfill {
        teams: 2,
        team_size: 2,
        ttl_ms: 10_000,
    });
    let t = Ticket::solo(
        TicketId::new("t-solo-c").unwrap(),
        PlayerId::new("c").unwrap(),
        "duel",
        "eu",
        1500.0,
        now_ms(),
    );
    assert_eq!(s.enqueue(&t).await.unwrap(), EnqueueOutcome::Queued);
    assert_eq!(
        s.claim("w", &pool(), 10, 0.0, LEASE).await.unwrap().len(),
        1
    );
    auto.tickets = vec![on_team(&t, 0)];
    let committed = s
        .complete("w", &pool(), std::slice::from_ref(&auto), LEASE)
        .await
        .unwrap();
    assert_eq!(committed.len(), 1);
    s.fan_out(&pool(), std::slice::from_ref(&auto))
        .await
        .unwrap();
    let server = GameServer {
        id: "gs".into(),
        region: "eu".into(),
        modes: vec!["duel".into()],
        capacity: 2,
        address: "10.0.0.1:7777".into(),
    };
    s.register_server(&server, Duration::from_secs(60))
        .await
        .unwrap();
    saga::advance(s, &pool(), &auto.id).await.unwrap();
    let b = s
        .backfill(&pool(), &auto.id)
        .await
        .unwrap()
        .expect("opened");
    assert_eq!(b.open, vec![1, 2]);
    // A full match (the plain duel) opens none.
    saga::advance(s, &pool(), &m.id).await.unwrap();
    assert_eq!(s.backfill(&pool(), &m.id).await.unwrap(), None);
}

/// A fill of one seat on team 0 of running match `m` by a ticket of player
/// `player` queued `waited` ms ago, committed (placing: no ready check).
async fn fill(s: &dyn Store, m: &Match, player: &str, waited: u64) -> (Ticket, Match) {
    let b = match s
        .open_backfill(&pool(), &m.id, None, &[1, 0], Duration::from_secs(10))
        .await
        .unwrap()
    {
        mm_store::BackfillOutcome::Open(b) => b,
        other => panic!("{other:?}"),
    };
    let t = Ticket::solo(
        TicketId::new(format!("t-{player}")).unwrap(),
        PlayerId::new(player).unwrap(),
        "duel",
        "eu",
        1500.0,
        now_ms() - waited,
    );
    assert_eq!(s.enqueue(&t).await.unwrap(), EnqueueOutcome::Queued);
    assert_eq!(
        s.claim("w", &pool(), 10, 0.0, LEASE).await.unwrap().len(),
        1
    );
    let mut f = m.clone();
    f.id = MatchId::new(format!("m-fill-{player}")).unwrap();
    f.tickets = vec![on_team(&t, 0)];
    f.decided.backfill = Some(mm_domain::FillOf {
        match_id: m.id.clone(),
        generation: b.generation,
    });
    let committed = s
        .complete("w", &pool(), std::slice::from_ref(&f), LEASE)
        .await
        .unwrap();
    assert_eq!(committed, vec![f.id.clone()]);
    s.fan_out(&pool(), std::slice::from_ref(&f)).await.unwrap();
    (t, f)
}

/// The running match ends between a fill's commit and its join: the fill
/// fails (`backfill_closed`) and its player goes back to the queue with the
/// wait they had.
async fn a_fill_whose_match_ended_sends_its_player_back_with_their_wait(s: &dyn Store) {
    let m = placing_match(s).await;
    register_one_slot(s).await;
    saga::advance(s, &pool(), &m.id).await.unwrap();
    let (t, f) = fill(s, &m, "c", 5_000).await;
    let lost = Transition::new(&[MatchStatus::Assigned], MatchStatus::Failed)
        .reason(reasons::SERVER_LOST)
        .due(now_ms());
    assert!(s.transition(&pool(), &m.id, lost).await.unwrap());
    let progress = saga::advance(s, &pool(), &f.id).await.unwrap();
    assert!(
        matches!(progress, Progress::Over(MatchStatus::Failed)),
        "{progress:?}"
    );
    let (record, _) = s.match_record(&pool(), &f.id).await.unwrap().unwrap();
    assert_eq!(record.reason.as_deref(), Some(reasons::BACKFILL_CLOSED));
    let view = s.ticket(&t.owner, &t.id).await.unwrap().unwrap();
    assert!(!view.status.is_terminal(), "{view:?}");
    assert_eq!(view.enqueued_at, t.enqueued_at);
    assert_eq!(s.current_match(&t.owner).await.unwrap(), None);
}

/// A fill that joined ends when its match ends, with the match's result.
async fn a_joined_fill_ends_with_its_match(s: &dyn Store) {
    let m = placing_match(s).await;
    register_one_slot(s).await;
    saga::advance(s, &pool(), &m.id).await.unwrap();
    let (t, f) = fill(s, &m, "c", 0).await;
    let progress = saga::advance(s, &pool(), &f.id).await.unwrap();
    assert!(
        matches!(progress, Progress::Waiting(MatchStatus::Assigned)),
        "{progress:?}"
    );
    let result = mm_domain::MatchResult {
        teams: vec![
            mm_domain::TeamResult {
                team: 0,
                outcome: Some(mm_domain::Outcome::Win),
                placement: None,
            },
            mm_domain::TeamResult {
                team: 1,
                outcome: Some(mm_domain::Outcome::Loss),
                placement: None,
            },
        ],
        ..Default::default()
    };
    let mut done = Transition::new(&[MatchStatus::Assigned], MatchStatus::Completed).due(now_ms());
    done.result = Some(result.clone());
    assert!(s.transition(&pool(), &m.id, done).await.unwrap());
    saga::advance(s, &pool(), &m.id).await.unwrap();
    let (record, _) = s.match_record(&pool(), &f.id).await.unwrap().unwrap();
    assert_eq!(record.status, MatchStatus::Completed);
    assert_eq!(record.result, Some(result));
    assert!(record.settled);
    assert_eq!(s.current_match(&t.owner).await.unwrap(), None);
}

macro_rules! on_both_stores {
    ($($name:ident),*) => {
        mod memory {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(&mm_store::MemoryStore::new()).await;
                }
            )*
        }
        mod redis {
            $(
                #[tokio::test]
                async fn $name() {
                    let server = mm_testkit::RedisServer::start();
                    let store = mm_store::RedisStore::connect(&server.url()).await.unwrap();
                    super::$name(&store).await;
                }
            )*
        }
    };
}

on_both_stores!(
    a_slot_left_by_a_dead_driver_is_given_back_when_the_match_fails,
    a_completed_match_keeps_its_slot_until_the_server_releases_it,
    a_fill_whose_match_ended_sends_its_player_back_with_their_wait,
    a_joined_fill_ends_with_its_match,
    a_match_placed_below_full_opens_its_empty_seats
);
