//! Seeking the players a match's roles need. Once the last places of a
//! growing match can only go to players who accept certain roles (the room
//! check of [`crate::rules`]), the search jumps to the next free ticket with
//! such a player instead of walking past, and counting as misfits, the many
//! who could not join: in a pool where one player in five takes tank, a match
//! missing its tanks used to give up after passing two dozen damage players.
//!
//! Per needed role, one bit per position, 64 positions to a word: set when the
//! position's ticket has a player accepting that role, or when its own wait
//! reaches a later step of the roles rule (where the need may differ, so it
//! must be looked at); beside them a word of the positions still free. The
//! next free ticket worth looking at is the first set bit of a few words ORed
//! and masked, however many taken ones lie between: in a pool the first
//! matches emptied of role players, the search used to step from one taken
//! role player to the next through the free links, a scattered read each.

use super::snapshot::Slot;
use crate::rules::Traits;
use mm_domain::Millis;

/// Per needed role, the free positions worth looking at for it.
pub(super) struct Seek {
    words: usize,
    /// `roles[k * words + w]`: bit `i` set when position `64 w + i` has a
    /// player accepting needed role `k`, or may relax the rule.
    roles: Vec<u64>,
    /// Positions still free in this cycle.
    free: Vec<u64>,
}

impl Seek {
    /// The index over positions `0..since.len()` (traits laid out by
    /// position), or `None` when no roles rule keeps the room check.
    pub(super) fn new(traits: &Traits, since: &[Millis], now: Millis) -> Option<Self> {
        let room = traits.room_masks()?;
        let bits = room.bits;
        if bits == 0 {
            return None;
        }
        let n = since.len();
        let words = n.div_ceil(64);
        let mut roles = vec![0u64; bits * words];
        for (p, &queued) in since.iter().enumerate() {
            // Every needed role when its own wait may relax the rule.
            let wanted = if now.saturating_sub(queued) >= room.relaxes_at {
                u8::MAX
            } else {
                room.of(p).iter().fold(0u8, |all, &m| all | m)
            };
            let (w, bit) = (p / 64, 1u64 << (p % 64));
            for k in (0..bits).filter(|k| wanted >> k & 1 == 1) {
                roles[k * words + w] |= bit;
            }
        }
        let mut free = vec![u64::MAX; words];
        if !n.is_multiple_of(64) {
            free[words - 1] = (1u64 << (n % 64)) - 1;
        }
        Some(Seek { words, roles, free })
    }

    /// Marks position `p` taken.
    pub(super) fn take(&mut self, p: usize) {
        self.free[p / 64] &= !(1u64 << (p % 64));
    }

    /// The free positions of word `w` worth looking at for one of the needed
    /// roles in `set`.
    fn word(&self, w: usize, set: u8) -> u64 {
        let mut word = 0;
        let mut rest = set;
        while rest != 0 {
            let k = rest.trailing_zeros() as usize;
            if let Some(role) = self.roles.get(k * self.words + w) {
                word |= role;
            }
            rest &= rest - 1;
        }
        word & self.free[w]
    }

    /// The first free position at or after `from` whose ticket has a player
    /// accepting one of the needed roles in `set` (or that may relax the
    /// rule), looking no further than position `end` (exclusive: the end of
    /// `from`'s partition) or than a word whose first position is rated above
    /// `highest` (positions are in rating order within a partition). A
    /// position found may lie past either bound (within its word): the caller
    /// checks.
    pub(super) fn at_or_after(
        &self,
        from: usize,
        set: u8,
        end: usize,
        at: &[Slot],
        highest: f64,
    ) -> Option<usize> {
        if from >= end {
            return None;
        }
        let mut w = from / 64;
        let mut word = self.word(w, set) & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
            w += 1;
            if w * 64 >= end || at[w * 64].rating > highest {
                return None;
            }
            word = self.word(w, set);
        }
    }

    /// The last free position at or before `from` whose ticket has a player
    /// accepting one of the needed roles in `set` (or that may relax the
    /// rule), looking no further down than position `begin` (the start of
    /// `from`'s partition) or than a word whose last position is rated below
    /// `lowest`. A position found may lie past either bound (within its
    /// word): the caller checks.
    pub(super) fn at_or_before(
        &self,
        from: usize,
        set: u8,
        begin: usize,
        at: &[Slot],
        lowest: f64,
    ) -> Option<usize> {
        let mut w = from / 64;
        let mut word = self.word(w, set) & (u64::MAX >> (63 - from % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + 63 - word.leading_zeros() as usize);
            }
            if w * 64 <= begin || at[w * 64 - 1].rating < lowest {
                return None;
            }
            w -= 1;
            word = self.word(w, set);
        }
    }
}
