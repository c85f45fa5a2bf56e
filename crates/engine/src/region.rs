//! Which pools (regions) a ticket waits in and from when: its best region (lowest
//! measured latency) at once, every other acceptable region within the mode's
//! latency cap once it has waited the mode's `cross_region_after`. A region the
//! client listed without a measurement ranks after the measured ones and counts as
//! within the cap: the client said it accepts it.

use crate::Mode;
use mm_domain::Millis;

/// A region a ticket accepts, with the latency the client measured to it.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionChoice<'a> {
    pub region: &'a str,
    pub latency_ms: Option<u32>,
}

/// The regions a ticket may be matched in, best first, each with the time from
/// which it is eligible there. The best region is always used, whatever its latency
/// (a far-away player still gets to play); others only within `max_latency_ms`.
pub fn plan<'a>(
    mode: &Mode,
    choices: &[RegionChoice<'a>],
    enqueued_at: Millis,
) -> Vec<(&'a str, Millis)> {
    let mut sorted: Vec<&RegionChoice<'a>> = choices.iter().collect();
    // Stable: equal latencies keep the client's order of preference.
    sorted.sort_by_key(|c| c.latency_ms.unwrap_or(u32::MAX));
    let mut out = Vec::new();
    for (i, c) in sorted.into_iter().enumerate() {
        if i == 0 {
            out.push((c.region, enqueued_at));
        } else if c.latency_ms.is_none_or(|l| l <= mode.max_latency_ms) {
            out.push((c.region, enqueued_at + mode.cross_region_after));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Modes;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn region_rules(latencies in proptest::collection::vec(0u32..400, 1..6), at in 0u64..1_000_000) {
            let m = Modes::defaults().get("5v5").unwrap().clone();
            let names = ["a", "b", "c", "d", "e", "f"];
            let choices: Vec<RegionChoice> = latencies
                .iter()
                .zip(names)
                .map(|(&latency_ms, region)| RegionChoice { region, latency_ms: Some(latency_ms) })
                .collect();
            let p = plan(&m, &choices, at);
            let best = latencies.iter().copied().min().unwrap();
            // The best region at once, first.
            let first = choices.iter().find(|c| c.region == p[0].0).unwrap();
            prop_assert_eq!(first.latency_ms, Some(best));
            prop_assert_eq!(p[0].1, at);
            // Every other one only after the wait and only within the cap.
            for &(r, from) in &p[1..] {
                let c = choices.iter().find(|c| c.region == r).unwrap();
                prop_assert!(c.latency_ms.unwrap() <= m.max_latency_ms);
                prop_assert_eq!(from, at + m.cross_region_after);
            }
            let expected = 1 + latencies.iter().filter(|&&l| l <= m.max_latency_ms).count()
                - usize::from(best <= m.max_latency_ms);
            prop_assert_eq!(p.len(), expected);
        }
    }

    #[test]
    fn best_region_first_others_after_the_wait_within_the_cap() {
        let m = Modes::defaults().get("5v5").unwrap().clone();
        let c = |region, latency_ms| RegionChoice {
            region,
            latency_ms: Some(latency_ms),
        };
        let p = plan(&m, &[c("na", 90), c("eu", 20), c("asia", 300)], 1_000);
        assert_eq!(p, vec![("eu", 1_000), ("na", 1_000 + m.cross_region_after)]);
        // Even a slow best region is used.
        assert_eq!(plan(&m, &[c("asia", 400)], 0), vec![("asia", 0)]);
        // Unmeasured regions rank after measured ones and are accepted.
        let u = |region| RegionChoice {
            region,
            latency_ms: None,
        };
        assert_eq!(
            plan(&m, &[u("na"), c("eu", 300), u("asia")], 0),
            vec![
                ("eu", 0),
                ("na", m.cross_region_after),
                ("asia", m.cross_region_after)
            ]
        );
    }
}
