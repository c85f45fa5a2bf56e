//! How each strategy forms matches from the tickets it sees: our engine (with
//! the mode's rules reading the groups' attributes) and seed 000's
//! tightest-spread batches, which know no rules, parties or teams.

use crate::run::SimTicket;
use mm_engine::{BatchConfig, Candidate, Compiler, Entry, Mode, form_matches, propose_with};
use std::collections::BTreeMap;

/// A match a strategy formed: its teams (tickets), and what it chose under
/// its mode's `intersect` rules (attribute -> value: its map; seed 000 chooses
/// nothing).
pub(crate) struct Formed {
    pub teams: Vec<Vec<usize>>,
    pub chosen: BTreeMap<String, String>,
}

pub(crate) fn ours(
    mode: &Mode,
    compiler: &Compiler,
    tickets: &[SimTicket],
    pool: &[usize],
    region: usize,
    now: u64,
) -> Vec<Formed> {
    let entries = entries(tickets, pool, region);
    let traits = compiler.traits(pool.iter().map(|&t| &tickets[t].compiled));
    propose_with(mode, &entries, &traits, now)
        .into_iter()
        .map(|p| Formed {
            chosen: p
                .chosen
                .iter()
                .map(|(a, v)| (a.to_string(), v.to_string()))
                .collect(),
            teams: p
                .by_team()
                .into_iter()
                .map(|team| team.into_iter().map(|i| pool[i]).collect())
                .collect(),
        })
        .collect()
}

/// The engine's view of `pool`'s tickets in region `region`.
pub(crate) fn entries(tickets: &[SimTicket], pool: &[usize], region: usize) -> Vec<Entry> {
    pool.iter()
        .map(|&t| {
            let x = &tickets[t];
            let eligible_at = x
                .regions
                .iter()
                .find(|&&(r, _)| r == region)
                .map_or(u64::MAX, |&(_, at)| at);
            Entry {
                rating: x.rating,
                size: x.size,
                enqueued_at: x.enqueued_at,
                eligible_at,
            }
        })
        .collect()
}

/// Seed 000's formation over the tickets it claimed (lowest-rated first).
pub(crate) fn seed000(
    mode: &Mode,
    tickets: &[SimTicket],
    claimed: &[usize],
    now: u64,
) -> Vec<Formed> {
    let players = mode.max_players();
    let cfg = BatchConfig {
        min_players: players,
        max_players: players,
        window: mode.window,
    };
    let candidates: Vec<Candidate> = claimed
        .iter()
        .map(|&t| Candidate {
            rating: tickets[t].rating,
            enqueued_at: tickets[t].enqueued_at,
        })
        .collect();
    form_matches(&candidates, now, &cfg)
        .into_iter()
        .map(|group| {
            // Teams alternate in rating order (the seed has no team logic).
            let mut members: Vec<usize> = group.into_iter().map(|i| claimed[i]).collect();
            members.sort_by(|&a, &b| tickets[a].rating.total_cmp(&tickets[b].rating));
            let mut teams = vec![Vec::new(); mode.teams];
            for (k, t) in members.into_iter().enumerate() {
                teams[k % mode.teams].push(t);
            }
            Formed {
                teams,
                chosen: BTreeMap::new(),
            }
        })
        .collect()
}
