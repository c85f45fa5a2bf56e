//! Parties on the memory store, Redis and a Redis Cluster: merges are unions
//! (concurrent edits converge whatever the order), a merge past the size cap is
//! refused whole, disbanding sticks, players' pointers are taken only when free
//! or stale; and a ticket withdrawn with a reason reads as cancelled with it.

use crate::{Harness, ticket};
use mm_domain::{MAX_PARTY, MAX_PENDING_INVITES, Party, PartyId, PlayerId, TicketStatus};
use mm_store::{CancelOutcome, EnqueueOutcome, PartyLimits, PartyMerge, Store};

const LIMITS: PartyLimits = PartyLimits {
    members: MAX_PARTY,
    invites: MAX_PENDING_INVITES,
};

fn p(s: &str) -> PlayerId {
    PlayerId::new(s).unwrap()
}

fn merged(m: PartyMerge) -> Party {
    match m {
        PartyMerge::Merged(p) => p,
        other => panic!("refused: {other:?}"),
    }
}

async fn merges_are_unions_and_converge(h: Harness) {
    let s: &dyn Store = &*h.store;
    let id = PartyId::random(&uuid::Uuid::new_v4().simple().to_string());
    let mut party = Party::create(id.clone(), p("alice"), 1_000, "a");
    assert_eq!(s.party(&id).await.unwrap(), None);
    assert_eq!(merged(s.merge_party(&party, LIMITS).await.unwrap()), party);
    for (i, who) in ["bob", "carol"].iter().enumerate() {
        let d = party.invite(p(who), 1_001 + i as u64, &format!("i{i}"));
        s.merge_party(&d, LIMITS).await.unwrap();
        let d = party.join(p(who), 1_010 + i as u64, &format!("j{i}"));
        s.merge_party(&d, LIMITS).await.unwrap();
    }
    let d = party.invite(p("dave"), 1_020, "i-dave");
    s.merge_party(&d, LIMITS).await.unwrap();
    let stored = s.party(&id).await.unwrap().unwrap();
    assert_eq!(stored, party);
    assert_eq!(stored.members(), [p("alice"), p("bob"), p("carol")]);
    // Two ingresses edit concurrently from the same state: alice kicks carol,
    // carol leaves, dave joins. The store ends where a replica merging all three
    // ends, whichever arrives first.
    let kick = party.clone().remove(&p("carol"), 1_030, "kick");
    let leave = party.clone().remove(&p("carol"), 1_031, "leave");
    let join = party.clone().join(p("dave"), 1_032, "join");
    for d in [&join, &leave, &kick, &join] {
        s.merge_party(d, LIMITS).await.unwrap();
    }
    let mut expected = party.clone();
    for d in [&kick, &leave, &join] {
        expected.merge(d);
    }
    let stored = s.party(&id).await.unwrap().unwrap();
    assert_eq!(stored, expected);
    assert_eq!(stored.members(), [p("alice"), p("bob"), p("dave")]);
    // The leader leaving hands over; disbanding sticks.
    let mut party = stored;
    let d = party.remove(&p("alice"), 1_040, "alice-out");
    let now = merged(s.merge_party(&d, LIMITS).await.unwrap());
    assert_eq!(now.leader, p("bob"));
    let d = party.disband();
    let now = merged(s.merge_party(&d, LIMITS).await.unwrap());
    assert!(now.disbanded && now.members().is_empty());
    let late = Party::create(id.clone(), p("bob"), 1_050, "late");
    assert!(merged(s.merge_party(&late, LIMITS).await.unwrap()).disbanded);
}

async fn a_merge_past_the_cap_changes_nothing(h: Harness) {
    const THREE: PartyLimits = PartyLimits {
        members: 3,
        invites: MAX_PENDING_INVITES,
    };
    let s: &dyn Store = &*h.store;
    let id = PartyId::random(&uuid::Uuid::new_v4().simple().to_string());
    let mut party = Party::create(id.clone(), p("m0"), 1, "c");
    s.merge_party(&party, THREE).await.unwrap();
    for i in 1..3 {
        let who = p(&format!("m{i}"));
        party.invite(who.clone(), 2, &format!("i{i}"));
        let d = party.join(who, 3, &format!("j{i}"));
        merged(s.merge_party(&d, THREE).await.unwrap());
    }
    let before = s.party(&id).await.unwrap().unwrap();
    let mut extra = party.clone();
    let d = extra.join(p("m3"), 4, "j3");
    assert_eq!(s.merge_party(&d, THREE).await.unwrap(), PartyMerge::Full);
    assert_eq!(s.party(&id).await.unwrap().unwrap(), before);
    // Once someone leaves there is room.
    let d = party.remove(&p("m1"), 5, "out");
    s.merge_party(&d, THREE).await.unwrap();
    assert!(
        merged(
            s.merge_party(&extra.join(p("m3"), 6, "j3b"), THREE)
                .await
                .unwrap()
        )
        .is_member(&p("m3"))
    );
}

async fn pointers_are_taken_only_when_free_or_stale(h: Harness) {
    let s: &dyn Store = &*h.store;
    let (one, two) = (
        PartyId::new("pt-one").unwrap(),
        PartyId::new("pt-two").unwrap(),
    );
    let who = p("erin");
    assert_eq!(s.player_party(&who).await.unwrap(), None);
    assert_eq!(s.claim_party(&who, &one, None).await.unwrap(), None);
    assert_eq!(
        s.claim_party(&who, &one, None).await.unwrap(),
        None,
        "again: no-op"
    );
    assert_eq!(
        s.claim_party(&who, &two, None).await.unwrap(),
        Some(one.clone())
    );
    assert_eq!(
        s.claim_party(&who, &two, Some(&one)).await.unwrap(),
        None,
        "stale taken over"
    );
    assert_eq!(s.player_party(&who).await.unwrap(), Some(two.clone()));
    s.release_party(&who, &one).await.unwrap();
    assert_eq!(
        s.player_party(&who).await.unwrap(),
        Some(two.clone()),
        "not the one released"
    );
    s.release_party(&who, &two).await.unwrap();
    assert_eq!(s.player_party(&who).await.unwrap(), None);
}

async fn a_withdrawn_ticket_reads_cancelled_with_its_reason(h: Harness) {
    let s: &dyn Store = &*h.store;
    let t = ticket(801, 1500.0);
    assert_eq!(s.enqueue(&t).await.unwrap(), EnqueueOutcome::Queued);
    assert_eq!(s.live_tickets(&t.owner).await.unwrap(), vec![t.id.clone()]);
    assert_eq!(
        s.withdraw(&t.owner, &t.id, Some("party_changed"))
            .await
            .unwrap(),
        CancelOutcome::Cancelled
    );
    let v = s.ticket(&t.owner, &t.id).await.unwrap().unwrap();
    assert_eq!(v.status, TicketStatus::Cancelled);
    assert_eq!(v.reason.as_deref(), Some("party_changed"));
    // The player may queue again.
    assert_eq!(
        s.enqueue(&ticket(801, 1500.0)).await.unwrap(),
        EnqueueOutcome::Queued
    );
}

/// A party holds at most `MAX_PENDING_INVITES` pending invites (a re-invite
/// counts once; a join frees one); a player has invites noted from at most as
/// many parties, and a note forgotten frees its place.
async fn invites_are_bounded_per_party_and_per_invitee(h: Harness) {
    let s: &dyn Store = &*h.store;
    let id = PartyId::random(&uuid::Uuid::new_v4().simple().to_string());
    let mut party = Party::create(id.clone(), p("lead"), 1_000, "c");
    merged(s.merge_party(&party, LIMITS).await.unwrap());
    for i in 0..MAX_PENDING_INVITES {
        let d = party.invite(p(&format!("guest{i}")), 1_001, &format!("g{i}"));
        merged(s.merge_party(&d, LIMITS).await.unwrap());
    }
    let extra = party.clone().invite(p("one-too-many"), 1_002, "x");
    assert_eq!(
        s.merge_party(&extra, LIMITS).await.unwrap(),
        PartyMerge::TooManyInvites
    );
    assert!(
        !s.party(&id)
            .await
            .unwrap()
            .unwrap()
            .is_invited(&p("one-too-many"))
    );
    let again = party.invite(p("guest0"), 1_003, "again");
    merged(s.merge_party(&again, LIMITS).await.unwrap());
    let join = party.join(p("guest1"), 1_004, "j");
    merged(s.merge_party(&join, LIMITS).await.unwrap());
    let now = merged(s.merge_party(&extra, LIMITS).await.unwrap());
    assert!(now.is_invited(&p("one-too-many")));

    let invitee = p("popular");
    let parties: Vec<PartyId> = (0..=MAX_PENDING_INVITES)
        .map(|i| PartyId::new(format!("pt-{i}-{}", uuid::Uuid::new_v4().simple())).unwrap())
        .collect();
    for party in &parties[..MAX_PENDING_INVITES] {
        assert_eq!(
            s.note_invite(&invitee, party, MAX_PENDING_INVITES)
                .await
                .unwrap(),
            Ok(())
        );
    }
    // Noted again: still one place.
    assert_eq!(
        s.note_invite(&invitee, &parties[0], MAX_PENDING_INVITES)
            .await
            .unwrap(),
        Ok(())
    );
    let last = &parties[MAX_PENDING_INVITES];
    let Err(mut noted) = s
        .note_invite(&invitee, last, MAX_PENDING_INVITES)
        .await
        .unwrap()
    else {
        panic!("a 21st invite was noted");
    };
    noted.sort();
    let mut want = parties[..MAX_PENDING_INVITES].to_vec();
    want.sort();
    assert_eq!(noted, want);
    s.forget_invite(&invitee, &parties[3]).await.unwrap();
    assert_eq!(
        s.note_invite(&invitee, last, MAX_PENDING_INVITES)
            .await
            .unwrap(),
        Ok(())
    );
}

crate::every_deployment!(
    invites_are_bounded_per_party_and_per_invitee,
    merges_are_unions_and_converge,
    a_merge_past_the_cap_changes_nothing,
    pointers_are_taken_only_when_free_or_stale,
    a_withdrawn_ticket_reads_cancelled_with_its_reason,
);
