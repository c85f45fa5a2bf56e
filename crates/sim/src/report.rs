//! What a run measured: waits per player, rating spread and team-average gap per
//! match, parties split, groups never matched; and the side-by-side table.

use crate::stream::Arrival;

/// Accumulates a run's outcome.
#[derive(Debug)]
pub struct Outcome {
    /// Per group: (match index, team) of each member once matched.
    placed: Vec<Vec<Option<(usize, usize)>>>,
    cancelled: Vec<bool>,
    waits_ms: Vec<u64>,
    spreads: Vec<f64>,
    gaps: Vec<f64>,
    matches: usize,
    double_booked: usize,
}

/// Summary of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub groups: usize,
    pub players: usize,
    pub matches: usize,
    pub matched_players: usize,
    pub cancelled_groups: usize,
    /// Groups still waiting at the end (neither matched nor cancelled).
    pub never_matched: usize,
    pub wait_p50_s: f64,
    pub wait_p95_s: f64,
    pub wait_max_s: f64,
    pub spread_p50: f64,
    pub spread_p95: f64,
    pub spread_mean: f64,
    pub gap_p50: f64,
    pub gap_p95: f64,
    pub gap_mean: f64,
    /// Matched parties whose members ended in different matches or teams, or
    /// partly unmatched.
    pub parties_matched: usize,
    pub parties_split: usize,
    /// Players placed in a second match (must be 0: the harness withdraws a
    /// group's other tickets when one is matched).
    pub double_booked: usize,
}

impl Report {
    pub fn parties_split_share(&self) -> f64 {
        if self.parties_matched == 0 {
            0.0
        } else {
            self.parties_split as f64 / self.parties_matched as f64
        }
    }
}

fn pct<T: Copy + PartialOrd + Default>(sorted: &[T], p: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

impl Outcome {
    pub fn new(arrivals: &[Arrival]) -> Self {
        Self {
            placed: arrivals
                .iter()
                .map(|a| vec![None; a.ratings.len()])
                .collect(),
            cancelled: vec![false; arrivals.len()],
            waits_ms: Vec::new(),
            spreads: Vec::new(),
            gaps: Vec::new(),
            matches: 0,
            double_booked: 0,
        }
    }

    pub fn group_matched(&self, g: usize) -> bool {
        self.placed[g].iter().any(Option::is_some)
    }

    pub fn cancel(&mut self, g: usize) {
        self.cancelled[g] = true;
    }

    pub fn is_cancelled(&self, g: usize) -> bool {
        self.cancelled[g]
    }

    /// Records a match given as teams of tickets; `info` describes a ticket as
    /// (group, members, rating, size, enqueued_at).
    pub fn record(
        &mut self,
        teams: &[Vec<usize>],
        now: u64,
        info: impl Fn(usize) -> (usize, Vec<usize>, f64, usize, u64),
    ) {
        let id = self.matches;
        self.matches += 1;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut avgs = Vec::new();
        for (team, tickets) in teams.iter().enumerate() {
            let (mut sum, mut n) = (0.0, 0usize);
            for &t in tickets {
                let (group, members, rating, size, enqueued_at) = info(t);
                lo = lo.min(rating);
                hi = hi.max(rating);
                sum += rating * size as f64;
                n += size;
                for m in members {
                    if self.placed[group][m].is_some() {
                        self.double_booked += 1;
                    }
                    self.placed[group][m] = Some((id, team));
                    self.waits_ms.push(now.saturating_sub(enqueued_at));
                }
            }
            if n > 0 {
                avgs.push(sum / n as f64);
            }
        }
        self.spreads.push(hi - lo);
        let ahi = avgs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let alo = avgs.iter().copied().fold(f64::INFINITY, f64::min);
        self.gaps.push(if avgs.len() > 1 { ahi - alo } else { 0.0 });
    }

    pub fn finish(mut self, arrivals: &[Arrival]) -> Report {
        self.waits_ms.sort_unstable();
        self.spreads.sort_by(f64::total_cmp);
        self.gaps.sort_by(f64::total_cmp);
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let mut parties_matched = 0;
        let mut parties_split = 0;
        let mut never = 0;
        for (g, placed) in self.placed.iter().enumerate() {
            let any = placed.iter().any(Option::is_some);
            if !any && !self.cancelled[g] {
                never += 1;
            }
            if placed.len() > 1 && any {
                parties_matched += 1;
                let first = placed[0];
                if placed.iter().any(|p| *p != first) {
                    parties_split += 1;
                }
            }
        }
        Report {
            groups: arrivals.len(),
            players: arrivals.iter().map(|a| a.ratings.len()).sum(),
            matches: self.matches,
            matched_players: self.waits_ms.len(),
            cancelled_groups: self.cancelled.iter().filter(|&&c| c).count(),
            never_matched: never,
            wait_p50_s: pct(&self.waits_ms, 0.50) as f64 / 1000.0,
            wait_p95_s: pct(&self.waits_ms, 0.95) as f64 / 1000.0,
            wait_max_s: self.waits_ms.last().copied().unwrap_or(0) as f64 / 1000.0,
            spread_p50: pct(&self.spreads, 0.50),
            spread_p95: pct(&self.spreads, 0.95),
            spread_mean: mean(&self.spreads),
            gap_p50: pct(&self.gaps, 0.50),
            gap_p95: pct(&self.gaps, 0.95),
            gap_mean: mean(&self.gaps),
            parties_matched,
            parties_split,
            double_booked: self.double_booked,
        }
    }
}

/// How one row of the comparison shows a report.
type Cell = fn(&Report) -> String;

/// The rows of the comparison table.
const ROWS: &[(&str, Cell)] = &[
    ("players arrived", |r| r.players.to_string()),
    ("matches", |r| r.matches.to_string()),
    ("players matched", |r| r.matched_players.to_string()),
    ("wait p50 (s)", |r| format!("{:.2}", r.wait_p50_s)),
    ("wait p95 (s)", |r| format!("{:.2}", r.wait_p95_s)),
    ("wait max (s)", |r| format!("{:.1}", r.wait_max_s)),
    ("spread p50", |r| format!("{:.0}", r.spread_p50)),
    ("spread p95", |r| format!("{:.0}", r.spread_p95)),
    ("spread mean", |r| format!("{:.0}", r.spread_mean)),
    ("team-average gap p50", |r| format!("{:.1}", r.gap_p50)),
    ("team-average gap p95", |r| format!("{:.1}", r.gap_p95)),
    ("team-average gap mean", |r| format!("{:.1}", r.gap_mean)),
    ("parties split", |r| {
        format!(
            "{:.1}% ({} of {})",
            100.0 * r.parties_split_share(),
            r.parties_split,
            r.parties_matched
        )
    }),
    ("players in two matches", |r| r.double_booked.to_string()),
    ("groups cancelled", |r| r.cancelled_groups.to_string()),
    ("groups never matched", |r| r.never_matched.to_string()),
];

/// A markdown table with one column per named report.
pub fn side_by_side(columns: &[(&str, &Report)]) -> String {
    let mut s = String::from("| metric |");
    for (name, _) in columns {
        s.push_str(&format!(" {name} |"));
    }
    s.push_str("\n|---|");
    s.push_str(&"---:|".repeat(columns.len()));
    s.push('\n');
    for (name, cell) in ROWS {
        s.push_str(&format!("| {name} |"));
        for (_, r) in columns {
            s.push_str(&format!(" {} |", cell(r)));
        }
        s.push('\n');
    }
    s
}
