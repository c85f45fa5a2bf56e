//! Our match formation for one pool (one mode in one region): a snapshot of the
//! pool's tickets and the current time in, proposed matches with their teams out.
//! Pure and deterministic.
//!
//! Two passes over the pool in rating order:
//! 1. Overdue tickets (waited the mode's `overdue_after`) go first, longest wait
//!    first: each gets the tightest match that includes it, using its whole window
//!    (the best of a dozen grown up from it and from the free tickets below it;
//!    under rules that keep state, one grown outwards from it: [`around`]).
//!    Priority only grows with wait. A ticket still unmatched after twice the time
//!    its window takes to reach the cap (an outlier at the edge of the rating range,
//!    whose fresh neighbours keep pairing up among themselves) holds its nearest
//!    neighbours out of the cycle until their windows grow to meet it, so nobody
//!    starves.
//! 2. For everyone else the tightest match anywhere in the pool is formed first, then
//!    the next tightest, and so on (a lazy priority queue: a candidate spoiled by an
//!    earlier match is rebuilt and re-queued). Here a match may only use the mode's
//!    `patience` share of its members' windows: fresh tickets wait a little for a
//!    tighter match instead of taking the first that is barely fair. Under rules
//!    this pass goes over what is left again (up to [`RULED_ROUNDS`] times) while
//!    a pass takes a tenth or more of the free tickets; under rules that keep
//!    state, an overdue ticket whose own search failed in pass 1 starts no
//!    candidate here (it may still join one).
//!
//! A ticket joins a match only if the match's rating spread fits inside every
//! member's current window half-width (so every member lies inside every other
//! member's window wherever it sits in the match, as in seed 000), if its party fits the team shape, and if the match does
//! not overflow. A full match is split into balanced teams ([`crate::teams`]), its
//! solo members traded for free solos where that narrows the teams' gap
//! ([`balance`]). A match
//! smaller than full (battle royale) may start once its oldest member waited the
//! mode's `start_below_max_after`.

//!
//! The search over the pool lives in [`snapshot`] (the pool in rating order,
//! growing candidate matches), [`around`] (an overdue ticket's match grown
//! outwards from it), [`walk`] (the free positions), [`seek`] (the next
//! players a match's roles need) and [`balance`] (taking a match: its teams
//! and their gap); [`parts`] forms a big pool split by hard rules part by part.

mod around;
mod balance;
mod parts;
mod ruled;
mod seek;
mod snapshot;
mod walk;

use crate::Mode;
use crate::rules::Traits;
use balance::Room;
use mm_domain::Millis;
use snapshot::{Group, Snapshot};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use walk::Ladder;

pub use parts::SPLIT_FROM;

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

/// A proposed match: entries (indexes into the snapshot) and the team of each,
/// with what the mode's rules decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proposal {
    pub members: Vec<usize>,
    pub teams: Vec<usize>,
    /// For each `intersect` rule, its attribute and the value chosen (a map).
    pub chosen: Vec<(Arc<str>, Arc<str>)>,
    /// Each rule (`kind:attribute`) and the step it was at (0: not relaxed).
    pub steps: Vec<(Arc<str>, usize)>,
    /// With a `roles` rule: (index into `members`, player of that ticket, role).
    pub roles: Vec<(usize, usize, Arc<str>)>,
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

/// Candidates skipped (window or party shape) before an anchor gives up.
const SKIP_LIMIT: usize = 24;

/// Proposes matches from `entries` at time `now` under `mode`, knowing nothing
/// of the tickets' attributes: only the rules that read none apply (see
/// [`propose_with`]). Every entry appears in at most one proposal; entries not
/// proposed stay queued.
pub fn propose(mode: &Mode, entries: &[Entry], now: Millis) -> Vec<Proposal> {
    propose_with(mode, entries, &Traits::shape_only(&mode.rules), now)
}

/// Proposes matches from `entries` at time `now` under `mode`, its rules reading
/// the tickets through `traits` (compiled over the same entries, in order).
/// A big pool that `equal` rules split for the whole cycle (hard ones, and
/// those no ticket waited long enough to relax) is formed part by part on the
/// machine's cores ([`parts`]).
pub fn propose_with(mode: &Mode, entries: &[Entry], traits: &Traits, now: Millis) -> Vec<Proposal> {
    let longest = snapshot::longest_wait(entries, now);
    match parts::split(entries.len(), traits, longest) {
        Some(split) => parts::propose_parts(mode, entries, traits, now, &split, parts::threads()),
        None => propose_whole(mode, entries, traits, now, Parts::Find(longest)),
    }
}

/// [`propose_with`], handing the proposals to `sink` as they are formed: a big
/// pool split into parts ([`parts`]) hands over each part's as soon as that
/// part is done (each core's smallest part first), so a caller can commit the
/// first matches while the rest are still forming; any other pool, all at
/// once. Together they are [`propose_with`]'s proposals, in another order.
pub fn propose_each(
    mode: &Mode,
    entries: &[Entry],
    traits: &Traits,
    now: Millis,
    sink: &mut dyn FnMut(Vec<Proposal>),
) {
    let longest = snapshot::longest_wait(entries, now);
    match parts::split(entries.len(), traits, longest) {
        Some(split) => {
            parts::propose_parts_each(mode, entries, traits, now, &split, parts::threads(), sink)
        }
        None => sink(propose_whole(
            mode,
            entries,
            traits,
            now,
            Parts::Find(longest),
        )),
    }
}

/// What the search knows of a pool's partitions (see [`Traits::partition_ids`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parts<'a> {
    /// Work them out from the rules, the pool's longest wait being this.
    Find(Millis),
    /// One partition: a part of a split pool, every entry able to meet; the
    /// traits are the whole pool's, and entry `i` is its entry `of[i]` (the
    /// snapshot lays the part's traits out from the pool's in one step).
    One { of: &'a [usize] },
}

/// [`propose_with`] over the whole pool as one snapshot.
fn propose_whole(
    mode: &Mode,
    entries: &[Entry],
    traits: &Traits,
    now: Millis,
    parts: Parts<'_>,
) -> Vec<Proposal> {
    let Some(mut pool) = Snapshot::new(mode, entries, traits, now, parts) else {
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
    // Under rules that keep state, the overdue tickets whose own search found
    // no match: pass 2 starts no candidate from them (see `tightest_first`).
    let mut searched = vec![false; if pool.tracks { pool.n } else { 0 }];
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
        best.clear();
        if pool.tracks {
            // Rules that keep state: grown outwards from the anchor (see `around`).
            let grown = pool.grow_around(a, &mut best) && pool.formable(&mut best);
            if !(grown && (pool.splits(&mut best) || pool.regrow_without_parties(a, &mut best))) {
                best.clear();
            }
        }
        // Else start at the anchor or at one of the nearest free tickets below it.
        ladder.reset(a);
        let mut start = (!pool.tracks).then_some(a);
        for _ in 0..ANCHOR_STARTS {
            let Some(s) = start.filter(|&s| {
                pool.at[a].rating - pool.at[s].rating <= pool.at[a].delta && pool.same_part(a, s)
            }) else {
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
                && pool.splits(&mut group)
            {
                std::mem::swap(&mut best, &mut group);
            }
            start = pool.free.left_of(s.checked_sub(1));
            ladder.push_below(start);
        }
        let room = Room {
            share: 1.0,
            keep: Some(a),
        };
        match (!best.is_empty())
            .then(|| pool.accept(&mut best, room))
            .flatten()
        {
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
            None => {
                if let Some(s) = searched.get_mut(a) {
                    *s = true;
                }
            }
        }
    }

    // 2. Everyone else: the tightest match anywhere first, lazily re-evaluated.
    // Under rules a pass leaves matches behind: a start that met two dozen
    // misfits, or whose match did not split, is dropped for the cycle, and
    // once the matches around it are taken the misfits are gone. So a ruled
    // pool whose pass took a good share of its free tickets is passed over
    // again (a few times at most); a pass that took little changed little.
    // Without rules one pass takes nearly all there is.
    let rounds = if pool.ruled { RULED_ROUNDS } else { 1 };
    let mut free = pool.at.iter().filter(|slot| !slot.used).count();
    for _ in 0..rounds {
        let taken = tightest_first(&mut pool, mode, can_cut, &mut group, &mut out, &searched);
        if taken == 0 || taken * AGAIN_SHARE < free {
            break;
        }
        free -= taken;
    }
    out
}

/// The second pass: for every free ticket the tightest comfortable match it
/// starts, taken tightest first (a lazy priority queue: a candidate spoiled by
/// an earlier match is rebuilt and re-queued). The first evaluation of every
/// start is sorted once; a candidate rebuilt looser goes into a heap, and the
/// two are merged, so candidates come out in (spread, start) order as from
/// one heap (sorting a million candidates once is far cheaper than heaping
/// them). Returns how many tickets it took.
///
/// Positions marked in `searched` (overdue tickets whose own search, grown
/// outwards over their whole window, found no match this cycle) start no
/// candidate: a start grown upwards from them within a share of the same
/// window nearly never does better, and in a ruled pool they were most of
/// the starts tried and most of this pass's time (100k bench pool: 12,281 of
/// 16,333 free starts in its largest part; 1.6% fewer matches in that one
/// cycle, the same quality over `simulate --scenario rules`, where they are
/// searched again next cycle). They still join the matches others start.
fn tightest_first(
    pool: &mut Snapshot<'_>,
    mode: &Mode,
    can_cut: bool,
    group: &mut Group,
    out: &mut Vec<Proposal>,
    searched: &[bool],
) -> usize {
    let mut taken = 0;
    let comfortable = |g: &Group| g.spread <= mode.patience * g.reach;
    // Once a group is not comfortable it never will be (unless it may be cut).
    let give_up = (!can_cut).then_some(GiveUp {
        share: Some(mode.patience),
        beat: f64::INFINITY,
    });
    let mut first: Vec<(u64, usize)> = Vec::new();
    for s in 0..pool.n {
        if !pool.at[s].used
            && !searched.get(s).copied().unwrap_or(false)
            && pool.grow(s, None, give_up, group)
            && pool.formable(group)
            && comfortable(group)
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
        if !pool.grow(s, None, give_up, group) || !pool.formable(group) || !comfortable(group) {
            continue;
        }
        if group.spread.to_bits() > spread {
            again.push(Reverse((group.spread.to_bits(), s)));
            continue;
        }
        let room = Room {
            share: mode.patience,
            keep: None,
        };
        if let Some(p) = pool.accept(group, room) {
            taken += p.members.len();
            out.push(p);
        }
    }
    taken
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

/// Most passes over a ruled pool's free tickets in one cycle (see
/// [`tightest_first`]).
const RULED_ROUNDS: usize = 3;

/// A ruled pool is passed over again when a pass took at least one in this
/// many of its free tickets.
const AGAIN_SHARE: usize = 10;

/// How many starting points an overdue ticket's match is tried from.
const ANCHOR_STARTS: usize = 12;

#[cfg(test)]
mod tests;
