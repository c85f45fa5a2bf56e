//! What the latency scenario prints and writes: per run and step the
//! quantiles, "last in" and the floor, the ratios of ours to the baselines,
//! the CSV and the two charts.

use super::{LatencyArgs, Run, Step};
use crate::chart::{Lines, Series};
use crate::histogram::Latency;
use anyhow::Result;

/// Prints every run's steps, the ratios of ours to each baseline, and writes
/// the CSV and the charts.
pub(super) fn report(args: &LatencyArgs, runs: &[Run]) -> Result<()> {
    println!(
        "\nlatency: players ramp {:?}, a ticket each every {:?}, {:?} held per step; ms from the intended start",
        args.steps, args.period, args.hold
    );
    println!(
        "{:<26} {:>7} {:>7} {:>6} | {:>7} {:>7} {:>7} | {:>8} {:>8} {:>8} | {:>6} {:>6} {:>6}",
        "run",
        "players",
        "samples",
        "errors",
        "create50",
        "p95",
        "p99",
        "match50",
        "p95",
        "p99",
        "formed50",
        "p95",
        "p99"
    );
    for r in runs {
        for s in &r.steps {
            let q = s.quantiles();
            println!(
                "{:<26} {:>7} {:>7} {:>6} | {:>7.2} {:>7.2} {:>7.2} | {:>8.1} {:>8.1} {:>8.1} | {:>6.0} {:>6.0} {:>6.0}",
                r.label,
                s.players,
                s.create.count(),
                s.error_count(),
                q[0],
                q[1],
                q[2],
                q[3],
                q[4],
                q[5],
                q[6],
                q[7],
                q[8],
            );
            println!(
                "{:<26}   last in ({} matches): p50 {:.1}  p95 {:.1}  p99 {:.1} ms",
                "",
                s.last_in.count(),
                s.last_in.ms(0.5),
                s.last_in.ms(0.95),
                s.last_in.ms(0.99)
            );
            println!(
                "{:<26}   floor (instant pairing of these arrivals): p50 {:.1}  p95 {:.1}  p99 {:.1} ms",
                "",
                s.floor.ms(0.5),
                s.floor.ms(0.95),
                s.floor.ms(0.99)
            );
            for (kind, n) in &s.errors {
                println!("{:<26}   error {kind}: {n}", "");
            }
        }
    }
    for r in runs {
        if let Some(kib) = r.ingress_rss_kib {
            println!(
                "{}: peak RSS of the process holding the sockets {:.1} MiB",
                r.label,
                kib as f64 / 1024.0
            );
        }
    }
    for r in runs {
        if let Some(f) = &r.flood {
            println!(
                "{}: the flooder sent {} tickets, {} refused with 429, {} answered otherwise",
                r.label, f.sent, f.refused, f.other
            );
        }
    }
    let ratios = |title: &str, a: &Run, b: &Run| {
        println!("\n{title}");
        for (x, y) in a.steps.iter().zip(&b.steps) {
            println!(
                "  {:>5} players: creation {:.2}x, time to match {:.2}x",
                x.players,
                x.create.ms(0.99) / y.create.ms(0.99).max(1e-3),
                x.matched.ms(0.99) / y.matched.ms(0.99).max(1e-3)
            );
        }
    };
    if let [quiet, flooded] = runs
        && flooded.flood.is_some()
    {
        ratios(
            "ratio with the flooder / without (p99 of the other players):",
            flooded,
            quiet,
        );
    } else if let [ours, bases @ ..] = runs {
        for base in bases {
            ratios(
                &format!(
                    "ratio {} / {} (p99; below 1 is better):",
                    ours.label, base.label
                ),
                ours,
                base,
            );
        }
    }
    let mut rows = Vec::new();
    for r in runs {
        for s in &r.steps {
            let q: Vec<String> = s.quantiles().iter().map(|v| format!("{v:.3}")).collect();
            rows.push(format!(
                "{},{},{},{},{}",
                r.label,
                s.players,
                s.create.count(),
                s.error_count(),
                q.join(",")
            ));
        }
    }
    args.output.csv(
        "latency.csv",
        "run,players,samples,errors,create_p50_ms,create_p95_ms,create_p99_ms,match_p50_ms,match_p95_ms,match_p99_ms,formed_p50_ms,formed_p95_ms,formed_p99_ms",
        rows,
    )?;
    for (file, what, pick) in [
        (
            "latency-create.png",
            "Ticket creation",
            (|s: &Step| &s.create) as fn(&Step) -> &Latency,
        ),
        (
            "latency-match.png",
            "Time to match notification",
            |s: &Step| &s.matched,
        ),
    ] {
        let mut series = Vec::new();
        for (ri, r) in runs.iter().enumerate() {
            for (qi, (q, name)) in [(0.5, "p50"), (0.95, "p95"), (0.99, "p99")]
                .into_iter()
                .enumerate()
            {
                series.push(Series {
                    label: format!("{} {name}", r.label),
                    points: r
                        .steps
                        .iter()
                        .filter(|s| pick(s).count() > 0)
                        .map(|s| (s.players as f64, pick(s).ms(q)))
                        .collect(),
                    dashed: ri > 0,
                    color: qi,
                });
            }
        }
        args.output.lines(
            file,
            &Lines {
                title: format!("{what} vs concurrent players (from the intended start)"),
                x_label: "concurrent players".into(),
                y_label: "ms".into(),
                series,
                markers: Vec::new(),
                log_y: true,
            },
        )?;
    }
    Ok(())
}
