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
    /// The same gaps, each player counted with their own rating (a party's
    /// members not all at the party's rating).
    own_gaps: Vec<f64>,
    /// Per group: each player's own rating.
    own: Vec<Vec<f64>>,
    matches: usize,
    double_booked: usize,
    given_up: Vec<bool>,
    /// Per rule label: whether it is hard, and per step its tally.
    rules: std::collections::BTreeMap<String, (bool, std::collections::BTreeMap<usize, Tally>)>,
}

/// Matches formed at one step of a rule.
#[derive(Debug, Default, Clone)]
struct Tally {
    matches: usize,
    broken: usize,
    /// The longest wait of each match (ms).
    waits_ms: Vec<u64>,
}

/// One rule's figures in a run: per step, matches formed there, how many of
/// them break the rule, and the median of their longest waits.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleFigures {
    pub rule: String,
    pub hard: bool,
    /// (step, matches, broken, wait p50 s)
    pub steps: Vec<(usize, usize, usize, f64)>,
}

impl RuleFigures {
    pub fn broken(&self) -> usize {
        self.steps.iter().map(|s| s.2).sum()
    }
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
    /// The team-average gap with every player at their own rating, where the
    /// gap above counts a party's members at the rating the party is matched
    /// with (its highest member's, in the shipped team modes); the same for
    /// the seed-000 baseline, whose tickets are single players.
    pub own_gap_p95: f64,
    pub own_gap_mean: f64,
    /// Matched parties whose members ended in different matches or teams, or
    /// partly unmatched.
    pub parties_matched: usize,
    pub parties_split: usize,
    /// Players placed in a second match (must be 0: the harness withdraws a
    /// group's other tickets when one is matched).
    pub double_booked: usize,
    /// Groups ended by their mode's `give_up_after` without a match.
    pub given_up: usize,
    /// Each rule of the modes played, with its figures.
    pub rules: Vec<RuleFigures>,
    /// With players leaving running matches: what backfill did.
    pub backfill: Option<crate::backfill::BackfillFigures>,
    /// How close the wait estimates given at queue time came.
    pub estimates: Option<crate::estimates::EstimateFigures>,
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

/// Highest minus lowest of the teams' `averages` (0 with fewer than two).
pub(crate) fn gap_of(averages: &[f64]) -> f64 {
    let hi = averages.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = averages.iter().copied().fold(f64::INFINITY, f64::min);
    if averages.len() > 1 { hi - lo } else { 0.0 }
}

/// The `p` quantile of `sorted` (nearest rank).
pub(crate) fn pct<T: Copy + PartialOrd + Default>(sorted: &[T], p: f64) -> T {
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
            own_gaps: Vec::new(),
            own: arrivals.iter().map(|a| a.ratings.clone()).collect(),
            matches: 0,
            double_booked: 0,
            given_up: vec![false; arrivals.len()],
            rules: Default::default(),
        }
    }

    /// A group ended by its mode's `give_up_after`.
    pub fn give_up(&mut self, g: usize) {
        self.given_up[g] = true;
    }

    /// How a match whose longest wait was `wait_ms` stood with rule `label`:
    /// formed at `step`, `broken` or not.
    pub fn rule(
        &mut self,
        label: &str,
        hard: bool,
        step: usize,
        broken: bool,
        wait_ms: u64,
        _players: usize,
    ) {
        let (_, steps) = self
            .rules
            .entry(label.to_string())
            .or_insert((hard, Default::default()));
        let t = steps.entry(step).or_default();
        t.matches += 1;
        t.broken += usize::from(broken);
        t.waits_ms.push(wait_ms);
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
    ) -> usize {
        let id = self.matches;
        self.matches += 1;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut avgs = Vec::new();
        let mut own_avgs = Vec::new();
        for (team, tickets) in teams.iter().enumerate() {
            let (mut sum, mut own_sum, mut n) = (0.0, 0.0, 0usize);
            for &t in tickets {
                let (group, members, rating, size, enqueued_at) = info(t);
                lo = lo.min(rating);
                hi = hi.max(rating);
                sum += rating * size as f64;
                own_sum += members.iter().map(|&m| self.own[group][m]).sum::<f64>();
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
                own_avgs.push(own_sum / n as f64);
            }
        }
        self.spreads.push(hi - lo);
        self.gaps.push(gap_of(&avgs));
        self.own_gaps.push(gap_of(&own_avgs));
        id
    }

    pub fn finish(mut self, arrivals: &[Arrival]) -> Report {
        self.waits_ms.sort_unstable();
        self.spreads.sort_by(f64::total_cmp);
        self.gaps.sort_by(f64::total_cmp);
        self.own_gaps.sort_by(f64::total_cmp);
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
            if !any && !self.cancelled[g] && !self.given_up[g] {
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
            own_gap_p95: pct(&self.own_gaps, 0.95),
            own_gap_mean: mean(&self.own_gaps),
            parties_matched,
            parties_split,
            double_booked: self.double_booked,
            given_up: self.given_up.iter().filter(|&&g| g).count(),
            rules: self
                .rules
                .into_iter()
                .map(|(rule, (hard, steps))| RuleFigures {
                    rule,
                    hard,
                    steps: steps
                        .into_iter()
                        .map(|(step, mut t)| {
                            t.waits_ms.sort_unstable();
                            (
                                step,
                                t.matches,
                                t.broken,
                                pct(&t.waits_ms, 0.5) as f64 / 1000.0,
                            )
                        })
                        .collect(),
                })
                .collect(),
            backfill: None,
            estimates: None,
        }
    }

    /// Records ticket members `members` of group `group`, queued at
    /// `enqueued_at`, placed at `now` into team `team` of running match `id`
    /// (a backfill): matched like a match's own players.
    pub fn fill(
        &mut self,
        id: usize,
        team: usize,
        group: usize,
        members: &[usize],
        now: u64,
        enqueued_at: u64,
    ) {
        for &m in members {
            if self.placed[group][m].is_some() {
                self.double_booked += 1;
            }
            self.placed[group][m] = Some((id, team));
            self.waits_ms.push(now.saturating_sub(enqueued_at));
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
    ("team-average gap, players' own ratings: mean / p95", |r| {
        format!("{:.1} / {:.1}", r.own_gap_mean, r.own_gap_p95)
    }),
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

/// The rows a run with rules adds: rules broken (hard ones must be 0), groups
/// given up, and per rule and step the matches formed there and the median of
/// their longest waits.
fn rule_rows(columns: &[(&str, &Report)]) -> Vec<(String, Vec<String>)> {
    let mut rows = Vec::new();
    if columns
        .iter()
        .all(|(_, r)| r.rules.is_empty() && r.given_up == 0)
    {
        return rows;
    }
    let broken = |r: &Report, hard: bool| -> usize {
        r.rules
            .iter()
            .filter(|f| f.hard == hard)
            .map(RuleFigures::broken)
            .sum()
    };
    rows.push((
        "matches breaking a hard rule".to_string(),
        columns
            .iter()
            .map(|(_, r)| broken(r, true).to_string())
            .collect(),
    ));
    rows.push((
        "matches breaking a relaxed rule at its step".to_string(),
        columns
            .iter()
            .map(|(_, r)| broken(r, false).to_string())
            .collect(),
    ));
    rows.push((
        "groups given up (give_up_after)".to_string(),
        columns
            .iter()
            .map(|(_, r)| r.given_up.to_string())
            .collect(),
    ));
    let mut keys: Vec<(String, usize)> = Vec::new();
    for (_, r) in columns {
        for f in &r.rules {
            for s in &f.steps {
                if !keys.contains(&(f.rule.clone(), s.0)) {
                    keys.push((f.rule.clone(), s.0));
                }
            }
        }
    }
    keys.sort();
    for (rule, step) in keys {
        rows.push((
            format!("{rule} step {step}: matches (longest wait p50 s)"),
            columns
                .iter()
                .map(|(_, r)| {
                    r.rules
                        .iter()
                        .find(|f| f.rule == rule)
                        .and_then(|f| f.steps.iter().find(|s| s.0 == step))
                        .map_or("-".to_string(), |s| format!("{} ({:.1})", s.1, s.3))
                })
                .collect(),
        ));
    }
    rows
}

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
    for (name, cells) in rule_rows(columns)
        .into_iter()
        .chain(backfill_rows(columns))
        .chain(estimate_rows(columns))
    {
        s.push_str(&format!("| {name} |"));
        for c in cells {
            s.push_str(&format!(" {c} |"));
        }
        s.push('\n');
    }
    s
}

/// The wait estimates' rows (issue 35).
fn estimate_rows(columns: &[(&str, &Report)]) -> Vec<(String, Vec<String>)> {
    use crate::estimates::EstimateFigures;
    let rows: [PartRow<EstimateFigures>; 3] = [
        ("wait estimate: groups judged / queued without", |e| {
            format!("{} / {}", e.judged, e.without)
        }),
        ("wait estimate: median error / median wait (s)", |e| {
            format!("{:.2} / {:.2}", e.error_p50_s, e.wait_p50_s)
        }),
        ("wait estimate: median relative error; within 30%", |e| {
            format!(
                "{:.0}%; {:.0}%",
                100.0 * e.relative_p50,
                100.0 * e.within_30
            )
        }),
    ];
    optional_rows(columns, |r| r.estimates.as_ref(), &rows, |_, _| true)
}

/// A row: its name, and its cell from one report's part.
type PartRow<T> = (&'static str, fn(&T) -> String);

/// Rows read from an optional part of each report: `-` where a column lacks
/// it or `shown` says the row means nothing there; no rows when no column has
/// it.
fn optional_rows<T>(
    columns: &[(&str, &Report)],
    part: fn(&Report) -> Option<&T>,
    rows: &[PartRow<T>],
    shown: fn(&T, &str) -> bool,
) -> Vec<(String, Vec<String>)> {
    if columns.iter().all(|(_, r)| part(r).is_none()) {
        return Vec::new();
    }
    rows.iter()
        .map(|(name, cell)| {
            let cells = columns
                .iter()
                .map(|(_, r)| match part(r) {
                    Some(x) if shown(x, name) => cell(x),
                    _ => "-".into(),
                })
                .collect();
            (name.to_string(), cells)
        })
        .collect()
}

/// The rows a run with players leaving adds (`-` for a strategy without
/// backfill).
fn backfill_rows(columns: &[(&str, &Report)]) -> Vec<(String, Vec<String>)> {
    use crate::backfill::BackfillFigures;
    let rows: [PartRow<BackfillFigures>; 5] = [
        ("backfill: seats opened / filled", |b| {
            format!("{} / {}", b.seats_opened, b.seats_filled)
        }),
        ("backfill: seat open to filled p50 / p95 (s)", |b| {
            format!("{:.3} / {:.3}", b.fill_p50_s, b.fill_p95_s)
        }),
        ("backfill: filler to match average p50 / p95", |b| {
            format!("{:.0} / {:.0}", b.distance_p50, b.distance_p95)
        }),
        ("backfill: team-average gap after a fill, mean", |b| {
            format!("{:.1}", b.gap_mean)
        }),
        ("backfill: team-average gap after a fill, p95", |b| {
            format!("{:.1}", b.gap_p95)
        }),
    ];
    // Nothing filled (the baseline has no backfill): only the seats opened
    // mean anything.
    optional_rows(
        columns,
        |r| r.backfill.as_ref(),
        &rows,
        |b, name| b.seats_filled > 0 || name.contains("opened"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(ratings: &[f64]) -> Arrival {
        Arrival {
            at_ms: 0,
            ratings: ratings.to_vec(),
            modes: vec!["5v5".into()],
            latency_ms: vec![30],
            cancel_at_ms: None,
            attributes: Default::default(),
            player_attributes: Vec::new(),
        }
    }

    #[test]
    fn a_party_counts_at_its_rating_and_at_its_players_own() {
        // A pair matched at its best player's 1600 (its own average 1500)
        // with three solos, against five solos at 1600.
        let mut groups = vec![arrival(&[1600.0, 1400.0])];
        groups.extend((0..8).map(|_| arrival(&[1600.0])));
        let mut o = Outcome::new(&groups);
        let teams = vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7, 8]];
        o.record(&teams, 1_000, |t| {
            let members = if t == 0 { vec![0, 1] } else { vec![0] };
            let size = members.len();
            (t, members, 1600.0, size, 0)
        });
        let r = o.finish(&groups);
        assert_eq!(r.gap_mean, 0.0);
        assert!((r.own_gap_mean - 40.0).abs() < 1e-9, "{}", r.own_gap_mean);
        assert!((r.own_gap_p95 - 40.0).abs() < 1e-9);
    }
}
