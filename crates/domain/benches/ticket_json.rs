//! Criterion benchmarks of reading tickets from their stored JSON, as a claim
//! worker or a pool leader does for every ticket it takes: 1,000 tickets of
//! the `rules` scenario's kind (a client build, a platform, two or three maps,
//! each player's roles; one ticket in five a party of two to five with each
//! player's own roles). `tickets_1k` reads them whole; `attributes_1k` reads
//! only their attributes, and beside it `attributes_1k_untagged` reads the
//! same with serde's `untagged` enum (how [`Value`] was read before it had a
//! visitor of its own): the baseline in the same command.
//! Run: `cargo bench -p mm-domain --bench ticket_json`.

use criterion::{Criterion, criterion_group, criterion_main};
use mm_domain::{Attributes, PlayerId, Ticket, TicketId, Value};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::hint::black_box;

/// [`Value`] as serde's `untagged` reads it.
#[derive(Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
enum Untagged {
    Number(f64),
    Text(String),
    List(Vec<String>),
}

/// 1,000 tickets' stored JSON, drawn by a fixed sequence.
fn stored() -> Vec<String> {
    let builds = ["1.4.2", "1.4.1", "1.3.9"];
    let maps = ["dust", "harbor", "canal", "port", "mill"];
    let roles: [&[&str]; 4] = [
        &["damage"],
        &["tank", "damage"],
        &["healer", "damage"],
        &["tank", "healer", "damage"],
    ];
    let mut x = 7_u64;
    let mut next = move |n: usize| {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (x >> 33) as usize % n
    };
    (0..1_000)
        .map(|i| {
            let size = if next(5) == 0 { 2 + next(4) } else { 1 };
            let players: Vec<PlayerId> = (0..size)
                .map(|k| PlayerId::new(format!("player-{i}-{k}")).unwrap())
                .collect();
            let mut t = Ticket::solo(
                TicketId::new(format!("t-{i:08}")).unwrap(),
                players[0].clone(),
                "5v5",
                "eu",
                1_000.0 + next(1_000) as f64,
                1_790_000_000_000 + i as u64,
            );
            t.player_ratings = vec![t.rating; size];
            t.players = players;
            let first = next(5);
            let picked: Vec<String> = (0..2 + next(2))
                .map(|k| maps[(first + k) % 5].to_string())
                .collect();
            t.attributes
                .insert("build", Value::Text(builds[next(3)].into()));
            t.attributes
                .insert("platform", Value::Text(["pc", "console"][next(2)].into()));
            t.attributes.insert("maps", Value::List(picked));
            let own = |r: &[&str]| Value::List(r.iter().map(|s| s.to_string()).collect());
            if size == 1 {
                t.attributes.insert("roles", own(roles[next(4)]));
            } else {
                t.player_attributes = (0..size)
                    .map(|_| {
                        let mut a = Attributes::default();
                        a.insert("roles", own(roles[next(4)]));
                        a
                    })
                    .collect();
            }
            serde_json::to_string(&t).unwrap()
        })
        .collect()
}

/// Each ticket's attributes as JSON objects, the group's then each player's.
fn attribute_objects(stored: &[String]) -> Vec<String> {
    stored
        .iter()
        .flat_map(|json| {
            let t: Ticket = serde_json::from_str(json).unwrap();
            std::iter::once(serde_json::to_string(&t.attributes).unwrap()).chain(
                t.player_attributes
                    .iter()
                    .map(|a| serde_json::to_string(a).unwrap())
                    .collect::<Vec<_>>(),
            )
        })
        .collect()
}

fn reading(c: &mut Criterion) {
    let stored = stored();
    let objects = attribute_objects(&stored);
    let mut g = c.benchmark_group("ticket_json");
    g.bench_function("tickets_1k", |b| {
        b.iter(|| {
            for json in &stored {
                black_box(serde_json::from_str::<Ticket>(json).unwrap());
            }
        })
    });
    g.bench_function("attributes_1k", |b| {
        b.iter(|| {
            for json in &objects {
                black_box(serde_json::from_str::<Attributes>(json).unwrap());
            }
        })
    });
    g.bench_function("attributes_1k_untagged", |b| {
        b.iter(|| {
            for json in &objects {
                black_box(serde_json::from_str::<BTreeMap<String, Untagged>>(json).unwrap());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, reading);
criterion_main!(benches);
