//! Block lists on the memory store, Redis and a Redis Cluster: a block is kept
//! with the blocker, bounded at 200, idempotent, and undone by an unblock; a
//! new ticket carries whom its players blocked, not who blocked them (the
//! engine reads both tickets' lists; Redis on one node reads them, activates
//! and queues a solo ticket in one call); a block made while both wait reaches
//! their tickets, held by a claim worker or a pool's leader, and a match
//! formed from the copies without it does not commit.

use crate::Harness;
use crate::lifecycle::{pool, ticket};
use crate::several::make_match;
use mm_domain::PlayerId;
use mm_store::{
    Blocked, Claimed, EnqueueOutcome, LockName, MAX_BLOCKS, Rate, RateKey, Store, TokenLock,
};
use std::time::Duration;

fn p(s: &str) -> PlayerId {
    PlayerId::new(s).unwrap()
}

async fn blocks_are_kept_with_the_blocker_and_bounded(h: Harness) {
    let s: &dyn Store = &*h.store;
    assert_eq!(s.block(&p("ann"), &p("bob")).await.unwrap(), Blocked::Done);
    assert_eq!(s.block(&p("ann"), &p("bob")).await.unwrap(), Blocked::Done);
    assert_eq!(s.block(&p("cy"), &p("ann")).await.unwrap(), Blocked::Done);
    assert_eq!(s.blocks(&p("ann")).await.unwrap(), vec![p("bob")]);
    // A ticket of Ann's carries whom she blocked, not who blocked her (Cy's
    // carries Ann); a party carries its members' lists together.
    assert_eq!(s.kept_apart(&[p("ann")]).await.unwrap(), vec![p("bob")]);
    assert_eq!(s.kept_apart(&[p("cy")]).await.unwrap(), vec![p("ann")]);
    assert!(s.kept_apart(&[p("bob")]).await.unwrap().is_empty());
    assert_eq!(
        s.kept_apart(&[p("bob"), p("cy"), p("ann")]).await.unwrap(),
        vec![p("ann"), p("bob")]
    );
    assert!(s.unblock(&p("ann"), &p("bob")).await.unwrap());
    assert!(!s.unblock(&p("ann"), &p("bob")).await.unwrap());
    assert!(s.kept_apart(&[p("ann")]).await.unwrap().is_empty());
    assert!(s.blocks(&p("ann")).await.unwrap().is_empty());
    // At most MAX_BLOCKS; one already there may be blocked again.
    for i in 0..MAX_BLOCKS {
        assert_eq!(
            s.block(&p("eve"), &p(&format!("x{i}"))).await.unwrap(),
            Blocked::Done
        );
    }
    assert_eq!(
        s.block(&p("eve"), &p("one-more")).await.unwrap(),
        Blocked::Full
    );
    assert_eq!(s.block(&p("eve"), &p("x7")).await.unwrap(), Blocked::Done);
    assert_eq!(s.blocks(&p("eve")).await.unwrap().len(), MAX_BLOCKS);
    assert!(s.kept_apart(&[p("one-more")]).await.unwrap().is_empty());
}

/// What a worker claiming the duel pool finds of each queued ticket: its id
/// and the players it is kept apart from.
async fn queued(s: &dyn Store) -> Vec<(String, Vec<PlayerId>)> {
    let claimed = s
        .claim("w", &pool(), 100, 0.0, Duration::from_secs(30))
        .await
        .unwrap();
    let out = claimed
        .iter()
        .map(|c| (c.ticket.id.to_string(), c.ticket.blocks.clone()))
        .collect();
    s.release("w", &pool(), None).await.unwrap();
    out
}

async fn a_new_ticket_carries_its_players_blocks(h: Harness) {
    let s: &dyn Store = &*h.store;
    let limiter = RateKey::player("tickets", p("fay"));
    let rate = Rate {
        count: 3,
        period: Duration::from_secs(60),
    };
    let charge = (limiter, rate);
    // Nobody blocked: queued, kept apart from nobody.
    let mut first = ticket(&["fay"], 0);
    assert_eq!(
        s.enqueue_new(&mut first, Some(&charge)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert_eq!(queued(s).await, vec![(first.id.to_string(), vec![])]);
    // A second ticket for the mode: refused, and charged all the same.
    let mut second = ticket(&["fay"], 0);
    assert!(matches!(
        s.enqueue_new(&mut second, Some(&charge)).await.unwrap(),
        EnqueueOutcome::PlayerBusy(_, id) if id == first.id
    ));
    // Once the first is over, fay blocks gus and gwen blocks fay: the new one
    // takes its place and carries fay's block (not gwen's), in the pool too.
    assert_eq!(
        s.cancel(&p("fay"), &first.id).await.unwrap(),
        mm_store::CancelOutcome::Cancelled
    );
    assert_eq!(s.block(&p("fay"), &p("gus")).await.unwrap(), Blocked::Done);
    assert_eq!(s.block(&p("gwen"), &p("fay")).await.unwrap(), Blocked::Done);
    let mut third = ticket(&["fay"], 0);
    assert_eq!(
        s.enqueue_new(&mut third, Some(&charge)).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert_eq!(third.blocks, vec![p("gus")]);
    assert_eq!(
        queued(s).await,
        vec![(third.id.to_string(), vec![p("gus")])]
    );
    // Three calls charged: the fourth is over the limit and changes nothing.
    assert_eq!(
        s.cancel(&p("fay"), &third.id).await.unwrap(),
        mm_store::CancelOutcome::Cancelled
    );
    let mut fourth = ticket(&["fay"], 0);
    assert!(matches!(
        s.enqueue_new(&mut fourth, Some(&charge)).await.unwrap(),
        EnqueueOutcome::Limited(_)
    ));
    assert!(queued(s).await.is_empty());
    // Unlimited, it is queued.
    assert_eq!(
        s.enqueue_new(&mut fourth, None).await.unwrap(),
        EnqueueOutcome::Queued
    );
    assert_eq!(queued(s).await.len(), 1);
}

/// Each claimed ticket's first player and whom the ticket is kept apart from.
fn apart(claimed: &[Claimed]) -> Vec<(String, Vec<PlayerId>)> {
    let mut out: Vec<_> = claimed
        .iter()
        .map(|c| (c.ticket.players[0].to_string(), c.ticket.blocks.clone()))
        .collect();
    out.sort();
    out
}

/// Hal and ivy wait, held by a claim worker, when hal blocks ivy: the
/// worker's match of the two (formed before) does not commit, both are back
/// in the queue with the block, and jay's ticket is untouched.
async fn a_block_reaches_tickets_a_worker_holds(h: Harness) {
    let s: &dyn Store = &*h.store;
    let mut tickets = Vec::new();
    for who in ["hal", "ivy", "jay"] {
        let mut t = ticket(&[who], 0);
        assert_eq!(
            s.enqueue_new(&mut t, None).await.unwrap(),
            EnqueueOutcome::Queued
        );
        tickets.push(t);
    }
    let lease = Duration::from_secs(30);
    let held = s.claim("w", &pool(), 10, 0.0, lease).await.unwrap();
    assert_eq!(held.len(), 3);
    let before = make_match(
        &pool(),
        &[&held[0].ticket, &held[1].ticket, &held[2].ticket],
    );
    assert_eq!(s.block(&p("hal"), &p("ivy")).await.unwrap(), Blocked::Done);
    s.keep_apart_waiting(&p("hal"), &p("ivy")).await.unwrap();
    let done = s.complete("w", &pool(), &[before], lease).await.unwrap();
    assert!(
        done.is_empty(),
        "a match of hal and ivy committed: {done:?}"
    );
    s.release("w", &pool(), None).await.unwrap();
    let again = s.claim("w", &pool(), 10, 0.0, lease).await.unwrap();
    assert_eq!(
        apart(&again),
        vec![
            ("hal".into(), vec![p("ivy")]),
            ("ivy".into(), vec![p("hal")]),
            ("jay".into(), vec![]),
        ]
    );
    // A block already there changes nothing but the copies' count of
    // rewrites (an unblock that read them before fails its rewrite); the
    // tickets are not taken from the worker.
    s.keep_apart_waiting(&p("ivy"), &p("hal")).await.unwrap();
    let m = make_match(&pool(), &[&again[0].ticket, &again[2].ticket]);
    // Each copy's rewrites: one per block that reached it.
    let revs = |c: &[Claimed]| {
        let mut r: Vec<_> = c
            .iter()
            .map(|c| (c.ticket.players[0].to_string(), c.ticket.blocks_rev))
            .collect();
        r.sort();
        r
    };
    assert_eq!(
        revs(&again),
        vec![("hal".into(), 1), ("ivy".into(), 1), ("jay".into(), 0)]
    );
    let done = s
        .complete("w", &pool(), std::slice::from_ref(&m), lease)
        .await
        .unwrap();
    assert_eq!(done, vec![m.id]);
    s.release("w", &pool(), None).await.unwrap();
    let left = s.claim("w", &pool(), 10, 0.0, lease).await.unwrap();
    assert_eq!(left.len(), 1);
    let counted = if left[0].ticket.blocks.is_empty() {
        0
    } else {
        2
    };
    assert_eq!(left[0].ticket.blocks_rev, counted, "{:?}", left[0].ticket);
}

/// The same with a pool's leader holding them: its match of the two does not
/// commit, and its next read hands both over again, with the block.
async fn a_block_reaches_tickets_a_leader_holds(h: Harness) {
    let s: &dyn Store = &*h.store;
    for who in ["kim", "lou"] {
        let mut t = ticket(&[who], 0);
        assert_eq!(
            s.enqueue_new(&mut t, None).await.unwrap(),
            EnqueueOutcome::Queued
        );
    }
    let lease = Duration::from_secs(30);
    let lock = TokenLock::new(LockName::pool_leader(&pool()), lease);
    let fence = lock.acquire(s).await.unwrap().expect("a free pool");
    s.adopt("lead", &pool(), fence).await.unwrap();
    let held = s
        .lead_claim("lead", &pool(), fence, 100, lease)
        .await
        .unwrap();
    assert_eq!(apart(&held).len(), 2);
    let before = make_match(&pool(), &[&held[0].ticket, &held[1].ticket]);
    assert_eq!(s.block(&p("lou"), &p("kim")).await.unwrap(), Blocked::Done);
    s.keep_apart_waiting(&p("lou"), &p("kim")).await.unwrap();
    let done = s
        .lead_complete("lead", &pool(), fence, &[before], lease)
        .await
        .unwrap();
    assert!(
        done.is_empty(),
        "a match of kim and lou committed: {done:?}"
    );
    let again = s
        .lead_claim("lead", &pool(), fence, 100, lease)
        .await
        .unwrap();
    assert_eq!(
        apart(&again),
        vec![
            ("kim".into(), vec![p("lou")]),
            ("lou".into(), vec![p("kim")])
        ]
    );
    assert!(again.iter().all(|c| !c.first_claim));
    let d = s.depths(&pool()).await.unwrap();
    assert_eq!(d.queued + d.processing, 2, "both still waiting");
}

/// A block made while a ticket is being created (activated, its block lists
/// read, not yet queued) waits for it to be queued, then reaches it; a player
/// whose only ticket ended is not waited for.
async fn a_block_waits_for_a_ticket_on_its_way(h: Harness) {
    let s: &dyn Store = &*h.store;
    let t = ticket(&["max"], 0);
    assert!(s.activate(&t).await.unwrap().is_ok());
    assert_eq!(s.block(&p("nat"), &p("max")).await.unwrap(), Blocked::Done);
    let queueing = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        s.enqueue_entries(&t).await.unwrap();
    };
    let (nat, max) = (p("nat"), p("max"));
    let (blocked, ()) = tokio::join!(s.keep_apart_waiting(&nat, &max), queueing);
    blocked.unwrap();
    assert_eq!(queued(s).await, vec![(t.id.to_string(), vec![p("nat")])]);
    assert_eq!(
        s.cancel(&p("max"), &t.id).await.unwrap(),
        mm_store::CancelOutcome::Cancelled
    );
    s.keep_apart_waiting(&p("max"), &p("oz")).await.unwrap();
    assert!(queued(s).await.is_empty());
}

/// An activation reads whom the ticket's players blocked: for a party, every
/// member's block list, once each, sorted, without who blocked them (Redis
/// reads them in the members' activation scripts).
async fn an_activation_reads_the_block_lists(h: Harness) {
    let s: &dyn Store = &*h.store;
    for (who, whom) in [
        ("pam", "zed"),
        ("quin", "abe"),
        ("abe", "pam"),
        ("pam", "abe"),
        ("cole", "quin"),
    ] {
        assert_eq!(s.block(&p(who), &p(whom)).await.unwrap(), Blocked::Done);
    }
    let t = ticket(&["pam", "quin"], 0);
    let activated = s.activate_apart(&t, None).await.unwrap().unwrap();
    assert_eq!(activated.marks, vec![0, 0]);
    assert_eq!(activated.blocks, vec![p("abe"), p("zed")]);
    s.enqueue_entries(&t).await.unwrap();
    // A second ticket of pam's, the first queued: refused.
    let again = ticket(&["pam"], 0);
    assert!(matches!(
        s.activate_apart(&again, None).await.unwrap(),
        Err(EnqueueOutcome::PlayerBusy(_, id)) if id == t.id
    ));
    // A player nobody blocked reads none.
    let lone = ticket(&["rex"], 0);
    let activated = s.activate_apart(&lone, None).await.unwrap().unwrap();
    assert!(activated.blocks.is_empty());
}

/// The claimed tickets' copy of the ticket whose first player is `who`.
fn of<'a>(claimed: &'a [Claimed], who: &str) -> &'a mm_domain::Ticket {
    &claimed
        .iter()
        .find(|c| c.ticket.players[0].as_str() == who)
        .expect("claimed")
        .ticket
}

/// An unblock reaches the waiting tickets: uma's copy, held by a claim
/// worker, loses vik and is taken from the worker (its match formed before
/// does not commit); the party of xen and yuri, who both blocked vik, keeps
/// vik until both unblock; a block made while both waited (ole of pia, on
/// both copies) goes from both with the unblock.
async fn an_unblock_reaches_waiting_tickets(h: Harness) {
    let s: &dyn Store = &*h.store;
    for (who, whom) in [("uma", "vik"), ("xen", "vik"), ("yuri", "vik")] {
        assert_eq!(s.block(&p(who), &p(whom)).await.unwrap(), Blocked::Done);
    }
    for players in [&["uma"][..], &["vik"], &["xen", "yuri"], &["ole"], &["pia"]] {
        let mut t = ticket(players, 0);
        assert_eq!(
            s.enqueue_new(&mut t, None).await.unwrap(),
            EnqueueOutcome::Queued
        );
    }
    assert_eq!(s.block(&p("ole"), &p("pia")).await.unwrap(), Blocked::Done);
    s.keep_apart_waiting(&p("ole"), &p("pia")).await.unwrap();
    let lease = Duration::from_secs(30);
    let held = s.claim("w", &pool(), 10, 0.0, lease).await.unwrap();
    assert_eq!(
        apart(&held),
        vec![
            ("ole".into(), vec![p("pia")]),
            ("pia".into(), vec![p("ole")]),
            ("uma".into(), vec![p("vik")]),
            ("vik".into(), vec![]),
            ("xen".into(), vec![p("vik")]),
        ]
    );
    let before = make_match(&pool(), &[of(&held, "uma"), of(&held, "pia")]);
    assert!(s.unblock(&p("uma"), &p("vik")).await.unwrap());
    s.release_waiting(&p("uma"), &p("vik")).await.unwrap();
    let done = s.complete("w", &pool(), &[before], lease).await.unwrap();
    assert!(done.is_empty(), "a match of uma's held copy committed");
    assert!(s.unblock(&p("yuri"), &p("vik")).await.unwrap());
    s.release_waiting(&p("yuri"), &p("vik")).await.unwrap();
    assert!(s.unblock(&p("ole"), &p("pia")).await.unwrap());
    s.release_waiting(&p("ole"), &p("pia")).await.unwrap();
    s.release("w", &pool(), None).await.unwrap();
    let again = s.claim("w", &pool(), 10, 0.0, lease).await.unwrap();
    assert_eq!(
        apart(&again),
        vec![
            ("ole".into(), vec![]),
            ("pia".into(), vec![]),
            ("uma".into(), vec![]),
            ("vik".into(), vec![]),
            ("xen".into(), vec![p("vik")]),
        ]
    );
    s.release("w", &pool(), None).await.unwrap();
    assert!(s.unblock(&p("xen"), &p("vik")).await.unwrap());
    s.release_waiting(&p("xen"), &p("vik")).await.unwrap();
    let last = s.claim("w", &pool(), 10, 0.0, lease).await.unwrap();
    assert!(of(&last, "xen").blocks.is_empty());
    // Now uma and vik may meet.
    let m = make_match(&pool(), &[of(&last, "uma"), of(&last, "vik")]);
    let done = s
        .complete("w", &pool(), std::slice::from_ref(&m), lease)
        .await
        .unwrap();
    assert_eq!(done, vec![m.id]);
}

crate::every_deployment!(
    an_unblock_reaches_waiting_tickets,
    blocks_are_kept_with_the_blocker_and_bounded,
    an_activation_reads_the_block_lists,
    a_block_waits_for_a_ticket_on_its_way,
    a_new_ticket_carries_its_players_blocks,
    a_block_reaches_tickets_a_worker_holds,
    a_block_reaches_tickets_a_leader_holds
);
