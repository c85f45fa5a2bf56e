//! Players' socket notes: a player is last seen at the latest note of any
//! ingress, an ingress's new note replaces its old one (so "until now" when
//! its last socket closed ends what it noted before), and a note of many
//! players (across slots on a cluster) reaches each of them.

use crate::Harness;
use mm_domain::{PlayerId, now_ms};
use mm_store::Store;

async fn a_player_is_last_seen_at_the_latest_note(h: Harness) {
    let s: &dyn Store = &*h.store;
    let ann = PlayerId::new("on-ann").unwrap();
    let bob = PlayerId::new("on-bob").unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), None, "never seen");
    let now = now_ms();
    s.hold("ingress-a", std::slice::from_ref(&ann), now + 30_000)
        .await
        .unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 30_000));
    assert_eq!(s.last_seen(&bob).await.unwrap(), None, "only whom it names");
    // A second ingress holds a socket of ann's a little longer.
    s.hold("ingress-b", std::slice::from_ref(&ann), now + 40_000)
        .await
        .unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 40_000));
    // Her socket on b closes: a's note still holds.
    s.hold("ingress-b", std::slice::from_ref(&ann), now)
        .await
        .unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 30_000));
    // And on a: she was last seen now.
    s.hold("ingress-a", std::slice::from_ref(&ann), now + 5)
        .await
        .unwrap();
    assert_eq!(s.last_seen(&ann).await.unwrap(), Some(now + 5));

    // A renewal of many players at once reaches every one.
    let many: Vec<PlayerId> = (0..1_200)
        .map(|i| PlayerId::new(format!("on-{i}")).unwrap())
        .collect();
    s.hold("ingress-a", &many, now + 30_000).await.unwrap();
    for p in [&many[0], &many[499], &many[500], &many[1_199]] {
        assert_eq!(s.last_seen(p).await.unwrap(), Some(now + 30_000), "{p}");
    }
}

async fn a_note_long_past_is_forgotten(h: Harness) {
    let s: &dyn Store = &*h.store;
    let cid = PlayerId::new("on-cid").unwrap();
    // Last seen an hour ago: longer than any grace, so no note is kept.
    let long_ago = now_ms() - 3_600_000;
    s.hold("ingress-a", std::slice::from_ref(&cid), long_ago)
        .await
        .unwrap();
    assert_eq!(s.last_seen(&cid).await.unwrap(), None);
}

crate::every_deployment!(
    a_player_is_last_seen_at_the_latest_note,
    a_note_long_past_is_forgotten
);
