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
//! Not yet: a `roles` rule's open seats (the roles the leavers held) and party
//! balance are not checked here.

use crate::Mode;
use crate::engine::Entry;
use crate::rules::{Grown, Traits};
use mm_domain::Millis;

/// A running match's open seats, as the engine reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct Backfill {
    /// Per team, the ratings of the players still in it.
    pub teams: Vec<Vec<f64>>,
    /// Per team, its open seats.
    pub open: Vec<usize>,
    /// When the backfill opened: its window grows from here.
    pub opened_at: Millis,
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
    for (_, _, i) in candidates {
        let e = &entries[i];
        let Some(team) = best_team(&sums, &open, e) else {
            continue;
        };
        if ruled {
            let wait = backfill_wait.max(now.saturating_sub(e.enqueued_at));
            if !traits.admits(&grown, i, wait) {
                continue;
            }
            traits.add(&mut grown, i);
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

/// The team with room for ticket `e` that leaves the smallest gap between the
/// highest and the lowest team average; ties to the team with more open
/// seats, then the lower index.
fn best_team(sums: &[(f64, usize)], open: &[usize], e: &Entry) -> Option<usize> {
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
    (0..open.len())
        .filter(|&t| open[t] >= e.size)
        .map(|t| (gap_with(t), t))
        .min_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(open[b.1].cmp(&open[a.1]))
                .then(a.1.cmp(&b.1))
        })
        .map(|(_, t)| t)
}

#[cfg(test)]
mod tests;
