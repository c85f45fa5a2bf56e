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
            .map(|(team, t)| MatchTicket {
                ticket_id: t.id.clone(),
                players: t.players.clone(),
                rating: t.rating,
                enqueued_at: t.enqueued_at,
                team,
                skills: Vec::new(),
            })
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
    a_completed_match_keeps_its_slot_until_the_server_releases_it
);
