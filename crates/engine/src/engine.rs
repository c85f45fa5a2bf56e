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
    // (since, entry, position): sorted as plain tuples, no lookups while sorting.
    let mut anchors: Vec<(Millis, u32, u32)> = (0..pool.n)
        .filter(|&p| now.saturating_sub(pool.since[p]) >= overdue_after)
        .map(|p| (pool.since[p], pool.order[p], p as u32))
        .collect();
    anchors.sort_unstable();
    for &(_, _, a) in &anchors {
        let a = a as usize;
        if pool.used[a] {
            continue;
        }
        // Start at the anchor or at one of the nearest free tickets below it.
        best.clear();
        let mut start = Some(a);
        for _ in 0..ANCHOR_STARTS {
            let Some(s) = start.filter(|&s| pool.rating[a] - pool.rating[s] <= pool.delta[a])
            else {
                break;
            };
            // Starts further down can only give wider matches than the best.
            let beat = (!can_cut && !best.is_empty()).then_some(best.spread);
            if beat.is_some_and(|b| pool.rating[a] - pool.rating[s] >= b) {
                break;
            }
            let give_up = beat.map(|beat| GiveUp { share: None, beat });
            if pool.grow(s, Some(a), give_up, &mut group)
                && pool.formable(&mut group)
                && (best.is_empty() || group.spread < best.spread)
            {
                std::mem::swap(&mut best, &mut group);
            }
            start = pool.free.left_of(s.checked_sub(1));
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
        if !pool.used[s]
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
        if pool.used[s] {
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

/// How many starting points an overdue ticket's match is tried from.
const ANCHOR_STARTS: usize = 12;

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

/// The eligible entries of a pool in rating order, with their windows.
struct Snapshot<'a> {
    mode: &'a Mode,
    now: Millis,
    n: usize,
    /// Entry index of each position.
    order: Vec<u32>,
    rating: Vec<f64>,
    /// Window half-width.
    delta: Vec<f64>,
    size: Vec<usize>,
    since: Vec<Millis>,
    used: Vec<bool>,
    free: Free,
}

impl<'a> Snapshot<'a> {
    fn new(mode: &'a Mode, entries: &[Entry], now: Millis) -> Option<Self> {
        // Sort (rating key, index) pairs: plain integer comparisons, no indirection.
        let mut keyed: Vec<(u64, u32)> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e.eligible_at <= now
                    && e.size >= 1
                    && e.size <= mode.team_size
                    && e.rating.is_finite()
            })
            .map(|(i, e)| (order_key(e.rating), i as u32))
            .collect();
        keyed.sort_unstable();
        let order: Vec<u32> = keyed.into_iter().map(|(_, i)| i).collect();
        let n = order.len();
        if n == 0 {
            return None;
        }
        let mut rating = Vec::with_capacity(n);
        let mut delta = Vec::with_capacity(n);
        let mut size = Vec::with_capacity(n);
        let mut since = Vec::with_capacity(n);
        for &i in &order {
            let e = &entries[i as usize];
            rating.push(e.rating);
            delta.push(mode.window.delta(now.saturating_sub(e.enqueued_at)));
            size.push(e.size);
            since.push(e.enqueued_at);
        }
        Some(Self {
            mode,
            now,
            n,
            order,
            rating,
            delta,
            size,
            since,
            used: vec![false; n],
            free: Free::new(n),
        })
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
        let max = self.mode.max_players();
        g.clear();
        if self.used[start] {
            return false;
        }
        g.members.push(start);
        g.sizes.push(self.size[start]);
        g.players = self.size[start];
        // The spread of the match must fit inside the window half-width of every
        // member (seed 000's rule: then each member, wherever it sits in the match,
        // has every other inside its window).
        let mut reach = self.delta[start];
        let low = self.rating[start];
        let mut high = low;
        let mut next = self.free.right_of(start + 1, self.n);
        let mut skipped = 0;
        while g.players < max {
            let Some(c) = next.filter(|&c| self.rating[c] - low <= reach) else {
                break;
            };
            next = self.free.right_of(c + 1, self.n);
            let r = self.rating[c];
            let mut ok = r - low <= self.delta[c] && g.players + self.size[c] <= max;
            if ok && self.size[c] > 1 {
                g.sizes.push(self.size[c]);
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
            g.sizes.push(self.size[c]);
            g.players += self.size[c];
            reach = reach.min(self.delta[c]);
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
            g.players -= self.size[m];
        }
        if let (Some(&first), Some(&last)) = (g.members.first(), g.members.last()) {
            g.spread = self.rating[last] - self.rating[first];
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
        let mut need = self.mode.max_players().saturating_sub(self.size[a]);
        self.used[a] = true;
        self.free.take(a);
        let mut left = self.free.left_of(a.checked_sub(1));
        let mut right = self.free.right_of(a + 1, self.n);
        let r = self.rating[a];
        while need > 0 {
            let l = left.filter(|&p| r - self.rating[p] <= self.delta[a]);
            let h = right.filter(|&p| self.rating[p] - r <= self.delta[a]);
            let c = match (l, h) {
                (None, None) => break,
                (Some(l), None) => l,
                (None, Some(h)) => h,
                (Some(l), Some(h)) => {
                    if r - self.rating[l] <= self.rating[h] - r {
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
            self.used[c] = true;
            self.free.take(c);
            need = need.saturating_sub(self.size[c]);
        }
    }

    /// Splits the group into teams and takes its members out of the pool.
    fn accept(&mut self, g: &Group) -> Option<Proposal> {
        let units: Vec<Unit> = g
            .members
            .iter()
            .map(|&m| Unit {
                size: self.size[m],
                rating: self.rating[m],
            })
            .collect();
        let team_of = teams::balance(&units, g.players / self.mode.team_size, self.mode.team_size)?;
        for &m in &g.members {
            self.used[m] = true;
            self.free.take(m);
        }
        Some(Proposal {
            members: g.members.iter().map(|&m| self.order[m] as usize).collect(),
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
