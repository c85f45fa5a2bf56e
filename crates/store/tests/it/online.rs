//! Players' socket notes: a socket noted open counts until its ingress's
//! own note of itself runs out; a player is last seen at the latest of their
//! notes; an ingress's note that its last socket closed ends what it noted
//! before; notes long past are forgotten.

use crate::Harness;
use mm_domain::{PlayerId, now_ms};
use mm_store::Store;

async fn a_player_is_last_seen_at_the_latest_note(h: Harness) {
    let s: &dyn Store = &*h.store;
    let ann = PlayerId::new("on-ann").unwrap();
    let bob = PlayerId::new("on-bob").unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), None, "never seen");
    let now = now_ms();
    s.alive("ingress-a", now + 30_000).await.unwrap();
    s.hold("ingress-a", &ann, true, now).await.unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 30_000));
    assert_eq!(s.last_seen(&bob).await.unwrap(), None, "only whom it names");
    // The ingress renews its own note: her socket counts on.
    s.alive("ingress-a", now + 35_000).await.unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 35_000));
    // A second ingress, alive a little longer, holds a socket of hers too.
    s.alive("ingress-b", now + 40_000).await.unwrap();
    s.hold("ingress-b", &ann, true, now).await.unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 40_000));
    // Her socket on b closes: a's still counts.
    s.hold("ingress-b", &ann, false, now + 1).await.unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 35_000));
    // And on a: she was last seen then.
    s.hold("ingress-a", &ann, false, now + 5).await.unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 5));

    // A socket on an ingress that never noted itself alive (or was forgotten)
    // counts for nothing.
    s.hold("ingress-x", &bob, true, now).await.unwrap();
    assert_eq!(s.last_seen(&bob).await.unwrap(), None);
}

async fn a_note_long_past_is_forgotten(h: Harness) {
    let s: &dyn Store = &*h.store;
    let cid = PlayerId::new("on-cid").unwrap();
    // Last seen an hour ago: longer than any grace, so no note is kept.
    s.hold("ingress-a", &cid, false, now_ms() - 3_600_000)
        .await
        .unwrap();
    assert_eq!(s.last_seen(&cid).await.unwrap(), None);
}

crate::every_deployment!(
    a_player_is_last_seen_at_the_latest_note,
    a_note_long_past_is_forgotten
);
