//! The modes and regions this deployment serves; their product is the set of pools.

use mm_domain::Pool;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CatalogError {
    #[error("{what} list is empty")]
    Empty { what: &'static str },
    #[error("{what} name {name:?} must be 1-32 characters of a-z, 0-9, '-' or '_'")]
    BadName { what: &'static str, name: String },
    #[error("{what} {name:?} is listed twice")]
    Duplicate { what: &'static str, name: String },
}

/// Known modes and regions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    modes: Vec<String>,
    regions: Vec<String>,
}

fn check(what: &'static str, names: &[String]) -> Result<(), CatalogError> {
    if names.is_empty() {
        return Err(CatalogError::Empty { what });
    }
    for (i, n) in names.iter().enumerate() {
        let ok = !n.is_empty()
            && n.len() <= 32
            && n.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !ok {
            return Err(CatalogError::BadName {
                what,
                name: n.clone(),
            });
        }
        if names[..i].contains(n) {
            return Err(CatalogError::Duplicate {
                what,
                name: n.clone(),
            });
        }
    }
    Ok(())
}

impl Catalog {
    pub fn new(modes: Vec<String>, regions: Vec<String>) -> Result<Self, CatalogError> {
        check("mode", &modes)?;
        check("region", &regions)?;
        Ok(Self { modes, regions })
    }

    pub fn modes(&self) -> &[String] {
        &self.modes
    }

    pub fn regions(&self) -> &[String] {
        &self.regions
    }

    pub fn has_mode(&self, mode: &str) -> bool {
        self.modes.iter().any(|m| m == mode)
    }

    pub fn has_region(&self, region: &str) -> bool {
        self.regions.iter().any(|r| r == region)
    }

    /// Every pool: each mode in each region.
    pub fn pools(&self) -> Vec<Pool> {
        self.modes
            .iter()
            .flat_map(|m| self.regions.iter().map(move |r| Pool::new(m, r)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_names_and_lists_pools() {
        let c = Catalog::new(vec!["ranked".into(), "casual".into()], vec!["eu".into()]).unwrap();
        assert_eq!(c.pools().len(), 2);
        assert!(Catalog::new(vec![], vec!["eu".into()]).is_err());
        assert!(Catalog::new(vec!["Ranked".into()], vec!["eu".into()]).is_err());
        assert!(Catalog::new(vec!["a:b".into()], vec!["eu".into()]).is_err());
        assert!(Catalog::new(vec!["a".into(), "a".into()], vec!["eu".into()]).is_err());
    }
}
