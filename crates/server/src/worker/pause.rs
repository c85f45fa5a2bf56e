//! How long a consumer or pool leader pauses after a pass: not at all after
//! a pass that formed a match, a pause doubling up to `POLL_INTERVAL` after
//! idle ones, and a short gathering wait when a wake-up ends it.

use std::time::Duration;

/// The pause of a consumer after a pass over its pools. None after a pass that
/// formed a match: the queue may hold more. After a pass that formed nothing, a
/// short pause that doubles with each idle pass up to `POLL_INTERVAL`: under a
/// steady trickle of tickets the consumer looks again within milliseconds and
/// matches in small batches, while an idle or unmatchable queue costs no more
/// polls than a fixed `POLL_INTERVAL`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IdlePause {
    next: Duration,
    max: Duration,
}

/// The first pause after a pass that formed nothing.
const FIRST_IDLE_PAUSE: Duration = Duration::from_millis(5);

/// The least time from the end of a pass that formed nothing to the next pass a
/// wake-up starts. Wake-ups that come faster than that (a busy queue: one per
/// claim) are gathered into one pass instead of each starting a pass of a ticket
/// or two; a ticket arriving at a quiet queue starts one at once.
const WAKE_GATHER: Duration = Duration::from_millis(1);

impl IdlePause {
    pub(crate) fn new(max: Duration) -> Self {
        Self {
            next: FIRST_IDLE_PAUSE.min(max),
            max,
        }
    }

    /// A wake-up ended the pause: new tickets, so look again soon. Returns how long
    /// to wait before that pass, `since_pass` after the last one ended (see
    /// [`WAKE_GATHER`]).
    pub(crate) fn woken(&mut self, since_pass: Duration) -> Duration {
        self.next = FIRST_IDLE_PAUSE.min(self.max);
        WAKE_GATHER.min(self.max).saturating_sub(since_pass)
    }

    pub(crate) fn after_pass(&mut self, formed: usize) -> Option<Duration> {
        if formed > 0 {
            self.next = FIRST_IDLE_PAUSE.min(self.max);
            return None;
        }
        let wait = self.next;
        self.next = (self.next * 2).min(self.max);
        Some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_pause_doubles_up_to_the_poll_interval_and_resets_on_a_match() {
        let mut p = IdlePause::new(Duration::from_millis(100));
        let ms = |d: Option<Duration>| d.map(|d| d.as_millis());
        let waits: Vec<_> = (0..7).map(|_| ms(p.after_pass(0))).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 100, 100].map(Some).to_vec());
        assert_eq!(p.after_pass(3), None);
        assert_eq!(ms(p.after_pass(0)), Some(5));
        // A poll interval below the first pause caps it.
        let mut short = IdlePause::new(Duration::from_millis(2));
        assert_eq!(ms(short.after_pass(0)), Some(2));
        assert_eq!(ms(short.after_pass(0)), Some(2));
    }

    #[test]
    fn a_wake_up_soon_after_a_pass_waits_to_gather_the_next_ones() {
        let mut p = IdlePause::new(Duration::from_millis(100));
        let us = Duration::from_micros;
        p.after_pass(0);
        p.after_pass(0);
        // Right after a pass: the rest of the gathering time; the pause starts over.
        assert_eq!(p.woken(us(300)), WAKE_GATHER - us(300));
        assert_eq!(p.after_pass(0), Some(FIRST_IDLE_PAUSE));
        // A quiet queue: at once.
        assert_eq!(p.woken(Duration::from_millis(40)), Duration::ZERO);
        // Never longer than the poll interval.
        let mut short = IdlePause::new(us(300));
        assert_eq!(short.woken(Duration::ZERO), us(300));
    }
}
