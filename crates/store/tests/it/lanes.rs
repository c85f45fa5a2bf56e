//! Lanes (`Ticket::lane`), on the memory store, Redis and a Redis Cluster: a
//! queue is ordered by lane, then rating, and a claim's run of neighbours keeps
//! to the lane it starts in (one client build); a ticket that goes back to the
//! queue after its match was called off goes back to its lane.

use crate::lifecycle::{commit, lifecycle, pid, pool, ticket};
use crate::{Harness, ticket as rated};
use mm_domain::{Answer, Placement, Ticket, TicketId};
use std::collections::BTreeSet;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(30);

fn in_lane(mut t: Ticket, lane: u32) -> Ticket {
    t.lane = lane;
    t
}

async fn a_claim_takes_its_run_from_one_lane(h: Harness) {
    // Two builds whose ratings interleave: 1000, 1020, ... in lane 9 and
    // 1010, 1030, ... in lane 3.
    let mut lanes = std::collections::HashMap::new();
    for i in 0..10 {
        let lane = if i % 2 == 0 { 9 } else { 3 };
        let t = in_lane(rated(i, 1000.0 + 10.0 * i as f64), lane);
        lanes.insert(t.id.clone(), lane);
        h.store.enqueue(&t).await.unwrap();
    }
    let p = crate::pool();
    let lanes_of = |got: &[mm_store::Claimed]| -> BTreeSet<u32> {
        got.iter().map(|c| lanes[&c.ticket.id]).collect()
    };
    let ratings =
        |got: &[mm_store::Claimed]| -> Vec<f64> { got.iter().map(|c| c.ticket.rating).collect() };
    // A run that starts at lane 3's last ticket (rank 4 of 10) is moved back
    // within lane 3, as a run is from the queue's end.
    let top = h.store.claim("w1", &p, 3, 0.45, LEASE).await.unwrap();
    assert_eq!(ratings(&top), vec![1050.0, 1070.0, 1090.0]);
    h.store.release("w1", &p, None).await.unwrap();
    // From the bottom of the queue: lane 3's five alone, lowest rating first,
    // though seven were asked for.
    let first = h.store.claim("w1", &p, 7, 0.0, LEASE).await.unwrap();
    assert_eq!(lanes_of(&first), BTreeSet::from([3]));
    assert_eq!(
        ratings(&first),
        vec![1010.0, 1030.0, 1050.0, 1070.0, 1090.0]
    );
    // Then lane 9's.
    let second = h.store.claim("w2", &p, 5, 0.0, LEASE).await.unwrap();
    assert_eq!(lanes_of(&second), BTreeSet::from([9]));
    // Released, they go back to their lanes: a run from the middle of the
    // queue is lane 9's again.
    h.store.release("w2", &p, None).await.unwrap();
    h.store.release("w1", &p, None).await.unwrap();
    let again = h.store.claim("w3", &p, 5, 0.5, LEASE).await.unwrap();
    assert_eq!(lanes_of(&again), BTreeSet::from([9]));
}

async fn a_ticket_called_back_returns_to_its_lane(h: Harness) {
    let s = &*h.store;
    // A match in lane 9, whose ready check one player declines.
    let (a, b) = (
        in_lane(ticket(&["a1"], 0), 9),
        in_lane(ticket(&["b1"], 0), 9),
    );
    let m = commit(s, &[&a, &b], lifecycle(true, Placement::None)).await;
    s.answer(&pool(), &m.id, &pid("b1"), Answer::Declined)
        .await
        .unwrap();
    // Meanwhile a ticket rated higher queues in lane 3.
    let mut high = in_lane(ticket(&["c1"], 0), 3);
    high.rating = 2500.0;
    s.enqueue(&high).await.unwrap();
    let r = s.match_record(&pool(), &m.id).await.unwrap().unwrap().0;
    s.unwind(&pool(), &r, mm_domain::now_ms() + 60_000)
        .await
        .unwrap();
    // The accepter is back in lane 9, after lane 3's ticket though its rating
    // is lower: a run from the bottom of the queue is lane 3's alone (rated
    // alone, the accepter would come first, and the run would hold both).
    let ids = |got: Vec<mm_store::Claimed>| -> Vec<TicketId> {
        got.into_iter().map(|c| c.ticket.id).collect()
    };
    let got = s.claim("w", &pool(), 10, 0.0, LEASE).await.unwrap();
    assert_eq!(ids(got), vec![high.id.clone()]);
    let got = s.claim("w", &pool(), 10, 0.0, LEASE).await.unwrap();
    assert_eq!(ids(got), vec![a.id.clone()]);
}

crate::every_deployment!(
    a_claim_takes_its_run_from_one_lane,
    a_ticket_called_back_returns_to_its_lane
);
