//! Giving up tickets that waited too long, on the memory store, Redis and a Redis
//! Cluster: the overdue list holds the live tickets queued before the cutoff
//! (queued or held by a worker) and nothing younger, matched or cancelled;
//! giving one up ends it `timed_out` in every pool it waits in, and its player
//! may queue again; taking it out of one pool (a region being retired) leaves
//! it waiting in the others.

use crate::Harness;
use mm_domain::{PlayerId, Pool, RegionQueue, Ticket, TicketId, TicketStatus, now_ms};
use mm_store::{CancelOutcome, EnqueueOutcome, Store};
use std::time::Duration;

fn pool(region: &str) -> Pool {
    Pool::new("duel", region)
}

/// A ticket of `player` queued `ago` ms ago, waiting in eu and na.
fn ticket(player: &str, ago: u64) -> Ticket {
    waiting_in(player, ago, ["eu", "na"])
}

/// A ticket of `player` queued `ago` ms ago, waiting in `regions`, the first
/// its best.
fn waiting_in(player: &str, ago: u64, regions: [&str; 2]) -> Ticket {
    let mut t = Ticket::solo(
        TicketId::new(format!("t-{}", uuid::Uuid::new_v4().simple())).unwrap(),
        PlayerId::new(player).unwrap(),
        "duel",
        regions[0],
        1500.0,
        now_ms() - ago,
    );
    t.queues = regions
        .iter()
        .map(|r| RegionQueue {
            region: r.to_string(),
            eligible_at: t.enqueued_at,
        })
        .collect();
    t
}

async fn overdue_tickets_are_found_and_end_timed_out(h: Harness) {
    let s: &dyn Store = &*h.store;
    let old = ticket("old", 60_000);
    let held = ticket("held", 50_000);
    let gone = ticket("gone", 55_000);
    let young = ticket("young", 0);
    for t in [&old, &held, &gone, &young] {
        assert_eq!(s.enqueue(t).await.unwrap(), EnqueueOutcome::Queued);
    }
    assert_eq!(
        s.cancel(&gone.players[0], &gone.id).await.unwrap(),
        CancelOutcome::Cancelled
    );
    // A worker holds some of the eu pool (the held one among them).
    let claimed = s
        .claim("w", &pool("eu"), 100, 0.0, Duration::from_secs(30))
        .await
        .unwrap();
    assert!(claimed.iter().any(|c| c.ticket.id == held.id));
    let cutoff = now_ms() - 10_000;
    let mut found: Vec<TicketId> = s
        .overdue(&pool("eu"), cutoff, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    found.sort();
    let mut want = vec![old.id.clone(), held.id.clone()];
    want.sort();
    assert_eq!(found, want);
    assert_eq!(s.overdue(&pool("eu"), cutoff, 1).await.unwrap().len(), 1);
    for t in [&old, &held] {
        assert_eq!(
            s.give_up(&t.players[0], &t.id, "no_match_found")
                .await
                .unwrap(),
            CancelOutcome::Cancelled
        );
        let v = s.ticket(&t.players[0], &t.id).await.unwrap().unwrap();
        assert_eq!(v.status, TicketStatus::TimedOut);
        assert_eq!(v.reason.as_deref(), Some("no_match_found"));
    }
    // Gone from both regions' lists; giving up twice changes nothing.
    assert!(
        s.overdue(&pool("na"), cutoff, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.give_up(&old.players[0], &old.id, "no_match_found")
            .await
            .unwrap(),
        CancelOutcome::AlreadyCancelled
    );
    // The player may queue again.
    assert_eq!(
        s.enqueue(&ticket("old", 0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
}

/// A region being retired (`CLOSED_REGIONS`): a ticket taken out of its pool
/// there (queued, or held by a worker) waits on in its other region, found
/// and claimed there alone; taking it out again, or a ticket in a match,
/// changes nothing; a purge of the closed pool does not lose it, and its
/// player can still cancel it.
async fn a_ticket_leaves_one_pool_and_waits_in_the_other(h: Harness) {
    let s: &dyn Store = &*h.store;
    // Both best in na, the region closing.
    let queued = waiting_in("lv-queued", 30_000, ["na", "eu"]);
    let held = waiting_in("lv-held", 20_000, ["na", "eu"]);
    for t in [&queued, &held] {
        assert_eq!(s.enqueue(t).await.unwrap(), EnqueueOutcome::Queued);
        let v = s.ticket(&t.players[0], &t.id).await.unwrap().unwrap();
        assert_eq!(v.region, "na");
    }
    // A worker holds the other one in na.
    let claimed = s
        .claim("w", &pool("na"), 1, 1500.0, Duration::from_secs(30))
        .await
        .unwrap();
    let ids: Vec<&TicketId> = claimed.iter().map(|c| &c.ticket.id).collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let (taken, other) = if *ids[0] == held.id {
        (&held, &queued)
    } else {
        (&queued, &held)
    };
    for t in [taken, other] {
        assert!(
            s.leave_pool(&pool("na"), &t.players[0], &t.id, "region_closed")
                .await
                .unwrap(),
            "{}",
            t.id
        );
    }
    // Once only.
    assert!(
        !s.leave_pool(&pool("na"), &other.players[0], &other.id, "region_closed")
            .await
            .unwrap()
    );
    let cutoff = now_ms() - 10_000;
    assert!(
        s.overdue(&pool("na"), cutoff, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(s.overdue(&pool("eu"), cutoff, 100).await.unwrap().len(), 2);
    for t in [&queued, &held] {
        let v = s.ticket(&t.players[0], &t.id).await.unwrap().unwrap();
        assert_eq!(v.status, TicketStatus::Queued, "{}", t.id);
        assert_eq!(v.reason, None);
        // It names the region it waits in, no longer its best one.
        assert_eq!(v.region, "eu", "{v:?}");
    }
    // The worker's release does not put its ticket back in na; nothing is
    // left there to claim; both are claimed in eu.
    s.release("w", &pool("na"), None).await.unwrap();
    assert!(
        s.claim("w2", &pool("na"), 10, 1500.0, Duration::from_secs(30))
            .await
            .unwrap()
            .is_empty()
    );
    // A purge of the closed pool's finished entries keeps the tickets.
    s.purge(&pool("na"), Duration::ZERO).await.unwrap();
    for t in [&queued, &held] {
        let v = s.ticket(&t.players[0], &t.id).await.unwrap().unwrap();
        assert_eq!(v.status, TicketStatus::Queued, "{}", t.id);
    }
    let mut in_eu: Vec<TicketId> = s
        .claim("w3", &pool("eu"), 10, 1500.0, Duration::from_secs(30))
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.ticket.id)
        .collect();
    in_eu.sort();
    let mut want = vec![queued.id.clone(), held.id.clone()];
    want.sort();
    assert_eq!(in_eu, want);
    s.release("w3", &pool("eu"), None).await.unwrap();
    // Its player cancels it: it ends, in eu.
    assert_eq!(
        s.cancel(&queued.players[0], &queued.id).await.unwrap(),
        CancelOutcome::Cancelled
    );
    let v = s
        .ticket(&queued.players[0], &queued.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(v.status, TicketStatus::Cancelled);
    assert_eq!(v.reason, None);
    // Given up in eu, the other ends there.
    assert_eq!(
        s.give_up(&held.players[0], &held.id, "region_closed")
            .await
            .unwrap(),
        CancelOutcome::Cancelled
    );
    let v = s.ticket(&held.players[0], &held.id).await.unwrap().unwrap();
    assert_eq!(
        (v.status, v.reason.as_deref()),
        (TicketStatus::TimedOut, Some("region_closed"))
    );
}

crate::every_deployment!(
    overdue_tickets_are_found_and_end_timed_out,
    a_ticket_leaves_one_pool_and_waits_in_the_other
);
