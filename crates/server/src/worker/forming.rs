//! A big pool's matches formed off the async threads and taken part by part.
//! A pool leader's first cycle after a backlog forms tens of thousands of
//! tickets at once; when `equal` rules split them (client builds; platforms
//! nobody waited long enough to mix), the engine forms the parts on the
//! machine's cores and hands each part's proposals over as soon as it is done
//! ([`mm_engine::propose_each`]), so the leader commits the first parts'
//! matches while the rest are still forming, instead of leaving Redis idle
//! for the whole of it (about 110 ms of a 50,000-ticket ruled backlog, against
//! 25 ms without rules).

use super::{Formation, Reading, WorkerConfig, entries, match_of};
use futures_util::{Stream, StreamExt};
use mm_domain::{Match, Pool, Ticket, now_ms};
use mm_engine::{BackfillPolicy, Mode};
use mm_store::Claimed;

/// Whether a leader forms `tickets` tickets of `mode` part by part in the
/// background: big enough to be split, our formation, and no running
/// matches' seats to fill first (those are read from the store before
/// anything forms).
pub(crate) fn forms_in_parts(cfg: &WorkerConfig, mode: &Mode, tickets: usize) -> bool {
    cfg.formation == Formation::Engine
        && mode.backfill == BackfillPolicy::Off
        && tickets >= mm_engine::SPLIT_FROM
}

/// The matches of `claimed` (read for the rules as `reading` has them), formed
/// on a blocking thread: each item one part's matches, as the engine hands
/// them over. A panic in the engine is raised where the stream ends, as it
/// would have been on the caller's thread.
pub(crate) fn form_in_parts<'a>(
    claimed: &'a [Claimed],
    pool: &'a Pool,
    mode: &'a Mode,
    reading: &Reading<'_>,
) -> impl Stream<Item = Vec<Match>> + Send + 'a {
    let now = now_ms();
    let entries = entries(claimed, pool);
    let tickets: Vec<&Ticket> = claimed.iter().map(|c| &c.ticket).collect();
    let traits = reading.traits(mode, &tickets);
    let (handed, parts) = tokio::sync::mpsc::unbounded_channel();
    let engine_mode = mode.clone();
    let forming = tokio::task::spawn_blocking(move || {
        mm_engine::propose_each(&engine_mode, &entries, &traits, now, &mut |proposals| {
            // The receiver is gone only if the cycle was dropped: nothing to do.
            let _ = handed.send(proposals);
        });
    });
    futures_util::stream::unfold(
        (parts, Some(forming)),
        |(mut parts, mut forming)| async move {
            if let Some(proposals) = parts.recv().await {
                return Some((proposals, (parts, forming)));
            }
            if let Some(task) = forming.take()
                && let Err(e) = task.await
                && e.is_panic()
            {
                std::panic::resume_unwind(e.into_panic());
            }
            None
        },
    )
    .map(move |proposals| {
        proposals
            .iter()
            .map(|p| match_of(p, claimed, &tickets, pool, mode, now))
            .collect()
    })
}
