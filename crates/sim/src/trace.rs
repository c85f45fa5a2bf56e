//! A studio's own traffic for the simulator (`matchmaker simulate --trace FILE`):
//! JSON lines or CSV, one arriving group per line, in any order. JSON lines:
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
//!
//! CSV has the same fields as columns, a header first; lists are separated by `;`,
//! each region's latency is a column `latency_ms.REGION`, and an empty cell is a
//! field left out (a region out of reach, no cancel):
//!
//! ```csv
//! at_ms,players,ratings,modes,latency_ms.eu,latency_ms.na,cancel_at_ms
//! 1200,ann;bo,1510;1490,5v5,31,96,61200
//! 1300,,1620,5v5;1v1,,40,
//! ```
//!
//! A file whose first line that is not blank or a comment starts with `{` is JSON
//! lines; any other is CSV.

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
    #[serde(default)]
    attributes: BTreeMap<String, serde_json::Value>,
}

/// A parsed trace: its arrivals in time order, and the regions their latencies
/// name (the columns of each arrival's `latency_ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub arrivals: Vec<Arrival>,
    pub regions: Vec<String>,
}

/// Parses a trace, JSON lines or CSV (see the module doc).
pub fn parse(text: &str) -> Result<Trace, TraceError> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    let lines = match first {
        Some(l) if !l.starts_with('{') => csv_lines(text)?,
        _ => json_lines(text)?,
    };
    arrivals(lines)
}

/// The error of line `line`.
fn bad(line: usize, message: impl Into<String>) -> TraceError {
    TraceError::Line {
        line,
        message: message.into(),
    }
}

fn json_lines(text: &str) -> Result<Vec<Line>, TraceError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let l: Line = serde_json::from_str(raw).map_err(|e| bad(i + 1, e.to_string()))?;
        lines.push(checked(l, i + 1)?);
    }
    Ok(lines)
}

fn csv_lines(text: &str) -> Result<Vec<Line>, TraceError> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header_line = text
        .lines()
        .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map_or(1, |i| i + 1);
    let headers = reader
        .headers()
        .map_err(|e| bad(header_line, e.to_string()))?
        .clone();
    for h in &headers {
        let known = matches!(
            h,
            "at_ms" | "players" | "ratings" | "modes" | "mode" | "cancel_at_ms"
        ) || h.strip_prefix("latency_ms.").is_some_and(|r| !r.is_empty())
            || h.strip_prefix("attributes.").is_some_and(|a| !a.is_empty());
        if !known {
            return Err(bad(header_line, format!("unknown column \"{h}\"")));
        }
    }
    let mut lines = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            bad(line, e.to_string())
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let mut l = Line {
            at_ms: 0,
            players: None,
            ratings: Vec::new(),
            modes: Vec::new(),
            mode: None,
            latency_ms: BTreeMap::new(),
            cancel_at_ms: None,
            attributes: BTreeMap::new(),
        };
        let mut at = None;
        for (h, cell) in headers.iter().zip(record.iter()) {
            if cell.is_empty() {
                continue;
            }
            let number = |what: &str| {
                cell.parse::<u64>()
                    .map_err(|_| bad(line, format!("\"{what}\" is not a whole number: {cell}")))
            };
            let list = || cell.split(';').map(str::trim).map(String::from);
            match h {
                "at_ms" => at = Some(number("at_ms")?),
                "cancel_at_ms" => l.cancel_at_ms = Some(number("cancel_at_ms")?),
                "players" => l.players = Some(list().collect()),
                "modes" | "mode" => l.modes.extend(list()),
                "ratings" => {
                    l.ratings = list()
                        .map(|r| {
                            r.parse::<f64>()
                                .map_err(|_| bad(line, format!("\"ratings\" has {r}")))
                        })
                        .collect::<Result<_, _>>()?;
                }
                _ if h.starts_with("attributes.") => {
                    let name = h.trim_start_matches("attributes.");
                    l.attributes.insert(name.to_string(), csv_value(cell));
                }
                _ => {
                    let region = h.trim_start_matches("latency_ms.");
                    let ms = cell.parse::<u32>().map_err(|_| {
                        bad(line, format!("\"{h}\" is not a whole number of ms: {cell}"))
                    })?;
                    l.latency_ms.insert(region.to_string(), ms);
                }
            }
        }
        l.at_ms = at.ok_or_else(|| bad(line, "no \"at_ms\""))?;
        lines.push(checked(l, line)?);
    }
    Ok(lines)
}

/// An attribute's CSV cell: a list when it holds `;`, a number when it reads
/// as one, else a string.
fn csv_value(cell: &str) -> serde_json::Value {
    if cell.contains(';') {
        return cell.split(';').map(str::trim).collect::<Vec<_>>().into();
    }
    match cell.parse::<f64>() {
        Ok(n) if n.is_finite() => n.into(),
        _ => cell.into(),
    }
}

/// `l` if it describes a group that can queue.
fn checked(mut l: Line, line: usize) -> Result<Line, TraceError> {
    if let Some(m) = l.mode.take() {
        l.modes.insert(0, m);
    }
    if l.modes.is_empty() {
        return Err(bad(line, "no mode: give \"modes\" or \"mode\""));
    }
    if l.ratings.is_empty() || l.ratings.iter().any(|r| !r.is_finite() || *r < 0.0) {
        return Err(bad(
            line,
            "\"ratings\" must list one finite rating >= 0 per player",
        ));
    }
    if l.players
        .as_ref()
        .is_some_and(|p| p.len() != l.ratings.len())
    {
        return Err(bad(line, "\"players\" and \"ratings\" differ in number"));
    }
    if l.latency_ms.is_empty() {
        return Err(bad(line, "\"latency_ms\" names no region"));
    }
    if l.cancel_at_ms.is_some_and(|c| c < l.at_ms) {
        return Err(bad(line, "\"cancel_at_ms\" is before \"at_ms\""));
    }
    mm_domain::Attributes::from_json(l.attributes.clone()).map_err(|e| bad(line, e.to_string()))?;
    Ok(l)
}

/// The trace of checked lines.
fn arrivals(lines: Vec<Line>) -> Result<Trace, TraceError> {
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
            attributes: mm_domain::Attributes::from_json(l.attributes).unwrap_or_default(),
            player_attributes: Vec::new(),
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
    fn a_csv_trace_is_the_same_trace_as_its_json_lines() {
        let json = parse(
            r#"{"at_ms": 900, "ratings": [1500], "mode": "1v1", "latency_ms": {"na": 40}}
{"at_ms": 100, "players": ["a", "b"], "ratings": [1600, 1550], "modes": ["5v5", "1v1"], "latency_ms": {"eu": 30, "na": 90}, "cancel_at_ms": 5000}
"#,
        )
        .unwrap();
        let csv = parse(
            "# exported from our telemetry\n\
             at_ms,players,ratings,modes,latency_ms.na,latency_ms.eu,cancel_at_ms\n\
             900,,1500,1v1,40,,\n\
             \n\
             100, a;b ,1600;1550,5v5;1v1,90,30,5000\n",
        )
        .unwrap();
        assert_eq!(csv, json);
        // Columns in any order; `mode` works too.
        let reordered =
            parse("latency_ms.na,mode,ratings,at_ms\n40,1v1,1500,900\n90,5v5,1600;1550,100\n")
                .unwrap();
        assert_eq!(reordered.arrivals.len(), 2);
        assert_eq!(reordered.arrivals[0].ratings, [1600.0, 1550.0]);
    }

    #[test]
    fn bad_csv_lines_are_refused_with_their_number() {
        let header = "at_ms,ratings,modes,latency_ms.eu,cancel_at_ms";
        for (row, needle) in [
            ("5,1500,,30,", "no mode"),
            ("5,,1v1,30,", "ratings"),
            ("5,15x0,1v1,30,", "ratings"),
            ("5,1500,1v1,,", "no region"),
            ("9,1500,1v1,30,2", "before"),
            ("soon,1500,1v1,30,", "whole number"),
            ("5,1500,1v1,fast,", "ms"),
            ("5,1500,1v1", "fields"),
        ] {
            let text = format!("{header}\n1,1500,1v1,30,\n{row}\n");
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(needle) && e.starts_with("line 3"), "{row}: {e}");
        }
        let e = parse("at_ms,ratings,mode,latency_ms.eu,colour\n1,1500,1v1,3,red\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 1") && e.contains("colour"), "{e}");
        assert!(matches!(
            parse("at_ms,ratings,mode,latency_ms.eu\n"),
            Err(TraceError::Empty)
        ));
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
