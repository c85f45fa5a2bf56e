//! The dialect-free middle of applying a batch: given the jobs not applied before
//! and the players' locked rows, score the matches in the order they were formed
//! (a player may be in more than one match of a batch) and say what to write.

use crate::model::{Change, score};
use crate::storage::{Applied, Policies, Stored};
use mm_domain::{Millis, PlayerId, RatingJob};
use std::collections::{BTreeMap, HashMap};

/// A row to write: the player's skill after the batch.
#[derive(Debug, Clone, PartialEq)]
pub struct RowWrite {
    pub mode: String,
    pub player: PlayerId,
    pub stored: Stored,
    /// The leaderboard figure.
    pub display: f64,
}

/// What a batch writes.
#[derive(Debug, Default)]
pub struct Plan {
    pub applied: Vec<Applied>,
    pub rows: Vec<RowWrite>,
    /// (mode, match id, change) for the history table.
    pub history: Vec<(String, String, Change)>,
    /// (match id, mode, outcome): `scored` or why not.
    pub matches: Vec<(String, String, String)>,
}

/// Every (mode, player) a batch touches, sorted (the order rows are locked in, so
/// concurrent batches cannot deadlock).
pub fn keys(jobs: &[RatingJob]) -> Vec<(String, PlayerId)> {
    let mut keys: Vec<(String, PlayerId)> = jobs
        .iter()
        .flat_map(|j| {
            j.matched
                .players()
                .map(|p| (j.matched.mode.clone(), p.clone()))
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Scores `jobs` (all new) against `rows` (the current rows; missing = never
/// rated) at `now`.
pub fn plan(
    jobs: &[RatingJob],
    rows: &HashMap<(String, PlayerId), Stored>,
    policies: &Policies,
    now: Millis,
) -> Plan {
    let mut order: Vec<&RatingJob> = jobs.iter().collect();
    order.sort_by_key(|j| (j.matched.created_at, j.matched.id.clone()));
    let mut state: BTreeMap<(String, PlayerId), Stored> = BTreeMap::new();
    let mut out = Plan::default();
    for job in order {
        let mode = &job.matched.mode;
        let policy = policies.get(mode);
        let current: HashMap<PlayerId, mm_domain::Skill> = job
            .matched
            .players()
            .map(|p| {
                let key = (mode.clone(), p.clone());
                let skill = match state.get(&key).or_else(|| rows.get(&key)) {
                    Some(s) if s.skill.version > 0 => policy.decayed(s.skill, s.last_played, now),
                    _ => policy.initial(),
                };
                (p.clone(), skill)
            })
            .collect();
        match score(&policy, job, &current) {
            Ok(changes) => {
                for c in &changes {
                    let key = (mode.clone(), c.player.clone());
                    let games = state
                        .get(&key)
                        .or_else(|| rows.get(&key))
                        .map_or(0, |s| s.games);
                    state.insert(
                        key,
                        Stored {
                            skill: c.new,
                            games: games + 1,
                            last_played: now,
                        },
                    );
                    out.history
                        .push((mode.clone(), job.matched.id.to_string(), c.clone()));
                }
                out.matches.push((
                    job.matched.id.to_string(),
                    mode.clone(),
                    "scored".to_string(),
                ));
                out.applied.push(Applied {
                    match_id: job.matched.id.clone(),
                    mode: mode.clone(),
                    changes,
                    now: true,
                    unscored: None,
                });
            }
            Err(why) => {
                out.matches
                    .push((job.matched.id.to_string(), mode.clone(), why.to_string()));
                out.applied.push(Applied {
                    match_id: job.matched.id.clone(),
                    mode: mode.clone(),
                    changes: Vec::new(),
                    now: true,
                    unscored: Some(why.to_string()),
                });
            }
        }
    }
    out.rows = state
        .into_iter()
        .map(|((mode, player), stored)| RowWrite {
            display: policies.get(&mode).matching_value(&stored.skill),
            mode,
            player,
            stored,
        })
        .collect();
    out
}

/// Groups history rows of matches applied earlier back into their [`Applied`].
pub fn replay(
    jobs: &[RatingJob],
    earlier: Vec<(String, String, Change)>,
    outcomes: &HashMap<String, String>,
) -> Vec<Applied> {
    jobs.iter()
        .map(|j| {
            let id = j.matched.id.to_string();
            let changes: Vec<Change> = earlier
                .iter()
                .filter(|(_, m, _)| *m == id)
                .map(|(_, _, c)| c.clone())
                .collect();
            let outcome = outcomes.get(&id).cloned().unwrap_or_default();
            Applied {
                match_id: j.matched.id.clone(),
                mode: j.matched.mode.clone(),
                changes,
                now: false,
                unscored: (outcome != "scored").then_some(outcome),
            }
        })
        .collect()
}
