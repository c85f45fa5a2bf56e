//! A studio's own traffic for the simulator (`matchmaker simulate --trace FILE`):
//! JSON lines, one arriving group per line, in any order:
//!
//! ```json
//! {"at_ms": 1200, "players": ["ann", "bo"], "ratings": [1510, 1490], "modes": ["5v5"],
//!  "latency_ms": {"eu": 31, "na": 96}, "cancel_at_ms": 61200}
//! ```
//!
//! `at_ms` is when the group queued (ms from the trace's start); `ratings` are its
//! members' ratings, leader first (one for a solo player; `players`, if given, must
//! match them in number and is otherwise only read for that check); `modes` the
//! modes it queued for, main one first (`"mode": "5v5"` also works); `latency_ms`
//! its measured latency to each region (the regions of the whole trace are every
//! region any line names; a region a line leaves out is out of its reach); and
//! `cancel_at_ms`, if present, when it gave up. Blank lines and lines starting with
//! `#` are skipped.

use crate::stream::Arrival;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A latency no region cap admits: a region the group did not measure.
const UNREACHABLE_MS: u32 = 60_000;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    #[error("the trace has no arrivals")]
    Empty,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    at_ms: u64,
    #[serde(default)]
    players: Option<Vec<String>>,
    ratings: Vec<f64>,
    #[serde(default)]
    modes: Vec<String>,
    #[serde(default)]
    mode: Option<String>,
    latency_ms: BTreeMap<String, u32>,
    #[serde(default)]
    cancel_at_ms: Option<u64>,
}

/// A parsed trace: its arrivals in time order, and the regions their latencies
/// name (the columns of each arrival's `latency_ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub arrivals: Vec<Arrival>,
    pub regions: Vec<String>,
}

/// Parses a JSON-lines trace.
pub fn parse(text: &str) -> Result<Trace, TraceError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let bad = |message: String| TraceError::Line {
            line: i + 1,
            message,
        };
        let mut l: Line = serde_json::from_str(raw).map_err(|e| bad(e.to_string()))?;
        if let Some(m) = l.mode.take() {
            l.modes.insert(0, m);
        }
        if l.modes.is_empty() {
            return Err(bad("no mode: give \"modes\" or \"mode\"".into()));
        }
        if l.ratings.is_empty() || l.ratings.iter().any(|r| !r.is_finite() || *r < 0.0) {
            return Err(bad(
                "\"ratings\" must list one finite rating >= 0 per player".into(),
            ));
        }
        if l.players
            .as_ref()
            .is_some_and(|p| p.len() != l.ratings.len())
        {
            return Err(bad("\"players\" and \"ratings\" differ in number".into()));
        }
        if l.latency_ms.is_empty() {
            return Err(bad("\"latency_ms\" names no region".into()));
        }
        if l.cancel_at_ms.is_some_and(|c| c < l.at_ms) {
            return Err(bad("\"cancel_at_ms\" is before \"at_ms\"".into()));
        }
        lines.push(l);
    }
    if lines.is_empty() {
        return Err(TraceError::Empty);
    }
    let mut regions: Vec<String> = Vec::new();
    for l in &lines {
        for r in l.latency_ms.keys() {
            if !regions.contains(r) {
                regions.push(r.clone());
            }
        }
    }
    let mut arrivals: Vec<Arrival> = lines
        .into_iter()
        .map(|l| Arrival {
            at_ms: l.at_ms,
            latency_ms: regions
                .iter()
                .map(|r| l.latency_ms.get(r).copied().unwrap_or(UNREACHABLE_MS))
                .collect(),
            ratings: l.ratings,
            modes: l.modes,
            cancel_at_ms: l.cancel_at_ms,
        })
        .collect();
    arrivals.sort_by_key(|a| a.at_ms);
    Ok(Trace { arrivals, regions })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_parses_into_arrivals_in_time_order() {
        let t = parse(
            r#"# two groups
{"at_ms": 900, "ratings": [1500], "mode": "1v1", "latency_ms": {"na": 40}}

{"at_ms": 100, "players": ["a", "b"], "ratings": [1600, 1550], "modes": ["5v5", "1v1"], "latency_ms": {"eu": 30, "na": 90}, "cancel_at_ms": 5000}
"#,
        )
        .unwrap();
        assert_eq!(t.regions, ["na", "eu"]);
        assert_eq!(t.arrivals.len(), 2);
        assert_eq!(t.arrivals[0].at_ms, 100);
        assert_eq!(t.arrivals[0].latency_ms, [90, 30]);
        assert_eq!(t.arrivals[0].modes, ["5v5", "1v1"]);
        assert_eq!(t.arrivals[0].cancel_at_ms, Some(5000));
        assert_eq!(t.arrivals[1].latency_ms, [40, UNREACHABLE_MS]);
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        for (text, needle) in [
            (
                r#"{"at_ms": 1, "ratings": [1500], "latency_ms": {"eu": 3}}"#,
                "no mode",
            ),
            (
                r#"{"at_ms": 1, "ratings": [], "mode": "1v1", "latency_ms": {"eu": 3}}"#,
                "ratings",
            ),
            (
                r#"{"at_ms": 1, "players": ["a"], "ratings": [1, 2], "mode": "1v1", "latency_ms": {"eu": 3}}"#,
                "differ",
            ),
            (
                r#"{"at_ms": 1, "ratings": [1500], "mode": "1v1", "latency_ms": {}}"#,
                "no region",
            ),
            (
                r#"{"at_ms": 9, "ratings": [1500], "mode": "1v1", "latency_ms": {"eu": 3}, "cancel_at_ms": 2}"#,
                "before",
            ),
            (
                r#"{"at_ms": 1, "ratings": [1500], "mode": "1v1", "latency_ms": {"eu": 3}, "x": 1}"#,
                "unknown field",
            ),
            ("not json", "line 1"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(needle) && e.starts_with("line 1"), "{text}: {e}");
        }
        assert!(matches!(parse("# nothing\n"), Err(TraceError::Empty)));
    }
}
