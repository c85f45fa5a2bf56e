//! Team balance of a match about to be taken: the gap between its teams'
//! average ratings, and narrowing that gap by trading solo members for free
//! solos of the pool before the match is accepted.
//!
//! A match's members are chosen in rating order, and where parties fix who
//! plays together (a five-stack against a four-stack and a solo) the best
//! split can leave the teams far apart even though every member is close in
//! rating. The solos of such a match are the only room left: a lower-rated
//! solo on the stronger team, or a higher-rated one on the weaker, moves the
//! averages towards each other. [`Snapshot::accept`] tries a few such trades,
//! each keeping the match inside every member's window (and, in the second
//! pass, inside the mode's patience), never trading away the overdue ticket
//! the match was formed for or its longest-waiting member, and keeps a trade
//! only if the new match still meets every rule and splits with a smaller gap.
//! The solos traded away stay in the pool.

use super::Proposal;
use super::ruled::Split;
use super::snapshot::{Group, Snapshot};
use crate::teams::Unit;
use mm_domain::Millis;
use smallvec::{SmallVec, smallvec};

/// Most trades tried for one match.
const TRADES: usize = 4;
/// Free solos looked at on each side of a trade's ideal rating.
const LOOK: usize = 12;
/// Gaps below this share of the mode's initial window half-width are left alone.
const SMALL_GAP: f64 = 0.05;

/// How far a trade may stretch a match: its spread at most `share` of the
/// smallest window half-width among its members (1 in the overdue pass, the
/// mode's patience in the second), and the members it must keep.
#[derive(Debug, Clone, Copy)]
pub(super) struct Room {
    pub(super) share: f64,
    /// The overdue ticket the match was formed for.
    pub(super) keep: Option<usize>,
}

/// One trade: member `out` (an index into the group) leaves, position `inn`
/// joins; the gap with the teams as they are.
#[derive(Debug, Clone, Copy)]
struct Trade {
    out: usize,
    inn: usize,
    gap: f64,
}

impl Snapshot<'_> {
    /// The gap between the highest and lowest team average of group `g`
    /// split as `team_of` (a ticket counts its rating once per player).
    pub(super) fn team_gap(&self, g: &Group, team_of: &[usize]) -> f64 {
        self.gap_with(g, team_of, None)
    }

    /// [`Snapshot::team_gap`], with member `k` rated `r` instead when given.
    fn gap_with(&self, g: &Group, team_of: &[usize], swap: Option<(usize, f64)>) -> f64 {
        let teams = team_of.iter().max().map_or(0, |t| t + 1);
        // On the stack for any usual number of teams: asked for every trade
        // the balancing weighs.
        let mut sum: SmallVec<[f64; 8]> = smallvec![0.0; teams];
        let mut n: SmallVec<[usize; 8]> = smallvec![0; teams];
        for (k, (&m, &t)) in g.members.iter().zip(team_of).enumerate() {
            let rating = match swap {
                Some((j, r)) if j == k => r,
                _ => self.at[m].rating,
            };
            sum[t] += rating * self.at[m].size() as f64;
            n[t] += self.at[m].size();
        }
        spread_of_averages(&sum, &n)
    }

    /// [`Snapshot::split`] of group `g`, its units laid out in the reused buffer.
    pub(super) fn split_group(&mut self, g: &Group) -> Option<Split> {
        let mut units = std::mem::take(&mut self.units);
        units.clear();
        units.extend(g.members.iter().map(|&m| Unit {
            size: self.at[m].size(),
            rating: self.at[m].rating,
        }));
        let split = self.split(g, &units);
        self.units = units;
        split
    }

    /// Splits the group into teams, narrows their gap by trading solos where it
    /// can (within `room`), and takes its members out of the pool, unless the
    /// best split leaves the teams' averages further apart than the mode's
    /// `max_team_gap` allows at the group's longest wait (then the group stays
    /// in the pool).
    pub(super) fn accept(&mut self, g: &mut Group, room: Room) -> Option<Proposal> {
        let mut split = match g.split.take() {
            Some(split) => split,
            None => self.split_group(g)?,
        };
        if self.mode.team_size > 1 && self.mode.teams > 1 {
            self.narrow(g, &mut split, room);
        }
        if let Some(limit) = &self.mode.max_team_gap
            && self.team_gap(g, &split.team_of) > limit.delta(self.wait_since(g.oldest))
        {
            return None;
        }
        for &m in &g.members {
            self.take_out(m);
        }
        Some(self.proposal(g, split))
    }

    /// Trades solo members of `g` for free solos while that narrows the gap of
    /// its best split (see the module's doc).
    fn narrow(&mut self, g: &mut Group, split: &mut Split, room: Room) {
        let small = SMALL_GAP * self.mode.window.initial;
        let mut gap = self.team_gap(g, &split.team_of);
        for _ in 0..TRADES {
            if gap <= small {
                return;
            }
            let Some(trade) = self.best_trade(g, &split.team_of, gap, room) else {
                return;
            };
            let old = g.members[trade.out];
            g.members[trade.out] = trade.inn;
            self.refresh(g);
            let wait = self.wait_since(g.oldest);
            let kept = (!self.ruled || self.traits.meets(&g.members, wait))
                .then(|| self.split_group(g))
                .flatten()
                .map(|s| (self.team_gap(g, &s.team_of), s))
                .filter(|(new_gap, _)| *new_gap < gap);
            match kept {
                Some((new_gap, s)) => {
                    gap = new_gap;
                    *split = s;
                }
                None => {
                    g.members[trade.out] = old;
                    self.refresh(g);
                    return;
                }
            }
        }
    }

    /// Recomputes what group `g` keeps of its members (sizes are unchanged: a
    /// solo only ever replaces a solo).
    fn refresh(&self, g: &mut Group) {
        let (mut lo, mut hi, mut reach, mut oldest) =
            (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, Millis::MAX);
        for &m in &g.members {
            lo = lo.min(self.at[m].rating);
            hi = hi.max(self.at[m].rating);
            reach = reach.min(self.at[m].delta);
            oldest = oldest.min(self.since[m]);
        }
        g.spread = hi - lo;
        g.reach = reach;
        g.oldest = oldest;
    }

    /// The trade that narrows the gap of `g`, split as `team_of`, the most.
    fn best_trade(&mut self, g: &Group, team_of: &[usize], gap: f64, room: Room) -> Option<Trade> {
        let oldest = g
            .members
            .iter()
            .copied()
            .min_by_key(|&m| (self.since[m], self.at[m].order))?;
        let mut best: Option<Trade> = None;
        for k in 0..g.members.len() {
            let m = g.members[k];
            if self.at[m].size() != 1 || Some(m) == room.keep || m == oldest {
                continue;
            }
            // The range a solo in its place may have: the rest's spread with it
            // stays within the rest's windows (its own is checked below).
            let (lo, hi, reach) = self.rest_bounds(g, k);
            let reach = reach * room.share;
            let (from, to) = (hi - reach, lo + reach);
            if from > to {
                continue;
            }
            // Where the gap would close if the teams stayed as they are: moving
            // this member's rating by `d` moves its team's average by d / players.
            let team = team_of[k];
            let players: usize = g
                .members
                .iter()
                .zip(team_of)
                .filter(|(_, t)| **t == team)
                .map(|(&p, _)| self.at[p].size())
                .sum();
            let here = self.at[m].rating;
            let sign = if self.gap_with(g, team_of, Some((k, here + 1.0))) < gap {
                1.0
            } else {
                -1.0
            };
            let ideal = (here + sign * gap * players as f64).clamp(from, to);
            for c in self.solos_near(g, m, ideal, from, to) {
                // The trade must fit the newcomer's window too.
                let spread = hi.max(self.at[c].rating) - lo.min(self.at[c].rating);
                if spread > self.at[c].delta * room.share {
                    continue;
                }
                let new = self.gap_with(g, team_of, Some((k, self.at[c].rating)));
                if new < gap && best.is_none_or(|b| new < b.gap) {
                    best = Some(Trade {
                        out: k,
                        inn: c,
                        gap: new,
                    });
                }
            }
        }
        best
    }

    /// The lowest and highest rating and the smallest window of `g`'s members
    /// but the `k`th.
    fn rest_bounds(&self, g: &Group, k: usize) -> (f64, f64, f64) {
        let mut out = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY);
        for (j, &m) in g.members.iter().enumerate() {
            if j != k {
                out.0 = out.0.min(self.at[m].rating);
                out.1 = out.1.max(self.at[m].rating);
                out.2 = out.2.min(self.at[m].delta);
            }
        }
        out
    }

    /// The free solos nearest rating `ideal` on each side, in `[from, to]`, in
    /// the partition of position `m`, not already in `g`: at most one each side,
    /// looking at [`LOOK`] free positions each way.
    fn solos_near(&mut self, g: &Group, m: usize, ideal: f64, from: f64, to: f64) -> Vec<usize> {
        let (start, end) = self.part_range(m);
        let at = &self.at[start..end];
        let p = start + at.partition_point(|s| s.rating < ideal);
        let mut out = Vec::with_capacity(2);
        let fits = |s: &Self, c: usize| {
            s.at[c].size() == 1
                && !s.at[c].used
                && !g.members.contains(&c)
                && s.at[c].rating >= from
                && s.at[c].rating <= to
        };
        let mut up = (p < end).then(|| self.free.right_of(p, self.n)).flatten();
        for _ in 0..LOOK {
            let Some(c) = up.filter(|&c| c < end && self.at[c].rating <= to) else {
                break;
            };
            if fits(self, c) {
                out.push(c);
                break;
            }
            up = self.free.right_of(c + 1, self.n);
        }
        let mut down = self.free.left_of(p.checked_sub(1));
        for _ in 0..LOOK {
            let Some(c) = down.filter(|&c| c >= start && self.at[c].rating >= from) else {
                break;
            };
            if fits(self, c) {
                out.push(c);
                break;
            }
            down = self.free.left_of(c.checked_sub(1));
        }
        out
    }

    /// The positions of position `p`'s partition (contiguous, in rating order).
    fn part_range(&self, p: usize) -> (usize, usize) {
        if self.part.is_empty() {
            return (0, self.n);
        }
        let id = self.part[p];
        (
            self.part.partition_point(|&x| x < id),
            self.part.partition_point(|&x| x <= id),
        )
    }
}

/// The gap between the highest and the lowest average of teams with rating
/// sums `sum` over `n` players (teams without players left out).
fn spread_of_averages(sum: &[f64], n: &[usize]) -> f64 {
    let (lo, hi) = sum
        .iter()
        .zip(n)
        .filter(|(_, n)| **n > 0)
        .map(|(s, n)| s / *n as f64)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), a| {
            (lo.min(a), hi.max(a))
        });
    if hi >= lo { hi - lo } else { 0.0 }
}
