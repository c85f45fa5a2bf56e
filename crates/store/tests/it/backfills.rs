//! Backfills on the memory store, Redis and a Redis Cluster: only the hosting
//! server (or a trusted backend) opens one, only while its match is assigned;
//! every change and the close raise the generation; a closed, lapsed or ended
//! one is gone from the reads. A fill commits only at the generation it read
//! and with its seats free (so of two workers racing for one seat, one wins),
//! joins its match only while that runs, and gives its seats back once.

use crate::Harness;
use crate::lifecycle::{commit, lifecycle, pool, ticket};
use crate::several::make_match;
use mm_domain::{
    FillOf, Match, MatchId, MatchStatus, Placement, ServerAssignment, Ticket, reasons,
};
use mm_store::{
    BackfillOutcome, EnqueueOutcome, FillMark, JoinOutcome, Store, Transition, UnjoinOutcome,
};
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

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
    assert_eq!(
        s.open_backfills(&pool()).await.unwrap(),
        vec![second.clone()]
    );
    // The host's refresh keeps it as it is, for longer; another server's
    // does nothing.
    assert!(
        !s.refresh_backfill(&pool(), &m.id, Some("gs-2"), TTL * 2)
            .await
            .unwrap()
    );
    assert!(
        s.refresh_backfill(&pool(), &m.id, Some("gs-1"), TTL * 2)
            .await
            .unwrap()
    );
    let kept = s.backfill(&pool(), &m.id).await.unwrap().unwrap();
    assert_eq!((kept.generation, &kept.open), (2, &second.open));
    assert!(kept.expires_at > second.expires_at);
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
    assert!(
        !s.refresh_backfill(&pool(), &m.id, Some("gs-1"), short)
            .await
            .unwrap(),
        "a lapsed backfill is not revived"
    );
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

/// A running match of a1 and b1 on gs-1 with a backfill of one seat on
/// team 0 (generation 1).
async fn running(s: &dyn Store) -> Match {
    let (a, b) = (ticket(&["a1"], 0), ticket(&["b1"], 0));
    let m = commit(s, &[&a, &b], lifecycle(false, Placement::Servers)).await;
    assign(s, &m.id).await;
    let b = opened(
        s.open_backfill(&pool(), &m.id, Some("gs-1"), &[1, 0], TTL)
            .await
            .unwrap(),
    );
    assert_eq!(b.generation, 1);
    m
}

/// Queues `t` and has `worker` claim it.
async fn claimed_by(s: &dyn Store, worker: &str, t: &Ticket) {
    assert_eq!(s.enqueue(t).await.unwrap(), EnqueueOutcome::Queued);
    let got = s.claim(worker, &pool(), 1, 0.0, LEASE).await.unwrap();
    assert_eq!(got.len(), 1);
}

/// Commits fill `f` of tickets `worker` holds, and settles it.
async fn committed(s: &dyn Store, worker: &str, f: &Match) {
    let done = s
        .complete(worker, &pool(), std::slice::from_ref(f), LEASE)
        .await
        .unwrap();
    assert_eq!(done, vec![f.id.clone()]);
    s.fan_out(&pool(), std::slice::from_ref(f)).await.unwrap();
}

/// Joins committed fill `f` to its match.
async fn join_ok(s: &dyn Store, f: &Match) {
    assert!(matches!(
        s.join_fill(&pool(), &f.id).await.unwrap(),
        JoinOutcome::Joined(_)
    ));
}

/// A fill of `running`'s team 0 by `t`, read at `generation`.
fn fill_of(running: &Match, t: &Ticket, generation: u64, ready_check: bool) -> Match {
    let mut m = make_match(&pool(), &[t]);
    m.lifecycle = lifecycle(ready_check, Placement::Servers);
    m.tickets[0].team = 0;
    m.decided.backfill = Some(FillOf {
        match_id: running.id.clone(),
        generation,
    });
    m
}

async fn a_seat_is_filled_once_and_the_filler_joins(h: Harness) {
    let s: &dyn Store = &*h.store;
    let m = running(s).await;
    let (c, d) = (ticket(&["c1"], 0), ticket(&["d1"], 0));
    claimed_by(s, "w1", &c).await;
    claimed_by(s, "w2", &d).await;
    // Two workers read generation 1 and race for its one seat, at once:
    // exactly one commits.
    let (a, b) = (fill_of(&m, &c, 1, false), fill_of(&m, &d, 1, false));
    let p = pool();
    let (won_a, won_b) = tokio::join!(
        s.complete("w1", &p, std::slice::from_ref(&a), LEASE),
        s.complete("w2", &p, std::slice::from_ref(&b), LEASE)
    );
    let (won_a, won_b) = (won_a.unwrap(), won_b.unwrap());
    assert_eq!(won_a.len() + won_b.len(), 1, "a seat filled twice");
    let (fc, loser, c, d) = if won_a.is_empty() {
        (b, "w1", d, c)
    } else {
        (a, "w2", c, d)
    };
    s.fan_out(&pool(), std::slice::from_ref(&fc)).await.unwrap();
    // The seat is taken and the generation moved on; the loser's ticket goes back.
    assert_eq!(
        s.backfill(&pool(), &m.id)
            .await
            .unwrap()
            .unwrap()
            .generation,
        2
    );
    assert!(s.open_backfills(&pool()).await.unwrap().is_empty());
    assert_eq!(s.release(loser, &pool(), None).await.unwrap(), 1);
    // Reopened with a seat: a fill that read the old generation is still refused.
    s.open_backfill(&pool(), &m.id, None, &[1, 0], TTL)
        .await
        .unwrap();
    claimed_by(s, loser, &d).await;
    let stale = fill_of(&m, &d, 1, false);
    assert!(
        s.complete(loser, &pool(), std::slice::from_ref(&stale), LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    // The winner is placing, then joins: the match gains its ticket and lists
    // it, and the fill is on the match's server.
    let (rec, _) = s.match_record(&pool(), &fc.id).await.unwrap().unwrap();
    assert_eq!(rec.status, MatchStatus::Placing);
    let server = match s.join_fill(&pool(), &fc.id).await.unwrap() {
        JoinOutcome::Joined(server) => server,
        other => panic!("did not join: {other:?}"),
    };
    assert_eq!(server.server_id, "gs-1");
    assert_eq!(
        s.join_fill(&pool(), &fc.id).await.unwrap(),
        JoinOutcome::Moved,
        "joined twice"
    );
    let (parent, _) = s.match_record(&pool(), &m.id).await.unwrap().unwrap();
    assert_eq!(parent.fills, vec![fc.id.clone()]);
    assert_eq!(parent.matched.player_count(), 3);
    assert_eq!(parent.matched.ticket_of(&c.players[0]).unwrap().team, 0);
    let (rec, _) = s.match_record(&pool(), &fc.id).await.unwrap().unwrap();
    assert_eq!(rec.status, MatchStatus::Assigned);
    assert_eq!(rec.server, Some(server));
    assert_eq!(
        s.current_match(&c.players[0]).await.unwrap(),
        Some((pool(), fc.id.clone()))
    );
}

async fn a_fill_cannot_join_a_match_that_ended(h: Harness) {
    let s: &dyn Store = &*h.store;
    let m = running(s).await;
    let c = ticket(&["c1"], 0);
    claimed_by(s, "w1", &c).await;
    let fc = fill_of(&m, &c, 1, false);
    committed(s, "w1", &fc).await;
    let over =
        Transition::new(&[MatchStatus::Assigned], MatchStatus::Failed).reason(reasons::SERVER_LOST);
    assert!(s.transition(&pool(), &m.id, over).await.unwrap());
    assert_eq!(
        s.join_fill(&pool(), &fc.id).await.unwrap(),
        JoinOutcome::Closed
    );
    // Not a fill at all: nothing to join.
    assert_eq!(
        s.join_fill(&pool(), &m.id).await.unwrap(),
        JoinOutcome::Moved
    );
    let unknown = MatchId::new("m-nobody").unwrap();
    assert_eq!(
        s.join_fill(&pool(), &unknown).await.unwrap(),
        JoinOutcome::Moved
    );
    // No backfill of a match that ended takes seats back.
    assert!(!s.return_seats(&pool(), &fc).await.unwrap());
}

async fn a_fill_that_ends_early_gives_its_seats_back_once(h: Harness) {
    let s: &dyn Store = &*h.store;
    let m = running(s).await;
    let c = ticket(&["c1"], 0);
    claimed_by(s, "w1", &c).await;
    let fc = fill_of(&m, &c, 1, true);
    committed(s, "w1", &fc).await;
    let (rec, _) = s.match_record(&pool(), &fc.id).await.unwrap().unwrap();
    assert_eq!(rec.status, MatchStatus::RequiresAcceptance);
    // Not placing yet: it does not join.
    assert_eq!(
        s.join_fill(&pool(), &fc.id).await.unwrap(),
        JoinOutcome::Moved
    );
    let declined = Transition::new(&[MatchStatus::RequiresAcceptance], MatchStatus::Cancelled)
        .reason(reasons::DECLINED);
    assert!(s.transition(&pool(), &fc.id, declined).await.unwrap());
    assert!(s.return_seats(&pool(), &fc).await.unwrap());
    assert!(
        !s.return_seats(&pool(), &fc).await.unwrap(),
        "given back twice"
    );
    let b = s.backfill(&pool(), &m.id).await.unwrap().unwrap();
    assert_eq!((b.open, b.generation), (vec![1, 0], 3));
}

async fn a_refused_fill_leaves_its_match_and_an_acknowledged_one_stays(h: Harness) {
    let s: &dyn Store = &*h.store;
    let m = running(s).await;
    let (c, d) = (ticket(&["c1"], 0), ticket(&["d1"], 0));
    claimed_by(s, "w1", &c).await;
    let fc = fill_of(&m, &c, 1, false);
    committed(s, "w1", &fc).await;
    join_ok(s, &fc).await;
    assert!(
        s.mark_fill(&pool(), &fc.id, FillMark::Notified)
            .await
            .unwrap()
    );
    let (rec, _) = s.match_record(&pool(), &fc.id).await.unwrap().unwrap();
    let joined = rec.joined.expect("joined");
    assert!(joined.notified && !joined.acknowledged && joined.at > 0);
    // Refused: out of the match, failed with no server (its players requeue).
    assert_eq!(
        s.unjoin_fill(&pool(), &fc.id, reasons::BACKFILL_REFUSED)
            .await
            .unwrap(),
        UnjoinOutcome::Done
    );
    let (parent, _) = s.match_record(&pool(), &m.id).await.unwrap().unwrap();
    assert_eq!(parent.matched.player_count(), 2);
    assert!(parent.fills.is_empty());
    let (rec, _) = s.match_record(&pool(), &fc.id).await.unwrap().unwrap();
    assert_eq!(
        (rec.status, rec.server, rec.reason.as_deref()),
        (MatchStatus::Failed, None, Some(reasons::BACKFILL_REFUSED))
    );
    assert_eq!(
        s.unjoin_fill(&pool(), &fc.id, reasons::BACKFILL_REFUSED)
            .await
            .unwrap(),
        UnjoinOutcome::Moved
    );
    assert!(
        !s.mark_fill(&pool(), &fc.id, FillMark::Acknowledged)
            .await
            .unwrap()
    );
    // Another fill, acknowledged: it stays.
    s.open_backfill(&pool(), &m.id, None, &[1, 0], TTL)
        .await
        .unwrap();
    let generation = s
        .backfill(&pool(), &m.id)
        .await
        .unwrap()
        .unwrap()
        .generation;
    claimed_by(s, "w2", &d).await;
    let fd = fill_of(&m, &d, generation, false);
    committed(s, "w2", &fd).await;
    join_ok(s, &fd).await;
    assert!(
        s.mark_fill(&pool(), &fd.id, FillMark::Acknowledged)
            .await
            .unwrap()
    );
    assert_eq!(
        s.unjoin_fill(&pool(), &fd.id, reasons::BACKFILL_UNACKNOWLEDGED)
            .await
            .unwrap(),
        UnjoinOutcome::Moved
    );
    let (parent, _) = s.match_record(&pool(), &m.id).await.unwrap().unwrap();
    assert_eq!(parent.fills, vec![fd.id.clone()]);
    assert_eq!(parent.matched.player_count(), 3);
}

async fn a_player_who_left_is_recorded_by_the_host(h: Harness) {
    let s: &dyn Store = &*h.store;
    let m = running(s).await;
    let a1 = mm_domain::PlayerId::new("a1").unwrap();
    assert!(
        !s.player_left(&pool(), &m.id, Some("gs-2"), &a1)
            .await
            .unwrap()
    );
    assert!(
        s.player_left(&pool(), &m.id, Some("gs-1"), &a1)
            .await
            .unwrap()
    );
    assert!(s.player_left(&pool(), &m.id, None, &a1).await.unwrap());
    let (rec, _) = s.match_record(&pool(), &m.id).await.unwrap().unwrap();
    assert_eq!(rec.left.keys().collect::<Vec<_>>(), vec![&a1]);
    let over =
        Transition::new(&[MatchStatus::Assigned], MatchStatus::Failed).reason(reasons::SERVER_LOST);
    assert!(s.transition(&pool(), &m.id, over).await.unwrap());
    let b1 = mm_domain::PlayerId::new("b1").unwrap();
    assert!(!s.player_left(&pool(), &m.id, None, &b1).await.unwrap());
}

crate::every_deployment!(
    a_player_who_left_is_recorded_by_the_host,
    a_refused_fill_leaves_its_match_and_an_acknowledged_one_stays,
    only_the_host_opens_while_the_match_runs,
    an_unrefreshed_backfill_lapses,
    a_seat_is_filled_once_and_the_filler_joins,
    a_fill_cannot_join_a_match_that_ended,
    a_fill_that_ends_early_gives_its_seats_back_once
);
