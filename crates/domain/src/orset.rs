//! An observed-remove set (OR-Set), the CRDT party membership is kept in (seed
//! 004's party service). Every add carries a fresh unique tag; a remove tombstones
//! the tags of the element it has observed. An element is present while one of its
//! tags is not tombstoned, so an add concurrent with a remove (a tag the remove did
//! not see) wins. Merging is the union of adds and of tombstones: commutative,
//! associative and idempotent, so replicas that exchange states in any order and
//! any number of times converge.
//!
//! Operations return the delta they made (a small `OrSet` of its own), which is
//! what a replica ships and another merges.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A unique tag of one add. Tags sort by the time prefix callers give them, so
/// the smallest live tag of an element says when it was (last) added.
pub type Tag = String;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(
    serialize = "T: Serialize + Ord",
    deserialize = "T: Deserialize<'de> + Ord"
))]
pub struct OrSet<T> {
    /// Element -> the tags it was added with.
    adds: BTreeMap<T, BTreeSet<Tag>>,
    /// Tombstoned tags.
    removed: BTreeSet<Tag>,
}

impl<T> Default for OrSet<T> {
    fn default() -> Self {
        Self {
            adds: BTreeMap::new(),
            removed: BTreeSet::new(),
        }
    }
}

impl<T: Ord + Clone> OrSet<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `x` under a fresh `tag`; returns the delta.
    pub fn add(&mut self, x: T, tag: Tag) -> OrSet<T> {
        let mut delta = OrSet::new();
        delta.adds.entry(x).or_default().insert(tag);
        self.merge(&delta);
        delta
    }

    /// Removes `x` as observed here (every tag of it seen so far); returns the delta.
    pub fn remove(&mut self, x: &T) -> OrSet<T> {
        let mut delta = OrSet::new();
        if let Some(tags) = self.adds.get(x) {
            delta.removed.extend(tags.iter().cloned());
        }
        self.merge(&delta);
        delta
    }

    /// Takes in everything `other` saw.
    pub fn merge(&mut self, other: &OrSet<T>) {
        for (x, tags) in &other.adds {
            self.adds
                .entry(x.clone())
                .or_default()
                .extend(tags.iter().cloned());
        }
        self.removed.extend(other.removed.iter().cloned());
    }

    /// The live tags of `x`.
    fn live<'a>(&'a self, tags: &'a BTreeSet<Tag>) -> impl Iterator<Item = &'a Tag> + 'a {
        tags.iter().filter(|t| !self.removed.contains(*t))
    }

    pub fn contains(&self, x: &T) -> bool {
        self.adds
            .get(x)
            .is_some_and(|tags| self.live(tags).next().is_some())
    }

    /// The present elements, in order.
    pub fn elements(&self) -> Vec<T> {
        self.adds
            .iter()
            .filter(|(_, tags)| self.live(tags).next().is_some())
            .map(|(x, _)| x.clone())
            .collect()
    }

    pub fn len(&self) -> usize {
        self.elements().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The smallest live tag of `x` (with time-prefixed tags: when it joined).
    pub fn first_tag(&self, x: &T) -> Option<&Tag> {
        self.adds.get(x).and_then(|tags| self.live(tags).next())
    }

    /// Every add: (element, tag), for storage.
    pub fn adds(&self) -> impl Iterator<Item = (&T, &Tag)> {
        self.adds
            .iter()
            .flat_map(|(x, tags)| tags.iter().map(move |t| (x, t)))
    }

    /// Every tombstone, for storage.
    pub fn removed(&self) -> impl Iterator<Item = &Tag> {
        self.removed.iter()
    }

    /// Rebuilds a set from stored adds and tombstones.
    pub fn from_parts(
        adds: impl IntoIterator<Item = (T, Tag)>,
        removed: impl IntoIterator<Item = Tag>,
    ) -> Self {
        let mut s = OrSet::new();
        for (x, t) in adds {
            s.adds.entry(x).or_default().insert(t);
        }
        s.removed.extend(removed);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The seed's scenario: Alice kicks Carol while Carol leaves and Bob's invitee
    /// Dave joins, all before any sync.
    #[test]
    fn concurrent_kick_leave_and_join_converge() {
        let mut base = OrSet::new();
        for (p, t) in [("alice", "1"), ("bob", "2"), ("carol", "3")] {
            base.add(p.to_string(), t.to_string());
        }
        let (mut a, mut c, mut b) = (base.clone(), base.clone(), base.clone());
        let kick = a.remove(&"carol".to_string());
        let leave = c.remove(&"carol".to_string());
        let join = b.add("dave".to_string(), "4".to_string());
        for d in [&leave, &join] {
            a.merge(d);
        }
        for d in [&kick, &join] {
            c.merge(d);
        }
        for d in [&kick, &leave] {
            b.merge(d);
        }
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(a.elements(), ["alice", "bob", "dave"]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(u8),
        Remove(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![(0u8..5).prop_map(Op::Add), (0u8..5).prop_map(Op::Remove)]
    }

    /// A replica's state after `ops`, tags unique to `replica`.
    fn replica(replica: usize, ops: &[Op]) -> OrSet<u8> {
        let mut s = OrSet::new();
        for (i, o) in ops.iter().enumerate() {
            match o {
                Op::Add(x) => {
                    s.add(*x, format!("{replica}-{i}"));
                }
                Op::Remove(x) => {
                    s.remove(x);
                }
            }
        }
        s
    }

    fn merged(a: &OrSet<u8>, b: &OrSet<u8>) -> OrSet<u8> {
        let mut m = a.clone();
        m.merge(b);
        m
    }

    proptest! {
        #[test]
        fn merge_is_commutative(x in prop::collection::vec(op(), 0..12), y in prop::collection::vec(op(), 0..12)) {
            let (a, b) = (replica(1, &x), replica(2, &y));
            prop_assert_eq!(merged(&a, &b), merged(&b, &a));
        }

        #[test]
        fn merge_is_associative(
            x in prop::collection::vec(op(), 0..10),
            y in prop::collection::vec(op(), 0..10),
            z in prop::collection::vec(op(), 0..10),
        ) {
            let (a, b, c) = (replica(1, &x), replica(2, &y), replica(3, &z));
            prop_assert_eq!(merged(&merged(&a, &b), &c), merged(&a, &merged(&b, &c)));
        }

        #[test]
        fn merge_is_idempotent(x in prop::collection::vec(op(), 0..12), y in prop::collection::vec(op(), 0..12)) {
            let (a, b) = (replica(1, &x), replica(2, &y));
            prop_assert_eq!(merged(&a, &a), a.clone());
            let ab = merged(&a, &b);
            prop_assert_eq!(merged(&ab, &b), ab.clone());
        }

        /// From a shared state, one replica removes x while another adds it: x
        /// is present after they sync, whatever else each did before.
        #[test]
        fn a_concurrent_add_wins_over_a_remove(
            shared in prop::collection::vec(op(), 0..10),
            before_a in prop::collection::vec(op(), 0..6),
            before_b in prop::collection::vec(op(), 0..6),
            x in 0u8..5,
        ) {
            let base = replica(0, &shared);
            let mut a = base.clone();
            a.merge(&replica(1, &before_a));
            a.remove(&x);
            let mut b = base.clone();
            b.merge(&replica(2, &before_b));
            b.add(x, "concurrent-add".into());
            let (ab, ba) = (merged(&a, &b), merged(&b, &a));
            prop_assert!(ab.contains(&x));
            prop_assert_eq!(ab, ba);
        }

        /// Shipping deltas instead of whole states converges to the same set.
        #[test]
        fn deltas_converge_like_states(x in prop::collection::vec(op(), 0..12)) {
            let mut full = OrSet::new();
            let mut via_deltas = OrSet::new();
            for (i, o) in x.iter().enumerate() {
                let d = match o {
                    Op::Add(v) => full.add(*v, format!("t{i}")),
                    Op::Remove(v) => full.remove(v),
                };
                via_deltas.merge(&d);
            }
            prop_assert_eq!(via_deltas, full);
        }
    }
}
