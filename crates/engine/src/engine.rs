//! Our match formation for one pool (one mode in one region): a snapshot of the
//! pool's tickets and the current time in, proposed matches with their teams out.
//! Pure and deterministic.
//!
//! Two passes over the pool in rating order:
//! 1. Overdue tickets (waited the mode's `overdue_after`) go first, longest wait
//!    first: each gets the tightest match that includes it, using its whole window.
//!    Priority only grows with wait. A ticket still unmatched after twice the time
//!    its window takes to reach the cap (an outlier at the edge of the rating range,
//!    whose fresh neighbours keep pairing up among themselves) holds its nearest
//!    neighbours out of the cycle until their windows grow to meet it, so nobody
//!    starves.
//! 2. For everyone else the tightest match anywhere in the pool is formed first, then
//!    the next tightest, and so on (a lazy priority queue: a candidate spoiled by an
//!    earlier match is rebuilt and re-queued). Here a match may only use the mode's
//!    `patience` share of its members' windows: fresh tickets wait a little for a
//!    tighter match instead of taking the first that is barely fair.
//!
//! A ticket joins a match only if the match's rating spread fits inside every
//! member's current window half-width (so every member lies inside every other
//! member's window wherever it sits in the match, as in seed 000), if its party fits the team shape, and if the match does
//! not overflow. A full match is split into balanced teams ([`crate::teams`]). A match
//! smaller than full (battle royale) may start once its oldest member waited the
//! mode's `start_below_max_after`.

use crate::Mode;
use crate::teams::{self, Unit};
use mm_domain::Millis;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One ticket of the pool as the engine sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// The rating it is matched with (a party's per the mode's policy).
    pub rating: f64,
    /// Players in the ticket (1 for solo, 2..=5 for a party).
    pub size: usize,
    /// When it was first queued: its window grows from here.
    pub enqueued_at: Millis,
    /// From when it may be matched in this pool (later than `enqueued_at` for a
    /// region other than its best one).
    pub eligible_at: Millis,
}

impl Entry {
    pub fn solo(rating: f64, enqueued_at: Millis) -> Self {
        Self {
            rating,
            size: 1,
            enqueued_at,
            eligible_at: enqueued_at,
        }
    }
}

/// A proposed match: entries (indexes into the snapshot) and the team of each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub members: Vec<usize>,
    pub teams: Vec<usize>,
}

impl Proposal {
    /// Members grouped by team.
    pub fn by_team(&self) -> Vec<Vec<usize>> {
        let n = self.teams.iter().max().map_or(0, |t| t + 1);
        let mut out = vec![Vec::new(); n];
        for (&m, &t) in self.members.iter().zip(&self.teams) {
            out[t].push(m);
        }
        out
    }
}

/// Maps a finite rating to an integer with the same order.
fn order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The rating whose [`order_key`] is `key`.
fn rating_of(key: u64) -> f64 {
    if key >> 63 == 1 {
        f64::from_bits(key & !(1 << 63))
    } else {
        f64::from_bits(!key)
    }
}

/// A ticket's size and wait in one `u32` (size in the low 4 bits), or
/// [`Packed::NONE`] when either does not fit or it was queued after `now`.
struct Packed;

impl Packed {
    const NONE: u32 = u32::MAX;
    const SIZE_BITS: u32 = 4;

    fn of(e: &Entry, now: Millis) -> u32 {
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
    fn open(p: u32) -> Option<(usize, Millis)> {
        (p != Self::NONE).then(|| {
            (
                (p & ((1 << Self::SIZE_BITS) - 1)) as usize,
                Millis::from(p >> Self::SIZE_BITS),
            )
        })
    }
}

/// Candidates skipped (window or party shape) before an anchor gives up.
const SKIP_LIMIT: usize = 24;

/// "Next unused position" links with path compression, one per direction.
struct Free {
    right: Vec<u32>,
    left: Vec<u32>,
}

impl Free {
    fn new(n: usize) -> Self {
        // Position p is stored at p + 1 so that 0 and n + 1 are sentinels.
        let ids: Vec<u32> = (0..n as u32 + 2).collect();
        Self {
            right: ids.clone(),
            left: ids,
        }
    }

    fn find(links: &mut [u32], mut x: u32) -> u32 {
        let mut root = x;
        while links[root as usize] != root {
            root = links[root as usize];
        }
        while links[x as usize] != root {
            let next = links[x as usize];
            links[x as usize] = root;
            x = next;
        }
        root
    }

    /// First unused position at or right of `p`, if any.
    fn right_of(&mut self, p: usize, n: usize) -> Option<usize> {
        let r = Self::find(&mut self.right, p as u32 + 1) as usize;
        (r <= n).then(|| r - 1)
    }

    /// First unused position at or left of `p` (p may be -1 as `None`).
    fn left_of(&mut self, p: Option<usize>) -> Option<usize> {
        let p = p?;
        let l = Self::find(&mut self.left, p as u32 + 1) as usize;
        (l >= 1).then(|| l - 1)
    }

    fn take(&mut self, p: usize) {
        self.right[p + 1] = p as u32 + 2;
        self.left[p + 1] = p as u32;
    }
}

/// Proposes matches from `entries` at time `now` under `mode`. Every entry appears
/// in at most one proposal; entries not proposed stay queued.
pub fn propose(mode: &Mode, entries: &[Entry], now: Millis) -> Vec<Proposal> {
    let Some(mut pool) = Snapshot::new(mode, entries, now) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut group = Group::default();
    let mut best = Group::default();

    // 1. Overdue tickets, longest wait first: the tightest match that includes them.
    let overdue_after = mode.overdue_after;
    // A ticket that still has no match after twice the time its window takes to
    // stop growing holds its nearest neighbours back (see below).
    let reserve_after = mode.window.time_to_cap().saturating_mul(2);
    // Whether `formable` may cut a group (below-full matches of teams larger than
    // one). Where it cannot, a group's spread only grows and its reach only
    // shrinks as it grows, so growing it can stop as soon as it cannot win.
    let can_cut = mode.team_size > 1 && mode.min_players < mode.max_players();
    let anchors = pool.anchors(overdue_after);
    let mut ladder = Ladder::default();
    for (k, &(_, a)) in anchors.iter().enumerate() {
        // Anchors go in wait order, so their positions jump about the pool: ask
        // for a later anchor's data now, while this one is searched.
        if let Some(&(_, ahead)) = anchors.get(k + PREFETCH_AHEAD) {
            pool.prefetch(ahead as usize);
        }
        let a = a as usize;
        if pool.at[a].used {
            continue;
        }
        // Start at the anchor or at one of the nearest free tickets below it.
        best.clear();
        ladder.reset(a);
        let mut start = Some(a);
        for _ in 0..ANCHOR_STARTS {
            let Some(s) =
                start.filter(|&s| pool.at[a].rating - pool.at[s].rating <= pool.at[a].delta)
            else {
                break;
            };
            // Starts further down can only give wider matches than the best.
            let beat = (!can_cut && !best.is_empty()).then_some(best.spread);
            if beat.is_some_and(|b| pool.at[a].rating - pool.at[s].rating >= b) {
                break;
            }
            let give_up = beat.map(|beat| GiveUp { share: None, beat });
            if pool.grow_along(s, Some(a), give_up, &mut group, &mut ladder.climb())
                && pool.formable(&mut group)
                && (best.is_empty() || group.spread < best.spread)
            {
                std::mem::swap(&mut best, &mut group);
            }
            start = pool.free.left_of(s.checked_sub(1));
            ladder.push_below(start);
        }
        match (!best.is_empty()).then(|| pool.accept(&best)).flatten() {
            Some(p) => out.push(p),
            // No fair match yet: keep the nearest tickets out of this cycle so they
            // are still there when the windows have grown to meet the overdue one
            // (otherwise fresh neighbours keep pairing up among themselves and a
            // ticket at the edge of the rating range never gets a match).
            // Only long after its window stopped growing (until then it may still
            // find a match by itself), and only where matches must be full (a
            // battle royale starts below full instead).
            None if mode.min_players == mode.max_players()
                && now.saturating_sub(pool.since[a]) >= reserve_after =>
            {
                pool.reserve_around(a)
            }
            None => {}
        }
    }

    // 2. Everyone else: the tightest match anywhere first, lazily re-evaluated.
    // The first evaluation of every start is sorted once; a candidate spoiled by
    // an earlier match and rebuilt looser goes into a heap, and the two are
    // merged, so candidates come out in (spread, start) order as from one heap
    // (sorting a million candidates once is far cheaper than heaping them).
    let comfortable = |g: &Group| g.spread <= mode.patience * g.reach;
    // Once a group is not comfortable it never will be (unless it may be cut).
    let give_up = (!can_cut).then_some(GiveUp {
        share: Some(mode.patience),
        beat: f64::INFINITY,
    });
    let mut first: Vec<(u64, usize)> = Vec::new();
    for s in 0..pool.n {
        if !pool.at[s].used
            && pool.grow(s, None, give_up, &mut group)
            && pool.formable(&mut group)
            && comfortable(&group)
        {
            first.push((group.spread.to_bits(), s));
        }
    }
    first.sort_unstable();
    let mut first = first.into_iter().peekable();
    let mut again = BinaryHeap::new();
    loop {
        let from_first = match (first.peek(), again.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(f), Some(Reverse(a))) => f <= a,
        };
        let (spread, s) = if from_first {
            first.next().expect("peeked")
        } else {
            again.pop().expect("peeked").0
        };
        if pool.at[s].used {
            continue;
        }
        // Matches taken since may have spoiled this one: rebuild it, and take it only
        // if it is still as tight, else queue it again with its new spread.
        if !pool.grow(s, None, give_up, &mut group)
            || !pool.formable(&mut group)
            || !comfortable(&group)
        {
            continue;
        }
        if group.spread.to_bits() > spread {
            again.push(Reverse((group.spread.to_bits(), s)));
            continue;
        }
        if let Some(p) = pool.accept(&group) {
            out.push(p);
        }
    }
    out
}

/// When growing a group can stop, because it can no longer be taken.
#[derive(Debug, Clone, Copy)]
struct GiveUp {
    /// Fail once the spread exceeds this share of the reach (not comfortable).
    share: Option<f64>,
    /// Fail once the spread is not below this (no tighter than the best so far).
    beat: f64,
}

impl GiveUp {
    fn now(&self, spread: f64, reach: f64) -> bool {
        spread >= self.beat || self.share.is_some_and(|share| spread > share * reach)
    }
}

/// How many anchors ahead the search asks for an anchor's data.
const PREFETCH_AHEAD: usize = 16;

/// How many starting points an overdue ticket's match is tried from.
const ANCHOR_STARTS: usize = 12;

/// The free positions above a start, one after another.
trait Upward {
    fn next(&mut self, free: &mut Free, n: usize) -> Option<usize>;
}

/// Looked up in the free links, from above a start.
struct FreeAbove(usize);

impl Upward for FreeAbove {
    fn next(&mut self, free: &mut Free, n: usize) -> Option<usize> {
        let p = free.right_of(self.0 + 1, n)?;
        self.0 = p;
        Some(p)
    }
}

/// The free positions around an overdue ticket, looked up once for all the starts
/// its search tries (nothing is taken while it searches).
#[derive(Debug, Default)]
struct Ladder {
    /// Starts below the anchor tried so far, nearest first.
    below: Vec<usize>,
    /// The anchor, then the free positions above it found so far, in order.
    above: Vec<usize>,
    /// Whether `above` reaches the top of the pool.
    top: bool,
}

impl Ladder {
    fn reset(&mut self, anchor: usize) {
        self.below.clear();
        self.above.clear();
        self.above.push(anchor);
        self.top = false;
    }

    /// Records the next start below the anchor, if there is one (the walk from it
    /// comes up through the ones already recorded).
    fn push_below(&mut self, start: Option<usize>) {
        self.below.extend(start);
    }

    /// A walk from the lowest start found so far.
    fn climb(&mut self) -> Climb<'_> {
        Climb {
            below: self.below.len(),
            k: 0,
            ladder: self,
        }
    }
}

/// A walk up a [`Ladder`] from one of its starts: what is left of `below` (the
/// start itself excluded), then `above`.
struct Climb<'a> {
    ladder: &'a mut Ladder,
    below: usize,
    k: usize,
}

impl Upward for Climb<'_> {
    fn next(&mut self, free: &mut Free, n: usize) -> Option<usize> {
        if self.below > 0 {
            // The start is `below[self.below - 1]`: next come the ones nearer the
            // anchor, then the anchor.
            self.below -= 1;
            return Some(if self.below > 0 {
                self.ladder.below[self.below - 1]
            } else {
                self.ladder.above[0]
            });
        }
        self.k += 1;
        let l = &mut *self.ladder;
        while l.above.len() <= self.k && !l.top {
            let last = *l.above.last().expect("holds the anchor");
            match free.right_of(last + 1, n) {
                Some(p) => l.above.push(p),
                None => l.top = true,
            }
        }
        l.above.get(self.k).copied()
    }
}

/// A match being assembled: positions in rating order.
#[derive(Debug, Default)]
struct Group {
    members: Vec<usize>,
    sizes: Vec<usize>,
    players: usize,
    spread: f64,
    /// The smallest window half-width among the members.
    reach: f64,
}

impl Group {
    fn clear(&mut self) {
        self.members.clear();
        self.sizes.clear();
        self.players = 0;
        self.spread = 0.0;
        self.reach = 0.0;
    }

    fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

/// One position of the pool, as the search reads it.
#[derive(Debug, Clone, Copy)]
struct Slot {
    rating: f64,
    /// Window half-width.
    delta: f64,
    /// Entry index.
    order: u32,
    /// Players in the ticket (teams are far smaller than `u16::MAX`).
    size: u16,
    /// Matched or held out in this cycle.
    used: bool,
}

impl Slot {
    fn size(&self) -> usize {
        usize::from(self.size)
    }
}

/// The eligible entries of a pool in rating order, with their windows.
struct Snapshot<'a> {
    mode: &'a Mode,
    now: Millis,
    n: usize,
    /// What the search reads of each position, together in one cache line or two
    /// (positions are visited in wait order as well as in rating order).
    at: Vec<Slot>,
    since: Vec<Millis>,
    free: Free,
    /// A match's units for team balancing, reused from match to match.
    units: Vec<Unit>,
}

impl<'a> Snapshot<'a> {
    fn new(mode: &'a Mode, entries: &[Entry], now: Millis) -> Option<Self> {
        // Sort (rating key, index, packed size and wait) triples: plain integer
        // comparisons, and the sorted run needs no second, scattered look at the
        // entries (the triple is no bigger than the pair would be).
        let mut keyed: Vec<(u64, u32, u32)> = Vec::with_capacity(entries.len());
        keyed.extend(
            entries
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    e.eligible_at <= now
                        && e.size >= 1
                        && e.size <= mode.team_size
                        && e.rating.is_finite()
                })
                .map(|(i, e)| (order_key(e.rating), i as u32, Packed::of(e, now))),
        );
        // Stable, so equal ratings stay in entry order.
        radsort::sort_by_key(&mut keyed, |&(key, _, _)| key);
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
        Some(Self {
            mode,
            now,
            n,
            at,
            since,
            free: Free::new(n),
            units: Vec::new(),
        })
    }

    /// Takes position `p` out of this cycle (matched or held out): marked used and
    /// gone from the free links.
    fn take_out(&mut self, p: usize) {
        self.at[p].used = true;
        self.free.take(p);
    }

    /// The positions of the tickets that waited `overdue_after`, longest wait
    /// first (ties in entry order), each beside its sort key.
    fn anchors(&self, overdue_after: Millis) -> Vec<(u64, u32)> {
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
    fn prefetch(&self, p: usize) {
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
    fn grow(
        &mut self,
        start: usize,
        must: Option<usize>,
        give_up: Option<GiveUp>,
        g: &mut Group,
    ) -> bool {
        self.grow_along(start, must, give_up, g, &mut FreeAbove(start))
    }

    /// [`Snapshot::grow`], taking the free positions above `start` from `walk`.
    fn grow_along(
        &mut self,
        start: usize,
        must: Option<usize>,
        give_up: Option<GiveUp>,
        g: &mut Group,
        walk: &mut impl Upward,
    ) -> bool {
        let max = self.mode.max_players();
        g.clear();
        if self.at[start].used {
            return false;
        }
        g.members.push(start);
        g.sizes.push(self.at[start].size());
        g.players = self.at[start].size();
        // The spread of the match must fit inside the window half-width of every
        // member (seed 000's rule: then each member, wherever it sits in the match,
        // has every other inside its window).
        let mut reach = self.at[start].delta;
        let low = self.at[start].rating;
        let mut high = low;
        let mut next = walk.next(&mut self.free, self.n);
        let mut skipped = 0;
        while g.players < max {
            let Some(c) = next.filter(|&c| self.at[c].rating - low <= reach) else {
                break;
            };
            next = walk.next(&mut self.free, self.n);
            let r = self.at[c].rating;
            let mut ok = r - low <= self.at[c].delta && g.players + self.at[c].size() <= max;
            if ok && self.at[c].size() > 1 {
                g.sizes.push(self.at[c].size());
                ok = teams::fits(&g.sizes, self.mode.teams, self.mode.team_size);
                g.sizes.pop();
            }
            if !ok {
                if must == Some(c) {
                    return false;
                }
                skipped += 1;
                if skipped > SKIP_LIMIT {
                    break;
                }
                continue;
            }
            g.members.push(c);
            g.sizes.push(self.at[c].size());
            g.players += self.at[c].size();
            reach = reach.min(self.at[c].delta);
            high = r;
            if give_up.is_some_and(|g| g.now(high - low, reach)) {
                return false;
            }
        }
        g.spread = high - low;
        g.reach = reach;
        must.is_none_or(|m| g.members.contains(&m))
    }

    /// Whether the group may start as it is: full, or (modes that allow smaller
    /// matches) once its oldest member has waited long enough, cut to whole teams.
    fn formable(&self, g: &mut Group) -> bool {
        let max = self.mode.max_players();
        if g.players >= max {
            return true;
        }
        if self.mode.min_players >= max || !self.waited_long_enough(g) {
            return false;
        }
        while !g.players.is_multiple_of(self.mode.team_size) && g.members.len() > 1 {
            let m = g.members.pop().expect("more than one member");
            g.sizes.pop();
            g.players -= self.at[m].size();
        }
        if let (Some(&first), Some(&last)) = (g.members.first(), g.members.last()) {
            g.spread = self.at[last].rating - self.at[first].rating;
        }
        // Cutting to whole teams may have dropped the member whose wait allowed a
        // smaller match; the rest must qualify on their own.
        g.players >= self.mode.min_players && self.waited_long_enough(g)
    }

    /// Whether the group's longest-waiting member has waited the mode's
    /// `start_below_max_after`.
    fn waited_long_enough(&self, g: &Group) -> bool {
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
    fn reserve_around(&mut self, a: usize) {
        let mut need = self.mode.max_players().saturating_sub(self.at[a].size());
        self.take_out(a);
        let mut left = self.free.left_of(a.checked_sub(1));
        let mut right = self.free.right_of(a + 1, self.n);
        let r = self.at[a].rating;
        while need > 0 {
            let l = left.filter(|&p| r - self.at[p].rating <= self.at[a].delta);
            let h = right.filter(|&p| self.at[p].rating - r <= self.at[a].delta);
            let c = match (l, h) {
                (None, None) => break,
                (Some(l), None) => l,
                (None, Some(h)) => h,
                (Some(l), Some(h)) => {
                    if r - self.at[l].rating <= self.at[h].rating - r {
                        l
                    } else {
                        h
                    }
                }
            };
            if Some(c) == l {
                left = self.free.left_of(c.checked_sub(1));
            } else {
                right = self.free.right_of(c + 1, self.n);
            }
            self.take_out(c);
            need = need.saturating_sub(self.at[c].size());
        }
    }

    /// Splits the group into teams and takes its members out of the pool.
    fn accept(&mut self, g: &Group) -> Option<Proposal> {
        self.units.clear();
        self.units.extend(g.members.iter().map(|&m| Unit {
            size: self.at[m].size(),
            rating: self.at[m].rating,
        }));
        let team_of = teams::balance(
            &self.units,
            g.players / self.mode.team_size,
            self.mode.team_size,
        )?;
        for &m in &g.members {
            self.take_out(m);
        }
        Some(Proposal {
            members: g
                .members
                .iter()
                .map(|&m| self.at[m].order as usize)
                .collect(),
            teams: team_of,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Modes, PartyRating, WindowPolicy};
    use proptest::prelude::*;

    fn mode(teams: usize, team_size: usize) -> Mode {
        Mode {
            name: "t".into(),
            teams,
            team_size,
            min_players: teams * team_size,
            start_below_max_after: 60_000,
            party_rating: PartyRating::Highest,
            window: WindowPolicy::default(),
            cross_region_after: 20_000,
            max_latency_ms: 150,
            max_party: team_size.min(5),
            overdue_after: 15_000,
            patience: 1.0,
            lifecycle: mm_domain::Lifecycle::default(),
            rating: mm_domain::RatingPolicy::ELO,
        }
    }

    #[test]
    fn ten_close_players_make_a_balanced_5v5() {
        let m = Modes::defaults().get("5v5").unwrap().clone();
        let entries: Vec<Entry> = (0..10)
            .map(|i| Entry::solo(1500.0 + i as f64 * 5.0, 0))
            .collect();
        let p = propose(&m, &entries, 1000);
        assert_eq!(p.len(), 1);
        let teams = p[0].by_team();
        let avg = |t: &Vec<usize>| t.iter().map(|&i| entries[i].rating).sum::<f64>() / 5.0;
        assert_eq!(teams.len(), 2);
        assert!((avg(&teams[0]) - avg(&teams[1])).abs() <= 5.0);
    }

    #[test]
    fn rating_keys_keep_the_order() {
        let xs = [-5.0, -0.5, 0.0, 0.25, 1.0, 1500.0, 3000.0];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) < order_key(w[1]), "{w:?}");
        }
        for x in xs.into_iter().chain([-0.0, f64::MIN, f64::MAX, 1e-300]) {
            assert_eq!(rating_of(order_key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn anchors_go_longest_wait_first_then_in_entry_order_however_far_apart() {
        let m = mode(2, 1);
        for spread in [1_000, 1 << 40] {
            let now = 1 << 41;
            let entries = [
                Entry::solo(1500.0, now - 20_000),
                Entry::solo(1400.0, now - spread),
                Entry::solo(1600.0, now - 20_000),
                Entry::solo(1450.0, now - 16_000),
                Entry::solo(1550.0, now - 10_000),
            ];
            let pool = Snapshot::new(&m, &entries, now).unwrap();
            let order: Vec<u32> = pool
                .anchors(15_000)
                .iter()
                .map(|&(_, p)| pool.at[p as usize].order)
                .collect();
            // A ticket that waited 1 s is not overdue; one that waited 2^40 ms is
            // the longest waiting and takes the far slower path.
            let expected: &[u32] = if spread > 20_000 {
                &[1, 0, 2, 3]
            } else {
                &[0, 2, 3]
            };
            assert_eq!(order, expected, "spread {spread}");
        }
    }

    #[test]
    fn size_and_wait_pack_when_they_fit() {
        let now = 1 << 40;
        let e = |size, enqueued_at| Entry {
            rating: 1500.0,
            size,
            enqueued_at,
            eligible_at: 0,
        };
        assert_eq!(
            Packed::open(Packed::of(&e(5, now - 1234), now)),
            Some((5, 1234))
        );
        assert_eq!(Packed::open(Packed::of(&e(1, now), now)), Some((1, 0)));
        // Too long a wait, too big a party, or queued after now: looked up instead.
        assert_eq!(Packed::of(&e(1, 0), now), Packed::NONE);
        assert_eq!(Packed::of(&e(16, now), now), Packed::NONE);
        assert_eq!(Packed::of(&e(1, now + 1), now), Packed::NONE);
    }

    #[test]
    fn far_apart_players_wait_until_their_windows_meet() {
        let m = mode(2, 1);
        let entries = [Entry::solo(1500.0, 0), Entry::solo(1700.0, 0)];
        assert!(propose(&m, &entries, 0).is_empty());
        assert_eq!(propose(&m, &entries, 15_000).len(), 1);
    }

    #[test]
    fn the_longest_waiting_ticket_is_served_first() {
        let m = mode(2, 1);
        // 1500 waited longest; 1510 and 1490 are both close, 1490 is as close and
        // was there first among equals.
        let entries = [
            Entry::solo(1510.0, 5_000),
            Entry::solo(1500.0, 0),
            Entry::solo(1490.0, 5_000),
        ];
        let p = propose(&m, &entries, 6_000);
        assert_eq!(p.len(), 1);
        assert!(p[0].members.contains(&1));
    }

    #[test]
    fn not_yet_eligible_entries_are_ignored() {
        let m = mode(2, 1);
        let mut b = Entry::solo(1500.0, 0);
        b.eligible_at = 20_000;
        let entries = [Entry::solo(1500.0, 0), b];
        assert!(propose(&m, &entries, 10_000).is_empty());
        assert_eq!(propose(&m, &entries, 20_000).len(), 1);
    }

    #[test]
    fn battle_royale_starts_below_full_only_after_the_wait() {
        let m = Modes::defaults().get("br100").unwrap().clone();
        let entries: Vec<Entry> = (0..70).map(|i| Entry::solo(1500.0 + i as f64, 0)).collect();
        assert!(propose(&m, &entries, 59_000).is_empty());
        let p = propose(&m, &entries, 60_000);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].members.len(), 70);
        let full: Vec<Entry> = (0..100)
            .map(|i| Entry::solo(1500.0 + i as f64 * 0.5, 0))
            .collect();
        assert_eq!(propose(&m, &full, 0)[0].members.len(), 100);
    }

    fn check(
        mode: &Mode,
        entries: &[Entry],
        now: Millis,
        props: &[Proposal],
    ) -> Result<(), TestCaseError> {
        let mut seen = std::collections::HashSet::new();
        for p in props {
            prop_assert_eq!(p.members.len(), p.teams.len());
            let players: usize = p.members.iter().map(|&i| entries[i].size).sum();
            prop_assert!(players >= mode.min_players && players <= mode.max_players());
            prop_assert_eq!(players % mode.team_size, 0);
            let n_teams = players / mode.team_size;
            let mut load = vec![0; n_teams];
            for (&i, &t) in p.members.iter().zip(&p.teams) {
                prop_assert!(seen.insert(i), "entry {} in two matches", i);
                prop_assert!(entries[i].eligible_at <= now);
                prop_assert!(t < n_teams);
                // A party is one entry, so it is whole and on one team by construction;
                // its size counts against that one team.
                load[t] += entries[i].size;
                let (lo, hi) = mode
                    .window
                    .window(entries[i].rating, now - entries[i].enqueued_at);
                for &j in &p.members {
                    prop_assert!(
                        entries[j].rating >= lo && entries[j].rating <= hi,
                        "{} outside the window of {}",
                        entries[j].rating,
                        entries[i].rating
                    );
                }
            }
            prop_assert!(
                load.iter().all(|&l| l == mode.team_size),
                "team loads {:?}",
                load
            );
            if players < mode.max_players() {
                let oldest = p
                    .members
                    .iter()
                    .map(|&i| entries[i].enqueued_at)
                    .min()
                    .unwrap();
                prop_assert!(now - oldest >= mode.start_below_max_after);
            }
        }
        Ok(())
    }

    fn entries_strategy(max_party: usize) -> impl Strategy<Value = Vec<Entry>> {
        proptest::collection::vec(
            (
                1200.0f64..1800.0,
                1..=max_party,
                0u64..90_000,
                0u64..30_000,
                any::<bool>(),
            ),
            0..250,
        )
        .prop_map(|v| {
            v.into_iter()
                .map(|(r, s, wait, late, cross)| {
                    let enqueued_at = 100_000 - wait;
                    Entry {
                        rating: r,
                        size: if s > 1 && !(r as u64).is_multiple_of(5) {
                            1
                        } else {
                            s
                        },
                        enqueued_at,
                        eligible_at: if cross {
                            enqueued_at + late
                        } else {
                            enqueued_at
                        },
                    }
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn a_climb_up_the_ladder_meets_the_free_positions_in_order(
            taken in proptest::collection::vec(any::<bool>(), 1..80),
            pick in any::<proptest::sample::Index>(),
        ) {
            let m = mode(2, 5);
            let entries: Vec<Entry> =
                (0..taken.len()).map(|i| Entry::solo(1000.0 + i as f64, 0)).collect();
            let mut pool = Snapshot::new(&m, &entries, 0).unwrap();
            for (p, &t) in taken.iter().enumerate() {
                if t {
                    pool.take_out(p);
                }
            }
            let free: Vec<usize> = (0..pool.n).filter(|&p| !pool.at[p].used).collect();
            prop_assume!(!free.is_empty());
            let a = free[pick.index(free.len())];
            // As the overdue search does: starts at the anchor, then each next free
            // position below it, each walk read from the one ladder.
            let mut ladder = Ladder::default();
            ladder.reset(a);
            let mut start = Some(a);
            while let Some(s) = start {
                let mut climb = ladder.climb();
                let mut plain = FreeAbove(s);
                loop {
                    let (x, y) = (climb.next(&mut pool.free, pool.n), plain.next(&mut pool.free, pool.n));
                    prop_assert_eq!(x, y, "from start {}", s);
                    if x.is_none() {
                        break;
                    }
                }
                start = pool.free.left_of(s.checked_sub(1));
                ladder.push_below(start);
            }
        }

        #[test]
        fn five_v_five_invariants(entries in entries_strategy(5)) {
            let m = Modes::defaults().get("5v5").unwrap().clone();
            let props = propose(&m, &entries, 100_000);
            check(&m, &entries, 100_000, &props)?;
        }

        #[test]
        fn battle_royale_duos_invariants(entries in entries_strategy(2)) {
            let mut m = mode(20, 2);
            m.min_players = 16;
            let props = propose(&m, &entries, 100_000);
            check(&m, &entries, 100_000, &props)?;
        }

        #[test]
        fn three_teams_of_three_invariants(entries in entries_strategy(3)) {
            let m = mode(3, 3);
            let props = propose(&m, &entries, 100_000);
            check(&m, &entries, 100_000, &props)?;
        }

        #[test]
        fn deterministic(entries in entries_strategy(5)) {
            let m = Modes::defaults().get("5v5").unwrap().clone();
            prop_assert_eq!(propose(&m, &entries, 100_000), propose(&m, &entries, 100_000));
        }
    }
}
