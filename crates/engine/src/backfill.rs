//! Filling the open seats of a running match (backfill) from a pool: which
//! waiting tickets join it and on which team. Pure and deterministic, like
//! [`crate::engine`], which the worker runs on what a fill leaves.
//!
//! A ticket may fill a seat when its rating is within both windows around the
//! match's average: its own (it agreed to no wider a match) and the
//! backfill's, which grows from when the backfill opened as a ticket's does
//! (a match waits a little for a close filler, then takes a wider one).
//! Overdue tickets go first, then the rest; within each, the closest to the
//! match's average first. A ticket's party goes whole onto one team with enough
//! open seats: of those, the one that leaves the team averages closest. The
//! mode's attribute rules and block lists apply against the match's players as
//! they apply within a match (see [`fill_with`]). Backfills never fill each
//! other: only tickets are candidates.
//!
//! With a `roles` rule, a ticket joins a team only if its players can take
//! roles the team still misses: the rule's need (at the step of the longest
//! wait) less the roles its remaining players hold ([`Backfill::held_roles`]).
//! [`fill_roles`] then names each filler's role. With a `party_balance` rule,
//! a party joins a team only if the teams' largest parties stay within the
//! rule's gap (or no further apart than they already are). Under an
//! `intersect` rule a filler must list the value the match chose (its map),
//! not just share some value with its players.

use crate::Mode;
use crate::engine::Entry;
use crate::rules::roles::{Need, assign};
use crate::rules::{Grown, RolesAt, Traits};
use mm_domain::Millis;
use std::collections::BTreeMap;

/// A running match's open seats, as the engine reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct Backfill {
    /// Per team, the ratings of the players still in it.
    pub teams: Vec<Vec<f64>>,
    /// Per team, its open seats.
    pub open: Vec<usize>,
    /// When the backfill opened: its window grows from here.
    pub opened_at: Millis,
    /// Per team, the roles its remaining players hold (a `roles` rule's names;
    /// empty when the mode has none, or nobody holds one).
    pub held_roles: Vec<Vec<String>>,
    /// Per team, its largest party still playing (empty: not known, and party
    /// balance is not checked).
    pub parties: Vec<usize>,
    /// What the match chose under its `intersect` rules (attribute -> value:
    /// the map it is played on). A filler must list it while the rule is in
    /// force: sharing another value with the players is not enough.
    pub chosen: BTreeMap<String, String>,
}

impl Backfill {
    /// The average rating of the match's players (`None` when it has none).
    pub fn average(&self) -> Option<f64> {
        let (sum, n) = self
            .teams
            .iter()
            .flatten()
            .fold((0.0, 0usize), |(s, n), r| (s + r, n + 1));
        (n > 0).then(|| sum / n as f64)
    }
}

/// The tickets placed into a backfill: (entry index, team), in the order
/// they were chosen.
pub type Placed = Vec<(usize, usize)>;

/// Fills `backfill` from `entries` at `now` under `mode`, knowing nothing of
/// the tickets' attributes (see [`fill_with`]). Places as many tickets as fit;
/// an empty result leaves every seat open.
pub fn fill(mode: &Mode, backfill: &Backfill, entries: &[Entry], now: Millis) -> Placed {
    fill_with(mode, backfill, entries, &Traits::none(), now)
}

/// [`fill`], the mode's rules reading the tickets through `traits`: compiled
/// over `entries` and, as one more row after them, the match's players
/// together (their attributes and block lists). A ticket joins only if the
/// match, with it and the tickets placed before it, meets every rule at the
/// step of its longest wait (the backfill's or the ticket's).
pub fn fill_with(
    mode: &Mode,
    backfill: &Backfill,
    entries: &[Entry],
    traits: &Traits,
    now: Millis,
) -> Placed {
    let teams = backfill.teams.len().min(backfill.open.len());
    let Some(average) = backfill.average() else {
        return Vec::new();
    };
    let mut open: Vec<usize> = backfill.open[..teams].to_vec();
    if open.iter().all(|&o| o == 0) {
        return Vec::new();
    }
    let widest = open.iter().copied().max().unwrap_or(0);
    let backfill_wait = now.saturating_sub(backfill.opened_at);
    let backfill_reach = mode.window.delta(backfill_wait);
    // Candidates: eligible, whole parties that fit some team, inside both
    // windows; overdue first, then closest to the match's average.
    let mut candidates: Vec<(bool, f64, usize)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.eligible_at <= now
                && e.size >= 1
                && e.size <= widest
                && e.rating.is_finite()
                && (e.rating - average).abs()
                    <= backfill_reach.min(mode.window.delta(now.saturating_sub(e.enqueued_at)))
        })
        .map(|(i, e)| {
            let overdue = now.saturating_sub(e.enqueued_at) >= mode.overdue_after;
            (!overdue, (e.rating - average).abs(), i)
        })
        .collect();
    candidates.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));

    let ruled = !traits.is_empty();
    let mut grown = Grown::default();
    if ruled {
        traits.start(&mut grown, entries.len());
    }
    // Per team: the sum and count of its ratings, placed fillers included.
    let mut sums: Vec<(f64, usize)> = backfill.teams[..teams]
        .iter()
        .map(|t| (t.iter().sum(), t.len()))
        .collect();
    let mut placed = Vec::new();
    // Per team, the role sets of the fillers placed on it, and its largest
    // party with them.
    let mut fillers: Vec<Vec<u16>> = vec![Vec::new(); teams];
    let mut parties: Vec<usize> = backfill.parties.clone();
    for (_, _, i) in candidates {
        let e = &entries[i];
        let wait = backfill_wait.max(now.saturating_sub(e.enqueued_at));
        if ruled && !traits.lists_chosen(i, wait, &backfill.chosen) {
            continue;
        }
        let roles = if ruled { traits.roles_at(wait) } else { None };
        let gap = if ruled { traits.party_gap(wait) } else { None };
        let fits = |team: usize| {
            let roles_ok = match &roles {
                Some(ra) => {
                    let mut sets = fillers[team].clone();
                    sets.extend_from_slice(ra.of(i));
                    let held = backfill.held_roles.get(team).map_or(&[][..], Vec::as_slice);
                    roles_left(ra, held, &sets).is_some()
                }
                None => true,
            };
            roles_ok && gap.is_none_or(|gap| parties_alike(&parties, team, e.size, gap))
        };
        let Some(team) = teams_by_fit(&sums, &open, e).into_iter().find(|&t| fits(t)) else {
            continue;
        };
        if ruled {
            if !traits.admits(&grown, i, wait) {
                continue;
            }
            traits.add(&mut grown, i);
        }
        if let Some(ra) = &roles {
            fillers[team].extend_from_slice(ra.of(i));
        }
        if let Some(largest) = parties.get_mut(team) {
            *largest = (*largest).max(e.size);
        }
        open[team] -= e.size;
        sums[team].0 += e.rating * e.size as f64;
        sums[team].1 += e.size;
        placed.push((i, team));
        if open.iter().all(|&o| o == 0) {
            break;
        }
    }
    placed
}

/// Whether a party of `size` joining `team` keeps the teams' largest parties
/// (`largest`) within `gap` of each other, or no further apart than they are.
/// Unknown make-ups (`largest` empty) pass.
fn parties_alike(largest: &[usize], team: usize, size: usize, gap: usize) -> bool {
    if largest.len() <= team {
        return true;
    }
    let spread =
        |l: &[usize]| l.iter().max().copied().unwrap_or(0) - l.iter().min().copied().unwrap_or(0);
    let mut after = largest.to_vec();
    after[team] = after[team].max(size);
    spread(&after) <= gap.max(spread(largest))
}

/// The roles `fillers` (players' role sets) take on a team whose remaining
/// players hold `held`: an index into `ra.need` per filler, or `None` when
/// they cannot all take a role the team still misses.
fn roles_left(ra: &RolesAt<'_>, held: &[String], fillers: &[u16]) -> Option<Vec<usize>> {
    let mut need: Vec<Need> = ra.need.to_vec();
    for h in held {
        if let Some(n) = need
            .iter_mut()
            .find(|n| n.count > 0 && ra.names.get(n.bit).is_some_and(|name| **name == **h))
        {
            n.count -= 1;
        }
    }
    let slots: usize = need.iter().map(|n| n.count).sum();
    if fillers.len() > slots {
        return None;
    }
    // Stand-ins who accept anything take the slots nobody fills.
    let mut players = fillers.to_vec();
    players.resize(slots, u16::MAX);
    let mut roles = assign(&players, &need)?;
    roles.truncate(fillers.len());
    Some(roles)
}

/// Each filler's role, for the tickets [`fill_with`] placed (`placed`, with the
/// same arguments): (entry, player index in it, role name). Empty without a
/// `roles` rule.
pub fn fill_roles(
    backfill: &Backfill,
    entries: &[Entry],
    traits: &Traits,
    placed: &[(usize, usize)],
    now: Millis,
) -> Vec<(usize, usize, String)> {
    let wait = placed
        .iter()
        .map(|&(i, _)| now.saturating_sub(entries[i].enqueued_at))
        .max()
        .unwrap_or(0)
        .max(now.saturating_sub(backfill.opened_at));
    let Some(ra) = traits.roles_at(wait) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for team in 0..backfill.open.len() {
        let on: Vec<usize> = placed
            .iter()
            .filter(|&&(_, t)| t == team)
            .map(|&(i, _)| i)
            .collect();
        let sets: Vec<u16> = on.iter().flat_map(|&i| ra.of(i).iter().copied()).collect();
        let held = backfill.held_roles.get(team).map_or(&[][..], Vec::as_slice);
        let Some(roles) = roles_left(&ra, held, &sets) else {
            continue;
        };
        let mut k = 0;
        for &i in &on {
            for p in 0..ra.of(i).len() {
                let name = ra.names[ra.need[roles[k]].bit].to_string();
                out.push((i, p, name));
                k += 1;
            }
        }
    }
    out
}

/// The teams with room for ticket `e`, best first: the smallest gap between
/// the highest and the lowest team average; ties to the team with more open
/// seats, then the lower index.
fn teams_by_fit(sums: &[(f64, usize)], open: &[usize], e: &Entry) -> Vec<usize> {
    let gap_with = |team: usize| {
        let averages = sums.iter().enumerate().filter_map(|(t, &(sum, n))| {
            let (sum, n) = if t == team {
                (sum + e.rating * e.size as f64, n + e.size)
            } else {
                (sum, n)
            };
            (n > 0).then(|| sum / n as f64)
        });
        let (lo, hi) = averages.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), a| {
            (lo.min(a), hi.max(a))
        });
        hi - lo
    };
    let mut fit: Vec<(f64, usize)> = (0..open.len())
        .filter(|&t| open[t] >= e.size)
        .map(|t| (gap_with(t), t))
        .collect();
    fit.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(open[b.1].cmp(&open[a.1]))
            .then(a.1.cmp(&b.1))
    });
    fit.into_iter().map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests;
