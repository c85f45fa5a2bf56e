//! What a pool leader holds from cycle to cycle: its tickets, and what the
//! mode's rules (and block lists) read of each, compiled once, when the ticket
//! is first formed from ([`mm_engine::Compiler`]), not again every cycle.
//! Reading a whole held pool afresh each cycle (every attribute looked up and
//! hashed, every player numbered) cost more than the engine's search itself
//! (100,000 ruled tickets: 195 ms against 142; BENCHMARKS.md).
//!
//! The rows share one numbering of values and players, which only grows; once
//! it holds far more players than the pool names (they were matched or left),
//! or an `intersect` attribute has run out of numbers for new values, the
//! numbering starts again and every held ticket is read afresh. Players are
//! numbered only once a held ticket blocks someone
//! ([`Compiler::with_people`]): the first ticket with a block list starts the
//! numbering again, with players.

use mm_domain::TicketId;
use mm_engine::{Compiled, Compiler, Mode, Traits};
use mm_store::Claimed;
use std::collections::HashSet;

/// Players numbered beyond twice the held tickets' (their players and the
/// players they blocked) before the numbering starts again (the first term:
/// a small pool need not start again often).
const SLACK_PLAYERS: usize = 10_000;

/// A leader's tickets with their compiled rows.
#[derive(Default)]
pub(crate) struct Kept {
    tickets: Vec<Claimed>,
    /// `rows[i]` is `tickets[i]` read for the rules; tickets claimed since
    /// the last cycle are read at the next (`rows` covers a prefix).
    rows: Vec<Compiled>,
    compiler: Option<Compiler>,
    /// The held tickets' players and the players they block, together.
    named: usize,
    /// The held tickets' ids: a ticket handed over again (queued again after
    /// it was withdrawn, before the leader heard it was; read again after a
    /// block) is held once, its newest copy.
    ids: HashSet<TicketId>,
}

/// What the rules read of the tickets a cycle forms from.
pub(crate) enum Reading<'a> {
    /// Read them now (a claimed batch, read once).
    Fresh,
    /// Read already: each ticket's row, in order, and their numbering.
    Kept(&'a Compiler, Vec<&'a Compiled>),
}

impl<'a> Reading<'a> {
    /// The traits of `tickets` (in order; the rows of [`Reading::Kept`] are theirs).
    pub(crate) fn traits(&self, mode: &Mode, tickets: &[&mm_domain::Ticket]) -> Traits {
        match self {
            Reading::Fresh => Traits::new(&mode.rules, tickets),
            Reading::Kept(compiler, rows) => compiler.traits(rows.iter().copied()),
        }
    }

    /// The reading of the tickets whose flag in `keep` is set (one flag per
    /// ticket, in order).
    pub(crate) fn only(&self, keep: &[bool]) -> Reading<'a> {
        match self {
            Reading::Fresh => Reading::Fresh,
            Reading::Kept(compiler, rows) => Reading::Kept(
                compiler,
                rows.iter()
                    .zip(keep)
                    .filter(|(_, k)| **k)
                    .map(|(r, _)| *r)
                    .collect(),
            ),
        }
    }
}

impl Kept {
    pub(crate) fn is_empty(&self) -> bool {
        self.tickets.is_empty()
    }

    /// How many tickets it holds.
    pub(crate) fn len(&self) -> usize {
        self.tickets.len()
    }

    /// The tickets held from the `at`-th on.
    pub(crate) fn from(&self, at: usize) -> &[Claimed] {
        &self.tickets[at.min(self.tickets.len())..]
    }

    /// The held tickets' ids.
    pub(crate) fn ids(&self) -> Vec<TicketId> {
        self.tickets.iter().map(|c| c.ticket.id.clone()).collect()
    }

    /// Adds `claimed`; a ticket held already takes the place of the copy
    /// held (it was read again: queued again after it was withdrawn, before
    /// the leader heard it was, or given a block while it waited).
    pub(crate) fn extend(&mut self, claimed: Vec<Claimed>) {
        for c in claimed {
            if self.ids.insert(c.ticket.id.clone()) {
                self.named += named(&c);
                self.tickets.push(c);
            } else {
                self.replace(c);
            }
        }
    }

    /// Puts `c` in the place of the held copy of its ticket, its row read
    /// again (all rows, if its blocks need players numbered and the
    /// numbering has none).
    fn replace(&mut self, c: Claimed) {
        let Some(at) = self.tickets.iter().position(|t| t.ticket.id == c.ticket.id) else {
            return;
        };
        self.named = self.named - named(&self.tickets[at]) + named(&c);
        if at < self.rows.len() {
            match self.compiler.as_mut() {
                Some(compiler) if c.ticket.blocks.is_empty() || compiler.sees_people() => {
                    self.rows[at] = compiler.compile(&c.ticket);
                }
                _ => {
                    self.compiler = None;
                    self.rows.clear();
                }
            }
        }
        self.tickets[at] = c;
    }

    /// Adds `claimed` and reads them for `mode`'s rules at once: a leader
    /// reads each claim of a backlog while its next claims are in flight,
    /// not all of them once the last is in.
    pub(crate) fn extend_read(&mut self, claimed: Vec<Claimed>, mode: &Mode) {
        self.extend(claimed);
        self.catch_up(mode, self.most());
    }

    /// Keeps the tickets `keep` says to (their rows with them).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Claimed) -> bool) {
        let kept: Vec<bool> = self.tickets.iter().map(&mut keep).collect();
        for (c, _) in self.tickets.iter().zip(&kept).filter(|(_, k)| !**k) {
            self.ids.remove(&c.ticket.id);
        }
        let mut at = kept.iter();
        self.tickets.retain(|_| *at.next().expect("one per ticket"));
        self.named = self.tickets.iter().map(named).sum();
        // `rows` covers a prefix of the tickets, so of the same flags.
        let mut at = kept.iter();
        self.rows.retain(|_| *at.next().expect("one per row"));
    }

    /// The tickets, every one read for `mode`'s rules: those claimed since
    /// the last cycle are read now (all of them when the numbering starts
    /// again).
    pub(crate) fn reading(&mut self, mode: &Mode) -> (&[Claimed], Reading<'_>) {
        self.read(mode, self.most())
    }

    /// Players and values the numbering may hold before it starts again.
    fn most(&self) -> usize {
        2 * self.named + SLACK_PLAYERS
    }

    /// [`Kept::reading`], the numbering starting again past `most`.
    fn read(&mut self, mode: &Mode, most: usize) -> (&[Claimed], Reading<'_>) {
        self.catch_up(mode, most);
        let compiler = self.compiler.as_ref().expect("set by catch_up");
        (
            &self.tickets,
            Reading::Kept(compiler, self.rows.iter().collect()),
        )
    }

    /// Reads the tickets not read yet, the numbering starting again once it
    /// holds more than `most` players and values, or when a ticket to read
    /// blocks someone and it numbers no players.
    fn catch_up(&mut self, mode: &Mode, most: usize) {
        let blocks = self.tickets[self.rows.len()..]
            .iter()
            .any(|c| !c.ticket.blocks.is_empty());
        let start_again = self.compiler.as_ref().is_none_or(|c| {
            c.rules() != mode.rules || c.worn(most) || (blocks && !c.sees_people())
        });
        if start_again {
            let blocks = self.tickets.iter().any(|c| !c.ticket.blocks.is_empty());
            self.compiler = Some(Compiler::with_people(&mode.rules, blocks));
            self.rows.clear();
        }
        let compiler = self.compiler.as_mut().expect("set above");
        let fresh = &self.tickets[self.rows.len()..];
        self.rows
            .extend(fresh.iter().map(|c| compiler.compile(&c.ticket)));
    }
}

/// A ticket's players and the players it blocks, together.
fn named(c: &Claimed) -> usize {
    c.ticket.players.len() + c.ticket.blocks.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_domain::{Attributes, PlayerId, Ticket, TicketId, Value};
    use mm_engine::Modes;

    const MODES: &str = r#"
[modes.duel]
teams = 2
team_size = 1
rules = [{ kind = "intersect", attribute = "maps" }]
"#;

    fn ticket(id: usize, maps: &[&str], blocks: &[&str]) -> Claimed {
        let mut attributes = Attributes::default();
        attributes.insert(
            "maps",
            Value::List(maps.iter().map(|m| m.to_string()).collect()),
        );
        let mut t = Ticket::solo(
            TicketId::new(format!("t{id}")).unwrap(),
            PlayerId::new(format!("p{id}")).unwrap(),
            "duel",
            "eu",
            1500.0,
            0,
        );
        t.attributes = attributes;
        t.blocks = blocks.iter().map(|b| PlayerId::new(*b).unwrap()).collect();
        Claimed {
            ticket: t,
            first_claim: true,
        }
    }

    /// The proposals over `kept`'s tickets read through it (the numbering
    /// starting again past `most`), and read afresh.
    fn both(
        kept: &mut Kept,
        mode: &Mode,
        most: usize,
    ) -> (Vec<mm_engine::Proposal>, Vec<mm_engine::Proposal>) {
        let tickets: Vec<&Ticket> = kept.tickets.iter().map(|c| &c.ticket).collect();
        let entries: Vec<mm_engine::Entry> = tickets
            .iter()
            .map(|t| mm_engine::Entry::solo(t.rating, t.enqueued_at))
            .collect();
        let fresh = Reading::Fresh.traits(mode, &tickets);
        let tickets: Vec<Ticket> = tickets.into_iter().cloned().collect();
        let tickets: Vec<&Ticket> = tickets.iter().collect();
        let kept = kept.read(mode, most).1.traits(mode, &tickets);
        (
            mm_engine::propose_with(mode, &entries, &kept, 1_000),
            mm_engine::propose_with(mode, &entries, &fresh, 1_000),
        )
    }

    /// A ticket handed over again while held (queued again after a
    /// withdrawal the leader had not heard of yet) is held once; once let go,
    /// it may come back.
    #[test]
    fn a_ticket_handed_over_twice_is_held_once() {
        let modes = Modes::load(Some(MODES), Default::default()).unwrap();
        let mode = modes.get("duel").unwrap();
        let mut kept = Kept::default();
        kept.extend_read(
            vec![ticket(1, &["dust"], &[]), ticket(2, &["dust"], &[])],
            mode,
        );
        kept.extend_read(vec![ticket(2, &["dust"], &[]), ticket(3, &[], &[])], mode);
        let ids = |k: &Kept| k.ids().iter().map(|i| i.to_string()).collect::<Vec<_>>();
        assert_eq!(ids(&kept), ["t1", "t2", "t3"]);
        assert_eq!(kept.from(2).len(), 1, "one new ticket in the second step");
        kept.retain(|c| c.ticket.id.as_str() != "t2");
        kept.extend(vec![ticket(2, &["dust"], &[])]);
        assert_eq!(ids(&kept), ["t1", "t3", "t2"]);
        let (a, b) = both(&mut kept, mode, usize::MAX);
        assert_eq!(a, b);
    }

    /// A ticket read again with a block made while it waited takes its held
    /// copy's place and row: read with players numbered when the numbering
    /// had none, in place when it had.
    #[test]
    fn a_ticket_read_again_with_a_block_replaces_its_copy() {
        let modes = Modes::load(Some(MODES), Default::default()).unwrap();
        let mode = modes.get("duel").unwrap();
        let mut kept = Kept::default();
        kept.extend_read(
            vec![
                ticket(1, &["dust"], &[]),
                ticket(2, &["dust"], &[]),
                ticket(3, &["dust"], &[]),
            ],
            mode,
        );
        // p1 blocked p2 while all three waited: both read again.
        kept.extend(vec![
            ticket(2, &["dust"], &["p1"]),
            ticket(1, &["dust"], &["p2"]),
        ]);
        assert_eq!(kept.len(), 3);
        assert_eq!(kept.from(3).len(), 0, "no new ticket");
        let (a, b) = both(&mut kept, mode, usize::MAX);
        assert_eq!(a, b);
        assert_eq!(a.len(), 1);
        assert!(
            !a[0].members.contains(&0) || !a[0].members.contains(&1),
            "{a:?}"
        );
        assert!(kept.compiler.as_ref().unwrap().sees_people());
        // p3 blocked p1 and p2: its row is read again in place, and nobody meets.
        kept.extend(vec![ticket(3, &["dust"], &["p1", "p2"])]);
        assert_eq!(kept.rows.len(), 3);
        let (a, b) = both(&mut kept, mode, usize::MAX);
        assert_eq!(a, b);
        assert!(a.is_empty(), "{a:?}");
        assert_eq!(kept.named, 3 + 4);
    }

    #[test]
    fn kept_rows_read_as_fresh_ones_through_claims_matches_and_restarts() {
        let modes = Modes::load(Some(MODES), Default::default()).unwrap();
        let mode = modes.get("duel").unwrap();
        let mut kept = Kept::default();
        kept.extend(vec![
            ticket(1, &["dust"], &[]),
            ticket(2, &["harbor"], &[]),
            ticket(3, &["dust", "harbor"], &["p1"]),
        ]);
        let (a, b) = both(&mut kept, mode, usize::MAX);
        assert_eq!(a, b);
        // p3 blocked p1: p3 meets p2 on harbor, p1 is left.
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].chosen, vec![("maps".into(), "harbor".into())]);
        // The matched ones go; new ones come, one of them blocking p1 too.
        kept.retain(|c| c.ticket.id.as_str() == "t1");
        kept.extend(vec![
            ticket(4, &["dust"], &["p1"]),
            ticket(5, &["dust"], &[]),
        ]);
        let (a, b) = both(&mut kept, mode, usize::MAX);
        assert_eq!(a, b);
        assert_eq!(a.len(), 1);
        let mut ids: Vec<usize> = a[0].members.clone();
        ids.sort_unstable();
        // t1 and t5 (t4 blocked p1).
        assert_eq!(ids, vec![0, 2]);
        // A numbering worn out starts again and reads the same.
        let (a2, b2) = both(&mut kept, mode, 0);
        assert_eq!((a2, b2), (a, b));
        assert_eq!(kept.rows.len(), 3);
    }

    #[test]
    fn a_numbering_without_players_starts_again_when_a_block_list_comes() {
        let modes = Modes::load(Some(MODES), Default::default()).unwrap();
        let mode = modes.get("duel").unwrap();
        let mut kept = Kept::default();
        // Nobody blocks anyone: players are not numbered.
        kept.extend(vec![ticket(1, &["dust"], &[])]);
        let (a, b) = both(&mut kept, mode, usize::MAX);
        assert_eq!((a.len(), b.len()), (0, 0));
        assert!(!kept.compiler.as_ref().unwrap().worn(usize::MAX));
        // p2 blocked p1: read afresh with players numbered, the two never meet.
        kept.extend(vec![ticket(2, &["dust"], &["p1"])]);
        let (a, b) = both(&mut kept, mode, usize::MAX);
        assert_eq!(a, b);
        assert!(a.is_empty(), "{a:?}");
        assert!(!kept.compiler.as_ref().unwrap().worn(usize::MAX));
        // A third who blocks nobody meets one of them.
        kept.extend(vec![ticket(3, &["dust"], &[])]);
        let (a, b) = both(&mut kept, mode, usize::MAX);
        assert_eq!(a, b);
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn steps_read_as_they_are_claimed_read_as_the_whole_claim_would() {
        let modes = Modes::load(Some(MODES), Default::default()).unwrap();
        let mode = modes.get("duel").unwrap();
        let mut steps = Kept::default();
        steps.extend_read(
            vec![ticket(1, &["dust"], &[]), ticket(2, &["harbor"], &[])],
            mode,
        );
        assert_eq!(steps.rows.len(), 2, "read when claimed");
        // A later step brings a block list: the numbering starts again, with
        // players, and the earlier step is read again under it.
        steps.extend_read(vec![ticket(3, &["dust", "harbor"], &["p1"])], mode);
        assert_eq!(steps.rows.len(), 3);
        assert!(steps.compiler.as_ref().unwrap().sees_people());
        assert_eq!(steps.from(1).len(), 2);
        let mut whole = Kept::default();
        whole.extend(vec![
            ticket(1, &["dust"], &[]),
            ticket(2, &["harbor"], &[]),
            ticket(3, &["dust", "harbor"], &["p1"]),
        ]);
        let (a, fresh) = both(&mut steps, mode, usize::MAX);
        let (b, _) = both(&mut whole, mode, usize::MAX);
        assert_eq!((&a, &b), (&fresh, &fresh));
        // p3 blocked p1: p3 meets p2 on harbor.
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].chosen, vec![("maps".into(), "harbor".into())]);
    }
}
