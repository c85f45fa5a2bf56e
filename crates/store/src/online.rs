//! Which players have an event socket open, for the modes that cancel the
//! tickets of players who left the game (`cancel_offline_after`). Every
//! ingress notes, for each player with a socket open on it, until when it
//! holds one ([`Online::hold`]): a while ahead, renewed while the socket stays
//! open, and "until now" when the player's last socket on it closes. A crashed
//! ingress renews nothing, so its notes run out by themselves. A player was
//! last seen at the latest of their notes ([`Online::last_seen`]): in the
//! future while some ingress holds a socket of theirs.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId};
use std::time::Duration;

/// How long a player's notes are kept after the latest of them: longer than
/// any mode's `cancel_offline_after` (at most 10 minutes), so that a player
/// who left is known to have left, not taken for one never seen.
pub const ONLINE_KEPT: Duration = Duration::from_secs(15 * 60);

#[async_trait]
pub trait Online {
    /// Notes that the ingress `holder` holds an event socket of each of
    /// `players` until `until` (ms), replacing its earlier note.
    async fn hold(
        &self,
        holder: &str,
        players: &[PlayerId],
        until: Millis,
    ) -> Result<(), StoreError>;

    /// When `player` was last seen connected: the latest note of any ingress
    /// (later than now while one holds a socket of theirs), or `None` when no
    /// note is left (never connected, or not for [`ONLINE_KEPT`]).
    async fn last_seen(&self, player: &PlayerId) -> Result<Option<Millis>, StoreError>;
}
