//! The in-memory store's large maps, shaped so no single operation stalls the
//! store. A `HashMap` that doubles rehashes every entry at once: at half a million
//! tickets that held the store's lock for 100-700 ms. [`Sharded`] splits a map into
//! [`SHARDS`] hash maps, so a resize moves a 64th of the entries. [`Finished`]
//! keeps finish times in time order too, so purging the expired ones does not scan
//! everything that is still retained.

use std::borrow::Borrow;
use std::collections::hash_map::{Entry, RandomState};
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasher, Hash};

/// Shards of a [`Sharded`] map.
pub const SHARDS: usize = 64;

/// A hash map split into [`SHARDS`] maps by key hash.
pub struct Sharded<K, V> {
    hasher: RandomState,
    shards: Vec<HashMap<K, V>>,
}

impl<K, V> Default for Sharded<K, V> {
    fn default() -> Self {
        Self {
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| HashMap::new()).collect(),
        }
    }
}

impl<K: Hash + Eq, V> Sharded<K, V> {
    fn index<Q: Hash + ?Sized>(&self, key: &Q) -> usize {
        (self.hasher.hash_one(key) as usize) % SHARDS
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.shards[self.index(key)].get(key)
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.index(key);
        self.shards[i].get_mut(key)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get(key).is_some()
    }

    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let i = self.index(&key);
        self.shards[i].insert(key, value)
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.index(key);
        self.shards[i].remove(key)
    }

    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        let i = self.index(&key);
        self.shards[i].entry(key)
    }
}

/// When each finished ticket or match finished, by id and in time order.
#[derive(Default)]
pub struct Finished {
    at: Sharded<String, u64>,
    /// (finished at, id); an entry whose time no longer matches `at` is stale.
    order: BTreeSet<(u64, String)>,
}

impl Finished {
    pub fn insert(&mut self, id: String, at: u64) {
        self.order.insert((at, id.clone()));
        if let Some(old) = self.at.insert(id.clone(), at)
            && old != at
        {
            self.order.remove(&(old, id));
        }
    }

    pub fn get(&self, id: &str) -> Option<u64> {
        self.at.get(id).copied()
    }

    pub fn remove(&mut self, id: &str) -> Option<u64> {
        let at = self.at.remove(id)?;
        self.order.remove(&(at, id.to_string()));
        Some(at)
    }

    /// Removes and returns the ids that finished at or before `cutoff`.
    pub fn take_until(&mut self, cutoff: u64) -> Vec<String> {
        let mut out = Vec::new();
        while let Some((at, _)) = self.order.first()
            && *at <= cutoff
        {
            let (at, id) = self.order.pop_first().expect("just seen");
            if self.at.get(&id) == Some(&at) {
                self.at.remove(&id);
                out.push(id);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharded_map_behaves_as_one_map() {
        let mut m: Sharded<String, u32> = Sharded::default();
        for i in 0..1000 {
            assert_eq!(m.insert(format!("k{i}"), i), None);
        }
        assert_eq!(m.get("k7"), Some(&7));
        *m.get_mut("k7").unwrap() = 70;
        assert_eq!(m.insert("k7".into(), 71), Some(70));
        *m.entry("k8".into()).or_default() += 1;
        assert_eq!(m.get("k8"), Some(&9));
        assert_eq!(m.remove("k9"), Some(9));
        assert!(!m.contains_key("k9"));
        let present = (0..1000)
            .filter(|i| m.contains_key(&format!("k{i}")))
            .count();
        assert_eq!(present, 999);
        // Keys spread over the shards.
        assert!(m.shards.iter().filter(|s| !s.is_empty()).count() > SHARDS / 2);
    }

    #[test]
    fn finished_entries_expire_in_time_order_once() {
        let mut f = Finished::default();
        f.insert("a".into(), 10);
        f.insert("b".into(), 20);
        f.insert("c".into(), 30);
        // Finished again later: only the newer time counts.
        f.insert("a".into(), 25);
        assert_eq!(f.take_until(20), vec!["b".to_string()]);
        assert_eq!(f.get("a"), Some(25));
        assert_eq!(f.remove("c"), Some(30));
        assert_eq!(f.take_until(100), vec!["a".to_string()]);
        assert_eq!(f.take_until(100), Vec::<String>::new());
    }
}
