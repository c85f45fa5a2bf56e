//! Criterion benchmarks of one engine cycle on large pools (one core):
//! 5v5 with 100,000 and 1,000,000 tickets (20% parties), and a full br100 pool of
//! 10,000. Pools are drawn from the simulator's rating distribution with waits
//! spread over the last 60 s. The baseline in the same run: sorting the same
//! 1,000,000 ratings (`sort_1m_ratings`), the least any cycle that looks at
//! every ticket in rating order must do. And the rules' cost: one cycle on a
//! 100,000-ticket 5v5 pool with the `rules` scenario's attributes and rules
//! (`5v5_100k_rules`: builds, crossplay, maps, roles, party balance; the
//! tickets read once beforehand, as a pool leader keeps them) against the same
//! pool with no rule at all (`5v5_100k_no_rules`); before timing them it
//! prints how many matches and players each cycle forms. Then one cycle on a
//! backlog of 50,000 tickets all queued this instant (a pool leader's first
//! cycle after a burst, what `bench drain` times), with the rules and roomy
//! roles and without any rule (`5v5_50k_backlog_rules` / `_no_rules`),
//! printing what share of its players each matches. Last, what
//! reading those 100,000 tickets for the rules costs a pool leader's cycle,
//! afresh and from rows kept since they were claimed (`leader_reading`).
//! Run: `cargo bench -p mm-sim --bench engine`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mm_domain::{Attributes, PlayerId, Ticket, TicketId, Value};
use mm_engine::{
    BatchConfig, Candidate, Compiler, Described, Entry, Mode, Modes, Traits, WindowPolicy,
    form_matches, propose, propose_with,
};
use mm_sim::attrs::AttributeMix;
use mm_sim::scenarios::PARTY_MIX;
use mm_sim::scenarios::{RULES_ATTRIBUTES, RULES_MODE};
use mm_sim::stream::rating;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::hint::black_box;

const NOW: u64 = 1_000_000;

fn pool(n: usize, party_mix: &[f64], seed: u64) -> Vec<Entry> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut x = rng.random::<f64>();
            let mut size = party_mix.len();
            for (i, w) in party_mix.iter().enumerate() {
                if x < *w {
                    size = i + 1;
                    break;
                }
                x -= w;
            }
            let enqueued_at = NOW - rng.random_range(0..60_000);
            Entry {
                rating: rating(&mut rng),
                size,
                enqueued_at,
                eligible_at: enqueued_at,
            }
        })
        .collect()
}

fn engine(c: &mut Criterion) {
    let modes = Modes::defaults();
    let five = modes.get("5v5").unwrap().clone();
    let br = modes.get("br100").unwrap().clone();
    let mut g = c.benchmark_group("engine_cycle");
    g.sample_size(10);
    for (name, mode, n, mix) in [
        ("5v5_100k", &five, 100_000, &PARTY_MIX[..]),
        ("5v5_1m", &five, 1_000_000, &PARTY_MIX[..]),
        ("br100_10k", &br, 10_000, &[1.0][..]),
    ] {
        let entries = pool(n, mix, 42);
        let formed = propose(mode, &entries, NOW);
        eprintln!(
            "{name}: {} tickets, {} matches, {} tickets matched, digest {}",
            n,
            formed.len(),
            formed.iter().map(|p| p.members.len()).sum::<usize>(),
            digest(&formed)
        );
        g.bench_function(name, |b| {
            b.iter_batched_ref(
                || entries.clone(),
                |e| black_box(propose(mode, e, NOW)),
                BatchSize::LargeInput,
            )
        });
        if n == 1_000_000 {
            let ratings: Vec<f64> = entries.iter().map(|e| e.rating).collect();
            g.bench_function("sort_1m_ratings", |b| {
                b.iter_batched_ref(
                    || ratings.clone(),
                    |r| r.sort_unstable_by(f64::total_cmp),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    // The seed-000 batch algorithm on one claimed batch of 100, for scale.
    let batch: Vec<Candidate> = pool(100, &[1.0], 7)
        .iter()
        .map(|e| Candidate {
            rating: e.rating,
            enqueued_at: e.enqueued_at,
        })
        .collect();
    let cfg = BatchConfig {
        min_players: 10,
        max_players: 10,
        window: five.window,
    };
    g.bench_function("seed000_batch_100", |b| {
        b.iter(|| black_box(form_matches(&batch, NOW, &cfg)))
    });
    g.finish();
}

/// A ticket's attributes, as the rules read them.
struct Drawn {
    group: Attributes,
    players: Vec<Attributes>,
    size: usize,
}

impl Described for Drawn {
    fn players(&self) -> usize {
        self.size
    }
    fn value(&self, i: usize, name: &str) -> Option<&Value> {
        self.players
            .get(i)
            .and_then(|a| a.get(name))
            .or_else(|| self.group.get(name))
    }
}

fn rules(c: &mut Criterion) {
    let ruled = Modes::load(Some(RULES_MODE), WindowPolicy::default())
        .unwrap()
        .get("5v5")
        .unwrap()
        .clone();
    let mut plain = ruled.clone();
    plain.rules.clear();
    let entries = pool(100_000, &PARTY_MIX, 42);
    let mix = AttributeMix::parse(RULES_ATTRIBUTES).unwrap();
    let mut rng = StdRng::seed_from_u64(43);
    let drawn: Vec<Drawn> = entries
        .iter()
        .map(|e| {
            let (group, players) = mix.draw(&mut rng, e.size);
            Drawn {
                group,
                players,
                size: e.size,
            }
        })
        .collect();
    let mut compiler = Compiler::new(&ruled.rules);
    let rows: Vec<_> = drawn.iter().map(|d| compiler.compile(d)).collect();
    let none = Traits::none();
    // What each cycle forms, printed once: a faster cycle that matches fewer
    // players is not an improvement, and one that forms other matches is a
    // change of behaviour (the digest tells).
    let formed = |props: &[mm_engine::Proposal]| {
        let players = players_in(props, &entries);
        format!(
            "{} matches, {players} players, digest {}",
            props.len(),
            digest(props)
        )
    };
    eprintln!(
        "5v5_100k_no_rules forms {}; 5v5_100k_rules forms {}",
        formed(&propose_with(&plain, &entries, &none, NOW)),
        formed(&propose_with(
            &ruled,
            &entries,
            &compiler.traits(rows.iter()),
            NOW
        ))
    );
    let mut g = c.benchmark_group("engine_cycle");
    g.sample_size(10);
    g.bench_function("5v5_100k_no_rules", |b| {
        b.iter(|| black_box(propose_with(&plain, &entries, &none, NOW)))
    });
    g.bench_function("5v5_100k_rules", |b| {
        b.iter(|| {
            let traits = compiler.traits(rows.iter());
            black_box(propose_with(&ruled, &entries, &traits, NOW))
        })
    });
    g.finish();
    backlog(c, &ruled, &plain, &entries[..50_000], &mut compiler);
    reading(c, &ruled, &drawn);
}

/// What a pool leader's cycle pays to read its held tickets for the rules:
/// the same 100,000 tickets (players named, attributes as drawn above) read
/// afresh, as every cycle did (`read_100k_afresh`), and turned into traits
/// from the rows compiled when they were claimed, as a leader now keeps them
/// (`read_100k_kept`).
fn reading(c: &mut Criterion, ruled: &Mode, drawn: &[Drawn]) {
    let tickets: Vec<Ticket> = drawn
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let players: Vec<PlayerId> = (0..d.size)
                .map(|k| PlayerId::new(format!("player-{i}-{k}")).unwrap())
                .collect();
            let mut t = Ticket::solo(
                TicketId::new(format!("ticket-{i}")).unwrap(),
                players[0].clone(),
                "5v5",
                "eu",
                1500.0,
                NOW,
            );
            t.players = players;
            t.attributes = d.group.clone();
            t.player_attributes = d.players.clone();
            t
        })
        .collect();
    let mut compiler = Compiler::new(&ruled.rules);
    let rows: Vec<_> = tickets.iter().map(|t| compiler.compile(t)).collect();
    let mut g = c.benchmark_group("leader_reading");
    g.sample_size(10);
    g.bench_function("read_100k_afresh", |b| {
        b.iter(|| black_box(Traits::new(&ruled.rules, &tickets)))
    });
    g.bench_function("read_100k_kept", |b| {
        b.iter(|| black_box(compiler.traits(rows.iter())))
    });
    g.finish();
}

/// A fingerprint of a cycle's proposals (members, teams, what the rules
/// decided), in their order: two builds that form the same matches print the
/// same digest. Where the rules assigned roles, the same without the roles
/// follows in brackets: players given other roles in the same matches.
fn digest(props: &[mm_engine::Proposal]) -> String {
    use std::hash::{Hash, Hasher};
    let (mut all, mut matches) = (
        std::collections::hash_map::DefaultHasher::new(),
        std::collections::hash_map::DefaultHasher::new(),
    );
    for p in props {
        for h in [&mut all, &mut matches] {
            p.members.hash(h);
            p.teams.hash(h);
            p.chosen.hash(h);
            p.steps.hash(h);
        }
        p.roles.hash(&mut all);
    }
    if props.iter().all(|p| p.roles.is_empty()) {
        format!("{:016x}", all.finish())
    } else {
        format!(
            "{:016x}, without roles {:016x}",
            all.finish(),
            matches.finish()
        )
    }
}

/// How many players the proposals `props` over `entries` match.
fn players_in(props: &[mm_engine::Proposal], entries: &[Entry]) -> usize {
    props
        .iter()
        .flat_map(|p| &p.members)
        .map(|&e| entries[e].size)
        .sum()
}

/// What one cycle takes of a backlog: `entries`, every ticket queued this
/// instant, with the `rules` scenario's attributes but tank and healer each
/// accepted by half (as `bench drain --rules` takes them with roomy.toml),
/// through the ruled mode and through the same mode without rules. A pool
/// leader's first cycle after a backlog (a restart, a burst, `bench drain`)
/// is this; what it leaves waits for the next cycle, after the first one's
/// commit. What each forms is printed once; criterion times both
/// (`5v5_50k_backlog_rules`, `5v5_50k_backlog_no_rules`).
fn backlog(
    c: &mut Criterion,
    ruled: &Mode,
    plain: &Mode,
    entries: &[Entry],
    compiler: &mut Compiler,
) {
    let roomy = RULES_ATTRIBUTES.replace("tank = 0.2, healer = 0.2", "tank = 0.5, healer = 0.5");
    let mix = AttributeMix::parse(&roomy).unwrap();
    let mut rng = StdRng::seed_from_u64(44);
    let rows: Vec<_> = entries
        .iter()
        .map(|e| {
            let (group, players) = mix.draw(&mut rng, e.size);
            compiler.compile(&Drawn {
                group,
                players,
                size: e.size,
            })
        })
        .collect();
    let fresh: Vec<Entry> = entries
        .iter()
        .map(|e| Entry {
            enqueued_at: NOW,
            eligible_at: NOW,
            ..*e
        })
        .collect();
    let players: usize = fresh.iter().map(|e| e.size).sum();
    let share =
        |props: &[mm_engine::Proposal]| 100.0 * players_in(props, &fresh) as f64 / players as f64;
    let plain_props = propose_with(plain, &fresh, &Traits::none(), NOW);
    let traits = compiler.traits(rows.iter());
    let ruled_props = propose_with(ruled, &fresh, &traits, NOW);
    eprintln!(
        "a backlog of {} fresh tickets, one cycle: without rules matches {:.1}% of its \
         players (digest {}); with the rules scenario's rules and roomy roles {:.1}% \
         (digest {})",
        entries.len(),
        share(&plain_props),
        digest(&plain_props),
        share(&ruled_props),
        digest(&ruled_props)
    );
    let mut g = c.benchmark_group("engine_cycle");
    g.sample_size(10);
    g.bench_function("5v5_50k_backlog_no_rules", |b| {
        b.iter(|| black_box(propose_with(plain, &fresh, &Traits::none(), NOW)))
    });
    g.bench_function("5v5_50k_backlog_rules", |b| {
        b.iter(|| {
            let traits = compiler.traits(rows.iter());
            black_box(propose_with(ruled, &fresh, &traits, NOW))
        })
    });
    g.finish();
}

criterion_group!(benches, engine, rules);
criterion_main!(benches);
