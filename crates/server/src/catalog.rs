//! The modes and regions this deployment serves; their product is the set of pools.

use mm_domain::Pool;
use mm_engine::{Mode, Modes};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CatalogError {
    #[error("region list is empty")]
    Empty,
    #[error("region name {0:?} must be 1-32 characters of a-z, 0-9, '-' or '_'")]
    BadName(String),
    #[error("region {0:?} is listed twice")]
    Duplicate(String),
}

/// Known modes and regions.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    modes: Modes,
    regions: Vec<String>,
}

impl Catalog {
    pub fn new(modes: Modes, regions: Vec<String>) -> Result<Self, CatalogError> {
        if regions.is_empty() {
            return Err(CatalogError::Empty);
        }
        for (i, n) in regions.iter().enumerate() {
            let ok = !n.is_empty()
                && n.len() <= 32
                && n.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
                });
            if !ok {
                return Err(CatalogError::BadName(n.clone()));
            }
            if regions[..i].contains(n) {
                return Err(CatalogError::Duplicate(n.clone()));
            }
        }
        Ok(Self { modes, regions })
    }

    pub fn modes(&self) -> &Modes {
        &self.modes
    }

    pub fn mode(&self, name: &str) -> Option<&Mode> {
        self.modes.get(name)
    }

    pub fn regions(&self) -> &[String] {
        &self.regions
    }

    pub fn has_region(&self, region: &str) -> bool {
        self.regions.iter().any(|r| r == region)
    }

    /// Every pool: each mode in each region.
    pub fn pools(&self) -> Vec<Pool> {
        self.modes
            .names()
            .flat_map(|m| self.regions.iter().map(move |r| Pool::new(m, r)))
            .collect()
    }

    /// The pools matches form in: those of every mode not closed.
    pub fn open_pools(&self) -> Vec<Pool> {
        self.pools()
            .into_iter()
            .filter(|p| self.mode(&p.mode).is_some_and(|m| !m.closed))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_regions_and_lists_pools() {
        let c = Catalog::new(Modes::defaults(), vec!["eu".into(), "na".into()]).unwrap();
        assert_eq!(c.pools().len(), 6);
        assert!(Catalog::new(Modes::defaults(), vec![]).is_err());
        assert!(Catalog::new(Modes::defaults(), vec!["EU".into()]).is_err());
        assert!(Catalog::new(Modes::defaults(), vec!["a:b".into()]).is_err());
        assert!(Catalog::new(Modes::defaults(), vec!["a".into(), "a".into()]).is_err());
    }
}
