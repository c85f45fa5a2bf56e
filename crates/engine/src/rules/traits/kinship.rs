//! How alike a set of entries is under the `equal` rules: the share of pairs
//! that may meet from the start of their wait (see [`crate::claim`], which
//! sizes a claim worker's batches by it).

use super::{Column, Traits};
use std::collections::HashMap;

impl Traits {
    /// The chance that two entries drawn at random (the same one twice
    /// included) have values in one group of every `equal` rule at the rule's
    /// first step: 1 with no such rule (or no entries), 1/n when no two may
    /// meet. An entry whose own players' values are in different groups meets
    /// nobody at first. Other rules are not read.
    pub fn kinship(&self) -> f64 {
        let n = self.sizes.len();
        let equal: Vec<&Column> = self
            .rules
            .iter()
            .map(|(_, c)| c)
            .filter(|c| matches!(c, Column::Equal { .. }))
            .collect();
        if n == 0 || equal.is_empty() {
            return 1.0;
        }
        let mut kin: HashMap<Vec<u32>, usize> = HashMap::new();
        let mut alone = 0usize;
        for e in 0..n {
            let mut key = Vec::with_capacity(equal.len());
            let mut split = false;
            for column in &equal {
                match column.first_group(e) {
                    Some(g) => key.push(g),
                    None => split = true,
                }
            }
            if split {
                alone += 1;
            } else {
                *kin.entry(key).or_default() += 1;
            }
        }
        let pairs: usize = kin.values().map(|c| c * c).sum::<usize>() + alone;
        pairs as f64 / (n * n) as f64
    }
}
