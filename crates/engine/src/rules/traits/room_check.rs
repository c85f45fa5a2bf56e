//! What the roles' room check ([`super::super::room`]) reads of the traits:
//! the roles rule that keeps it, each entry's players as needed roles, a
//! match's counts as it grows, and the questions the search asks of them.

use super::{Column, Grown, Steps, Traits};
use crate::rules::config::Rule;
use crate::rules::room::Room;
use mm_domain::Millis;

/// The roles rule that keeps the room check: its number among the rules, the
/// rule, where each entry's players start in `masks`, the check, and each
/// player's accepted roles as needed roles.
struct RoomRule<'a> {
    k: usize,
    rule: &'a Rule,
    start: &'a [u32],
    room: &'a Room,
    masks: &'a [u8],
}

impl RoomRule<'_> {
    /// Entry `e`'s players' masks.
    fn of(&self, e: usize) -> &[u8] {
        &self.masks[self.start[e] as usize..self.start[e + 1] as usize]
    }
}

/// What [`Traits::room_masks`] gives.
pub(crate) struct RoomMasks<'a> {
    pub bits: usize,
    start: &'a [u32],
    masks: &'a [u8],
    pub relaxes_at: Millis,
}

impl RoomMasks<'_> {
    /// The needed roles entry `e`'s players accept, each player's set.
    pub fn of(&self, e: usize) -> &[u8] {
        &self.masks[self.start[e] as usize..self.start[e + 1] as usize]
    }
}

impl Traits {
    /// Adds entry `e`'s players to the match's counts for the room check.
    pub(super) fn count_roles(&self, g: &mut Grown, e: usize) {
        if let Some(r) = self.room_rule() {
            if g.room.is_empty() {
                r.room.clear(&mut g.room);
            }
            r.room.add(&mut g.room, r.of(e));
        }
    }

    /// Whether the match in state `g`, joined by entry `e` at `steps` with
    /// `remaining` players still to come, can still fill `teams` teams' roles
    /// (see [`super::room`]).
    pub(crate) fn roles_room(
        &self,
        g: &Grown,
        e: usize,
        steps: &Steps,
        remaining: usize,
        teams: usize,
    ) -> bool {
        self.room_rule().is_none_or(|r| {
            r.room
                .fits(steps.of(r.k, r.rule), &g.room, r.of(e), remaining, teams)
        })
    }

    /// The roles rule that keeps the room check, if there is one (a mode has
    /// at most one roles rule: see `config.rs`; its number is kept by
    /// [`Traits::make_plan`]).
    fn room_rule(&self) -> Option<RoomRule<'_>> {
        let k = self.room?;
        match &self.rules[k] {
            (
                rule,
                Column::Roles {
                    start,
                    room: Some((room, masks)),
                    ..
                },
            ) => Some(RoomRule {
                k,
                rule,
                start,
                room,
                masks,
            }),
            _ => None,
        }
    }

    /// The step of the roles rule that keeps the room check at `steps`; `None`
    /// without one (then every party fits a team's roles).
    pub(crate) fn room_step(&self, steps: &Steps) -> Option<usize> {
        self.room_rule().map(|r| steps.of(r.k, r.rule))
    }

    /// Whether entry `e`'s players, a party on one team of `team_size`, can
    /// each take a different place of it at the roles rule's step `step` (as
    /// [`Traits::room_step`] gives it; see [`Room::party_fits`]); true without
    /// a roles rule keeping the check.
    pub(crate) fn party_roles_fit_at(&self, e: usize, step: usize, team_size: usize) -> bool {
        self.room_rule()
            .is_none_or(|r| r.room.party_fits(step, r.of(e), team_size))
    }

    /// With a roles rule's room check: a set of needed roles (as in
    /// [`Traits::room_masks`]) one of which every player of the next entry to
    /// join the match in state `g` must accept, its longest wait `wait` and
    /// `remaining` players still to come. An entry whose wait reaches a later
    /// step of the rule may join regardless (the step, and the need, change).
    pub(crate) fn roles_tight(
        &self,
        g: &Grown,
        wait: Millis,
        remaining: usize,
        teams: usize,
    ) -> Option<u8> {
        let r = self.room_rule()?;
        r.room.tight(r.rule.step(wait), &g.room, remaining, teams)
    }

    /// Whether the team of `members` (entries) can fill its roles at `wait`,
    /// by the room check ([`Room::team_fits`]); `None` without a roles rule
    /// keeping one (then only assigning the roles tells).
    pub(crate) fn team_roles_fit(
        &self,
        members: impl Iterator<Item = usize>,
        wait: Millis,
    ) -> Option<bool> {
        let r = self.room_rule()?;
        let of = |e: usize| r.of(e).iter().copied();
        Some(r.room.team_fits(r.rule.step(wait), members.flat_map(of)))
    }

    /// [`Traits::team_roles_fit`] for every team of a split of `members`
    /// at `wait`, as [`crate::teams::Floors`]: each member's counts (added
    /// to `counts`) and the floor; `None` without a roles rule keeping the
    /// check, while it is off, or when it needs too many roles to pack.
    pub(crate) fn team_floors(
        &self,
        members: impl Iterator<Item = usize>,
        wait: Millis,
        counts: &mut impl Extend<u64>,
    ) -> Option<u64> {
        let r = self.room_rule()?;
        let step = r.rule.step(wait);
        let floor = r.room.floor(step)?;
        counts.extend(members.map(|e| r.room.counts(step, r.of(e))));
        Some(floor)
    }

    /// With a roles rule's room check: how many needed roles it numbers, each
    /// entry's players' sets of them (`start`, `masks`, as in the column), and
    /// the wait from which the rule leaves its first step.
    pub(crate) fn room_masks(&self) -> Option<RoomMasks<'_>> {
        let r = self.room_rule()?;
        Some(RoomMasks {
            bits: r.room.bits(),
            start: r.start,
            masks: r.masks,
            relaxes_at: r.rule.steps.get(1).map_or(Millis::MAX, |s| s.after),
        })
    }
}
