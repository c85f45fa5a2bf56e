//! Our match formation for one pool (one mode in one region): a snapshot of the
//! pool's tickets and the current time in, proposed matches with their teams out.
//! Pure and deterministic.
//!
//! The longest-waiting ticket goes first (so nobody starves: a ticket's priority only
//! grows), and its match is grown outwards from it in rating order, nearest rating
//! first. A ticket joins only if every member, it included, lies inside every other
//! member's current window, if its party fits the team shape, and if the match does
//! not overflow. A full match is split into balanced teams ([`crate::teams`]). A match
//! smaller than full (battle royale) may start once its oldest member waited the
//! mode's `start_below_max_after`.

use crate::Mode;
use crate::teams::{self, Unit};
use mm_domain::Millis;

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
    let max = mode.max_players();
    let cap_team = mode.team_size;
    // Eligible entries in rating order.
    let mut order: Vec<u32> = (0..entries.len() as u32)
        .filter(|&i| {
            let e = &entries[i as usize];
            e.eligible_at <= now && e.size >= 1 && e.size <= cap_team && e.rating.is_finite()
        })
        .collect();
    order.sort_unstable_by(|&a, &b| {
        entries[a as usize]
            .rating
            .total_cmp(&entries[b as usize].rating)
            .then(a.cmp(&b))
    });
    let n = order.len();
    if n == 0 {
        return Vec::new();
    }
    // Per position: rating, window bounds, size, enqueue time.
    let mut rating = Vec::with_capacity(n);
    let mut lo = Vec::with_capacity(n);
    let mut hi = Vec::with_capacity(n);
    let mut size = Vec::with_capacity(n);
    let mut since = Vec::with_capacity(n);
    for &i in &order {
        let e = &entries[i as usize];
        let d = mode.window.delta(now.saturating_sub(e.enqueued_at));
        rating.push(e.rating);
        lo.push(e.rating - d);
        hi.push(e.rating + d);
        size.push(e.size);
        since.push(e.enqueued_at);
    }
    // Anchors: longest wait first.
    let mut anchors: Vec<u32> = (0..n as u32).collect();
    anchors.sort_unstable_by(|&a, &b| {
        since[a as usize]
            .cmp(&since[b as usize])
            .then(order[a as usize].cmp(&order[b as usize]))
    });

    let mut free = Free::new(n);
    let mut used = vec![false; n];
    let mut out = Vec::new();
    let mut members: Vec<usize> = Vec::with_capacity(max);
    let mut sizes: Vec<usize> = Vec::with_capacity(max);
    for &a in &anchors {
        let a = a as usize;
        if used[a] {
            continue;
        }
        members.clear();
        sizes.clear();
        members.push(a);
        sizes.push(size[a]);
        let mut players = size[a];
        let (mut win_lo, mut win_hi) = (lo[a], hi[a]);
        let (mut min_r, mut max_r) = (rating[a], rating[a]);
        let mut left = free.left_of(a.checked_sub(1));
        let mut right = free.right_of(a + 1, n);
        let mut skipped = 0;
        while players < max {
            let l = left.filter(|&p| rating[p] >= win_lo);
            let r = right.filter(|&p| rating[p] <= win_hi);
            let c = match (l, r) {
                (None, None) => break,
                (Some(l), None) => l,
                (None, Some(r)) => r,
                (Some(l), Some(r)) => {
                    if rating[a] - rating[l] <= rating[r] - rating[a] {
                        l
                    } else {
                        r
                    }
                }
            };
            if Some(c) == l {
                left = free.left_of(c.checked_sub(1));
            } else {
                right = free.right_of(c + 1, n);
            }
            let lo_r = min_r.min(rating[c]);
            let hi_r = max_r.max(rating[c]);
            let mut ok = lo[c] <= lo_r && hi[c] >= hi_r && players + size[c] <= max;
            if ok && size[c] > 1 {
                sizes.push(size[c]);
                ok = teams::fits(&sizes, mode.teams, cap_team);
                sizes.pop();
            }
            if !ok {
                skipped += 1;
                if skipped > SKIP_LIMIT {
                    break;
                }
                continue;
            }
            members.push(c);
            sizes.push(size[c]);
            players += size[c];
            win_lo = win_lo.max(lo[c]);
            win_hi = win_hi.min(hi[c]);
            min_r = lo_r;
            max_r = hi_r;
        }
        if players < max {
            // A smaller match only once its oldest member has waited long enough.
            let oldest = members.iter().map(|&m| since[m]).min().unwrap_or(now);
            if mode.min_players >= max
                || now.saturating_sub(oldest) < mode.start_below_max_after
            {
                continue;
            }
            // Whole teams only.
            while players % cap_team != 0 && members.len() > 1 {
                let m = members.pop().expect("more than one member");
                sizes.pop();
                players -= size[m];
            }
            if players < mode.min_players {
                continue;
            }
        }
        let units: Vec<Unit> = members
            .iter()
            .map(|&m| Unit {
                size: size[m],
                rating: rating[m],
            })
            .collect();
        let Some(team_of) = teams::balance(&units, players / cap_team, cap_team) else {
            continue;
        };
        for &m in &members {
            used[m] = true;
            free.take(m);
        }
        out.push(Proposal {
            members: members.iter().map(|&m| order[m] as usize).collect(),
            teams: team_of,
        });
    }
    out
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
        }
    }

    fn party(rating: f64, size: usize, enqueued_at: Millis) -> Entry {
        Entry {
            rating,
            size,
            enqueued_at,
            eligible_at: enqueued_at,
        }
    }

    #[test]
    fn ten_close_players_make_a_balanced_5v5() {
        let m = Modes::defaults().get("5v5").unwrap().clone();
        let entries: Vec<Entry> = (0..10).map(|i| Entry::solo(1500.0 + i as f64 * 5.0, 0)).collect();
        let p = propose(&m, &entries, 1000);
        assert_eq!(p.len(), 1);
        let teams = p[0].by_team();
        let avg = |t: &Vec<usize>| t.iter().map(|&i| entries[i].rating).sum::<f64>() / 5.0;
        assert_eq!(teams.len(), 2);
        assert!((avg(&teams[0]) - avg(&teams[1])).abs() <= 5.0);
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
        let full: Vec<Entry> = (0..100).map(|i| Entry::solo(1500.0 + i as f64 * 0.5, 0)).collect();
        assert_eq!(propose(&m, &full, 0)[0].members.len(), 100);
    }

    fn check(mode: &Mode, entries: &[Entry], now: Millis, props: &[Proposal]) -> Result<(), TestCaseError> {
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
                let (lo, hi) = mode.window.window(entries[i].rating, now - entries[i].enqueued_at);
                for &j in &p.members {
                    prop_assert!(entries[j].rating >= lo && entries[j].rating <= hi,
                        "{} outside the window of {}", entries[j].rating, entries[i].rating);
                }
            }
            prop_assert!(load.iter().all(|&l| l == mode.team_size), "team loads {:?}", load);
            if players < mode.max_players() {
                let oldest = p.members.iter().map(|&i| entries[i].enqueued_at).min().unwrap();
                prop_assert!(now - oldest >= mode.start_below_max_after);
            }
        }
        Ok(())
    }

    fn entries_strategy(max_party: usize) -> impl Strategy<Value = Vec<Entry>> {
        proptest::collection::vec(
            (1200.0f64..1800.0, 1..=max_party, 0u64..90_000, 0u64..30_000, any::<bool>()),
            0..250,
        )
        .prop_map(|v| {
            v.into_iter()
                .map(|(r, s, wait, late, cross)| {
                    let enqueued_at = 100_000 - wait;
                    Entry {
                        rating: r,
                        size: if s > 1 && r as u64 % 5 != 0 { 1 } else { s },
                        enqueued_at,
                        eligible_at: if cross { enqueued_at + late } else { enqueued_at },
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
