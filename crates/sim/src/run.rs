//! Replays a stream through an engine on a simulated clock: arrivals and cancels
//! are applied tick by tick, then every pool (mode x region) is matched. The same
//! harness drives our engine and the seed-000 baseline, so both see the very same
//! stream, and it enforces the product rule that a player ends in at most one match
//! (a group's other tickets are withdrawn when one is matched).

use crate::report::{Outcome, Report};
use crate::stream::{Arrival, StreamSpec, generate};
use mm_engine::{BatchConfig, Candidate, Entry, Modes, RegionChoice, form_matches, plan, propose};

/// Which match formation to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Our engine on the whole pool every tick (what a pool leader runs).
    Ours,
    /// Our engine as the `claim` workers run it: every tick, `workers` consumers
    /// each claim a rating-contiguous run of `batch` queued tickets (at least three
    /// full matches' worth, as `WorkerConfig::batch_for`) from a random start rank,
    /// as `claim.lua` does, and form matches from that run alone; what they do not
    /// match goes back to the queue. `seed` drives the start ranks.
    Claim {
        batch: usize,
        workers: usize,
        seed: u64,
    },
    /// Seed 000: every tick, `workers` workers each claim the `batch` lowest-rated
    /// queued tickets (ZRANGEBYSCORE from the bottom) and run the tightest-spread
    /// batch algorithm on them. The seed has no parties, teams or cross-region: party
    /// members queue as separate tickets, teams alternate in rating order, and a
    /// ticket waits in its best region only.
    Seed000 { batch: usize, workers: usize },
}

/// A scenario: a stream, the modes and regions it runs against, and the clock.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub about: String,
    /// Replays these arrivals (a trace, [`crate::trace`]) instead of generating
    /// the stream; the stream's regions name the latencies' columns.
    pub trace: Option<Vec<Arrival>>,
    pub stream: StreamSpec,
    pub modes: Modes,
    /// Matching runs every `tick_ms` of simulated time (seed 004: every 500 ms).
    pub tick_ms: u64,
    /// Simulated seconds after the last arrival, to let the queue settle.
    pub drain_s: u64,
}

#[derive(Debug, Clone)]
struct SimTicket {
    /// Tickets sharing a key end in at most one match (a group, or for the
    /// baseline a single player).
    key: usize,
    /// The arrival this ticket came from and which of its members it holds.
    group: usize,
    members: Vec<usize>,
    rating: f64,
    size: usize,
    enqueued_at: u64,
    /// (region index, eligible from).
    regions: Vec<(usize, u64)>,
    done: bool,
}

/// Runs `engine` over the scenario's stream and summarises the outcome.
pub fn run(scenario: &Scenario, engine: Engine) -> Report {
    let modes: Vec<&mm_engine::Mode> = scenario.modes.iter().collect();
    let mode_index = |name: &str| modes.iter().position(|m| m.name == name);
    let arrivals = match &scenario.trace {
        Some(trace) => trace.clone(),
        None => generate(&scenario.stream, |name| {
            mode_index(name).map_or(1, |i| modes[i].max_party)
        }),
    };
    let region_names: Vec<&str> = scenario
        .stream
        .regions
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    let mut tickets: Vec<SimTicket> = Vec::new();
    let mut waiting: Vec<Vec<usize>> = vec![Vec::new(); modes.len()];
    let mut by_key: Vec<Vec<usize>> = Vec::new();
    let mut outcome = Outcome::new(&arrivals);
    let mut next = 0;
    let last = arrivals.last().map_or(0, |a| a.at_ms.div_ceil(1000));
    let end = (scenario.stream.duration_s.max(last) + scenario.drain_s) * 1000;
    let mut now = 0;
    while now <= end {
        // Arrivals up to now.
        while next < arrivals.len() && arrivals[next].at_ms <= now {
            let a = &arrivals[next];
            admit(
                engine,
                next,
                a,
                &modes,
                &region_names,
                &mut tickets,
                &mut waiting,
                &mut by_key,
            );
            next += 1;
        }
        // Cancels up to now: a group that gives up withdraws all its tickets.
        for list in &waiting {
            for &t in list {
                let g = tickets[t].group;
                if !tickets[t].done
                    && arrivals[g].cancel_at_ms.is_some_and(|c| c <= now)
                    && !outcome.group_matched(g)
                {
                    outcome.cancel(g);
                }
            }
        }
        for t in tickets.iter_mut() {
            if !t.done && outcome.is_cancelled(t.group) {
                t.done = true;
            }
        }
        for (mi, mode) in modes.iter().enumerate() {
            waiting[mi].retain(|&t| !tickets[t].done);
            for region in 0..region_names.len() {
                let pool: Vec<usize> = waiting[mi]
                    .iter()
                    .copied()
                    .filter(|&t| !tickets[t].done)
                    .filter(|&t| match engine {
                        Engine::Ours | Engine::Claim { .. } => {
                            tickets[t].regions.iter().any(|&(r, _)| r == region)
                        }
                        Engine::Seed000 { .. } => tickets[t].regions[0].0 == region,
                    })
                    .collect();
                if pool.is_empty() {
                    continue;
                }
                let matches = match engine {
                    Engine::Ours => ours(mode, &tickets, &pool, region, now),
                    Engine::Claim {
                        batch,
                        workers,
                        seed,
                    } => {
                        let salt = seed ^ now.rotate_left(17) ^ ((mi * 31 + region) as u64);
                        claimed(mode, &tickets, &pool, region, now, batch, workers, salt)
                    }
                    Engine::Seed000 { batch, workers } => {
                        seed000(mode, &tickets, &pool, now, batch, workers)
                    }
                };
                for teams in matches {
                    for team in &teams {
                        for &t in team {
                            for &other in &by_key[tickets[t].key] {
                                tickets[other].done = true;
                            }
                        }
                    }
                    outcome.record(&teams, now, |t| {
                        let x = &tickets[t];
                        (x.group, x.members.clone(), x.rating, x.size, x.enqueued_at)
                    });
                }
            }
        }
        now += scenario.tick_ms;
    }
    outcome.finish(&arrivals)
}

#[allow(clippy::too_many_arguments)]
fn admit(
    engine: Engine,
    group: usize,
    a: &Arrival,
    modes: &[&mm_engine::Mode],
    region_names: &[&str],
    tickets: &mut Vec<SimTicket>,
    waiting: &mut [Vec<usize>],
    by_key: &mut Vec<Vec<usize>>,
) {
    let choices: Vec<RegionChoice> = region_names
        .iter()
        .zip(&a.latency_ms)
        .map(|(&region, &latency_ms)| RegionChoice {
            region,
            latency_ms: Some(latency_ms),
        })
        .collect();
    let keys: Vec<usize> = match engine {
        Engine::Ours | Engine::Claim { .. } => vec![by_key.len()],
        Engine::Seed000 { .. } => (0..a.ratings.len()).map(|i| by_key.len() + i).collect(),
    };
    by_key.resize(by_key.len() + keys.len(), Vec::new());
    for name in &a.modes {
        let Some(mi) = modes.iter().position(|m| m.name == *name) else {
            continue;
        };
        let mode = modes[mi];
        let regions: Vec<(usize, u64)> = plan(mode, &choices, a.at_ms)
            .into_iter()
            .map(|(r, at)| {
                let idx = region_names.iter().position(|&n| n == r).expect("known");
                (idx, at)
            })
            .collect();
        let mut push = |key: usize, members: Vec<usize>, rating: f64| {
            let id = tickets.len();
            tickets.push(SimTicket {
                key,
                group,
                size: members.len(),
                members,
                rating,
                enqueued_at: a.at_ms,
                regions: regions.clone(),
                done: false,
            });
            waiting[mi].push(id);
            by_key[key].push(id);
        };
        match engine {
            Engine::Ours | Engine::Claim { .. } => push(
                keys[0],
                (0..a.ratings.len()).collect(),
                mode.party_rating.rate(&a.ratings),
            ),
            Engine::Seed000 { .. } => {
                for (i, &r) in a.ratings.iter().enumerate() {
                    push(keys[i], vec![i], r);
                }
            }
        }
    }
}

fn ours(
    mode: &mm_engine::Mode,
    tickets: &[SimTicket],
    pool: &[usize],
    region: usize,
    now: u64,
) -> Vec<Vec<Vec<usize>>> {
    let entries: Vec<Entry> = pool
        .iter()
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
        .collect();
    propose(mode, &entries, now)
        .into_iter()
        .map(|p| {
            p.by_team()
                .into_iter()
                .map(|team| team.into_iter().map(|i| pool[i]).collect())
                .collect()
        })
        .collect()
}

/// The pool's tickets in queue order: by rating, then by arrival.
fn by_rating(tickets: &[SimTicket], pool: &[usize]) -> Vec<usize> {
    let mut queue = pool.to_vec();
    queue.sort_by(|&a, &b| {
        tickets[a]
            .rating
            .total_cmp(&tickets[b].rating)
            .then(a.cmp(&b))
    });
    queue
}

#[allow(clippy::too_many_arguments)]
fn claimed(
    mode: &mm_engine::Mode,
    tickets: &[SimTicket],
    pool: &[usize],
    region: usize,
    now: u64,
    batch: usize,
    workers: usize,
    salt: u64,
) -> Vec<Vec<Vec<usize>>> {
    use rand::{Rng, SeedableRng};
    let mut queue = by_rating(tickets, pool);
    let take = batch.max(3 * mode.max_players());
    let mut rng = rand::rngs::StdRng::seed_from_u64(salt);
    let mut out = Vec::new();
    // Each consumer claims a run from what the others left this tick.
    for _ in 0..workers {
        if queue.is_empty() {
            break;
        }
        let n = queue.len();
        let start = ((rng.random::<f64>() * n as f64) as usize).min(n.saturating_sub(take));
        let run: Vec<usize> = queue.drain(start..(start + take).min(n)).collect();
        out.extend(ours(mode, tickets, &run, region, now));
    }
    out
}

fn seed000(
    mode: &mm_engine::Mode,
    tickets: &[SimTicket],
    pool: &[usize],
    now: u64,
    batch: usize,
    workers: usize,
) -> Vec<Vec<Vec<usize>>> {
    let queue = by_rating(tickets, pool);
    let players = mode.max_players();
    let cfg = BatchConfig {
        min_players: players,
        max_players: players,
        window: mode.window,
    };
    // The claim size our worker uses too: at least three full matches' worth.
    let batch = batch.max(3 * players);
    let mut out = Vec::new();
    // Each worker claims the lowest `batch` still queued; claimed tickets are out of
    // the queue until the tick ends.
    for w in 0..workers {
        let claimed: Vec<usize> = queue.iter().copied().skip(w * batch).take(batch).collect();
        if claimed.is_empty() {
            break;
        }
        let candidates: Vec<Candidate> = claimed
            .iter()
            .map(|&t| Candidate {
                rating: tickets[t].rating,
                enqueued_at: tickets[t].enqueued_at,
            })
            .collect();
        for group in form_matches(&candidates, now, &cfg) {
            // Teams alternate in rating order (the seed has no team logic).
            let mut members: Vec<usize> = group.into_iter().map(|i| claimed[i]).collect();
            members.sort_by(|&a, &b| tickets[a].rating.total_cmp(&tickets[b].rating));
            let mut teams = vec![Vec::new(); mode.teams];
            for (k, t) in members.into_iter().enumerate() {
                teams[k % mode.teams].push(t);
            }
            out.push(teams);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CLAIM, SEED000, scenarios};

    fn short(name: &str, seconds: u64) -> Scenario {
        let mut s = scenarios::all(&Modes::defaults())
            .into_iter()
            .find(|s| s.name == name)
            .unwrap();
        s.stream.duration_s = seconds;
        s.drain_s = 120;
        s
    }

    #[test]
    fn the_same_scenario_gives_the_same_figures() {
        let s = short("mixed", 60);
        assert_eq!(run(&s, Engine::Ours), run(&s, Engine::Ours));
        assert_eq!(run(&s, SEED000), run(&s, SEED000));
        assert_eq!(run(&s, CLAIM), run(&s, CLAIM));
    }

    #[test]
    fn parties_stay_whole_and_nobody_plays_twice() {
        let s = short("mixed", 120);
        let ours = run(&s, Engine::Ours);
        assert!(ours.matches > 100, "{ours:?}");
        assert!(ours.parties_matched > 50, "{ours:?}");
        assert_eq!(ours.parties_split, 0);
        assert_eq!(ours.double_booked, 0);
        // Claim batches keep the same rules on fewer tickets at a time.
        let claim = run(&s, CLAIM);
        assert!(claim.matches > 100, "{claim:?}");
        assert_eq!(claim.parties_split, 0);
        assert_eq!(claim.double_booked, 0);
        // The baseline knows no parties: it splits them.
        let base = run(&s, SEED000);
        assert!(base.parties_split > 0);
        assert_eq!(base.double_booked, 0);
    }

    #[test]
    fn nobody_waits_without_bound_under_sustained_arrivals() {
        // Five minutes of normal 5v5 traffic: every group is matched, cancelled,
        // or still within its last few minutes of waiting at the end.
        let s = short("normal", 300);
        let ours = run(&s, Engine::Ours);
        assert!(ours.wait_max_s < 300.0, "{ours:?}");
        assert!(ours.never_matched * 100 < ours.groups, "{ours:?}");
    }
}
