//! Replays a stream through a strategy on a simulated clock, event by event:
//! arrivals and cancels at their own times, and each strategy's matchers when the
//! service would run them ([`Timing`]): after a pass that formed a match at once,
//! after an idle pass a pause of 5 ms doubling up to `POLL_INTERVAL`, cut short by a
//! wake-up when a ticket arrives in one of their pools. A cycle over one pool takes
//! `cycle_ms` of simulated time, sees the pool as it is when the cycle starts, and
//! its matches are recorded when it ends. The same
//! harness drives our engine and the seed-000 baseline, so all see the very same
//! stream, and it enforces the product rule that a player ends in at most one match
//! (a group's other tickets are withdrawn when one is matched).

use crate::backfill::{Leaving, Running};
use crate::estimates::Estimates;
use crate::form::{Formed, entries, ours, seed000};
use crate::report::{Outcome, Report};
use crate::stream::{Arrival, StreamSpec, generate};
use mm_domain::{Attributes, Value};
use mm_engine::{Compiled, Compiler, Described, Mode, Modes, RegionChoice, Traits, plan};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// When a strategy's matchers run, as the service schedules its consumers and
/// pool leaders (`crates/server/src/worker.rs`, `leader.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Longest pause after a pass that formed no match (`POLL_INTERVAL`).
    pub poll_ms: u64,
    /// The first such pause; it doubles with each idle pass up to `poll_ms`
    /// (equal to `poll_ms`: a fixed poll).
    pub first_pause_ms: u64,
    /// A ticket's arrival ends the pause of the matchers serving its pool at once
    /// (`WAKE_UPS`); one during a pass skips the pause after it.
    pub wake_ups: bool,
    /// Simulated time one cycle over one pool takes (claim, engine, commit).
    pub cycle_ms: u64,
}

impl Timing {
    /// The service's defaults: `POLL_INTERVAL=100ms` after a first pause of 5 ms,
    /// `WAKE_UPS=true`, and 1 ms per pool cycle.
    pub const SERVICE: Timing = Timing {
        poll_ms: 100,
        first_pause_ms: 5,
        wake_ups: true,
        cycle_ms: 1,
    };

    /// Seed 000's consumer: a fixed 100 ms sleep after a claim that formed
    /// nothing, no wake-ups.
    pub const SEED000: Timing = Timing {
        poll_ms: 100,
        first_pause_ms: 100,
        wake_ups: false,
        cycle_ms: 1,
    };

    fn first(&self) -> u64 {
        self.first_pause_ms.min(self.poll_ms)
    }
}

/// Which match formation to replay, and when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// `COORDINATION=leader`: one leader per pool (mode x region) runs our engine
    /// on the whole pool each cycle. It is woken by arrivals in its own pool (the
    /// service wakes every leader of a worker on any of the worker's pools; the
    /// extra passes that adds are left out).
    Leader { timing: Timing },
    /// `COORDINATION=claim`: `workers` consumers (processes x `WORKER_POOL_SIZE`)
    /// each pass over every pool, claiming a rating-contiguous run of `batch`
    /// queued tickets (at least three full matches' worth, as
    /// `WorkerConfig::batch_for`) from a random start rank, as `claim.lua` does,
    /// and forming matches from that run alone; what they do not match goes back
    /// to the queue. `seed` drives the start ranks.
    Claim {
        batch: usize,
        workers: usize,
        seed: u64,
        timing: Timing,
    },
    /// Seed 000: `workers` consumers each claim the `batch` lowest-rated queued
    /// tickets of a pool (ZRANGEBYSCORE from the bottom) and run the
    /// tightest-spread batch algorithm on them. The seed has no parties, teams or
    /// cross-region: party members queue as separate tickets, teams alternate in
    /// rating order, and a ticket waits in its best region only.
    Seed000 {
        batch: usize,
        workers: usize,
        timing: Timing,
    },
}

impl Engine {
    pub fn timing(&self) -> Timing {
        match *self {
            Engine::Leader { timing }
            | Engine::Claim { timing, .. }
            | Engine::Seed000 { timing, .. } => timing,
        }
    }

    fn seed000(&self) -> bool {
        matches!(self, Engine::Seed000 { .. })
    }
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
    /// Simulated seconds after the last arrival, to let the queue settle.
    pub drain_s: u64,
    /// Matches play on and players leave them ([`crate::backfill`]).
    pub leaving: Option<Leaving>,
}

#[derive(Debug, Clone)]
pub(crate) struct SimTicket {
    /// Tickets sharing a key end in at most one match (a group, or for the
    /// baseline a single player).
    pub(crate) key: usize,
    /// The arrival this ticket came from and which of its members it holds.
    pub(crate) group: usize,
    pub(crate) members: Vec<usize>,
    pub(crate) rating: f64,
    /// Its place in its queues' order: the rating in its lane, as the store
    /// has it (`Ticket::queue_score`); the rating alone for the baseline,
    /// which knows no rules.
    pub(crate) score: f64,
    pub(crate) size: usize,
    pub(crate) enqueued_at: u64,
    /// (region index, eligible from).
    pub(crate) regions: Vec<(usize, u64)>,
    /// The pools (mode x region) whose queues hold it.
    pub(crate) pools: Vec<usize>,
    pub(crate) done: bool,
    /// Its group's attributes, and each of the group's players' own.
    pub(crate) attrs: Arc<Attributes>,
    pub(crate) own: Arc<Vec<Attributes>>,
    /// Read once for its mode's rules, on arrival.
    pub(crate) compiled: Compiled,
}

impl Described for SimTicket {
    fn players(&self) -> usize {
        self.members.len()
    }
    fn value(&self, i: usize, attribute: &str) -> Option<&Value> {
        self.members
            .get(i)
            .and_then(|&m| self.own.get(m))
            .and_then(|a| a.get(attribute))
            .or_else(|| self.attrs.get(attribute))
    }
}

/// A match's tickets read as one ticket of all their players (the extra row a
/// backfill's rules read).
struct Together<'a>(Vec<&'a SimTicket>);

impl Described for Together<'_> {
    fn players(&self) -> usize {
        self.0.iter().map(|t| t.members.len()).sum()
    }
    fn value(&self, mut i: usize, attribute: &str) -> Option<&Value> {
        for t in &self.0 {
            if i < t.members.len() {
                return t.value(i, attribute);
            }
            i -= t.members.len();
        }
        None
    }
}

/// One consumer or pool leader and its schedule. A pass visits its pools in
/// turn, one cycle of `cycle_ms` each; the state each cycle sees is the pool's at
/// its own start.
struct Matcher {
    pools: Vec<usize>,
    /// Where in `pools` its passes start (the service's consumer `i` starts at
    /// pool `i`).
    offset: usize,
    /// When its next cycle starts.
    next_at: u64,
    /// The next cycle's place in the pass (0: a new pass).
    step: usize,
    /// Matches formed so far in this pass.
    formed: usize,
    /// The end of its last cycle.
    busy_until: u64,
    pause: u64,
    woken: bool,
    rng: StdRng,
    /// Its next claim's size per pool (`COORDINATION=claim`; see
    /// [`mm_engine::claim`]): the batch until it has claimed the pool.
    claims: HashMap<usize, usize>,
}

impl Matcher {
    fn wake(&mut self, at: u64, timing: Timing) {
        if self.step > 0 || at < self.busy_until {
            // Mid-pass: the pause after it is skipped.
            self.woken = true;
        } else if self.next_at > at {
            self.next_at = at;
            self.pause = timing.first();
        }
    }
}

/// The queues and tickets of one run.
struct Sim<'a> {
    engine: Engine,
    modes: &'a [&'a Mode],
    regions: usize,
    tickets: Vec<SimTicket>,
    by_key: Vec<Vec<usize>>,
    by_group: Vec<Vec<usize>>,
    /// Per pool (`mode * regions + region`): its live tickets by rating, then age.
    queues: Vec<Vec<usize>>,
    /// Per mode, the numbering of its rules' values.
    compilers: Vec<Compiler>,
    outcome: Outcome,
    /// The matches being played, when players leave them.
    running: Option<Running>,
    /// The wait each group was told to expect, and what it waited.
    estimates: Estimates,
}

/// Runs `engine` over the scenario's stream and summarises the outcome.
pub fn run(scenario: &Scenario, engine: Engine) -> Report {
    let modes: Vec<&Mode> = scenario.modes.iter().collect();
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
    let timing = engine.timing();
    let pools = modes.len() * region_names.len();
    let mut sim = Sim {
        engine,
        modes: &modes,
        regions: region_names.len(),
        tickets: Vec::new(),
        by_key: Vec::new(),
        by_group: vec![Vec::new(); arrivals.len()],
        queues: vec![Vec::new(); pools],
        compilers: modes.iter().map(|m| Compiler::new(&m.rules)).collect(),
        outcome: Outcome::new(&arrivals),
        estimates: Estimates::new(pools, arrivals.len()),
        running: scenario.leaving.map(|leaving| {
            // The baseline plays on but has no backfill.
            let backfill = leaving.backfill && !engine.seed000();
            Running::new(
                Leaving {
                    backfill,
                    ..leaving
                },
                scenario.stream.seed,
            )
        }),
    };
    let mut matchers = matchers(engine, pools);
    let mut cancels: Vec<(u64, usize)> = arrivals
        .iter()
        .enumerate()
        .filter_map(|(g, a)| a.cancel_at_ms.map(|at| (at, g)))
        .collect();
    cancels.sort_unstable();
    // A mode's give_up_after ends a group still waiting then (the earliest of
    // its modes').
    let mut give_ups: Vec<(u64, usize)> = arrivals
        .iter()
        .enumerate()
        .filter_map(|(g, a)| {
            a.modes
                .iter()
                .filter_map(|m| modes.iter().find(|x| x.name == *m)?.give_up_after)
                .min()
                .map(|after| (a.at_ms + after, g))
        })
        .collect();
    give_ups.sort_unstable();
    let mut next_give_up = 0;
    let last = arrivals.last().map_or(0, |a| a.at_ms.div_ceil(1000));
    let end = (scenario.stream.duration_s.max(last) + scenario.drain_s) * 1000;
    let (mut next, mut next_cancel) = (0, 0);
    loop {
        let now = [
            arrivals.get(next).map(|a| a.at_ms),
            cancels.get(next_cancel).map(|c| c.0),
            give_ups.get(next_give_up).map(|c| c.0),
            sim.running.as_ref().and_then(Running::next_leave),
            matchers.iter().map(|m| m.next_at).min(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(now) = now.filter(|&t| t <= end) else {
            break;
        };
        while next < arrivals.len() && arrivals[next].at_ms <= now {
            let entered = sim.admit(next, &arrivals[next], &region_names);
            if timing.wake_ups {
                for m in matchers.iter_mut() {
                    if entered.iter().any(|p| m.pools.contains(p)) {
                        m.wake(now, timing);
                    }
                }
            }
            next += 1;
        }
        while next_cancel < cancels.len() && cancels[next_cancel].0 <= now {
            sim.cancel(cancels[next_cancel].1);
            next_cancel += 1;
        }
        while next_give_up < give_ups.len() && give_ups[next_give_up].0 <= now {
            sim.give_up(give_ups[next_give_up].1);
            next_give_up += 1;
        }
        if let Some(running) = sim.running.as_mut() {
            // An open seat wakes the pool's matchers as a ticket would.
            let opened = running.leave_until(now);
            if timing.wake_ups && running.fills() {
                for m in matchers.iter_mut() {
                    if opened.iter().any(|p| m.pools.contains(p)) {
                        m.wake(now, timing);
                    }
                }
            }
        }
        for m in matchers.iter_mut().filter(|m| m.next_at <= now) {
            sim.cycle(m, now, timing);
        }
    }
    let backfill = sim.running.as_mut().and_then(Running::figures);
    let mut report = sim.outcome.finish(&arrivals);
    report.backfill = backfill;
    report.estimates = sim.estimates.figures();
    report
}

/// The strategy's consumers or leaders, all due at once at the start.
fn matchers(engine: Engine, pools: usize) -> Vec<Matcher> {
    let first = engine.timing().first();
    let matcher = |pools: Vec<usize>, offset: usize, seed: u64| Matcher {
        pools,
        offset,
        next_at: 0,
        step: 0,
        formed: 0,
        busy_until: 0,
        pause: first,
        woken: false,
        rng: StdRng::seed_from_u64(seed),
        claims: HashMap::new(),
    };
    match engine {
        Engine::Leader { .. } => (0..pools).map(|p| matcher(vec![p], 0, 0)).collect(),
        Engine::Claim { workers, seed, .. } => (0..workers.max(1))
            .map(|i| {
                matcher(
                    (0..pools).collect(),
                    i,
                    seed ^ (i as u64 + 1).rotate_left(32),
                )
            })
            .collect(),
        Engine::Seed000 { workers, .. } => (0..workers.max(1))
            .map(|i| matcher((0..pools).collect(), i, 0))
            .collect(),
    }
}

impl Sim<'_> {
    /// Queues an arriving group's tickets; returns the pools they entered.
    fn admit(&mut self, group: usize, a: &Arrival, region_names: &[&str]) -> Vec<usize> {
        let choices: Vec<RegionChoice> = region_names
            .iter()
            .zip(&a.latency_ms)
            .map(|(&region, &latency_ms)| RegionChoice {
                region,
                latency_ms: Some(latency_ms),
            })
            .collect();
        let keys: Vec<usize> = if self.engine.seed000() {
            (0..a.ratings.len())
                .map(|i| self.by_key.len() + i)
                .collect()
        } else {
            vec![self.by_key.len()]
        };
        self.by_key
            .resize(self.by_key.len() + keys.len(), Vec::new());
        let attrs = Arc::new(a.attributes.clone());
        let own = Arc::new(a.player_attributes.clone());
        let mut entered = Vec::new();
        for name in &a.modes {
            let Some(mi) = self.modes.iter().position(|m| m.name == *name) else {
                continue;
            };
            let mode = self.modes[mi];
            let regions: Vec<(usize, u64)> = plan(mode, &choices, a.at_ms)
                .into_iter()
                .map(|(r, at)| {
                    let idx = region_names.iter().position(|&n| n == r).expect("known");
                    (idx, at)
                })
                .collect();
            // The baseline waits in its best region only.
            let pools: Vec<usize> = if self.engine.seed000() {
                vec![mi * self.regions + regions[0].0]
            } else {
                regions
                    .iter()
                    .map(|&(r, _)| mi * self.regions + r)
                    .collect()
            };
            let tickets: Vec<(usize, Vec<usize>, f64)> = if self.engine.seed000() {
                (0..a.ratings.len())
                    .map(|i| (keys[i], vec![i], a.ratings[i]))
                    .collect()
            } else {
                vec![(
                    keys[0],
                    (0..a.ratings.len()).collect(),
                    mode.party_rating.rate(&a.ratings),
                )]
            };
            for (key, members, rating) in tickets {
                // Told at queue time, from its best pool (once per group).
                self.estimates
                    .queued(group, pools[0], rating, members.len(), a.at_ms);
                let id = self.tickets.len();
                let mut ticket = SimTicket {
                    key,
                    group,
                    size: members.len(),
                    members,
                    rating,
                    score: rating,
                    enqueued_at: a.at_ms,
                    regions: regions.clone(),
                    pools: pools.clone(),
                    done: false,
                    attrs: attrs.clone(),
                    own: own.clone(),
                    compiled: Compiled::default(),
                };
                ticket.compiled = self.compilers[mi].compile(&ticket);
                if !self.engine.seed000() {
                    ticket.score = mm_domain::queue_score(mode.lane(&ticket), rating);
                }
                self.tickets.push(ticket);
                for &p in &pools {
                    let at = self.position(p, id);
                    self.queues[p].insert(at, id);
                }
                self.by_key[key].push(id);
                self.by_group[group].push(id);
            }
            entered.extend(pools);
        }
        entered
    }

    /// Where ticket `t` belongs in pool `p`'s queue: by score (lane, then
    /// rating), then number.
    fn position(&self, p: usize, t: usize) -> usize {
        let score = self.tickets[t].score;
        self.queues[p].partition_point(|&x| {
            self.tickets[x]
                .score
                .total_cmp(&score)
                .then(x.cmp(&t))
                .is_lt()
        })
    }

    /// Takes ticket `t` out of every queue.
    fn finish(&mut self, t: usize) {
        if self.tickets[t].done {
            return;
        }
        self.tickets[t].done = true;
        for i in 0..self.tickets[t].pools.len() {
            let p = self.tickets[t].pools[i];
            let at = self.position(p, t);
            if self.queues[p].get(at) == Some(&t) {
                self.queues[p].remove(at);
            }
        }
    }

    /// A group that gives up withdraws all its tickets, unless already matched.
    fn cancel(&mut self, g: usize) {
        let waiting = self.by_group[g].iter().any(|&t| !self.tickets[t].done);
        if waiting && !self.outcome.group_matched(g) {
            self.outcome.cancel(g);
            for i in 0..self.by_group[g].len() {
                self.finish(self.by_group[g][i]);
            }
        }
    }

    /// One cycle of a matcher on the next pool of its pass, from `now`; its
    /// matches are recorded when it ends. After the last pool of a pass the next
    /// pass is scheduled as the service does: at once if the pass formed a match
    /// or a wake-up came during it, else after the idle pause.
    fn cycle(&mut self, m: &mut Matcher, now: u64, timing: Timing) {
        let n = m.pools.len();
        let p = m.pools[(m.offset + m.step) % n];
        let end = now + timing.cycle_ms;
        m.formed += self.backfill(p, now, end);
        let matches = self.form(p, now, &mut m.rng, &mut m.claims);
        m.formed += matches.len();
        for formed in matches {
            self.commit(p, &formed.teams, formed.chosen, now, end);
        }
        m.busy_until = end;
        m.step += 1;
        if m.step < n {
            m.next_at = end;
            return;
        }
        m.step = 0;
        if std::mem::take(&mut m.formed) > 0 || std::mem::take(&mut m.woken) {
            m.next_at = end;
            m.pause = timing.first();
        } else {
            m.next_at = end + m.pause;
            m.pause = (m.pause * 2).min(timing.poll_ms);
        }
    }

    /// The matches one cycle over pool `p` forms at `now`; a claim's size is
    /// the matcher's in `claims`, which the claim updates.
    fn form(
        &self,
        p: usize,
        now: u64,
        rng: &mut StdRng,
        claims: &mut HashMap<usize, usize>,
    ) -> Vec<Formed> {
        let (mode, region) = (self.modes[p / self.regions], p % self.regions);
        let queue = &self.queues[p];
        let n = queue.len();
        if n == 0 {
            return Vec::new();
        }
        match self.engine {
            Engine::Leader { .. } => ours(
                mode,
                &self.compilers[p / self.regions],
                &self.tickets,
                queue,
                region,
                now,
            ),
            Engine::Claim { batch, .. } => {
                let base = batch.max(3 * mode.max_players());
                // As `Store::claim_part`: past the batch, at most half the queue.
                let take = claims
                    .get(&p)
                    .copied()
                    .unwrap_or(base)
                    .min(base.max(n.div_ceil(2)));
                // Within the start ticket's lane, as `claim.lua` takes it.
                let at = ((rng.random::<f64>() * n as f64) as usize).min(n - 1);
                let scores = queue.iter().map(|&t| self.tickets[t].score);
                let (lo, hi) = mm_domain::lane_ranks(scores, n, at);
                let start = at.min(hi.saturating_sub(take)).max(lo);
                let run = &queue[start..(start + take).min(hi)];
                let matches = ours(
                    mode,
                    &self.compilers[p / self.regions],
                    &self.tickets,
                    run,
                    region,
                    now,
                );
                // As `ClaimSizes` in the worker: measured on a claim that formed
                // a match, else the batch.
                if matches.is_empty() {
                    claims.remove(&p);
                } else {
                    let claimed: Vec<&SimTicket> = run.iter().map(|&t| &self.tickets[t]).collect();
                    claims.insert(p, mm_engine::claim::next_claim(mode, base, &claimed));
                }
                matches
            }
            Engine::Seed000 { batch, .. } => {
                // The claim size our worker uses too: at least three full matches.
                let take = batch.max(3 * mode.max_players());
                seed000(mode, &self.tickets, &queue[..take.min(n)], now)
            }
        }
    }

    /// Fills the open seats of pool `p`'s running matches before it forms new
    /// ones; returns the tickets placed.
    fn backfill(&mut self, p: usize, now: u64, at: u64) -> usize {
        let mode = self.modes[p / self.regions];
        let Some(running) = self.running.as_mut().filter(|r| r.fills()) else {
            return 0;
        };
        if self.queues[p].is_empty() || !running.has_open(p) {
            return 0;
        }
        let mut pool = self.queues[p].clone();
        let mut entries = entries(&self.tickets, &pool, p % self.regions);
        let (tickets, compiler) = (&self.tickets, &mut self.compilers[p / self.regions]);
        let mut rules = |waiting: &[usize], members: &[usize]| {
            if mode.rules.is_empty() {
                return Traits::none();
            }
            let together = Together(members.iter().map(|&t| &tickets[t]).collect());
            let row = compiler.compile(&together);
            let rows: Vec<&Compiled> = waiting
                .iter()
                .map(|&t| &tickets[t].compiled)
                .chain(std::iter::once(&row))
                .collect();
            compiler.traits(rows.into_iter())
        };
        let placed = running.fill(mode, p, &mut entries, &mut pool, &mut rules, now, at);
        for &(t, id, team) in &placed {
            let key = self.tickets[t].key;
            for i in 0..self.by_key[key].len() {
                self.finish(self.by_key[key][i]);
            }
            let x = &self.tickets[t];
            self.outcome
                .fill(id, team, x.group, &x.members, at, x.enqueued_at);
            self.estimates
                .matched(x.group, p, x.rating, x.size, x.enqueued_at, at);
        }
        placed.len()
    }

    /// Records a match and withdraws its groups' other tickets.
    fn commit(
        &mut self,
        pool: usize,
        teams: &[Vec<usize>],
        chosen: BTreeMap<String, String>,
        now: u64,
        at: u64,
    ) {
        self.judge(pool, teams, now);
        for team in teams {
            for &t in team {
                let key = self.tickets[t].key;
                for i in 0..self.by_key[key].len() {
                    self.finish(self.by_key[key][i]);
                }
            }
        }
        for &t in teams.iter().flatten() {
            let x = &self.tickets[t];
            self.estimates
                .matched(x.group, pool, x.rating, x.size, x.enqueued_at, at);
        }
        let tickets = &self.tickets;
        let id = self.outcome.record(teams, at, |t| {
            let x = &tickets[t];
            (x.group, x.members.clone(), x.rating, x.size, x.enqueued_at)
        });
        if let Some(running) = self.running.as_mut() {
            let players: Vec<Vec<(f64, usize)>> = teams
                .iter()
                .map(|team| {
                    team.iter()
                        .map(|&t| (tickets[t].rating, tickets[t].size))
                        .collect()
                })
                .collect();
            let members = teams.iter().flatten().copied().collect();
            let live = running.start(pool, &players, members, chosen, at);
            debug_assert_eq!(live, id, "running matches are numbered as recorded");
        }
    }

    /// Counts how a match formed in `pool` at `now` stands with its mode's
    /// rules: the step each was at, and whether it breaks it (ours must not; the
    /// baseline knows no rules).
    fn judge(&mut self, pool: usize, teams: &[Vec<usize>], now: u64) {
        let mode = self.modes[pool / self.regions];
        if mode.rules.is_empty() {
            return;
        }
        let members: Vec<usize> = teams.iter().flatten().copied().collect();
        let described: Vec<&SimTicket> = members.iter().map(|&t| &self.tickets[t]).collect();
        let traits = Traits::new(&mode.rules, &described);
        let mut k = 0;
        let local: Vec<Vec<usize>> = teams
            .iter()
            .map(|team| {
                team.iter()
                    .map(|_| {
                        k += 1;
                        k - 1
                    })
                    .collect()
            })
            .collect();
        let wait = members
            .iter()
            .map(|&t| now.saturating_sub(self.tickets[t].enqueued_at))
            .max()
            .unwrap_or(0);
        let players: usize = members.iter().map(|&t| self.tickets[t].size).sum();
        for (rule, step, broken) in traits.judge(&local, wait) {
            self.outcome
                .rule(&rule.label(), rule.is_hard(), step, broken, wait, players);
        }
    }

    /// A group that waited its mode's `give_up_after` ends, unless matched.
    fn give_up(&mut self, g: usize) {
        let waiting = self.by_group[g].iter().any(|&t| !self.tickets[t].done);
        if waiting && !self.outcome.group_matched(g) && !self.outcome.is_cancelled(g) {
            self.outcome.give_up(g);
            for i in 0..self.by_group[g].len() {
                self.finish(self.by_group[g][i]);
            }
        }
    }
}

#[cfg(test)]
mod tests;
