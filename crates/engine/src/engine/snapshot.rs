//! The eligible entries of a pool in rating order, with their windows, and the
//! candidate matches grown over them: [`Snapshot::grow`] adds the free tickets
//! above a start while the match stays fair, [`Snapshot::formable`] says whether
//! it may start as it is (taking it is [`super::balance`]).

use super::ruled::{PartyFit, Split};
use super::seek::Seek;
use super::walk::{Free, FreeAbove, Recording, Replay, Upward};
use super::{Entry, GiveUp, Parts, SKIP_LIMIT};
use crate::Mode;
use crate::rules::{Grown, Steps, Traits};
use crate::teams::{self, Unit};
use mm_domain::Millis;

/// The longest wait among `entries` at `now`: no match of the cycle waited
/// longer, so no rule relaxes past its step at this wait.
pub(super) fn longest_wait(entries: &[Entry], now: Millis) -> Millis {
    entries
        .iter()
        .map(|e| now.saturating_sub(e.enqueued_at))
        .max()
        .unwrap_or(0)
}

/// Maps a finite rating to an integer with the same order.
pub(super) fn order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The rating whose [`order_key`] is `key`.
pub(super) fn rating_of(key: u64) -> f64 {
    if key >> 63 == 1 {
        f64::from_bits(key & !(1 << 63))
    } else {
        f64::from_bits(!key)
    }
}

/// A ticket's size and wait in one `u32` (size in the low 4 bits), or
/// [`Packed::NONE`] when either does not fit or it was queued after `now`.
pub(super) struct Packed;

impl Packed {
    pub(super) const NONE: u32 = u32::MAX;
    const SIZE_BITS: u32 = 4;

    pub(super) fn of(e: &Entry, now: Millis) -> u32 {
        let fits = e.size < 1 << Self::SIZE_BITS
            && e.enqueued_at <= now
            && now - e.enqueued_at < (1 << (32 - Self::SIZE_BITS)) - 1;
        if fits {
            ((now - e.enqueued_at) as u32) << Self::SIZE_BITS | e.size as u32
        } else {
            Self::NONE
        }
    }

    /// (size, wait), unless it is [`Packed::NONE`].
    pub(super) fn open(p: u32) -> Option<(usize, Millis)> {
        (p != Self::NONE).then(|| {
            (
                (p & ((1 << Self::SIZE_BITS) - 1)) as usize,
                Millis::from(p >> Self::SIZE_BITS),
            )
        })
    }
}

/// A match being assembled: positions in rating order.
#[derive(Debug, Default)]
pub(super) struct Group {
    pub(super) members: Vec<usize>,
    pub(super) sizes: Vec<usize>,
    /// The sums of subsets of `sizes` ([`teams::with_party`]), for two teams:
    /// whether a party fits is then a shift and a mask (it was a pass over
    /// every member's size for each candidate party, 4% of a cycle).
    pub(super) packs: u128,
    /// The largest of `sizes` (0: none): party balance asks it of every
    /// candidate, and a pass over the sizes to find it was about 3% of a
    /// ruled cycle's branch misses.
    pub(super) largest: usize,
    pub(super) players: usize,
    pub(super) spread: f64,
    /// The smallest window half-width among the members.
    pub(super) reach: f64,
    /// When its longest-waiting member was queued (the rules' steps follow it).
    pub(super) oldest: Millis,
    /// What the rules keep of the members so far.
    pub(super) rules: Grown,
    /// The rules' steps at the group's longest wait.
    pub(super) steps: Steps,
    /// Its split into teams, once [`Snapshot::splits`] worked it out for the
    /// members as they are (any change of members drops it): the overdue
    /// pass checks a group splits before taking it, and taking it need not
    /// split it again.
    pub(super) split: Option<Split>,
}

impl Group {
    pub(super) fn clear(&mut self) {
        self.members.clear();
        self.sizes.clear();
        self.packs = 1;
        self.largest = 0;
        self.players = 0;
        self.spread = 0.0;
        self.reach = 0.0;
        self.oldest = Millis::MAX;
        self.split = None;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

/// One position of the pool, as the search reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub(super) rating: f64,
    /// Window half-width.
    pub(super) delta: f64,
    /// Entry index.
    pub(super) order: u32,
    /// Players in the ticket (teams are far smaller than `u16::MAX`).
    pub(super) size: u16,
    /// Matched or held out in this cycle.
    pub(super) used: bool,
}

impl Slot {
    pub(super) fn size(&self) -> usize {
        usize::from(self.size)
    }
}

/// The eligible entries of a pool in rating order, with their windows.
pub(super) struct Snapshot<'a> {
    pub(super) mode: &'a Mode,
    /// What the rules read of the entries (nothing when the mode has none).
    /// What the rules read of the entries, moved to their positions (the
    /// search reads them in rating order).
    pub(super) traits: Traits,
    /// Whether anything beyond skill and shape is checked.
    pub(super) ruled: bool,
    /// Whether a candidate match keeps rule state as it grows
    /// ([`Traits::tracks`]; party balance alone reads only the sizes).
    pub(super) tracks: bool,
    /// Per position, its partition (hard `equal` rules split the pool; the
    /// positions of one partition are contiguous, in rating order); empty
    /// when the pool is one partition.
    pub(super) part: Vec<u32>,
    pub(super) now: Millis,
    pub(super) n: usize,
    /// What the search reads of each position, together in one cache line or two
    /// (positions are visited in wait order as well as in rating order).
    pub(super) at: Vec<Slot>,
    pub(super) since: Vec<Millis>,
    pub(super) free: Free,
    /// With a roles rule: where the players each needed role can come from.
    pub(super) seek: Option<Seek>,
    /// A match's units for team balancing, reused from match to match.
    pub(super) units: Vec<Unit>,
    /// The positions a growth walked, reused (see [`Snapshot::grow_along`]).
    pub(super) seen: Vec<usize>,
    /// Per position, whether its party fits a team's roles, as far as asked
    /// (empty when no candidate match keeps rule state).
    pub(super) party_fit: Vec<PartyFit>,
}

impl<'a> Snapshot<'a> {
    pub(super) fn new(
        mode: &'a Mode,
        entries: &[Entry],
        traits: &'a Traits,
        now: Millis,
        known: Parts<'_>,
    ) -> Option<Self> {
        // The `equal` rules that hold for the whole cycle: each entry's
        // partition, numbered in order of first sight; a ticket that can meet
        // nobody is left out.
        let parts: Option<Vec<u32>> = match known {
            Parts::One { .. } => None,
            Parts::Find(longest) => traits
                .partition_ids(longest)
                .map(|ids| ids.into_iter().map(|id| id.unwrap_or(u32::MAX)).collect()),
        };
        // Sort (rating key, index, packed size and wait) triples: plain integer
        // comparisons, and the sorted run needs no second, scattered look at the
        // entries (the triple is no bigger than the pair would be).
        let mut keyed: Vec<(u64, u32, u32)> = Vec::with_capacity(entries.len());
        keyed.extend(
            entries
                .iter()
                .enumerate()
                .filter(|(i, e)| {
                    e.eligible_at <= now
                        && e.size >= 1
                        && e.size <= mode.team_size
                        && e.rating.is_finite()
                        && parts.as_ref().is_none_or(|p| p[*i] != u32::MAX)
                })
                .map(|(i, e)| (order_key(e.rating), i as u32, Packed::of(e, now))),
        );
        // Stable, so equal ratings stay in entry order.
        radsort::sort_by_key(&mut keyed, |&(key, _, _)| key);
        // Then by partition, stable again: each partition in rating order.
        if let Some(p) = &parts {
            radsort::sort_by_key(&mut keyed, |&(_, i, _)| p[i as usize]);
        }
        let n = keyed.len();
        if n == 0 {
            return None;
        }
        let mut at = Vec::with_capacity(n);
        let mut since = Vec::with_capacity(n);
        for (key, i, packed) in keyed {
            let (size, wait, queued) = match Packed::open(packed) {
                Some((size, wait)) => (size, wait, now - wait),
                None => {
                    let e = &entries[i as usize];
                    (e.size, now.saturating_sub(e.enqueued_at), e.enqueued_at)
                }
            };
            at.push(Slot {
                rating: rating_of(key),
                delta: mode.window.delta(wait),
                order: i,
                size: u16::try_from(size).unwrap_or(u16::MAX),
                used: false,
            });
            since.push(queued);
        }
        let part = match &parts {
            Some(p) => at.iter().map(|s: &Slot| p[s.order as usize]).collect(),
            None => Vec::new(),
        };
        let mut laid = if traits.is_empty() {
            traits.permuted(&[])
        } else {
            // In the traits' numbering: a part's entries are some of the pool's.
            let entries: Vec<usize> = match known {
                Parts::One { of } => at.iter().map(|s: &Slot| of[s.order as usize]).collect(),
                Parts::Find(_) => at.iter().map(|s: &Slot| s.order as usize).collect(),
            };
            traits.permuted(&entries)
        };
        laid.settle(&part);
        let seek = if traits.tracks() {
            Seek::new(&laid, &since, now)
        } else {
            None
        };
        Some(Self {
            mode,
            traits: laid,
            ruled: !traits.is_empty(),
            tracks: traits.tracks(),
            part,
            now,
            n,
            at,
            since,
            free: Free::new(n),
            seek,
            units: Vec::new(),
            seen: Vec::new(),
            party_fit: if traits.tracks() {
                vec![PartyFit::default(); n]
            } else {
                Vec::new()
            },
        })
    }

    /// Takes position `p` out of this cycle (matched or held out): marked used and
    /// gone from the free links.
    pub(super) fn take_out(&mut self, p: usize) {
        self.at[p].used = true;
        self.free.take(p);
        if let Some(seek) = &mut self.seek {
            seek.take(p);
        }
    }

    /// The positions of `p`'s partition, `begin..end`, where a role seek
    /// from `p` may look (the whole pool without a seek index: nothing to
    /// bound).
    pub(super) fn seek_span(&self, p: usize) -> (usize, usize) {
        if self.part.is_empty() || self.seek.is_none() {
            return (0, self.n);
        }
        let id = self.part[p];
        (
            self.part.partition_point(|&q| q < id),
            self.part.partition_point(|&q| q <= id),
        )
    }

    /// The positions of the tickets that waited `overdue_after`, longest wait
    /// first (ties in entry order), each beside its sort key.
    pub(super) fn anchors(&self, overdue_after: Millis) -> Vec<(u64, u32)> {
        let (first, last) = self
            .since
            .iter()
            .fold((Millis::MAX, 0), |(lo, hi), &s| (lo.min(s), hi.max(s)));
        // Where waits differ by less than 2^32 ms (49 days) the wait and the entry
        // index make one integer key: a far cheaper comparison than a pair.
        let packed = last - first <= u64::from(u32::MAX);
        let mut anchors = Vec::with_capacity(self.n);
        anchors.extend(
            (0..self.n)
                .filter(|&p| self.now.saturating_sub(self.since[p]) >= overdue_after)
                .map(|p| {
                    let key = if packed {
                        (self.since[p] - first) << 32 | u64::from(self.at[p].order)
                    } else {
                        0
                    };
                    (key, p as u32)
                }),
        );
        if packed {
            radsort::sort_by_key(&mut anchors, |&(key, _)| key);
        } else {
            anchors.sort_unstable_by_key(|&(_, p)| {
                (self.since[p as usize], self.at[p as usize].order)
            });
        }
        anchors
    }

    /// Hints the processor to fetch what a search from position `p` reads first.
    pub(super) fn prefetch(&self, p: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let (slot, left, right) = (
                &raw const self.at[p],
                &raw const self.free.left[p],
                &raw const self.free.right[p + 2],
            );
            // SAFETY: a prefetch is only a hint (it cannot fault or change memory),
            // SSE is part of every x86_64 target, and the addresses are in bounds.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(slot.cast());
                _mm_prefetch::<_MM_HINT_T0>(left.cast());
                _mm_prefetch::<_MM_HINT_T0>(right.cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = p;
    }

    /// Grows a match upwards in rating from free position `start`: each following
    /// free ticket joins if the match's spread stays within every member's window
    /// half-width (it included) and its party fits the team shape. Stops when full, when the
    /// next ticket is outside the members' common window, or after `SKIP_LIMIT`
    /// misfits. With `must`, fails unless that position joins. With `give_up`,
    /// fails as soon as the group can no longer be of use.
    pub(super) fn grow(
        &mut self,
        start: usize,
        must: Option<usize>,
        give_up: Option<GiveUp>,
        g: &mut Group,
    ) -> bool {
        self.grow_along(start, must, give_up, g, &mut FreeAbove(start))
    }

    /// [`Snapshot::grow`], taking the free positions above `start` from `walk`.
    ///
    /// Under a party-balance rule, a group that took a big party early may stop
    /// short of full waiting for a counterpart that never comes (the players it
    /// turned away would have made a match). It then grows once more from the
    /// same start over the same positions, without that party.
    pub(super) fn grow_along(
        &mut self,
        start: usize,
        must: Option<usize>,
        give_up: Option<GiveUp>,
        g: &mut Group,
        walk: &mut impl Upward,
    ) -> bool {
        if !self.ruled || !self.traits.balances_parties() {
            return self.grow_once(start, must, give_up, g, walk, None);
        }
        let mut seen = std::mem::take(&mut self.seen);
        seen.clear();
        let mut recording = Recording {
            inner: walk,
            seen: &mut seen,
        };
        let mut grown = self.grow_once(start, must, give_up, g, &mut recording, None);
        if grown
            && g.players < self.mode.max_players()
            && let Some(needy) = self.needy_party(g)
            && must != Some(needy)
            && needy != start
        {
            let mut replay = Replay {
                recorded: &seen,
                k: 0,
                inner: walk,
            };
            grown = self.grow_once(start, must, give_up, g, &mut replay, Some(needy));
        }
        self.seen = seen;
        grown
    }

    /// The member of `g` whose party is too big for any other member's to
    /// balance, if there is one.
    pub(super) fn needy_party(&self, g: &Group) -> Option<usize> {
        let gap = self.traits.party_gap(self.wait_since(g.oldest))?;
        let (k, &largest) = g.sizes.iter().enumerate().max_by_key(|(_, s)| **s)?;
        let floor = largest.saturating_sub(gap);
        let counterpart = g
            .sizes
            .iter()
            .enumerate()
            .any(|(j, &s)| j != k && s >= floor);
        (floor >= 2 && !counterpart).then(|| g.members[k])
    }

    /// One growth of a group from `start` (see [`Snapshot::grow`]), passing over
    /// position `exclude`.
    fn grow_once(
        &mut self,
        start: usize,
        must: Option<usize>,
        give_up: Option<GiveUp>,
        g: &mut Group,
        walk: &mut impl Upward,
        exclude: Option<usize>,
    ) -> bool {
        let max = self.mode.max_players();
        if !self.begin(g, start) {
            return false;
        }
        // The spread of the match must fit inside the window half-width of every
        // member (seed 000's rule: then each member, wherever it sits in the match,
        // has every other inside its window).
        let mut reach = self.at[start].delta;
        let low = self.at[start].rating;
        let mut high = low;
        let mut next = walk.next(&mut self.free, self.n);
        let mut skipped = 0;
        // Once only players of some roles can join, the search jumps to them
        // (see [`Seek`]) and from then on walks the free links itself.
        let mut needs = self.roles_needed(g);
        let (_, end) = self.seek_span(start);
        let mut jumped = false;
        let mut last = start;
        while g.players < max {
            let candidate = match needs {
                Some(set) => {
                    jumped = true;
                    self.seek_free(last + 1, set, end, low + reach)
                }
                None if jumped => self.free.right_of(last + 1, self.n),
                None => next,
            };
            let Some(c) =
                candidate.filter(|&c| self.at[c].rating - low <= reach && self.same_part(c, start))
            else {
                break;
            };
            if needs.is_some() && must.is_some_and(|m| m < c && !g.members.contains(&m)) {
                // Jumped over the ticket the match must have: it could not join.
                return false;
            }
            last = c;
            if !jumped {
                next = walk.next(&mut self.free, self.n);
            }
            let r = self.at[c].rating;
            if !self.may_join(g, c, r - low, exclude) {
                if must == Some(c) {
                    return false;
                }
                skipped += 1;
                if skipped > SKIP_LIMIT {
                    break;
                }
                continue;
            }
            self.join(g, c);
            reach = reach.min(self.at[c].delta);
            high = r;
            if give_up.is_some_and(|g| g.now(high - low, reach)) {
                return false;
            }
            needs = self.roles_needed(g);
        }
        g.spread = high - low;
        g.reach = reach;
        must.is_none_or(|m| g.members.contains(&m))
    }

    /// Starts group `g` with the free ticket at `start` alone; false if it is
    /// taken, or under a roles rule a party that cannot take places of one
    /// team.
    #[inline(always)]
    pub(super) fn begin(&mut self, g: &mut Group, start: usize) -> bool {
        g.clear();
        if self.at[start].used {
            return false;
        }
        g.members.push(start);
        g.sizes.push(self.at[start].size());
        g.packs = teams::with_party(g.packs, self.at[start].size());
        g.largest = self.at[start].size();
        g.players = self.at[start].size();
        g.oldest = self.since[start];
        self.keep_steps(g);
        if self.tracks {
            if !self.party_has_places(start, &g.steps) {
                return false;
            }
            // Hard `equal` rules are the snapshot's partitions.
            self.traits.start_in_part(&mut g.rules, start);
        }
        true
    }

    /// Whether position `c` may join group `g`, the match's spread with it
    /// being `spread`: inside `c`'s window, room for its players, its party
    /// fitting the team shape, and (but `exclude`) admitted by the rules.
    #[inline(always)]
    pub(super) fn may_join(
        &self,
        g: &mut Group,
        c: usize,
        spread: f64,
        exclude: Option<usize>,
    ) -> bool {
        let size = self.at[c].size();
        let mut ok = spread <= self.at[c].delta && g.players + size <= self.mode.max_players();
        if ok && size > 1 {
            ok = if self.mode.teams == 2 {
                teams::fits_two(g.packs, g.players, size, self.mode.team_size)
            } else {
                g.sizes.push(size);
                let fits = teams::fits(&g.sizes, self.mode.teams, self.mode.team_size);
                g.sizes.pop();
                fits
            };
        }
        if ok && self.ruled {
            ok = exclude != Some(c) && self.rules_admit(g, c);
        }
        ok
    }

    /// Adds position `c` to group `g` (its spread and reach are the caller's).
    #[inline(always)]
    pub(super) fn join(&self, g: &mut Group, c: usize) {
        if self.tracks {
            self.traits.add(&mut g.rules, c);
        }
        g.members.push(c);
        g.split = None;
        g.sizes.push(self.at[c].size());
        g.packs = teams::with_party(g.packs, self.at[c].size());
        g.largest = g.largest.max(self.at[c].size());
        g.players += self.at[c].size();
        g.oldest = g.oldest.min(self.since[c]);
        self.keep_steps(g);
    }

    /// Brings the group's rule steps up to its longest wait.
    pub(super) fn keep_steps(&self, g: &mut Group) {
        let wait = self.wait_since(g.oldest);
        if self.ruled && !g.steps.hold(wait) {
            g.steps = self.traits.steps_at(wait);
        }
    }

    /// The needed roles (see [`Seek`]) one of which every player of the next
    /// ticket to join `g` must accept, if the group's last places are down to
    /// them; `None` without a roles rule or while anyone may join.
    pub(super) fn roles_needed(&self, g: &Group) -> Option<u8> {
        self.seek.as_ref()?;
        let wait = self.wait_since(g.oldest);
        let remaining = self.mode.max_players().saturating_sub(g.players);
        self.traits
            .roles_tight(&g.rules, wait, remaining, self.mode.teams)
    }

    /// The first free position at or after `from` whose ticket may fill one
    /// of the needed roles `set` (or may relax the rule); the search stops at
    /// `end` or past a rating above `highest` (see [`Seek::at_or_after`]).
    pub(super) fn seek_free(
        &self,
        from: usize,
        set: u8,
        end: usize,
        highest: f64,
    ) -> Option<usize> {
        self.seek
            .as_ref()?
            .at_or_after(from, set, end, &self.at, highest)
    }

    /// [`Snapshot::seek_free`] looking down from `from`, to `begin` or a
    /// rating below `lowest`.
    pub(super) fn seek_free_below(
        &self,
        from: usize,
        set: u8,
        begin: usize,
        lowest: f64,
    ) -> Option<usize> {
        self.seek
            .as_ref()?
            .at_or_before(from, set, begin, &self.at, lowest)
    }

    /// Whether the group may start as it is: full, or (modes that allow smaller
    /// matches) once its oldest member has waited long enough, cut to whole teams.
    pub(super) fn formable(&self, g: &mut Group) -> bool {
        let max = self.mode.max_players();
        if g.players >= max {
            return true;
        }
        if self.mode.min_players >= max || !self.waited_long_enough(g) {
            return false;
        }
        while !g.players.is_multiple_of(self.mode.team_size) && g.members.len() > 1 {
            let m = g.members.pop().expect("more than one member");
            g.split = None;
            g.sizes.pop();
            g.players -= self.at[m].size();
        }
        g.packs = g.sizes.iter().fold(1, |p, &s| teams::with_party(p, s));
        g.largest = g.sizes.iter().copied().max().unwrap_or(0);
        if let (Some(&first), Some(&last)) = (g.members.first(), g.members.last()) {
            g.spread = self.at[last].rating - self.at[first].rating;
        }
        g.oldest = g
            .members
            .iter()
            .map(|&m| self.since[m])
            .min()
            .unwrap_or(self.now);
        // Cutting to whole teams may have dropped the member whose wait allowed a
        // smaller match (or a looser rule step); the rest must qualify on their own.
        g.players >= self.mode.min_players
            && self.waited_long_enough(g)
            && (!self.ruled || self.traits.meets(&g.members, self.wait_since(g.oldest)))
    }

    /// Whether the group's longest-waiting member has waited the mode's
    /// `start_below_max_after`.
    pub(super) fn waited_long_enough(&self, g: &Group) -> bool {
        let oldest = g
            .members
            .iter()
            .map(|&m| self.since[m])
            .min()
            .unwrap_or(self.now);
        self.now.saturating_sub(oldest) >= self.mode.start_below_max_after
    }

    /// Takes the free tickets nearest in rating to overdue position `a`, within its
    /// window, out of this cycle: enough players for one match.
    pub(super) fn reserve_around(&mut self, a: usize) {
        let mut need = self.mode.max_players().saturating_sub(self.at[a].size());
        self.take_out(a);
        let mut left = self.free.left_of(a.checked_sub(1));
        let mut right = self.free.right_of(a + 1, self.n);
        let r = self.at[a].rating;
        while need > 0 {
            left =
                left.filter(|&p| r - self.at[p].rating <= self.at[a].delta && self.same_part(p, a));
            right = right
                .filter(|&p| self.at[p].rating - r <= self.at[a].delta && self.same_part(p, a));
            let Some(c) = self.step_out(&mut left, &mut right, r, r) else {
                break;
            };
            self.take_out(c);
            need = need.saturating_sub(self.at[c].size());
        }
    }

    /// Of the free positions `below` and `above` a match spanning
    /// `low..=high` (the next on each side, each within reach), the one that
    /// widens it less, below on a tie; that side moves on to its next free
    /// position. `None` when neither side has one.
    pub(super) fn step_out(
        &mut self,
        below: &mut Option<usize>,
        above: &mut Option<usize>,
        low: f64,
        high: f64,
    ) -> Option<usize> {
        let c = match (*below, *above) {
            (None, None) => return None,
            (Some(l), None) => l,
            (None, Some(h)) => h,
            (Some(l), Some(h)) => {
                if high - self.at[l].rating <= self.at[h].rating - low {
                    l
                } else {
                    h
                }
            }
        };
        if Some(c) == *below {
            *below = self.free.left_of(c.checked_sub(1));
        } else {
            *above = self.free.right_of(c + 1, self.n);
        }
        Some(c)
    }

    /// Whether the group splits into teams that meet the rules. Looked at
    /// only while a roles rule is on: a group grown under party balance alone
    /// nearly always splits (on a 100k pool, every one of 14,030), and the look
    /// would more than double the shipped 5v5's cycle.
    pub(super) fn splits(&mut self, g: &mut Group) -> bool {
        if !self.ruled || self.traits.roles_at(self.wait_since(g.oldest)).is_none() {
            return true;
        }
        g.split = self.split_group(g);
        g.split.is_some()
    }
}
