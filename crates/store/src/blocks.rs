//! Players' block lists, kept with the player: whom each blocked (at most
//! [`MAX_BLOCKS`]). On Redis a set in the player's own slot
//! (`mm:{u:PLAYER}:blocks`; blocking checks its size in one script).
//!
//! A new ticket carries whom its players blocked ([`Blocks::kept_apart`]),
//! and the engine keeps two tickets apart when either one's list names a
//! player of the other: so a player's tickets never carry who blocked them,
//! a list nobody bounds (a player many others blocked would otherwise queue
//! tickets that grow with every one of them). A running match's backfill
//! reads its players' lists when it is filled.
//!
//! A block made while either player waits reaches their waiting tickets too
//! ([`Blocks::keep_apart_waiting`]): each ticket's stored copy gains the other
//! player, and a ticket a worker or a pool's leader holds is taken from it, so
//! that a match formed from the copy without the block cannot commit, and is
//! read again with the block. A ticket still on its way into its pools when
//! the block is made (activated, not yet queued) is waited for briefly. (The
//! blocked player's waiting ticket gains the blocker too: it is the one taken
//! from its holder when only the blocked player waits; the copy ends with the
//! ticket.)
//!
//! An unblock reaches the two players' waiting tickets as well
//! ([`Blocks::release_waiting`]): each copy loses the other player unless one
//! of its own players still blocks them (read again at the rewrite), and is
//! taken from its holder to be read again. A block rewrites a waiting copy
//! even when it holds the player already (counting
//! [`mm_domain::Ticket::blocks_rev`]), so an unblock that read a copy and the
//! lists before a party-mate's block of the same player cannot write over it:
//! its rewrite finds the copy changed and reads both again. (A ticket being
//! created during the unblock may still carry the old list: stricter, never
//! looser.)

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::PlayerId;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

/// Most players one player may block.
pub const MAX_BLOCKS: usize = 200;

/// How often a block looks again for a waiting ticket that was activated but
/// not yet queued in its pools (its creation is between two store calls), and
/// how long it waits between looks: a creation takes a few milliseconds, so a
/// ticket still not queued after this long was given back.
const ON_ITS_WAY_LOOKS: u32 = 20;
const ON_ITS_WAY_PAUSE: Duration = Duration::from_millis(25);

/// A live ticket in none of its pools counts as on its way there for this
/// long after its activation (ms); later, it was given back or forgotten.
pub(crate) const ON_ITS_WAY_MS: u64 = 3_000;

/// The answer to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    /// Added (or already there).
    Done,
    /// The list holds [`MAX_BLOCKS`] players already; nothing changed.
    Full,
}

#[async_trait]
pub trait Blocks {
    /// `player` blocks `other` (idempotent).
    async fn block(&self, player: &PlayerId, other: &PlayerId) -> Result<Blocked, StoreError>;

    /// `player` unblocks `other`; false if `other` was not blocked.
    async fn unblock(&self, player: &PlayerId, other: &PlayerId) -> Result<bool, StoreError>;

    /// Whom `player` blocked, sorted.
    async fn blocks(&self, player: &PlayerId) -> Result<Vec<PlayerId>, StoreError>;

    /// Whom any of `players` blocked, sorted, without duplicates: what a new
    /// ticket of theirs carries.
    async fn kept_apart(&self, players: &[PlayerId]) -> Result<Vec<PlayerId>, StoreError>;

    /// Adds `others` to what each of `player`'s waiting tickets is kept apart
    /// from, in every pool the ticket waits in, and takes each such ticket
    /// from the worker or leader holding it (a match formed from its copy
    /// without them does not commit; the ticket is read again, in the queue,
    /// keeping its place and wait). A ticket that ended is rewritten too
    /// (one whose match ends before play goes back to the queue with it).
    /// Returns false if one of the player's live tickets is in none of its
    /// pools yet, activated within [`ON_ITS_WAY_MS`] (its creation is between
    /// activating and queueing it): the caller looks again.
    async fn add_blocks_to_waiting(
        &self,
        player: &PlayerId,
        others: &[PlayerId],
    ) -> Result<bool, StoreError>;

    /// Takes `other` out of what each of `player`'s waiting tickets is kept
    /// apart from, in every pool it waits in, unless one of the ticket's own
    /// players still blocks `other` (their lists read at the rewrite); a
    /// ticket so rewritten is taken from the worker or leader holding it, to
    /// be read again without the block. Tickets on their way into their pools
    /// are not waited for (they keep the lists read at their creation).
    async fn drop_block_from_waiting(
        &self,
        player: &PlayerId,
        other: &PlayerId,
    ) -> Result<(), StoreError>;

    /// An unblock of `b` by `a` just made, on the two players' waiting
    /// tickets ([`Blocks::drop_block_from_waiting`] both ways: a ticket of
    /// `b`'s carries `a` when the block was made while it waited).
    async fn release_waiting(&self, a: &PlayerId, b: &PlayerId) -> Result<(), StoreError> {
        let (x, y) = tokio::join!(
            self.drop_block_from_waiting(a, b),
            self.drop_block_from_waiting(b, a)
        );
        x.and(y)
    }

    /// A block of `b` by `a` (or of `a` by `b`) just made, on the two
    /// players' waiting tickets ([`Blocks::add_blocks_to_waiting`] both ways),
    /// looking again for a while at a ticket still on its way into its pools.
    async fn keep_apart_waiting<'a>(
        &self,
        a: &'a PlayerId,
        b: &'a PlayerId,
    ) -> Result<(), StoreError> {
        let (mut a_done, mut b_done) = (false, false);
        for look in 0..ON_ITS_WAY_LOOKS {
            if look > 0 {
                tokio::time::sleep(ON_ITS_WAY_PAUSE).await;
            }
            let add = |done: bool, player: &'a PlayerId, other: &'a PlayerId| async move {
                if done {
                    return Ok(true);
                }
                self.add_blocks_to_waiting(player, std::slice::from_ref(other))
                    .await
            };
            let (x, y) = tokio::join!(add(a_done, a, b), add(b_done, b, a));
            (a_done, b_done) = (x?, y?);
            if a_done && b_done {
                break;
            }
        }
        Ok(())
    }
}

/// `ticket`'s copy kept apart from `others` too (none of its own players);
/// `None` if it is already.
pub(crate) fn with_blocks(
    ticket: &mm_domain::Ticket,
    others: &[PlayerId],
) -> Option<mm_domain::Ticket> {
    let new: Vec<&PlayerId> = others
        .iter()
        .filter(|o| !ticket.players.contains(o) && !ticket.blocks.contains(o))
        .collect();
    if new.is_empty() {
        return None;
    }
    let mut t = ticket.clone();
    t.blocks.extend(new.into_iter().cloned());
    t.blocks.sort();
    t.blocks.dedup();
    t.blocks_rev = t.blocks_rev.wrapping_add(1);
    Some(t)
}

/// `ticket`'s copy as it is, counted one more rewrite (a block it carries
/// already: see the module's doc).
pub(crate) fn recounted(ticket: &mm_domain::Ticket) -> mm_domain::Ticket {
    let mut t = ticket.clone();
    t.blocks_rev = t.blocks_rev.wrapping_add(1);
    t
}

/// `ticket`'s copy without `other`, unless `still` (whom its players block
/// now) names them; `None` if it stays as it is.
pub(crate) fn without_block(
    ticket: &mm_domain::Ticket,
    other: &PlayerId,
    still: &[PlayerId],
) -> Option<mm_domain::Ticket> {
    if !ticket.blocks.contains(other) || still.contains(other) {
        return None;
    }
    let mut t = ticket.clone();
    t.blocks.retain(|b| b != other);
    t.blocks_rev = t.blocks_rev.wrapping_add(1);
    Some(t)
}

/// Block lists of [`crate::MemoryStore`]: per player, whom they blocked.
#[derive(Default)]
pub struct MemoryBlocks {
    inner: Mutex<HashMap<PlayerId, BTreeSet<PlayerId>>>,
}

impl MemoryBlocks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PlayerId, BTreeSet<PlayerId>>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn block(&self, player: &PlayerId, other: &PlayerId) -> Blocked {
        let mut inner = self.lock();
        let own = inner.entry(player.clone()).or_default();
        if !own.contains(other) && own.len() >= MAX_BLOCKS {
            return Blocked::Full;
        }
        own.insert(other.clone());
        Blocked::Done
    }

    pub fn unblock(&self, player: &PlayerId, other: &PlayerId) -> bool {
        let mut inner = self.lock();
        let Some(own) = inner.get_mut(player) else {
            return false;
        };
        let removed = own.remove(other);
        if own.is_empty() {
            inner.remove(player);
        }
        removed
    }

    pub fn blocks(&self, player: &PlayerId) -> Vec<PlayerId> {
        self.lock()
            .get(player)
            .map(|own| own.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn kept_apart(&self, players: &[PlayerId]) -> Vec<PlayerId> {
        let inner = self.lock();
        let mut out = BTreeSet::new();
        for own in players.iter().filter_map(|p| inner.get(p)) {
            out.extend(own.iter().cloned());
        }
        out.into_iter().collect()
    }
}
