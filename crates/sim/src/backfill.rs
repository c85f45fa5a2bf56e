//! Running matches, players leaving them, and backfill in the simulator: a
//! formed match plays for `match_ms`; each of its players leaves at a random
//! time (a steady `per_minute` chance a minute of play), which opens a seat on
//! their team. With backfill on, the next cycle over the match's pool fills
//! open seats first ([`mm_engine::fill`]) from the pool's waiting tickets.
//! What it measures: the time from a seat opening to its filler, the filler's
//! distance to the match's average, and the team-average gap after the fill.
//!
//! Our strategies fill; the seed-000 baseline has no backfill. A mode's
//! attribute rules hold between fillers and every ticket the match has had (a
//! leaver's attributes still count: the simulator does not track which
//! party member left), and a filler must list the map the match chose.

use crate::report::{gap_of, pct};
use mm_engine::{Backfill, Entry, Mode, Traits, fill_with};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

/// How players leave running matches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leaving {
    /// Each player's chance to leave in a minute of play (0..1).
    pub per_minute: f64,
    /// How long a match plays.
    pub match_ms: u64,
    /// Whether open seats are filled.
    pub backfill: bool,
}

/// A match being played.
#[derive(Debug)]
struct Live {
    pool: usize,
    ends_at: u64,
    /// Per team, the ratings of the players in it now.
    teams: Vec<Vec<f64>>,
    /// Per team, when each of its open seats opened (oldest first).
    seats: Vec<Vec<u64>>,
    /// The tickets it has had, fillers included.
    tickets: Vec<usize>,
    /// What it chose under its mode's `intersect` rules (its map): a filler
    /// must list it.
    chosen: BTreeMap<String, String>,
}

/// What backfill did in a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BackfillFigures {
    pub seats_opened: usize,
    pub seats_filled: usize,
    /// From a seat opening to its filler (s), p50 and p95.
    pub fill_p50_s: f64,
    pub fill_p95_s: f64,
    /// The filler's distance to the match's average rating, p50 and p95.
    pub distance_p50: f64,
    pub distance_p95: f64,
    /// The team-average gap of a match after a fill, mean and p95.
    pub gap_mean: f64,
    pub gap_p95: f64,
}

/// The running matches of one run.
pub(crate) struct Running {
    leaving: Leaving,
    rng: StdRng,
    live: Vec<Live>,
    /// (when, match, team, rating) of each leave to come.
    leaves: BinaryHeap<Reverse<(u64, usize, usize, u64)>>,
    /// (pool, match) of the matches with open seats.
    open: BTreeSet<(usize, usize)>,
    fill_ms: Vec<u64>,
    distances: Vec<f64>,
    gaps: Vec<f64>,
    opened: usize,
}

/// Tickets placed into running matches: (ticket, match, team).
pub(crate) type Filled = Vec<(usize, usize, usize)>;

impl Running {
    pub(crate) fn new(leaving: Leaving, seed: u64) -> Self {
        Self {
            leaving,
            rng: StdRng::seed_from_u64(seed ^ 0xBAC4_F111),
            live: Vec::new(),
            leaves: BinaryHeap::new(),
            open: BTreeSet::new(),
            fill_ms: Vec::new(),
            distances: Vec::new(),
            gaps: Vec::new(),
            opened: 0,
        }
    }

    /// A match of `teams` (each a list of (rating, players)), the tickets
    /// `tickets`, starts in `pool` at `at`; returns its number.
    pub(crate) fn start(
        &mut self,
        pool: usize,
        teams: &[Vec<(f64, usize)>],
        tickets: Vec<usize>,
        chosen: BTreeMap<String, String>,
        at: u64,
    ) -> usize {
        let id = self.live.len();
        let ends_at = at + self.leaving.match_ms;
        let mut ratings = Vec::new();
        for (team, tickets) in teams.iter().enumerate() {
            let mut players = Vec::new();
            for &(rating, size) in tickets {
                for _ in 0..size {
                    players.push(rating);
                    self.schedule_leave(id, team, rating, at, ends_at);
                }
            }
            ratings.push(players);
        }
        self.live.push(Live {
            pool,
            ends_at,
            seats: vec![Vec::new(); ratings.len()],
            teams: ratings,
            tickets,
            chosen,
        });
        id
    }

    fn schedule_leave(&mut self, id: usize, team: usize, rating: f64, from: u64, ends_at: u64) {
        let p = self.leaving.per_minute;
        if p <= 0.0 {
            return;
        }
        // Exponential with a `p` chance a minute.
        let rate_per_ms = -(1.0 - p.min(0.999_999)).ln() / 60_000.0;
        let u: f64 = self.rng.random_range(f64::EPSILON..1.0);
        let after = (-u.ln() / rate_per_ms) as u64;
        if from + after < ends_at {
            self.leaves
                .push(Reverse((from + after, id, team, rating.to_bits())));
        }
    }

    /// Whether open seats are filled.
    pub(crate) fn fills(&self) -> bool {
        self.leaving.backfill
    }

    /// Whether a running match of `pool` has open seats.
    pub(crate) fn has_open(&self, pool: usize) -> bool {
        self.open.range((pool, 0)..(pool + 1, 0)).next().is_some()
    }

    /// When the next player leaves.
    pub(crate) fn next_leave(&self) -> Option<u64> {
        self.leaves.peek().map(|Reverse(l)| l.0)
    }

    /// Players who leave by `now` open their seats; returns the pools of the
    /// matches that now have open seats.
    pub(crate) fn leave_until(&mut self, now: u64) -> Vec<usize> {
        let mut pools = Vec::new();
        while let Some(&Reverse((at, id, team, bits))) = self.leaves.peek() {
            if at > now {
                break;
            }
            self.leaves.pop();
            let live = &mut self.live[id];
            let rating = f64::from_bits(bits);
            if let Some(k) = live.teams[team].iter().position(|&r| r == rating) {
                live.teams[team].swap_remove(k);
                live.seats[team].push(at);
                self.opened += 1;
                self.open.insert((live.pool, id));
                pools.push(live.pool);
            }
        }
        pools
    }

    /// Fills the open seats of pool `pool`'s running matches at `now` from the
    /// waiting `tickets` (entries built over them, in the same order); the
    /// placed tickets join at `at`. `rules(waiting, match)` reads the mode's
    /// rules over the waiting tickets and, as one more row, the match's.
    /// Returns the tickets placed.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fill(
        &mut self,
        mode: &Mode,
        pool: usize,
        entries: &mut Vec<Entry>,
        tickets: &mut Vec<usize>,
        rules: &mut dyn FnMut(&[usize], &[usize]) -> Traits,
        now: u64,
        at: u64,
    ) -> Filled {
        let mut out = Vec::new();
        if !self.leaving.backfill {
            return out;
        }
        let ids: Vec<usize> = self
            .open
            .range((pool, 0)..(pool + 1, 0))
            .map(|&(_, id)| id)
            .collect();
        for id in ids {
            let live = &self.live[id];
            if live.ends_at <= now || live.seats.iter().all(Vec::is_empty) {
                // Over, or full again: no longer open.
                self.open.remove(&(pool, id));
                continue;
            }
            let request = Backfill {
                teams: live.teams.clone(),
                open: live.seats.iter().map(Vec::len).collect(),
                opened_at: live.seats.iter().flatten().copied().min().unwrap_or(now),
                held_roles: Vec::new(),
                parties: Vec::new(),
                chosen: live.chosen.clone(),
            };
            let average = request.average();
            let traits = rules(tickets, &live.tickets);
            let placed = fill_with(mode, &request, entries, &traits, now);
            if placed.is_empty() {
                continue;
            }
            let ends_at = live.ends_at;
            let mut taken = Vec::new();
            for &(i, team) in &placed {
                let e = entries[i];
                if let Some(avg) = average {
                    self.distances.push((e.rating - avg).abs());
                }
                for _ in 0..e.size {
                    let opened = self.live[id].seats[team].remove(0);
                    self.fill_ms.push(at.saturating_sub(opened));
                    self.live[id].teams[team].push(e.rating);
                    self.schedule_leave(id, team, e.rating, at, ends_at);
                }
                out.push((tickets[i], id, team));
                self.live[id].tickets.push(tickets[i]);
                taken.push(i);
            }
            self.gaps.push(gap(&self.live[id].teams));
            if self.live[id].seats.iter().all(Vec::is_empty) {
                self.open.remove(&(pool, id));
            }
            // The placed tickets leave this pool's candidates.
            taken.sort_unstable();
            for &i in taken.iter().rev() {
                entries.remove(i);
                tickets.remove(i);
            }
        }
        out
    }

    /// The run's figures (`None` when no seat opened).
    pub(crate) fn figures(&mut self) -> Option<BackfillFigures> {
        if self.opened == 0 {
            return None;
        }
        self.fill_ms.sort_unstable();
        self.distances.sort_by(f64::total_cmp);
        self.gaps.sort_by(f64::total_cmp);
        let fills: Vec<f64> = self.fill_ms.iter().map(|&ms| ms as f64 / 1000.0).collect();
        Some(BackfillFigures {
            seats_opened: self.opened,
            seats_filled: self.fill_ms.len(),
            fill_p50_s: pct(&fills, 0.5),
            fill_p95_s: pct(&fills, 0.95),
            distance_p50: pct(&self.distances, 0.5),
            distance_p95: pct(&self.distances, 0.95),
            gap_mean: if self.gaps.is_empty() {
                0.0
            } else {
                self.gaps.iter().sum::<f64>() / self.gaps.len() as f64
            },
            gap_p95: pct(&self.gaps, 0.95),
        })
    }
}

/// Highest minus lowest team average (teams with nobody left count not).
fn gap(teams: &[Vec<f64>]) -> f64 {
    let averages: Vec<f64> = teams
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| t.iter().sum::<f64>() / t.len() as f64)
        .collect();
    gap_of(&averages)
}
