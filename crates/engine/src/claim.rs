//! How many tickets a claim worker (`COORDINATION=claim`) takes from a pool at
//! a time.
//!
//! `CLAIM_BATCH_SIZE` tickets are a few matches' worth when any ticket may meet
//! any other. Under `equal` rules (builds kept apart, crossplay after a wait) a
//! ticket may meet only the tickets of its own group: with builds 60/30/10% and
//! two platforms, about a quarter of a batch. So each claim of a pool measures
//! the batch's [kinship](crate::Traits::kinship) (the chance that two of its
//! tickets may meet from the start of their wait) and the consumer's next claim
//! of that pool takes the batch size over it, so that a batch holds about as
//! many tickets that may meet as it would without the rules. A mode without an
//! `equal` rule always claims the batch size.

use crate::Mode;
use crate::rules::{Described, Kind, Rule, Traits};

/// The most tickets one claim takes (`claim.lua` takes no more).
pub const MOST: usize = 2000;

/// The next claim's size in a pool of `mode` for a consumer whose batch is
/// `base` tickets (`CLAIM_BATCH_SIZE`, at least three matches' worth) and
/// whose last claim of the pool took `claimed`.
pub fn next_claim<T: Described>(mode: &Mode, base: usize, claimed: &[T]) -> usize {
    let equal: Vec<Rule> = mode
        .rules
        .iter()
        .filter(|r| r.kind == Kind::Equal)
        .cloned()
        .collect();
    if equal.is_empty() || claimed.len() < 2 {
        return base;
    }
    sized(base, Traits::new(&equal, claimed).kinship())
}

/// `base` over `kinship`, from `base` to [`MOST`] (or `base` if larger).
pub fn sized(base: usize, kinship: f64) -> usize {
    let most = MOST.max(base);
    if kinship.is_nan() || kinship <= 0.0 {
        return most;
    }
    let want = (base as f64 / kinship.min(1.0)).ceil();
    if want >= most as f64 {
        return most;
    }
    (want as usize).max(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Modes;
    use crate::window::WindowPolicy;
    use mm_domain::Value;

    /// A solo ticket with `build` and `platform`.
    struct T(&'static str, &'static str);

    impl Described for T {
        fn players(&self) -> usize {
            1
        }
        fn value(&self, _: usize, attribute: &str) -> Option<&Value> {
            static VALUES: std::sync::OnceLock<Vec<(String, Value)>> = std::sync::OnceLock::new();
            let values = VALUES.get_or_init(|| {
                ["1.4.2", "1.4.1", "pc", "console"]
                    .iter()
                    .map(|v| (v.to_string(), Value::Text(v.to_string())))
                    .collect()
            });
            let want = match attribute {
                "build" => self.0,
                "platform" => self.1,
                _ => return None,
            };
            values.iter().find(|(k, _)| k == want).map(|(_, v)| v)
        }
    }

    fn mode(rules: &str) -> Mode {
        let toml = format!("[modes.m]\nteams = 2\nteam_size = 5\nrules = [{rules}]\n");
        Modes::load(Some(&toml), WindowPolicy::default())
            .unwrap()
            .get("m")
            .unwrap()
            .clone()
    }

    #[test]
    fn a_batch_split_by_equal_rules_makes_the_next_claim_bigger() {
        let ruled = mode(
            r#"{ kind = "equal", attribute = "build" },
               { kind = "equal", attribute = "platform", groups = [["pc"], ["console"]],
                 relax = [{ after = "30s", groups = [["pc", "console"]] }] }"#,
        );
        // Half on each build, half on each platform: a quarter of the pairs.
        let batch: Vec<T> = (0..100)
            .map(|i| T(["1.4.2", "1.4.1"][i % 2], ["pc", "console"][(i / 2) % 2]))
            .collect();
        assert_eq!(next_claim(&ruled, 100, &batch), 400);
        // One build, one platform: every pair may meet.
        let alike: Vec<T> = (0..100).map(|_| T("1.4.2", "pc")).collect();
        assert_eq!(next_claim(&ruled, 100, &alike), 100);
        // A mode without `equal` rules never reads the batch.
        let plain = mode(r#"{ kind = "party_balance", max_size_gap = 2 }"#);
        assert_eq!(next_claim(&plain, 100, &batch), 100);
        // Too little to measure.
        assert_eq!(next_claim(&ruled, 100, &batch[..1]), 100);
    }

    #[test]
    fn a_claim_is_never_below_the_batch_nor_above_what_a_claim_takes() {
        assert_eq!(sized(100, 1.0), 100);
        assert_eq!(sized(100, 0.23), 435);
        assert_eq!(sized(100, 0.01), MOST);
        assert_eq!(sized(100, 0.0), MOST);
        assert_eq!(sized(100, f64::NAN), MOST);
        assert_eq!(sized(3000, 0.5), 3000);
    }
}
