//! Which players have an event socket open, for the modes that cancel the
//! tickets of players who left the game (`cancel_offline_after`). An ingress
//! notes a player when their first socket on it opens and when their last one
//! closes ([`Online::hold`]), and notes itself alive a while ahead, again and
//! again ([`Online::alive`]): its open sockets count as open for as long as it
//! is, so a crashed ingress's players count as gone once its note runs out,
//! and the renewal costs one write per ingress, not one per player. A player
//! was last seen at the latest of their notes ([`Online::last_seen`]): in the
//! future while some live ingress holds a socket of theirs.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId};
use std::time::Duration;

/// How long a player's notes are kept after their last socket closed: longer
/// than any mode's `cancel_offline_after` (at most 10 minutes), so that a
/// player who left is known to have left, not taken for one never seen. An
/// ingress forgotten this long after its last note is gone for good.
pub const ONLINE_KEPT: Duration = Duration::from_secs(15 * 60);

/// How long a note of an open socket is kept: an ingress notes its players
/// again before it runs out ([`Online::hold`] with `open`).
pub const OPEN_KEPT: Duration = Duration::from_secs(24 * 3600);

#[async_trait]
pub trait Online {
    /// Notes that the ingress `holder` has an event socket of `player`'s open
    /// (`open`: their first there opened, or a renewal of that note) or, at
    /// `now`, none any more (their last there closed).
    async fn hold(
        &self,
        holder: &str,
        player: &PlayerId,
        open: bool,
        now: Millis,
    ) -> Result<(), StoreError>;

    /// Notes that the ingress `holder` lives until `until` (ms): the sockets
    /// it noted open count as open until then.
    async fn alive(&self, holder: &str, until: Millis) -> Result<(), StoreError>;

    /// When `player` was last seen connected: the latest of their notes, a
    /// socket noted open counting until its ingress's `until` (so later than
    /// now while one holds a socket of theirs), or `None` when no note is left
    /// (never connected, or not for [`ONLINE_KEPT`]).
    async fn last_seen(&self, player: &PlayerId) -> Result<Option<Millis>, StoreError>;
}
