//! Backfills on the memory store, Redis and a Redis Cluster: only the hosting
//! server (or a trusted backend) opens one, only while its match is assigned;
//! every change and the close raise the generation; a closed, lapsed or ended
//! one is gone from the reads.

use crate::Harness;
use crate::lifecycle::{commit, lifecycle, pool, ticket};
use mm_domain::{MatchStatus, Placement, ServerAssignment};
use mm_store::{BackfillOutcome, Store, Transition};
use std::time::Duration;

const TTL: Duration = Duration::from_secs(10);

fn opened(o: BackfillOutcome) -> mm_store::Backfill {
    match o {
        BackfillOutcome::Open(b) => b,
        other => panic!("not open: {other:?}"),
    }
}

/// Places match `id` on game server `gs-1`.
async fn assign(s: &dyn Store, id: &mm_domain::MatchId) {
    let mut t = Transition::new(&[MatchStatus::Placing], MatchStatus::Assigned);
    t.server = Some(ServerAssignment {
        server_id: "gs-1".into(),
        address: "10.0.0.1:7777".into(),
    });
    assert!(s.transition(&pool(), id, t).await.unwrap());
}

async fn only_the_host_opens_while_the_match_runs(h: Harness) {
    let s: &dyn Store = &*h.store;
    let (a, b) = (ticket(&["a1"], 0), ticket(&["b1"], 0));
    let m = commit(s, &[&a, &b], lifecycle(false, Placement::Servers)).await;
    // Placing: not running yet.
    assert_eq!(
        s.open_backfill(&pool(), &m.id, Some("gs-1"), &[1, 0], TTL)
            .await
            .unwrap(),
        BackfillOutcome::NotRunning(MatchStatus::Placing)
    );
    assign(s, &m.id).await;
    // Another server may not; no such match.
    assert_eq!(
        s.open_backfill(&pool(), &m.id, Some("gs-2"), &[1, 0], TTL)
            .await
            .unwrap(),
        BackfillOutcome::NotYours
    );
    let unknown = mm_domain::MatchId::new("m-nobody").unwrap();
    assert_eq!(
        s.open_backfill(&pool(), &unknown, None, &[1], TTL)
            .await
            .unwrap(),
        BackfillOutcome::NoMatch
    );
    assert_eq!(s.backfill(&pool(), &m.id).await.unwrap(), None);
    // The host opens it; a trusted backend changes it; the generation rises.
    let first = opened(
        s.open_backfill(&pool(), &m.id, Some("gs-1"), &[1, 0], TTL)
            .await
            .unwrap(),
    );
    assert_eq!((first.generation, first.open.clone()), (1, vec![1, 0]));
    assert_eq!(first.server_id, "gs-1");
    assert!(first.expires_at > first.opened_at);
    let second = opened(
        s.open_backfill(&pool(), &m.id, None, &[1, 1], TTL)
            .await
            .unwrap(),
    );
    assert_eq!((second.generation, second.opened_at), (2, first.opened_at));
    assert_eq!(
        s.backfill(&pool(), &m.id).await.unwrap(),
        Some(second.clone())
    );
    assert_eq!(s.open_backfills(&pool()).await.unwrap(), vec![second]);
    // Closed by another server: refused; by the host: gone, one generation on.
    assert_eq!(
        s.close_backfill(&pool(), &m.id, Some("gs-2"))
            .await
            .unwrap(),
        BackfillOutcome::NotYours
    );
    assert_eq!(
        s.close_backfill(&pool(), &m.id, Some("gs-1"))
            .await
            .unwrap(),
        BackfillOutcome::Closed
    );
    assert_eq!(s.backfill(&pool(), &m.id).await.unwrap(), None);
    assert!(s.open_backfills(&pool()).await.unwrap().is_empty());
    let again = opened(
        s.open_backfill(&pool(), &m.id, Some("gs-1"), &[0, 2], TTL)
            .await
            .unwrap(),
    );
    assert_eq!(again.generation, 4, "a close counts as a change");
    // No seat open: kept, but not among the open ones.
    let full = opened(
        s.open_backfill(&pool(), &m.id, None, &[0, 0], TTL)
            .await
            .unwrap(),
    );
    assert_eq!(full.generation, 5);
    assert!(s.open_backfills(&pool()).await.unwrap().is_empty());
    // The match ends: its backfill is gone, and none opens.
    opened(
        s.open_backfill(&pool(), &m.id, None, &[1, 0], TTL)
            .await
            .unwrap(),
    );
    let over = Transition::new(&[MatchStatus::Assigned], MatchStatus::Failed).reason("server_lost");
    assert!(s.transition(&pool(), &m.id, over).await.unwrap());
    assert_eq!(s.backfill(&pool(), &m.id).await.unwrap(), None);
    assert!(s.open_backfills(&pool()).await.unwrap().is_empty());
    assert_eq!(
        s.open_backfill(&pool(), &m.id, None, &[1, 0], TTL)
            .await
            .unwrap(),
        BackfillOutcome::NotRunning(MatchStatus::Failed)
    );
    assert_eq!(
        s.close_backfill(&pool(), &m.id, None).await.unwrap(),
        BackfillOutcome::Closed
    );
}

async fn an_unrefreshed_backfill_lapses(h: Harness) {
    let s: &dyn Store = &*h.store;
    let (a, b) = (ticket(&["a1"], 0), ticket(&["b1"], 0));
    let m = commit(s, &[&a, &b], lifecycle(false, Placement::Servers)).await;
    assign(s, &m.id).await;
    let short = Duration::from_millis(300);
    let b1 = opened(
        s.open_backfill(&pool(), &m.id, Some("gs-1"), &[1, 0], short)
            .await
            .unwrap(),
    );
    assert!(s.backfill(&pool(), &m.id).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(s.backfill(&pool(), &m.id).await.unwrap(), None);
    assert!(s.open_backfills(&pool()).await.unwrap().is_empty());
    // Opened again after it lapsed: a new opening time, a later generation.
    let b2 = opened(
        s.open_backfill(&pool(), &m.id, Some("gs-1"), &[1, 0], TTL)
            .await
            .unwrap(),
    );
    assert!(b2.opened_at > b1.opened_at && b2.generation > b1.generation);
}

crate::every_deployment!(
    only_the_host_opens_while_the_match_runs,
    an_unrefreshed_backfill_lapses
);
