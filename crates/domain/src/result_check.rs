//! Whether a game server's result can be the result of a match: what
//! `ReportResult` checks before anything is recorded or rated.
//!
//! A result names teams (by index) and/or players, each with an outcome or a
//! placement. It must rank every team of the match exactly once: each team entry
//! at most once, each player at most once and only players of the match, and
//! every team ranked by its own entry or by its players'. A player's outcome agrees
//! with their team's and their teammates'. Then, team by team:
//! - outcomes: two teams are one WIN and one LOSS, or both DRAW; more teams have
//!   at least one WIN and one that did not win, or all DRAW;
//! - placements (a team's own, or its best player's): every team has one, and
//!   sorted they read as a ranking with ties (1, 2, 2, 4 or 1, 2, 2, 3).
//!
//! The abandon list names only players of the match, each once.

use crate::{Match, MatchResult, Outcome, PlayerId};
use std::collections::HashSet;

/// Why a result is refused; the message names the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ResultError(pub String);

fn refuse<T>(message: impl Into<String>) -> Result<T, ResultError> {
    Err(ResultError(message.into()))
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Win => "WIN",
        Outcome::Loss => "LOSS",
        Outcome::Draw => "DRAW",
    }
}

/// What the result says of one team, gathered from its entry and its players'.
#[derive(Default, Clone, Copy)]
struct Standing {
    outcome: Option<Outcome>,
    placement: Option<u32>,
}

impl MatchResult {
    /// Checks that this result can be `m`'s (see the module doc).
    pub fn check(&self, m: &Match) -> Result<(), ResultError> {
        let teams = m.tickets.iter().map(|t| t.team + 1).max().unwrap_or(0);
        if self.teams.is_empty() && self.players.is_empty() {
            return refuse(
                "the result is empty: report every team's (or player's) outcome or placement",
            );
        }
        let team_of = |p: &PlayerId| m.ticket_of(p).map(|t| t.team);
        let mut standings = vec![Standing::default(); teams];
        let mut by_team = vec![false; teams];
        for t in &self.teams {
            let Some(slot) = standings.get_mut(t.team) else {
                return refuse(format!(
                    "team {} is not in the match (it has teams 0 to {})",
                    t.team,
                    teams.saturating_sub(1)
                ));
            };
            if std::mem::replace(&mut by_team[t.team], true) {
                return refuse(format!("team {} is reported twice", t.team));
            }
            if t.outcome.is_none() && t.placement.is_none() {
                return refuse(format!(
                    "team {} has neither an outcome nor a placement",
                    t.team
                ));
            }
            slot.outcome = t.outcome;
            slot.placement = t.placement;
        }
        if !self.teams.is_empty()
            && let Some(missing) = by_team.iter().position(|seen| !seen)
        {
            return refuse(format!("team {missing} of the match is not reported"));
        }
        let mut seen = HashSet::new();
        let mut outcome_from = vec![None::<&PlayerId>; teams];
        for p in &self.players {
            let Some(team) = team_of(&p.player_id) else {
                return refuse(format!("player {} is not in the match", p.player_id));
            };
            if !seen.insert(&p.player_id) {
                return refuse(format!("player {} is reported twice", p.player_id));
            }
            if p.outcome.is_none() && p.placement.is_none() {
                return refuse(format!(
                    "player {} has neither an outcome nor a placement",
                    p.player_id
                ));
            }
            let slot = &mut standings[team];
            if let Some(o) = p.outcome {
                match (slot.outcome, by_team[team], outcome_from[team]) {
                    (Some(t), true, _) if t != o => {
                        return refuse(format!(
                            "player {} is reported {} but their team {team} {}",
                            p.player_id,
                            outcome_name(o),
                            outcome_name(t)
                        ));
                    }
                    (Some(t), false, Some(mate)) if t != o => {
                        return refuse(format!(
                            "players {mate} and {} of team {team} are reported {} and {}",
                            p.player_id,
                            outcome_name(t),
                            outcome_name(o)
                        ));
                    }
                    _ => {}
                }
                slot.outcome = Some(o);
                outcome_from[team].get_or_insert(&p.player_id);
            }
            // A team without a placement of its own ranks as its best player.
            if let (Some(pl), false) = (p.placement, by_team[team] && slot.placement.is_some()) {
                slot.placement = Some(slot.placement.map_or(pl, |s| s.min(pl)));
            }
        }
        if let Some(team) = standings
            .iter()
            .position(|s| s.outcome.is_none() && s.placement.is_none())
        {
            return refuse(format!("team {team} of the match has no result"));
        }
        if standings.iter().any(|s| s.placement.is_some()) {
            placements(&standings)?;
        } else {
            outcomes(&standings)?;
        }
        let mut quit = HashSet::new();
        for p in &self.abandoned {
            if team_of(p).is_none() {
                return refuse(format!("abandoning player {p} is not in the match"));
            }
            if !quit.insert(p) {
                return refuse(format!("abandoning player {p} is listed twice"));
            }
        }
        Ok(())
    }
}

/// Every team placed, as a ranking with ties.
fn placements(standings: &[Standing]) -> Result<(), ResultError> {
    let mut placed = Vec::with_capacity(standings.len());
    for (team, s) in standings.iter().enumerate() {
        match s.placement {
            Some(0) => return refuse(format!("team {team} has placement 0 (1 is first)")),
            Some(p) => placed.push(p),
            None => {
                return refuse(format!(
                    "team {team} has no placement while other teams have one"
                ));
            }
        }
    }
    placed.sort_unstable();
    // Sorted, each place is tied with the one before or the next one: the place
    // after a tie skips (1, 2, 2, 4) or does not (1, 2, 2, 3), the same way all through.
    let ranking = |next: &dyn Fn(usize, u32) -> u32| {
        let mut last = 0;
        placed.iter().enumerate().all(|(i, &p)| {
            let ok = (i > 0 && p == last) || p == next(i, last);
            last = p;
            ok
        })
    };
    if ranking(&|i, _| i as u32 + 1) || ranking(&|_, last| last + 1) {
        return Ok(());
    }
    refuse(format!(
        "placements {placed:?} are not a ranking (1 first; ties share a place)"
    ))
}

/// Every team's outcome agrees with the others'.
fn outcomes(standings: &[Standing]) -> Result<(), ResultError> {
    let all: Vec<Outcome> = standings.iter().filter_map(|s| s.outcome).collect();
    let wins = all.iter().filter(|o| **o == Outcome::Win).count();
    let draws = all.iter().filter(|o| **o == Outcome::Draw).count();
    let ok = if all.len() == 2 {
        (wins == 1 && draws == 0) || draws == 2
    } else {
        draws == all.len() || (wins >= 1 && wins < all.len())
    };
    if ok {
        return Ok(());
    }
    let names: Vec<&str> = all.iter().map(|o| outcome_name(*o)).collect();
    refuse(if all.len() == 2 {
        format!(
            "outcomes {} are inconsistent: two teams are one WIN and one LOSS, or both DRAW",
            names.join(" and ")
        )
    } else {
        format!(
            "outcomes {} are inconsistent: some team must win and some not, or all DRAW",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::{
        Lifecycle, Match, MatchId, MatchResult, MatchTicket, Outcome, PlayerId, PlayerResult,
        TeamResult,
    };

    fn pid(p: &str) -> PlayerId {
        PlayerId::new(p).unwrap()
    }

    /// A match of `teams` teams of `size` players named `t{team}p{i}`.
    fn game(teams: usize, size: usize) -> Match {
        Match {
            id: MatchId::new("m-1").unwrap(),
            mode: "x".into(),
            region: "eu".into(),
            tickets: (0..teams)
                .map(|team| MatchTicket {
                    ticket_id: crate::TicketId::new(format!("t-{team}")).unwrap(),
                    players: (0..size).map(|i| pid(&format!("t{team}p{i}"))).collect(),
                    rating: 1500.0,
                    enqueued_at: 0,
                    team,
                    skills: Vec::new(),
                    attributes: Default::default(),
                    player_attributes: Vec::new(),
                })
                .collect(),
            created_at: 0,
            lifecycle: Lifecycle::default(),
            decided: Default::default(),
        }
    }

    fn team(team: usize, outcome: Option<Outcome>, placement: Option<u32>) -> TeamResult {
        TeamResult {
            team,
            outcome,
            placement,
        }
    }

    fn player(p: &str, outcome: Option<Outcome>) -> PlayerResult {
        PlayerResult {
            player_id: pid(p),
            outcome,
            placement: None,
        }
    }

    fn teams(list: Vec<TeamResult>) -> MatchResult {
        MatchResult {
            teams: list,
            ..Default::default()
        }
    }

    fn refused(m: &Match, r: &MatchResult, says: &str) {
        let e = r.check(m).expect_err("refused").0;
        assert!(e.contains(says), "{e:?} should say {says:?}");
    }

    use Outcome::{Draw, Loss, Win};

    #[test]
    fn two_teams_win_and_lose_or_both_draw() {
        let m = game(2, 1);
        teams(vec![team(0, Some(Win), None), team(1, Some(Loss), None)])
            .check(&m)
            .unwrap();
        teams(vec![team(1, Some(Draw), None), team(0, Some(Draw), None)])
            .check(&m)
            .unwrap();
        refused(
            &m,
            &teams(vec![team(0, Some(Win), None), team(1, Some(Win), None)]),
            "WIN and WIN are inconsistent",
        );
        refused(
            &m,
            &teams(vec![team(0, Some(Win), None), team(1, Some(Draw), None)]),
            "inconsistent",
        );
        refused(
            &m,
            &teams(vec![team(0, Some(Loss), None), team(1, Some(Loss), None)]),
            "inconsistent",
        );
    }

    #[test]
    fn every_team_exactly_once() {
        let m = game(2, 1);
        refused(
            &m,
            &teams(vec![team(0, Some(Win), None), team(0, Some(Loss), None)]),
            "team 0 is reported twice",
        );
        refused(
            &m,
            &teams(vec![team(0, Some(Win), None)]),
            "team 1 of the match is not reported",
        );
        refused(
            &m,
            &teams(vec![team(0, Some(Win), None), team(2, Some(Loss), None)]),
            "team 2 is not in the match",
        );
        refused(&m, &MatchResult::default(), "the result is empty");
        refused(
            &m,
            &teams(vec![team(0, None, None), team(1, Some(Loss), None)]),
            "team 0 has neither",
        );
    }

    #[test]
    fn players_agree_with_their_team_and_each_other() {
        let m = game(2, 2);
        let mut r = teams(vec![team(0, Some(Win), None), team(1, Some(Loss), None)]);
        r.players = vec![player("t1p0", Some(Win)), player("t1p1", Some(Win))];
        refused(&m, &r, "player t1p0 is reported WIN but their team 1 LOSS");
        r.players = vec![player("t0p0", Some(Win)), player("t1p1", Some(Loss))];
        r.check(&m).unwrap();
        // Players alone: teammates agree, and every team is ranked.
        let only = |players: Vec<PlayerResult>| MatchResult {
            players,
            ..Default::default()
        };
        only(vec![player("t0p0", Some(Win)), player("t1p0", Some(Loss))])
            .check(&m)
            .unwrap();
        refused(
            &m,
            &only(vec![
                player("t0p0", Some(Win)),
                player("t0p1", Some(Loss)),
                player("t1p0", Some(Loss)),
            ]),
            "players t0p0 and t0p1 of team 0 are reported WIN and LOSS",
        );
        refused(
            &m,
            &only(vec![player("t0p0", Some(Win))]),
            "team 1 of the match has no result",
        );
        refused(
            &m,
            &only(vec![player("t0p0", Some(Win)), player("t0p0", Some(Win))]),
            "player t0p0 is reported twice",
        );
        refused(
            &m,
            &only(vec![player("t0p0", Some(Win)), player("zed", Some(Loss))]),
            "player zed is not in the match",
        );
    }

    #[test]
    fn placements_rank_every_team_with_ties() {
        let m = game(4, 1);
        let placed = |p: [u32; 4]| {
            teams(
                p.iter()
                    .enumerate()
                    .map(|(t, p)| team(t, None, Some(*p)))
                    .collect(),
            )
        };
        for ok in [
            [1, 2, 3, 4],
            [4, 3, 2, 1],
            [1, 2, 2, 4],
            [1, 2, 2, 3],
            [1, 1, 1, 1],
        ] {
            placed(ok)
                .check(&m)
                .unwrap_or_else(|e| panic!("{ok:?}: {e}"));
        }
        for bad in [[1, 1, 2, 4], [2, 3, 4, 5], [1, 2, 3, 5], [1, 3, 4, 5]] {
            refused(&m, &placed(bad), "not a ranking");
        }
        refused(&m, &placed([0, 1, 2, 3]), "placement 0");
        let mut some = placed([1, 2, 3, 4]);
        some.teams[3].placement = None;
        some.teams[3].outcome = Some(Loss);
        refused(&m, &some, "team 3 has no placement");
    }

    #[test]
    fn many_teams_by_outcome_need_a_winner_and_a_loser() {
        let m = game(3, 1);
        let r = |o: [Outcome; 3]| {
            teams(
                o.iter()
                    .enumerate()
                    .map(|(t, o)| team(t, Some(*o), None))
                    .collect(),
            )
        };
        r([Win, Loss, Loss]).check(&m).unwrap();
        r([Win, Draw, Loss]).check(&m).unwrap();
        r([Draw, Draw, Draw]).check(&m).unwrap();
        refused(&m, &r([Win, Win, Win]), "inconsistent");
        refused(&m, &r([Loss, Loss, Loss]), "inconsistent");
    }

    #[test]
    fn the_abandon_list_names_players_of_the_match_once() {
        let m = game(2, 1);
        let mut r = teams(vec![team(0, Some(Win), None), team(1, Some(Loss), None)]);
        r.abandoned = vec![pid("t1p0")];
        r.check(&m).unwrap();
        r.abandoned = vec![pid("nobody")];
        refused(&m, &r, "abandoning player nobody is not in the match");
        r.abandoned = vec![pid("t1p0"), pid("t1p0")];
        refused(&m, &r, "listed twice");
    }
}
