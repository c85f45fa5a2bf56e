//! Seeking the players a match's roles need. Once the last places of a
//! growing match can only go to players who accept certain roles (the room
//! check of [`crate::rules`]), the search jumps to the next free ticket with
//! such a player instead of walking past, and counting as misfits, the many
//! who could not join: in a pool where one player in five takes tank, a match
//! missing its tanks used to give up after passing two dozen damage players.
//!
//! Per position and per needed role, the index holds the next position whose
//! ticket has a player accepting that role, or whose own wait reaches a later
//! step of the roles rule (where the need may differ, so it must be looked at).

use crate::rules::Traits;
use mm_domain::Millis;

/// Per position, the next positions worth looking at for each needed role.
pub(super) struct Seek {
    bits: usize,
    /// `next[p * bits + k]`: the first position at or after `p` whose ticket
    /// has a player accepting needed role `k`, or that may relax the rule;
    /// `n` when there is none.
    next: Vec<u32>,
    /// `prev[p * bits + k]`: the same looking down, the last position at or
    /// before `p`; `n` when there is none.
    prev: Vec<u32>,
    n: usize,
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
        // Per position, the needed roles it is worth looking at for (every one
        // when its own wait may relax the rule).
        let wanted: Vec<u8> = (0..n)
            .map(|p| {
                if now.saturating_sub(since[p]) >= room.relaxes_at {
                    u8::MAX
                } else {
                    room.of(p).iter().fold(0u8, |all, &m| all | m)
                }
            })
            .collect();
        let index = |order: &mut dyn Iterator<Item = usize>| {
            let mut out = vec![0u32; n * bits];
            let mut last = vec![n as u32; bits];
            for p in order {
                for (k, l) in last.iter_mut().enumerate() {
                    if wanted[p] >> k & 1 == 1 {
                        *l = p as u32;
                    }
                }
                out[p * bits..(p + 1) * bits].copy_from_slice(&last);
            }
            out
        };
        let next = index(&mut (0..n).rev());
        let prev = index(&mut (0..n));
        Some(Seek {
            bits,
            next,
            prev,
            n,
        })
    }

    /// The first position at or after `from` whose ticket has a player
    /// accepting one of the needed roles in `set` (or that may relax the rule).
    pub(super) fn at_or_after(&self, from: usize, set: u8) -> Option<usize> {
        if from >= self.n {
            return None;
        }
        let row = &self.next[from * self.bits..(from + 1) * self.bits];
        let first = row
            .iter()
            .enumerate()
            .filter(|(k, _)| set >> k & 1 == 1)
            .map(|(_, &p)| p as usize)
            .min()
            .unwrap_or(self.n);
        (first < self.n).then_some(first)
    }

    /// The last position at or before `from` whose ticket has a player
    /// accepting one of the needed roles in `set` (or that may relax the rule).
    pub(super) fn at_or_before(&self, from: usize, set: u8) -> Option<usize> {
        if from >= self.n {
            return None;
        }
        let row = &self.prev[from * self.bits..(from + 1) * self.bits];
        row.iter()
            .enumerate()
            .filter(|&(k, &p)| set >> k & 1 == 1 && (p as usize) < self.n)
            .map(|(_, &p)| p as usize)
            .max()
    }
}
