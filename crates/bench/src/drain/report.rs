//! What a drain prints and charts: each run's rates, times and Redis cost
//! per ticket, what each process spent on the CPU, the processing depth, the
//! commands per ticket, the ratios of comparable runs, `drain.csv` and
//! `drain.png`.

use super::{
    BACKFILL_RATIO, DrainArgs, FIVE, FIVE_RATIO, FIVE_RATIO_90, FIVE_RATIO_LEADER,
    FIVE_RATIO_LEADER_90, FIVE_RULES, Outcome, PLACED, PLACED_BACKFILL, PORT, PORT_EAGER, SETTINGS,
};
use crate::chart::{Lines, Series};
use anyhow::Result;
use std::time::Duration;

/// Tickets per second until 99% were matched.
fn drain_rate(o: &Outcome) -> Option<f64> {
    o.t99.map(|t| 0.99 * o.tickets as f64 / t.as_secs_f64())
}

/// Tickets per second until 90% were matched.
fn drain_rate_90(o: &Outcome) -> Option<f64> {
    o.t90.map(|t| 0.9 * o.tickets as f64 / t.as_secs_f64())
}

/// The drain-rate ratios of comparable runs of each round, with their medians.
fn ratios(args: &DrainArgs, outcomes: &[Outcome]) {
    let mut by_comparison: Vec<(&str, Vec<f64>)> = Vec::new();
    for o in outcomes {
        let (base, other_label, name) = if let Some(rest) = o.label.strip_prefix(PORT_EAGER) {
            (o, format!("ours{rest}"), "ours / seed-000 port, eager")
        } else if let Some(rest) = o.label.strip_prefix(PORT) {
            (o, format!("ours{rest}"), "ours / seed-000 port")
        } else if let Some(rest) = o.label.strip_prefix(SETTINGS) {
            (o, format!("ours{rest}"), "ours / seed-000 settings")
        } else if o.label.starts_with(FIVE_RULES) || o.label.starts_with(PLACED_BACKFILL) {
            continue;
        } else if let Some(rest) = o.label.strip_prefix(PLACED) {
            (o, format!("{PLACED_BACKFILL}{rest}"), BACKFILL_RATIO)
        } else if let Some(rest) = o.label.strip_prefix(FIVE) {
            let name = if rest.starts_with(", leader") {
                FIVE_RATIO_LEADER
            } else {
                FIVE_RATIO
            };
            (o, format!("{FIVE_RULES}{rest}"), name)
        } else if let Some(rest) = o.label.strip_prefix("ours, leader") {
            (o, format!("ours{rest}"), "claim / leader")
        } else if let Some(rest) = o.label.strip_prefix("ours, metrics off") {
            (o, format!("ours{rest}"), "metrics on / metrics off")
        } else {
            continue;
        };
        let Some(other) = outcomes.iter().find(|x| x.label == other_label) else {
            continue;
        };
        let mut record = |name: &'static str, what: &str, rate: fn(&Outcome) -> Option<f64>| {
            if let (Some(a), Some(b)) = (rate(other), rate(base)) {
                let r = a / b;
                println!("ratio {} / {} ({what}): {r:.2}x", other.label, base.label);
                match by_comparison.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, v)) => v.push(r),
                    None => by_comparison.push((name, vec![r])),
                }
            }
        };
        record(name, "drain rate", drain_rate);
        // Rules split the pool: the last few percent wait for windows to widen
        // or a rule to relax, and the rate to 90% shows the pipeline's own cost.
        if name == FIVE_RATIO {
            record(FIVE_RATIO_90, "drain rate to 90%", drain_rate_90);
        } else if name == FIVE_RATIO_LEADER {
            record(FIVE_RATIO_LEADER_90, "drain rate to 90%", drain_rate_90);
        }
    }
    if args.rounds > 1 {
        for (name, r) in by_comparison {
            println!("{}", crate::median_of_rounds(name, "the drain rate", r));
        }
    }
}

pub(super) fn report(args: &DrainArgs, outcomes: &[Outcome]) -> Result<()> {
    println!();
    println!(
        "{:<22} {:>6} {:>8} {:>5} {:>8} {:>8} {:>8} {:>15} {:>15} {:>8}",
        "run",
        "batch",
        "matched",
        "left",
        "t90 (s)",
        "t99 (s)",
        "all (s)",
        "tickets/s (99%)",
        "redis us/ticket",
        "(at 90%)"
    );
    for o in outcomes {
        let secs =
            |t: Option<Duration>| t.map_or("-".into(), |t| format!("{:.2}", t.as_secs_f64()));
        let rate = drain_rate(o);
        println!(
            "{:<22} {:>6} {:>8} {:>5} {:>8} {:>8} {:>8.2} {:>15} {:>15.2} {:>8}",
            o.label,
            o.batch,
            o.matched,
            o.left,
            secs(o.t90),
            secs(o.t99),
            o.t_end.as_secs_f64(),
            rate.map_or("-".into(), |r| format!("{r:.0}")),
            o.redis_usec_per_ticket,
            o.redis_usec_per_ticket_90
                .map_or("-".into(), |us| format!("{us:.2}"))
        );
    }
    for o in outcomes {
        let rss: Vec<String> = o
            .worker_rss_kib
            .iter()
            .map(|k| format!("{:.1}", *k as f64 / 1024.0))
            .collect();
        println!("{:<22} worker peak RSS (MiB): {}", o.label, rss.join(", "));
    }
    // What a ticket cost each process: the cores are shared by all of them,
    // so their sum bounds the drain rate whichever process is the busiest.
    let cores = crate::cpu::cores();
    println!(
        "\nCPU per matched ticket (us) at the 99% mark, by process, and the most tickets/s {cores} cores allow at that:"
    );
    for o in outcomes.iter().filter(|o| o.cpu.all() > 0.0) {
        let show = crate::cpu::show;
        let each: Vec<String> = o.worker_cpu.iter().map(|us| format!("{us:.1}")).collect();
        println!(
            "  {:<20} workers {} ({}; the supervisor last), redis {}, the bench {}, all {:.1}; at most {:.0}/s",
            o.label,
            show(o.cpu.workers),
            each.join(", "),
            show(o.cpu.redis),
            show(o.cpu.load),
            o.cpu.all(),
            cores as f64 * 1e6 / o.cpu.all()
        );
    }
    println!(
        "\nprocessing depth until 99% were matched, sampled every 50 ms (seed 000: zero at every sample):"
    );
    for o in outcomes {
        let (zero, of) = idle_samples(o);
        println!(
            "  {:<20} zero at {zero} of {of} samples, peak {}",
            o.label,
            o.samples.iter().map(|s| s.2).max().unwrap_or(0)
        );
    }
    println!(
        "\ncommandstats per ticket (us) at the 99% mark, those of 0.05 or more (commands run by scripts also count inside evalsha):"
    );
    for o in outcomes {
        let parts: Vec<String> = o
            .breakdown
            .iter()
            .filter(|(_, u)| *u >= 0.05)
            .map(|(c, u)| format!("{c} {u:.2}"))
            .collect();
        println!("  {:<20} {}", o.label, parts.join(", "));
    }
    println!();
    ratios(args, outcomes);
    args.output.csv(
        "drain.csv",
        "run,t_s,queued,processing",
        outcomes.iter().flat_map(|o| {
            o.samples
                .iter()
                .map(move |(t, q, p)| format!("{},{t:.3},{q},{p}", crate::csv_field(&o.label)))
        }),
    )?;
    let mut series = Vec::new();
    for (i, o) in outcomes.iter().enumerate() {
        // One colour per run: queued solid, processing dashed.
        series.push(Series {
            label: format!("{} queued", o.label),
            points: o.samples.iter().map(|s| (s.0, s.1 as f64)).collect(),
            dashed: false,
            color: i,
        });
        series.push(Series {
            label: format!("{} processing", o.label),
            points: o.samples.iter().map(|s| (s.0, s.2 as f64)).collect(),
            dashed: true,
            color: i,
        });
    }
    args.output.lines(
        "drain.png",
        &Lines {
            title: format!(
                "Queue drain: {} tickets, {} workers",
                args.tickets, args.workers
            ),
            x_label: "seconds since the workers started".into(),
            y_label: "tickets".into(),
            series,
            markers: Vec::new(),
            log_y: false,
        },
    )?;
    Ok(())
}

/// Of the samples taken until 99% of the tickets were matched (the drain, not the
/// few that wait for a partner after it), those that found the processing depth at
/// zero, and how many there were.
fn idle_samples(o: &Outcome) -> (usize, usize) {
    let end = o.t99.unwrap_or(o.t_end).as_secs_f64();
    let draining: Vec<_> = o.samples.iter().filter(|s| s.0 <= end).collect();
    let zero = draining.iter().filter(|s| s.2 == 0).count();
    (zero, draining.len())
}
