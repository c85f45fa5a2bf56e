//! The modes and regions this deployment serves; their product is the set of
//! pools. A region may be closed (`CLOSED_REGIONS`): still served, so that what
//! waits and plays there ends well, but it takes no new ticket and forms no
//! match (see [`crate::supervisor::GiveUpAfter`] for its waiting tickets).

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
    #[error(
        "closed region {0:?} is not among the regions served (REGIONS): a closed region is still served, for what waits in it to end"
    )]
    ClosedNotServed(String),
    #[error("every region served is closed: at least one must take tickets")]
    AllClosed,
}

/// Known modes and regions.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    modes: Modes,
    regions: Vec<String>,
    /// Regions served but closed (a subset of `regions`).
    closed: Vec<String>,
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
        Ok(Self {
            modes,
            regions,
            closed: Vec::new(),
        })
    }

    /// This catalog with `closed` regions closed: each must be served, and at
    /// least one served region must stay open.
    pub fn with_closed(mut self, closed: Vec<String>) -> Result<Self, CatalogError> {
        for (i, n) in closed.iter().enumerate() {
            if !self.has_region(n) {
                return Err(CatalogError::ClosedNotServed(n.clone()));
            }
            if closed[..i].contains(n) {
                return Err(CatalogError::Duplicate(n.clone()));
            }
        }
        if self.regions.iter().all(|r| closed.contains(r)) {
            return Err(CatalogError::AllClosed);
        }
        self.closed = closed;
        Ok(self)
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

    /// Whether `region` is served (open or closed).
    pub fn has_region(&self, region: &str) -> bool {
        self.regions.iter().any(|r| r == region)
    }

    /// Whether `region` is served and closed: it takes no new ticket.
    pub fn region_closed(&self, region: &str) -> bool {
        self.closed.iter().any(|r| r == region)
    }

    /// Whether `region` is served and open.
    pub fn region_open(&self, region: &str) -> bool {
        self.has_region(region) && !self.region_closed(region)
    }

    /// The regions served but closed.
    pub fn closed_regions(&self) -> &[String] {
        &self.closed
    }

    /// Every pool: each mode in each region.
    pub fn pools(&self) -> Vec<Pool> {
        self.modes
            .names()
            .flat_map(|m| self.regions.iter().map(move |r| Pool::new(m, r)))
            .collect()
    }

    /// The pools matches form in: those of every mode not closed, in every
    /// region not closed.
    pub fn open_pools(&self) -> Vec<Pool> {
        self.pools()
            .into_iter()
            .filter(|p| self.pool_open(p))
            .collect()
    }

    /// Whether matches form in `pool`: its mode is known and open, its region
    /// served and open.
    pub fn pool_open(&self, pool: &Pool) -> bool {
        self.mode(&pool.mode).is_some_and(|m| !m.closed) && self.region_open(&pool.region)
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

    #[test]
    fn a_closed_region_is_served_but_forms_no_match() {
        let served = || Catalog::new(Modes::defaults(), vec!["eu".into(), "na".into()]).unwrap();
        let c = served().with_closed(vec!["na".into()]).unwrap();
        assert_eq!(c.pools().len(), 6);
        assert_eq!(c.open_pools().len(), 3);
        assert!(c.open_pools().iter().all(|p| p.region == "eu"));
        assert!(c.has_region("na") && c.region_closed("na") && !c.region_open("na"));
        assert!(c.region_open("eu") && !c.region_closed("eu"));
        assert!(!c.region_open("asia") && !c.region_closed("asia"));
        assert!(!c.pool_open(&Pool::new("1v1", "na")));
        assert!(c.pool_open(&Pool::new("1v1", "eu")));
        assert!(!c.pool_open(&Pool::new("nope", "eu")));
        assert_eq!(
            served().with_closed(vec!["asia".into()]),
            Err(CatalogError::ClosedNotServed("asia".into()))
        );
        assert_eq!(
            served().with_closed(vec!["na".into(), "na".into()]),
            Err(CatalogError::Duplicate("na".into()))
        );
        assert_eq!(
            served().with_closed(vec!["na".into(), "eu".into()]),
            Err(CatalogError::AllClosed)
        );
        assert_eq!(served().with_closed(vec![]).unwrap(), served());
    }
}
