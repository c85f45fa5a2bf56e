//! Results waiting for the rating service and players' freshness marks, on the
//! memory store, Redis and a Redis Cluster: a result is queued in the same step
//! that completes the match (and only then), is claimed under a lease, comes back
//! when its consumer dies, and is gone once acknowledged; a ticket carrying an
//! older rating than a player's mark is refused.

use crate::Harness;
use crate::lifecycle::{commit, lifecycle, pid, pool, ticket};
use mm_domain::{
    MatchResult, MatchStatus, Outcome, Placement, RatingJob, ServerAssignment, Skill, TeamResult,
};
use mm_store::{EnqueueOutcome, Store, Transition};
use std::time::Duration;

fn won() -> MatchResult {
    MatchResult {
        teams: vec![TeamResult {
            team: 0,
            outcome: Some(Outcome::Win),
            placement: None,
        }],
        reported_at: 1,
        ..Default::default()
    }
}

/// A match placed on a server and then completed with a result for the rating
/// service.
async fn completed(s: &dyn Store) -> RatingJob {
    let (a, b) = (ticket(&["a"], 0), ticket(&["b"], 0));
    let m = commit(s, &[&a, &b], lifecycle(false, Placement::Servers)).await;
    let mut t = Transition::new(&[MatchStatus::Placing], MatchStatus::Assigned);
    t.server = Some(ServerAssignment {
        server_id: "gs".into(),
        address: "127.0.0.1:7777".into(),
    });
    assert!(s.transition(&pool(), &m.id, t).await.unwrap());
    let before = s.pending_results(&pool()).await.unwrap();
    let job = RatingJob {
        matched: m.clone(),
        result: won(),
    };
    let mut t = Transition::new(&[MatchStatus::Assigned], MatchStatus::Completed);
    t.result = Some(won());
    t.rating = Some(job.clone());
    assert!(s.transition(&pool(), &m.id, t.clone()).await.unwrap());
    // A transition that does not apply queues nothing.
    assert!(!s.transition(&pool(), &m.id, t).await.unwrap());
    assert_eq!(s.pending_results(&pool()).await.unwrap(), before + 1);
    job
}

async fn a_result_waits_until_acknowledged(h: Harness) {
    let s = &*h.store;
    let job = completed(s).await;
    assert_eq!(s.pending_results(&pool()).await.unwrap(), 1);
    let lease = Duration::from_millis(300);
    let got = s.claim_results(&pool(), 10, lease).await.unwrap();
    assert_eq!(got, vec![job.clone()]);
    // Held: nobody else gets it while the lease runs.
    assert!(
        s.claim_results(&pool(), 10, lease)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(s.pending_results(&pool()).await.unwrap(), 1);
    // The holder died: once the lease is over another consumer gets it.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let again = s.claim_results(&pool(), 10, lease).await.unwrap();
    assert_eq!(again, vec![job.clone()]);
    s.ack_results(&pool(), std::slice::from_ref(&job.matched.id))
        .await
        .unwrap();
    assert_eq!(s.pending_results(&pool()).await.unwrap(), 0);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        s.claim_results(&pool(), 10, lease)
            .await
            .unwrap()
            .is_empty()
    );
    // Acknowledging twice is harmless.
    s.ack_results(&pool(), &[job.matched.id]).await.unwrap();
}

async fn claims_take_at_most_max(h: Harness) {
    let s = &*h.store;
    for _ in 0..3 {
        completed(s).await;
    }
    let lease = Duration::from_secs(30);
    assert_eq!(s.claim_results(&pool(), 2, lease).await.unwrap().len(), 2);
    assert_eq!(s.claim_results(&pool(), 2, lease).await.unwrap().len(), 1);
    assert!(s.claim_results(&pool(), 2, lease).await.unwrap().is_empty());
}

fn rated(players: &[&str], version: u64) -> mm_domain::Ticket {
    let mut t = ticket(players, 0);
    t.skills = vec![
        Skill {
            rating: 1500.0,
            uncertainty: None,
            version,
        };
        players.len()
    ];
    t
}

async fn a_stale_rating_is_refused(h: Harness) {
    let s = &*h.store;
    s.mark_ratings(&[(pid("a"), "duel".into(), 3)])
        .await
        .unwrap();
    // Never lowered.
    s.mark_ratings(&[(pid("a"), "duel".into(), 1)])
        .await
        .unwrap();
    assert_eq!(
        s.enqueue(&rated(&["a"], 2)).await.unwrap(),
        EnqueueOutcome::StaleRating(pid("a"))
    );
    // A party: b is fine, a is stale; b's half-taken place is given back.
    assert_eq!(
        s.enqueue(&rated(&["b", "a"], 2)).await.unwrap(),
        EnqueueOutcome::StaleRating(pid("a"))
    );
    assert_eq!(
        s.enqueue(&rated(&["b"], 0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    // Current, or read fresh, or without a snapshot: queued.
    assert_eq!(
        s.enqueue(&rated(&["a"], 3)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    let mut fresh = rated(&["c"], 0);
    s.mark_ratings(&[(pid("c"), "duel".into(), 1)])
        .await
        .unwrap();
    assert_eq!(
        s.enqueue(&fresh).await.unwrap(),
        EnqueueOutcome::StaleRating(pid("c"))
    );
    fresh.skills_fresh = true;
    assert_eq!(s.enqueue(&fresh).await.unwrap(), EnqueueOutcome::Queued);
    s.mark_ratings(&[(pid("d"), "duel".into(), 1)])
        .await
        .unwrap();
    assert_eq!(
        s.enqueue(&ticket(&["d"], 0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    // Marks are per mode.
    s.mark_ratings(&[(pid("e"), "other".into(), 5)])
        .await
        .unwrap();
    assert_eq!(
        s.enqueue(&rated(&["e"], 0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
}

async fn a_result_queued_directly_is_queued_once(h: Harness) {
    let s = &*h.store;
    let job = completed(s).await;
    s.ack_results(&pool(), std::slice::from_ref(&job.matched.id))
        .await
        .unwrap();
    let mut imported = job.clone();
    imported.matched.id = mm_domain::MatchId::new("m-imported").unwrap();
    assert!(s.queue_result(&pool(), &imported).await.unwrap());
    assert!(!s.queue_result(&pool(), &imported).await.unwrap());
    assert_eq!(s.pending_results(&pool()).await.unwrap(), 1);
    let got = s
        .claim_results(&pool(), 10, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(got, vec![imported]);
}

async fn the_oldest_result_is_claimed_first(h: Harness) {
    let s = &*h.store;
    let job = completed(s).await;
    s.ack_results(&pool(), std::slice::from_ref(&job.matched.id))
        .await
        .unwrap();
    // Queued in this order; "m-a..." sorts first by name, but waited less.
    let mut ids = Vec::new();
    for name in ["m-z-old", "m-a-new"] {
        let mut j = job.clone();
        j.matched.id = mm_domain::MatchId::new(name).unwrap();
        assert!(s.queue_result(&pool(), &j).await.unwrap());
        ids.push(j.matched.id);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let lease = Duration::from_secs(30);
    let first = s.claim_results(&pool(), 1, lease).await.unwrap();
    assert_eq!(first[0].matched.id, ids[0]);
    let second = s.claim_results(&pool(), 1, lease).await.unwrap();
    assert_eq!(second[0].matched.id, ids[1]);
}

/// `activate` + `enqueue_entries` is `enqueue` in two steps (the ingress rates the
/// ticket in between); `deactivate` gives an activation back. (Between the steps
/// the ticket reads as finished, so an ingress that dies there leaves no player
/// stuck: their next ticket replaces it.)
async fn enqueue_in_two_steps(h: Harness) {
    let s = &*h.store;
    s.mark_ratings(&[(pid("a"), "duel".into(), 4)])
        .await
        .unwrap();
    let t = ticket(&["a", "b"], 0);
    assert_eq!(s.activate(&t).await.unwrap(), Ok(vec![4, 0]));
    // Activated but in no queue yet: nothing to claim.
    assert!(
        s.claim("w", &pool(), 10, 0.0, Duration::from_secs(30))
            .await
            .unwrap()
            .is_empty()
    );
    s.enqueue_entries(&t).await.unwrap();
    let claimed = s
        .claim("w", &pool(), 10, 0.0, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].ticket.id, t.id);
    // A refused activation takes nothing: d, activated before c was found busy,
    // is free again.
    assert_eq!(
        s.enqueue(&ticket(&["c"], 0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert!(matches!(
        s.activate(&ticket(&["d", "c"], 0)).await.unwrap(),
        Err(EnqueueOutcome::PlayerBusy(..))
    ));
    assert_eq!(
        s.enqueue(&ticket(&["d"], 0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    // A given-back activation: the ticket was never queued, the player is free.
    let e = ticket(&["e"], 0);
    assert_eq!(s.activate(&e).await.unwrap(), Ok(vec![0]));
    s.deactivate(&e).await.unwrap();
    assert_eq!(s.ticket(&pid("e"), &e.id).await.unwrap(), None);
    assert_eq!(
        s.enqueue(&ticket(&["e"], 0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
}

crate::every_deployment!(
    enqueue_in_two_steps,
    the_oldest_result_is_claimed_first,
    a_result_queued_directly_is_queued_once,
    a_result_waits_until_acknowledged,
    claims_take_at_most_max,
    a_stale_rating_is_refused,
);
