//! Which pools (regions) a ticket waits in and from when: its best region (lowest
//! measured latency) at once, every other acceptable region within the mode's
//! latency cap once it has waited the mode's `cross_region_after`.

use crate::Mode;
use mm_domain::Millis;

/// A region a ticket accepts, with the latency the client measured to it.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionChoice<'a> {
    pub region: &'a str,
    pub latency_ms: u32,
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
    sorted.sort_by_key(|c| c.latency_ms);
    let mut out = Vec::new();
    for (i, c) in sorted.into_iter().enumerate() {
        if i == 0 {
            out.push((c.region, enqueued_at));
        } else if c.latency_ms <= mode.max_latency_ms {
            out.push((c.region, enqueued_at + mode.cross_region_after));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Modes;

    #[test]
    fn best_region_first_others_after_the_wait_within_the_cap() {
        let m = Modes::defaults().get("5v5").unwrap().clone();
        let c = |region, latency_ms| RegionChoice { region, latency_ms };
        let p = plan(&m, &[c("na", 90), c("eu", 20), c("asia", 300)], 1_000);
        assert_eq!(p, vec![("eu", 1_000), ("na", 1_000 + m.cross_region_after)]);
        // Even a slow best region is used.
        assert_eq!(plan(&m, &[c("asia", 400)], 0), vec![("asia", 0)]);
    }
}
