//! A big pool that hard `equal` rules split (client builds) formed part by
//! part, the parts spread over the machine's cores. No match spans two parts,
//! so each part is a pool of its own: the same search over each, the
//! proposals put back in the pool's numbering and in the parts' order (the
//! order each part's first entry comes in), so the answer does not depend on
//! how many threads formed it. Or each part's proposals handed over as soon
//! as the part is formed ([`super::propose_each`]), for a caller that commits
//! the first matches while the rest are formed.
//!
//! Only pools of at least [`SPLIT_FROM`] entries are split: below that a part's
//! own snapshot and thread cost more than they save, and the answer is the
//! whole pool's search, as before. A pool leader's pool is that big after a
//! backlog (a restart, a burst); a claim worker's batch never is.

use super::{Entry, Parts, Proposal, propose_whole};
use crate::Mode;
use crate::rules::Traits;
use mm_domain::Millis;

/// Least entries for a pool to be formed part by part.
pub const SPLIT_FROM: usize = 4_096;

/// The pool's parts (entry indexes in entry order), in order of first sight;
/// `None` when it is not to be split (too small, not split by an `equal` rule
/// that holds for the whole cycle, its longest wait being `longest`, or in one
/// part). Entries that can meet nobody are in no part.
pub(super) fn split(entries: usize, traits: &Traits, longest: Millis) -> Option<Vec<Vec<usize>>> {
    if entries < SPLIT_FROM {
        return None;
    }
    let ids = traits.partition_ids(longest)?;
    let mut parts: Vec<Vec<usize>> = Vec::new();
    for (e, id) in ids.into_iter().enumerate().take(entries) {
        let Some(part) = id else {
            continue;
        };
        let part = part as usize;
        if part == parts.len() {
            parts.push(Vec::new());
        }
        parts[part].push(e);
    }
    (parts.len() > 1).then_some(parts)
}

/// Forms each of `parts` of the pool as a pool of its own, on up to
/// `threads` threads; the proposals in the pool's numbering, part by part.
pub(super) fn propose_parts(
    mode: &Mode,
    entries: &[Entry],
    traits: &Traits,
    now: Millis,
    parts: &[Vec<usize>],
    threads: usize,
) -> Vec<Proposal> {
    let mut formed: Vec<Vec<Proposal>> = vec![Vec::new(); parts.len()];
    let loads = share_out(parts, threads.max(1));
    form(mode, entries, traits, now, parts, loads, &mut |k, out| {
        formed[k] = out;
    });
    formed.into_iter().flatten().collect()
}

/// [`propose_parts`], handing each part's proposals to `sink` as soon as the
/// part is formed (in the order the parts are done, each thread's smallest
/// part first), so a caller can take the first matches while the rest are
/// formed.
pub(super) fn propose_parts_each(
    mode: &Mode,
    entries: &[Entry],
    traits: &Traits,
    now: Millis,
    parts: &[Vec<usize>],
    threads: usize,
    sink: &mut dyn FnMut(Vec<Proposal>),
) {
    let mut loads = share_out(parts, threads.max(1));
    for load in &mut loads {
        load.reverse();
    }
    form(mode, entries, traits, now, parts, loads, &mut |_, out| {
        sink(out)
    });
}

/// Forms the parts of each of `loads` (numbers into `parts`) in turn, a
/// thread per load (the first on this one), handing `(part, proposals)` to
/// `sink` on this thread as each part is done.
fn form(
    mode: &Mode,
    entries: &[Entry],
    traits: &Traits,
    now: Millis,
    parts: &[Vec<usize>],
    loads: Vec<Vec<usize>>,
    sink: &mut dyn FnMut(usize, Vec<Proposal>),
) {
    let one = |part: &Vec<usize>| {
        let own: Vec<Entry> = part.iter().map(|&e| entries[e]).collect();
        let mut out = propose_whole(mode, &own, traits, now, Parts::One { of: part });
        for p in &mut out {
            for m in &mut p.members {
                *m = part[*m];
            }
        }
        out
    };
    let one = &one;
    std::thread::scope(|scope| {
        let (done, arrived) = std::sync::mpsc::channel();
        let mut loads = loads.into_iter();
        let mine = loads.next().unwrap_or_default();
        let others: Vec<_> = loads
            .map(|load| {
                let done = done.clone();
                scope.spawn(move || {
                    for k in load {
                        // The receiver outlives every sender (it is only
                        // dropped once the threads are joined).
                        let _ = done.send((k, one(&parts[k])));
                    }
                })
            })
            .collect();
        drop(done);
        for k in mine {
            sink(k, one(&parts[k]));
            while let Ok((k, out)) = arrived.try_recv() {
                sink(k, out);
            }
        }
        // Until every other thread is done (or stopped by a panic).
        for (k, out) in arrived.iter() {
            sink(k, out);
        }
        for thread in others {
            // A panic in a part's search is the engine's bug: raise it here,
            // as the search on this thread would have.
            thread
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
    });
}

/// The parts dealt out to `threads` loads, biggest part first to the
/// lightest load (at most `threads` loads, none empty).
fn share_out(parts: &[Vec<usize>], threads: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(parts[k].len()));
    let mut loads: Vec<(usize, Vec<usize>)> = vec![(0, Vec::new()); threads.min(parts.len())];
    for k in order {
        let lightest = loads
            .iter_mut()
            .min_by_key(|(size, _)| *size)
            .expect("at least one load");
        lightest.0 += parts[k].len();
        lightest.1.push(k);
    }
    loads.into_iter().map(|(_, load)| load).collect()
}

/// Threads to form a split pool on: the machine's cores.
pub(super) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Described;
    use crate::{Modes, WindowPolicy};
    use mm_domain::{Attributes, Value};
    use std::collections::HashMap;

    /// A solo ticket's attributes.
    struct Solo(Attributes);

    impl Described for Solo {
        fn players(&self) -> usize {
            1
        }
        fn value(&self, _: usize, attribute: &str) -> Option<&Value> {
            self.0.get(attribute)
        }
    }

    const NOW: Millis = 1_000_000;

    /// A 5v5 with builds kept apart and a shared map, and `n` solos: builds
    /// 60/30/10%, two of five maps each, ratings spread by a fixed sequence,
    /// waits up to 90 s.
    fn pool(n: usize) -> (Mode, Vec<Entry>, Traits) {
        let mode = Modes::load(
            Some(
                "[modes.m]\nteams = 2\nteam_size = 5\n\
                 rules = [{ kind = \"equal\", attribute = \"build\" },\
                 { kind = \"intersect\", attribute = \"maps\" }]",
            ),
            WindowPolicy::default(),
        )
        .unwrap()
        .get("m")
        .unwrap()
        .clone();
        let maps = ["dust", "harbor", "canal", "port", "mill"];
        let mut x = 12_345_u64;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            x >> 33
        };
        let mut entries = Vec::new();
        let mut tickets = Vec::new();
        for i in 0..n {
            let build = match i % 10 {
                0..=5 => "1.4",
                6..=8 => "1.3",
                _ => "1.2",
            };
            let (a, b) = (next() as usize % 5, next() as usize % 5);
            let json = format!(
                r#"{{"build": "{build}", "maps": ["{}", "{}"]}}"#,
                maps[a],
                maps[(a + 1 + b % 4) % 5]
            );
            tickets.push(Solo(serde_json::from_str(&json).unwrap()));
            let rating = 900.0 + (next() % 1_200) as f64;
            entries.push(Entry::solo(rating, NOW - (next() % 90_000)));
        }
        let traits = Traits::new(&mode.rules, &tickets);
        (mode, entries, traits)
    }

    #[test]
    fn a_split_pool_forms_the_same_matches_on_any_number_of_threads() {
        let (mode, entries, traits) = pool(SPLIT_FROM + 1_000);
        let parts = split(entries.len(), &traits, 90_000).expect("split by builds");
        assert_eq!(parts.len(), 3);
        let one = propose_parts(&mode, &entries, &traits, NOW, &parts, 1);
        assert!(one.len() > 300, "{} matches", one.len());
        for threads in [2, 3, 8] {
            let many = propose_parts(&mode, &entries, &traits, NOW, &parts, threads);
            assert_eq!(one, many, "on {threads} threads");
        }
        // Each match inside one part (one build), each entry at most once.
        let part_of: HashMap<usize, usize> = parts
            .iter()
            .enumerate()
            .flat_map(|(k, p)| p.iter().map(move |&e| (e, k)))
            .collect();
        let mut seen = std::collections::HashSet::new();
        for p in &one {
            let k = part_of[&p.members[0]];
            assert!(p.members.iter().all(|m| part_of[m] == k));
            assert!(p.members.iter().all(|&m| seen.insert(m)));
        }
        // As many players as the search of the whole pool at once, near enough
        // (each part's passes end on their own).
        let whole = propose_whole(&mode, &entries, &traits, NOW, super::Parts::Find(90_000));
        let (split, all) = (seen.len(), whole.len() * 10);
        assert!(
            split * 100 >= all * 99,
            "{split} matched split, {all} whole"
        );
    }

    #[test]
    fn each_part_is_handed_over_when_formed_and_together_they_are_the_pool_s() {
        let (mode, entries, traits) = pool(SPLIT_FROM + 1_000);
        let parts = split(entries.len(), &traits, 90_000).expect("split by builds");
        let whole = propose_parts(&mode, &entries, &traits, NOW, &parts, 2);
        let part_of: HashMap<usize, usize> = parts
            .iter()
            .enumerate()
            .flat_map(|(k, p)| p.iter().map(move |&e| (e, k)))
            .collect();
        for threads in [1, 2, 3] {
            let mut handed: Vec<Vec<Proposal>> = Vec::new();
            propose_parts_each(&mode, &entries, &traits, NOW, &parts, threads, &mut |out| {
                handed.push(out)
            });
            // One hand-over per part, each of one part's matches.
            assert_eq!(handed.len(), parts.len(), "on {threads} threads");
            let mut which: Vec<usize> = Vec::new();
            for out in &handed {
                let k = part_of[&out[0].members[0]];
                assert!(
                    out.iter()
                        .all(|p| p.members.iter().all(|m| part_of[m] == k))
                );
                which.push(k);
            }
            // On one thread, smallest part first.
            if threads == 1 {
                let sizes: Vec<usize> = which.iter().map(|&k| parts[k].len()).collect();
                assert!(sizes.is_sorted(), "{sizes:?}");
            }
            // Together, the same proposals as formed at once.
            which.sort_unstable();
            which.dedup();
            assert_eq!(which.len(), parts.len());
            let mut all: Vec<Proposal> = handed.into_iter().flatten().collect();
            let key = |p: &Proposal| p.members.clone();
            all.sort_by_key(key);
            let mut expected = whole.clone();
            expected.sort_by_key(key);
            assert_eq!(all, expected, "on {threads} threads");
        }
        // A pool that is not split is handed over at once.
        let (mode, entries, traits) = pool(SPLIT_FROM - 1);
        let mut handed = Vec::new();
        crate::propose_each(&mode, &entries, &traits, NOW, &mut |out| handed.push(out));
        assert_eq!(handed.len(), 1);
        assert_eq!(
            handed[0],
            crate::propose_with(&mode, &entries, &traits, NOW)
        );
    }

    #[test]
    fn a_small_pool_or_one_without_hard_rules_is_not_split() {
        let (_, entries, traits) = pool(SPLIT_FROM - 1);
        assert!(split(entries.len(), &traits, 90_000).is_none());
        let (_, entries, _) = pool(SPLIT_FROM);
        assert!(split(entries.len(), &Traits::none(), 0).is_none());
    }

    fn parts(sizes: &[usize]) -> Vec<Vec<usize>> {
        sizes.iter().map(|&n| vec![0; n]).collect()
    }

    #[test]
    fn parts_are_dealt_biggest_first_to_the_lightest_load() {
        assert_eq!(share_out(&parts(&[60, 30, 10]), 2), [vec![0], vec![1, 2]]);
        assert_eq!(share_out(&parts(&[10, 30, 60]), 2), [vec![2], vec![1, 0]]);
        // More threads than parts: one part each; one thread: all of them.
        assert_eq!(share_out(&parts(&[5, 5]), 8), [vec![0], vec![1]]);
        assert_eq!(share_out(&parts(&[1, 2, 3]), 1), [vec![2, 1, 0]]);
    }
}
