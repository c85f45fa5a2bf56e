//! The rating maths: turns a finished match's result into new skills.
//!
//! The result is first reduced to a rank per team (1 is best; equal ranks drew).
//! Each team is then scored against the players' skill snapshots from when they
//! queued (what they were matched on), and the change is applied to each player's
//! current skill, which differs from the snapshot only when an earlier result of
//! theirs was applied after they queued.
//!
//! - Team Elo (seed 004): each team's average, `E = 1 / (1 + 10^((opp - own) / 400))`,
//!   change `K * (S - E)` (averaged over the other teams when there are more than
//!   two), rounded, clamped.
//! - Weng-Lin through `skillratings` (its multi-team function, which also covers
//!   two teams), in the model's native unit (`rating / scale`).
//!
//! An abandoning player is scored as if their team had finished last, then loses
//! the mode's `abandon_penalty` on top.

use mm_domain::{
    MatchResult, Outcome, PlayerId, RatingJob, RatingModel, RatingPolicy, Skill, TeamResult,
};
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};
use std::collections::HashMap;

/// One player's change from one match.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub player: PlayerId,
    /// The skill before (the current one, which the change was applied to).
    pub old: Skill,
    pub new: Skill,
    /// The player's team's rank in the match (1 is best).
    pub rank: u32,
    pub abandoned: bool,
}

/// Why a match changes no rating.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unscored {
    #[error("the result ranks no team")]
    NoRanking,
    #[error("the match has fewer than two teams")]
    OneTeam,
}

/// The rank of every team of a match (index = team), from whatever the game
/// server reported: team placements or outcomes, or player placements or
/// outcomes (a team ranks as its best player). Teams the result does not mention
/// rank after all that it does.
pub fn team_ranks(
    teams: usize,
    players: &[(PlayerId, usize)],
    result: &MatchResult,
) -> Result<Vec<u32>, Unscored> {
    if teams < 2 {
        return Err(Unscored::OneTeam);
    }
    // Placements when any were reported, else outcomes (win above draw above loss).
    let collect = |pick: &dyn Fn(Option<Outcome>, Option<u32>) -> Option<u32>| {
        let mut ranks: Vec<Option<u32>> = vec![None; teams];
        let mut better = |team: usize, r: Option<u32>| {
            if let (Some(slot), Some(r)) = (ranks.get_mut(team), r) {
                *slot = Some(slot.map_or(r, |s: u32| s.min(r)));
            }
        };
        for TeamResult {
            team,
            outcome,
            placement,
        } in &result.teams
        {
            better(*team, pick(*outcome, *placement));
        }
        for p in &result.players {
            if let Some((_, team)) = players.iter().find(|(id, _)| *id == p.player_id) {
                better(*team, pick(p.outcome, p.placement));
            }
        }
        ranks
    };
    let mut ranks = collect(&|_, placement| placement.filter(|p| *p > 0));
    if ranks.iter().all(Option::is_none) {
        ranks = collect(&|outcome, _| match outcome? {
            Outcome::Win => Some(1),
            Outcome::Draw => Some(2),
            Outcome::Loss => Some(3),
        });
    }
    let worst = ranks
        .iter()
        .flatten()
        .max()
        .copied()
        .ok_or(Unscored::NoRanking)?;
    // Compact to 1, 2, ...: equal raw ranks stay equal.
    let raw: Vec<u32> = ranks.iter().map(|r| r.unwrap_or(worst + 1)).collect();
    let mut distinct = raw.clone();
    distinct.sort_unstable();
    distinct.dedup();
    Ok(raw
        .iter()
        .map(|r| distinct.iter().position(|d| d == r).unwrap_or(0) as u32 + 1)
        .collect())
}

/// Whether the match can be scored at all (it has two teams and the result ranks
/// at least one), without needing anyone's skill.
pub fn scorable(job: &RatingJob) -> Result<(), Unscored> {
    let m = &job.matched;
    let teams = m.tickets.iter().map(|t| t.team + 1).max().unwrap_or(0);
    let placed: Vec<(PlayerId, usize)> = m
        .tickets
        .iter()
        .flat_map(|t| t.players.iter().map(move |p| (p.clone(), t.team)))
        .collect();
    team_ranks(teams, &placed, &job.result).map(|_| ())
}

/// Scores a match. `current` holds every player's current skill (the mode's
/// initial skill for players never rated). Players without a snapshot in the match
/// are scored from their current skill.
pub fn score(
    policy: &RatingPolicy,
    job: &RatingJob,
    current: &HashMap<PlayerId, Skill>,
) -> Result<Vec<Change>, Unscored> {
    let m = &job.matched;
    let teams = m.tickets.iter().map(|t| t.team + 1).max().unwrap_or(0);
    // (player, team, snapshot, current)
    let mut roster: Vec<(PlayerId, usize, Skill, Skill)> = Vec::with_capacity(m.player_count());
    for t in &m.tickets {
        for (i, p) in t.players.iter().enumerate() {
            let now = current.get(p).copied().unwrap_or_else(|| policy.initial());
            let snap = t.skills.get(i).copied().unwrap_or(now);
            roster.push((p.clone(), t.team, snap, now));
        }
    }
    let placed: Vec<(PlayerId, usize)> = roster.iter().map(|(p, t, ..)| (p.clone(), *t)).collect();
    let ranks = team_ranks(teams, &placed, &job.result)?;
    let abandoned = |p: &PlayerId| job.result.abandoned.contains(p);
    let changes = match policy.model {
        RatingModel::Elo { k, min, max, .. } => {
            let avg: Vec<f64> = (0..teams)
                .map(|team| {
                    let r: Vec<f64> = roster
                        .iter()
                        .filter(|x| x.1 == team)
                        .map(|x| x.2.rating)
                        .collect();
                    r.iter().sum::<f64>() / r.len().max(1) as f64
                })
                .collect();
            roster
                .iter()
                .map(|(p, team, _, now)| {
                    let quit = abandoned(p);
                    let d = elo_delta(k, &avg, &ranks, *team, quit);
                    let penalty = if quit { policy.abandon_penalty } else { 0.0 };
                    let rating = (now.rating + d - penalty).round().clamp(min, max);
                    change(p, *now, rating, None, ranks[*team], quit)
                })
                .collect()
        }
        RatingModel::WengLin { scale, beta, .. } => {
            let config = WengLinConfig {
                beta,
                ..WengLinConfig::new()
            };
            let native = |s: &Skill| WengLinRating {
                rating: s.rating / scale,
                uncertainty: s.uncertainty.unwrap_or(25.0 / 3.0 * scale) / scale,
            };
            let run = |ranks: &[u32]| -> Vec<Vec<WengLinRating>> {
                let squads: Vec<Vec<WengLinRating>> = (0..teams)
                    .map(|team| {
                        roster
                            .iter()
                            .filter(|x| x.1 == team)
                            .map(|x| native(&x.2))
                            .collect()
                    })
                    .collect();
                let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = squads
                    .iter()
                    .zip(ranks)
                    .map(|(s, r)| (&s[..], MultiTeamOutcome::new(*r as usize)))
                    .collect();
                weng_lin_multi_team(&input, &config)
            };
            let normal = run(&ranks);
            let last = ranks.iter().max().copied().unwrap_or(1) + 1;
            let mut seat = vec![0usize; teams];
            roster
                .iter()
                .map(|(p, team, snap, now)| {
                    let i = seat[*team];
                    seat[*team] += 1;
                    let quit = abandoned(p);
                    let post = if quit {
                        let mut r = ranks.clone();
                        r[*team] = last;
                        run(&r)[*team][i]
                    } else {
                        normal[*team][i]
                    };
                    let before = native(snap);
                    let penalty = if quit { policy.abandon_penalty } else { 0.0 };
                    let mu = now.rating + (post.rating - before.rating) * scale - penalty;
                    let sigma = now.uncertainty.unwrap_or(before.uncertainty * scale)
                        * (post.uncertainty / before.uncertainty);
                    let mu = mu.clamp(mm_domain::MIN_RATING, mm_domain::MAX_RATING);
                    change(p, *now, mu, Some(sigma), ranks[*team], quit)
                })
                .collect()
        }
    };
    Ok(changes)
}

fn change(
    p: &PlayerId,
    old: Skill,
    rating: f64,
    uncertainty: Option<f64>,
    rank: u32,
    abandoned: bool,
) -> Change {
    Change {
        player: p.clone(),
        old,
        new: Skill {
            rating,
            uncertainty,
            version: old.version + 1,
        },
        rank,
        abandoned,
    }
}

/// Team `team`'s Elo change against every other team, averaged over them; an
/// abandoning player's as if their team lost to all.
fn elo_delta(k: f64, avg: &[f64], ranks: &[u32], team: usize, lost: bool) -> f64 {
    let others = avg.len().saturating_sub(1).max(1) as f64;
    let sum: f64 = (0..avg.len())
        .filter(|&j| j != team)
        .map(|j| {
            let expected = 1.0 / (1.0 + 10f64.powf((avg[j] - avg[team]) / 400.0));
            let actual = if lost {
                0.0
            } else {
                match ranks[team].cmp(&ranks[j]) {
                    std::cmp::Ordering::Less => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Greater => 0.0,
                }
            };
            actual - expected
        })
        .sum();
    k * sum / others
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_domain::{Lifecycle, Match, MatchId, MatchTicket, PlayerResult, TicketId};

    fn pid(s: &str) -> PlayerId {
        PlayerId::new(s).unwrap()
    }

    /// A match of `teams` (each a list of (player, snapshot rating)).
    fn job(teams: &[&[(&str, f64)]], result: MatchResult) -> RatingJob {
        let mut tickets = Vec::new();
        for (team, members) in teams.iter().enumerate() {
            for (name, rating) in members.iter() {
                tickets.push(MatchTicket {
                    ticket_id: TicketId::new(format!("t-{name}")).unwrap(),
                    players: vec![pid(name)],
                    rating: *rating,
                    enqueued_at: 0,
                    team,
                    skills: vec![Skill {
                        rating: *rating,
                        uncertainty: None,
                        version: 1,
                    }],
                    attributes: Default::default(),
                    player_attributes: Vec::new(),
                });
            }
        }
        RatingJob {
            matched: Match {
                id: MatchId::new("m-1").unwrap(),
                mode: "m".into(),
                region: "eu".into(),
                tickets,
                created_at: 0,
                lifecycle: Lifecycle::default(),
                decided: Default::default(),
            },
            result,
        }
    }

    fn team_won(team: usize) -> MatchResult {
        MatchResult {
            teams: vec![TeamResult {
                team,
                outcome: Some(Outcome::Win),
                placement: None,
            }],
            ..Default::default()
        }
    }

    fn draw() -> MatchResult {
        MatchResult {
            teams: (0..2)
                .map(|team| TeamResult {
                    team,
                    outcome: Some(Outcome::Draw),
                    placement: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    /// Current skills equal to the snapshots.
    fn current(j: &RatingJob) -> HashMap<PlayerId, Skill> {
        j.matched
            .tickets
            .iter()
            .map(|t| (t.players[0].clone(), t.skills[0]))
            .collect()
    }

    fn elo(j: &RatingJob) -> Vec<(String, f64)> {
        score(&RatingPolicy::ELO, j, &current(j))
            .unwrap()
            .into_iter()
            .map(|c| (c.player.to_string(), c.new.rating))
            .collect()
    }

    fn named(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|(n, r)| (n.to_string(), *r)).collect()
    }

    /// Worked out by hand from seed 004's formula (K = 32, round, clamp 0..3000):
    /// E = 1 / (1 + 10^((opp - own) / 400)); 1600 vs 1400: E = 0.759747.
    #[test]
    fn team_elo_matches_the_hand_table() {
        // Even 1v1: E = 0.5, +-16.
        assert_eq!(
            elo(&job(&[&[("a", 1500.0)], &[("b", 1500.0)]], team_won(0))),
            named(&[("a", 1516.0), ("b", 1484.0)])
        );
        // Favourite wins: +-32 * 0.240253 = 7.688.
        assert_eq!(
            elo(&job(&[&[("a", 1600.0)], &[("b", 1400.0)]], team_won(0))),
            named(&[("a", 1608.0), ("b", 1392.0)])
        );
        // Upset: +-32 * 0.759747 = 24.312.
        assert_eq!(
            elo(&job(&[&[("a", 1600.0)], &[("b", 1400.0)]], team_won(1))),
            named(&[("a", 1576.0), ("b", 1424.0)])
        );
        // Draw: the favourite loses 32 * 0.259747 = 8.312.
        assert_eq!(
            elo(&job(&[&[("a", 1600.0)], &[("b", 1400.0)]], draw())),
            named(&[("a", 1592.0), ("b", 1408.0)])
        );
        // 5v5 on team averages 1500 vs 1400: E = 0.640065, +-11.518 to each.
        let a: &[(&str, f64)] = &[
            ("a1", 1500.0),
            ("a2", 1520.0),
            ("a3", 1480.0),
            ("a4", 1510.0),
            ("a5", 1490.0),
        ];
        let b: &[(&str, f64)] = &[
            ("b1", 1400.0),
            ("b2", 1420.0),
            ("b3", 1380.0),
            ("b4", 1410.0),
            ("b5", 1390.0),
        ];
        assert_eq!(
            elo(&job(&[a, b], team_won(0))),
            named(&[
                ("a1", 1512.0),
                ("a2", 1532.0),
                ("a3", 1492.0),
                ("a4", 1522.0),
                ("a5", 1502.0),
                ("b1", 1388.0),
                ("b2", 1408.0),
                ("b3", 1368.0),
                ("b4", 1398.0),
                ("b5", 1378.0),
            ])
        );
        // Clamped to 0..3000.
        assert_eq!(
            elo(&job(&[&[("a", 2995.0)], &[("b", 2995.0)]], team_won(0))),
            named(&[("a", 3000.0), ("b", 2979.0)])
        );
        assert_eq!(
            elo(&job(&[&[("a", 5.0)], &[("b", 5.0)]], team_won(0))),
            named(&[("a", 21.0), ("b", 0.0)])
        );
    }

    #[test]
    fn versions_and_ranks() {
        let j = job(&[&[("a", 1500.0)], &[("b", 1500.0)]], team_won(1));
        let c = score(&RatingPolicy::ELO, &j, &current(&j)).unwrap();
        assert_eq!((c[0].rank, c[1].rank), (2, 1));
        assert_eq!((c[0].old.version, c[0].new.version), (1, 2));
    }

    #[test]
    fn an_abandoner_scores_a_loss_plus_the_penalty() {
        // a's team won, but a left: a scores as a loss (-16) and loses 10 more.
        let mut j = job(
            &[
                &[("a", 1500.0), ("c", 1500.0)],
                &[("b", 1500.0), ("d", 1500.0)],
            ],
            team_won(0),
        );
        j.result.abandoned = vec![pid("a")];
        let got = elo(&j);
        assert_eq!(
            got,
            named(&[("a", 1474.0), ("c", 1516.0), ("b", 1484.0), ("d", 1484.0)])
        );
        let c = score(&RatingPolicy::ELO, &j, &current(&j)).unwrap();
        assert!(c[0].abandoned && !c[1].abandoned);
    }

    #[test]
    fn the_change_is_scored_on_the_snapshot_and_applied_to_the_current_rating() {
        // Matched at 1500 each; a's earlier result moved a to 1540 since.
        let j = job(&[&[("a", 1500.0)], &[("b", 1500.0)]], team_won(0));
        let mut now = current(&j);
        now.insert(
            pid("a"),
            Skill {
                rating: 1540.0,
                uncertainty: None,
                version: 2,
            },
        );
        let c = score(&RatingPolicy::ELO, &j, &now).unwrap();
        assert_eq!(c[0].new.rating, 1556.0);
        assert_eq!((c[0].old.version, c[0].new.version), (2, 3));
    }

    #[test]
    fn results_reduce_to_team_ranks() {
        let players: Vec<(PlayerId, usize)> = (0..4).map(|i| (pid(&format!("p{i}")), i)).collect();
        let placed = |places: &[(usize, u32)]| MatchResult {
            players: places
                .iter()
                .map(|(i, p)| PlayerResult {
                    player_id: pid(&format!("p{i}")),
                    outcome: None,
                    placement: Some(*p),
                })
                .collect(),
            ..Default::default()
        };
        assert_eq!(
            team_ranks(4, &players, &placed(&[(0, 3), (1, 1), (2, 2), (3, 4)])),
            Ok(vec![3, 1, 2, 4])
        );
        // Ties stay tied; unmentioned teams come last.
        assert_eq!(
            team_ranks(4, &players, &placed(&[(0, 1), (1, 1)])),
            Ok(vec![1, 1, 2, 2])
        );
        assert_eq!(team_ranks(2, &players[..2], &team_won(1)), Ok(vec![2, 1]));
        assert_eq!(
            team_ranks(2, &players[..2], &MatchResult::default()),
            Err(Unscored::NoRanking)
        );
        assert_eq!(
            team_ranks(1, &players[..1], &team_won(0)),
            Err(Unscored::OneTeam)
        );
    }

    fn wl(rating: f64, uncertainty: f64) -> WengLinRating {
        WengLinRating {
            rating,
            uncertainty,
        }
    }

    /// The policy in the crate's own unit (scale 1, its default beta).
    fn native() -> RatingPolicy {
        RatingPolicy {
            model: RatingModel::WengLin {
                scale: 1.0,
                beta: 25.0 / 6.0,
                initial: 25.0,
                initial_uncertainty: 25.0 / 3.0,
                match_on: mm_domain::MatchOn::Mean,
            },
            abandon_penalty: 0.0,
            decay: None,
        }
    }

    /// A match whose players' snapshots are these Weng-Lin ratings.
    fn wl_job(teams: &[Vec<WengLinRating>], result: MatchResult) -> RatingJob {
        let mut j = job(&[], result);
        for (team, members) in teams.iter().enumerate() {
            for (i, r) in members.iter().enumerate() {
                j.matched.tickets.push(MatchTicket {
                    ticket_id: TicketId::new(format!("t-{team}-{i}")).unwrap(),
                    players: vec![pid(&format!("p{team}-{i}"))],
                    rating: r.rating,
                    enqueued_at: 0,
                    team,
                    skills: vec![Skill {
                        rating: r.rating,
                        uncertainty: Some(r.uncertainty),
                        version: 0,
                    }],
                    attributes: Default::default(),
                    player_attributes: Vec::new(),
                });
            }
        }
        j
    }

    fn x100(c: &[Change]) -> Vec<f64> {
        c.iter().map(|c| (c.new.rating * 100.0).round()).collect()
    }

    /// The two-team example of `skillratings::weng_lin::weng_lin_two_teams`'s docs.
    #[test]
    fn weng_lin_two_teams_matches_the_crates_example() {
        let one = vec![wl(25.0, 25.0 / 3.0), wl(30.0, 1.2), wl(21.0, 6.5)];
        let two = vec![wl(25.0, 25.0 / 3.0), wl(41.0, 1.4), wl(19.2, 4.3)];
        let j = wl_job(&[one, two], team_won(0));
        let c = score(&native(), &j, &current(&j)).unwrap();
        assert_eq!(x100(&c), [2790.0, 3006.0, 2277.0, 2210.0, 4092.0, 1843.0]);
        // Uncertainty shrinks for everyone who played.
        assert!(c.iter().all(|c| c.new.uncertainty < c.old.uncertainty));
    }

    /// The three-team example of `weng_lin_multi_team`'s docs (placements 2, 1, 3).
    #[test]
    fn weng_lin_placements_match_the_crates_example() {
        let one = vec![wl(25.0, 25.0 / 3.0), wl(30.0, 1.2), wl(21.0, 6.5)];
        let two = vec![wl(25.0, 25.0 / 3.0), wl(41.0, 1.4), wl(19.2, 4.3)];
        let three = vec![wl(25.0, 25.0 / 3.0), wl(29.4, 1.6), wl(17.2, 2.1)];
        let result = MatchResult {
            teams: [2, 1, 3]
                .iter()
                .enumerate()
                .map(|(team, p)| TeamResult {
                    team,
                    outcome: None,
                    placement: Some(*p),
                })
                .collect(),
            ..Default::default()
        };
        let j = wl_job(&[one, two, three], result);
        let c = score(&native(), &j, &current(&j)).unwrap();
        assert_eq!(
            x100(&c),
            [
                2538.0, 3001.0, 2123.0, 2796.0, 4108.0, 1999.0, 2166.0, 2928.0, 1699.0
            ]
        );
    }

    #[test]
    fn weng_lin_scales_to_rating_points() {
        // The shipped policy is the crate's model times 60.
        let one = vec![wl(1500.0, 500.0), wl(1800.0, 72.0), wl(1260.0, 390.0)];
        let two = vec![wl(1500.0, 500.0), wl(2460.0, 84.0), wl(1152.0, 258.0)];
        let j = wl_job(&[one, two], team_won(0));
        let c = score(&RatingPolicy::WENG_LIN, &j, &current(&j)).unwrap();
        let native: Vec<f64> = c
            .iter()
            .map(|c| (c.new.rating / 60.0 * 100.0).round())
            .collect();
        assert_eq!(native, [2790.0, 3006.0, 2277.0, 2210.0, 4092.0, 1843.0]);
    }
}
