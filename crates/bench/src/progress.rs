//! Progress bars on stderr while a bench runs (indicatif; hidden when stderr is
//! not a terminal, so logs and tests stay clean).

use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// A bar counting `len` things (`what`: "tickets matched").
pub fn counter(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>12} [{bar:40}] {pos}/{len} {msg} ({per_sec}, {elapsed})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// A bar that fills over `length` on its own (a timed run); finish it when done.
pub fn clock(length: Duration, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(length.as_millis().max(1) as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:40}] {msg} {elapsed}/{duration}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    let ticker = bar.clone();
    let started = std::time::Instant::now();
    tokio::spawn(async move {
        while !ticker.is_finished() {
            ticker.set_position(started.elapsed().as_millis() as u64);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    bar
}
