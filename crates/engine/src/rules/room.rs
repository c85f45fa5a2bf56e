//! Whether a growing match can still fill its teams' roles, checked as each
//! ticket joins: Hall's condition over the roles its step needs. For every set
//! of needed roles, the players who accept at least one of them, plus the
//! players still to come (who may accept anything), must be at least as many
//! as the set's slots over all teams. Counting each role alone is not enough:
//! two players who each accept tank and healer pass "two tanks, two healers"
//! role by role but fill only two of the four slots.
//!
//! And a party plays on one team: for every role each team needs, the match
//! needs a ticket with a player who takes it per team, so the tickets with
//! one, plus the players still to come (at most as many tickets), must be at
//! least the teams. Without it, a pair who both take tank passed for both
//! teams' tanks and the match was found not to split only once full.
//!
//! Up to [`ROOM_ROLES`] needed roles are checked this way (a match keeps, for
//! each set of them, how many of its players accept one); a mode needing more
//! distinct roles is left to the team split, which assigns roles exactly.
//!
//! With up to three needed roles (a tank, a healer and damage), the counts fit
//! sixteen lanes ([`Lanes`]): what a ticket adds to each is looked up by its
//! players' sets of roles, and each check is one pass over the sixteen that
//! the compiler does a few lanes at a time. The check runs for nearly every
//! candidate a ruled search looks at: counted set by set, it was about a fifth
//! of a ruled cycle's instructions.

use super::roles::Need;

/// Lanes of the packed counts (see [`Lanes`]).
const LANES: usize = 16;

/// Most distinct needed roles the check keeps sets for (2^8 counts per match).
pub const ROOM_ROLES: usize = 8;

/// The needed roles of a `roles` rule, numbered `0..bits` over all its steps,
/// and per step the slots (per team) of every set of them.
#[derive(Debug, Clone)]
pub(crate) struct Room {
    /// For each role bit of the rule's names, its number among the needed roles.
    number: Vec<Option<u8>>,
    /// How many needed roles (sets are `1..1 << bits`).
    bits: usize,
    /// Per step: each set of the roles needed there, with its slots per team
    /// (`None`: the rule is off).
    demands: Vec<Option<Vec<(u8, u16)>>>,
    /// The same counts in sixteen lanes, when they fit (three needed roles
    /// at most); boxed, as its tables are far bigger than the rest.
    lanes: Option<Box<Lanes>>,
    /// Per step, what one player of each set of needed roles counts for
    /// [`Room::floor`] (see [`Room::counts`]), where the step has at most
    /// eight sets of roles to count; `None` where it has more or is off.
    packed: Vec<Option<Box<[u64]>>>,
}

/// The room check's counts in [`LANES`] lanes, for a rule of at most three
/// needed roles: lane `s` (1..8) counts the players who accept one of the
/// roles of set `s`, lane `8 + k` the tickets with a player who accepts role
/// `k`, the rest stay 0.
#[derive(Debug, Clone)]
struct Lanes {
    /// Per set of needed roles `m`: what one player of set `m` adds to the
    /// set lanes, to the role lanes, and to both (a solo ticket).
    sets: [[u16; LANES]; 8],
    roles: [[u16; LANES]; 8],
    solo: [[u16; LANES]; 8],
    /// Per step, the least of each lane per team (a set's slots; 1 for a role
    /// each team needs a ticket for; 0 where nothing is asked) and the set of
    /// every needed role; `None` where the rule is off.
    floors: Vec<Option<([u16; LANES], u8)>>,
}

impl Lanes {
    fn new(bits: usize, demands: &[Option<Vec<(u8, u16)>>]) -> Option<Self> {
        if bits > 3 {
            return None;
        }
        let (mut sets, mut roles) = ([[0u16; LANES]; 8], [[0u16; LANES]; 8]);
        for (m, (set_row, role_row)) in sets.iter_mut().zip(&mut roles).enumerate().take(1 << bits)
        {
            for (s, n) in set_row.iter_mut().enumerate().take(1 << bits).skip(1) {
                *n = u16::from(s & m != 0);
            }
            for (k, n) in role_row[8..8 + bits].iter_mut().enumerate() {
                *n = u16::from(m >> k & 1 == 1);
            }
        }
        let mut solo = sets;
        for (row, role) in solo.iter_mut().zip(&roles) {
            for (n, r) in row.iter_mut().zip(role) {
                *n += r;
            }
        }
        let floors = demands
            .iter()
            .map(|step| {
                step.as_ref().map(|demands| {
                    let mut floor = [0u16; LANES];
                    for &(s, slots) in demands {
                        floor[usize::from(s)] = slots;
                    }
                    for k in Room::singles(demands) {
                        floor[8 + k] = 1;
                    }
                    (floor, demands.iter().fold(0u8, |all, &(s, _)| all | s))
                })
            })
            .collect();
        Some(Lanes {
            sets,
            roles,
            solo,
            floors,
        })
    }

    /// What a ticket of players `masks` adds to each lane.
    fn joining(&self, masks: &[u8]) -> [u16; LANES] {
        if let [m] = masks {
            return self.solo[usize::from(*m)];
        }
        let mut out = [0u16; LANES];
        let mut any = 0u8;
        for &m in masks {
            for (n, &r) in out.iter_mut().zip(&self.sets[usize::from(m)]) {
                *n += r;
            }
            any |= m;
        }
        for (n, &r) in out.iter_mut().zip(&self.roles[usize::from(any)]) {
            *n += r;
        }
        out
    }

    /// Per lane, whether `counts` and `extra` and the players still to come
    /// reach the floor for `teams` teams; no lane skipped, so that the
    /// compiler may check several at once.
    fn reach(
        floor: &[u16; LANES],
        counts: &[u16; LANES],
        extra: &[u16; LANES],
        remaining: u32,
        teams: u32,
    ) -> bool {
        let mut ok = true;
        for l in 0..LANES {
            ok &= u32::from(counts[l]) + u32::from(extra[l]) + remaining
                >= teams * u32::from(floor[l]);
        }
        ok
    }
}

impl Room {
    /// The room check for a rule with these needs per step, over `roles`
    /// named roles; `None` when more than [`ROOM_ROLES`] roles are needed.
    pub(crate) fn new(roles: usize, needs: &[Option<Vec<Need>>]) -> Option<Self> {
        let mut number = vec![None; roles.max(1)];
        let mut bits = 0usize;
        for need in needs.iter().flatten().flatten() {
            if !need.any && need.count > 0 && number.get(need.bit).is_some_and(Option::is_none) {
                if bits == ROOM_ROLES {
                    return None;
                }
                number[need.bit] = Some(bits as u8);
                bits += 1;
            }
        }
        let demands: Vec<Option<Vec<(u8, u16)>>> = needs
            .iter()
            .map(|step| {
                step.as_ref().map(|need| {
                    // Slots per team of each needed role, by its number.
                    let mut per = [0u16; ROOM_ROLES];
                    let mut mask = 0u32;
                    for n in need.iter().filter(|n| !n.any && n.count > 0) {
                        if let Some(Some(k)) = number.get(n.bit) {
                            per[usize::from(*k)] += n.count as u16;
                            mask |= 1 << k;
                        }
                    }
                    (1u32..1 << bits)
                        .filter(|s| s & !mask == 0)
                        .map(|s| {
                            let slots = (0..bits).filter(|k| s >> k & 1 == 1).map(|k| per[k]);
                            (s as u8, slots.sum())
                        })
                        .collect()
                })
            })
            .collect();
        let packed = demands
            .iter()
            .map(|step| {
                let demands = step.as_ref().filter(|d| d.len() <= 8)?;
                Some(
                    (0..1u32 << bits)
                        .map(|m| Self::packed_counts(demands, &[m as u8]))
                        .collect(),
                )
            })
            .collect();
        Some(Room {
            number,
            bits,
            lanes: Lanes::new(bits, &demands).map(Box::new),
            demands,
            packed,
        })
    }

    /// A player's accepted roles (bit set over the rule's names) as a set of
    /// needed roles.
    pub(crate) fn mask(&self, set: u16) -> u8 {
        let mut out = 0u8;
        for (bit, k) in self.number.iter().enumerate() {
            if let Some(k) = k
                && set >> bit & 1 == 1
            {
                out |= 1 << k;
            }
        }
        out
    }

    /// [`Room::mask`] of each of `sets` (every player of a pool, each cycle):
    /// looked up in a table of every set of the rule's roles when they are
    /// at most twelve.
    pub(crate) fn masks(&self, sets: &[u16]) -> Vec<u8> {
        let roles = self.number.len();
        if roles > 12 {
            return sets.iter().map(|&set| self.mask(set)).collect();
        }
        let table: Vec<u8> = (0..1u16 << roles).map(|set| self.mask(set)).collect();
        sets.iter()
            .map(|&set| match table.get(usize::from(set)) {
                Some(&mask) => mask,
                None => self.mask(set),
            })
            .collect()
    }

    /// Fresh counts for an empty match: for each set of needed roles, the
    /// players who accept one of them (`1 << bits` counts), then for each
    /// needed role, the tickets with a player who accepts it (`bits` more).
    /// (In [`Lanes`]' layout when the rule has them: [`LANES`] counts.)
    pub(crate) fn clear(&self, counts: &mut Vec<u16>) {
        counts.clear();
        let len = match self.lanes {
            Some(_) => LANES,
            None => (1 << self.bits) + self.bits,
        };
        counts.resize(len, 0);
    }

    /// Counts one ticket, its players' `masks`, into `counts`.
    pub(crate) fn add(&self, counts: &mut [u16], masks: &[u8]) {
        if let (Some(lanes), Ok(counts)) =
            (&self.lanes, <&mut [u16; LANES]>::try_from(&mut *counts))
        {
            let joining = lanes.joining(masks);
            for (n, j) in counts.iter_mut().zip(joining) {
                *n += j;
            }
            return;
        }
        let sets = 1 << self.bits;
        for &m in masks.iter().filter(|&&m| m != 0) {
            for (s, n) in counts[..sets].iter_mut().enumerate().skip(1) {
                *n += u16::from(s as u8 & m != 0);
            }
        }
        let any = masks.iter().fold(0u8, |all, &m| all | m);
        for (k, n) in counts[sets..].iter_mut().enumerate() {
            *n += u16::from(any >> k & 1);
        }
    }

    /// The needed roles at a step that every team needs a player of: each
    /// team must have its own ticket with such a player (a party plays on
    /// one team), so a match needs `teams` tickets with one.
    fn singles(demands: &[(u8, u16)]) -> impl Iterator<Item = usize> + '_ {
        demands
            .iter()
            .filter(|&&(s, slots)| s.count_ones() == 1 && slots > 0)
            .map(|&(s, _)| s.trailing_zeros() as usize)
    }

    /// Whether one team of exactly the players of `masks` can fill its roles
    /// at `step`: exact for a full team (Hall's theorem), and allocation-free,
    /// for trying the many splits of a match before assigning the roles of one.
    pub(crate) fn team_fits(&self, step: usize, masks: impl Iterator<Item = u8>) -> bool {
        let Some(Some(demands)) = self.demands.get(step) else {
            return true;
        };
        let mut counts = [0u16; 1 << ROOM_ROLES];
        let counts = &mut counts[..1 << self.bits];
        for m in masks.filter(|&m| m != 0) {
            for (s, n) in counts.iter_mut().enumerate().skip(1) {
                *n += u16::from(s as u8 & m != 0);
            }
        }
        demands
            .iter()
            .all(|&(s, slots)| counts[usize::from(s)] >= slots)
    }

    /// [`Room::team_fits`] at `step` as floors on packed counts (see
    /// [`crate::teams::Floors`]): the least of each lane, lane `k` counting
    /// the players who accept one of the `k`th set of needed roles; `None`
    /// when the rule is off there or has more than eight such sets (more than
    /// three needed roles) or a set more than 127 slots.
    pub(crate) fn floor(&self, step: usize) -> Option<u64> {
        let Some(Some(demands)) = self.demands.get(step) else {
            return None;
        };
        (demands.len() <= 8 && demands.iter().all(|&(_, slots)| slots < 128)).then(|| {
            demands
                .iter()
                .enumerate()
                .fold(0, |floor, (k, &(_, slots))| {
                    floor | u64::from(slots) << (8 * k)
                })
        })
    }

    /// One ticket's counts for [`Room::floor`] at `step`, its players'
    /// `masks` (fewer than 128 players): a look-up per player (the team split
    /// asks it of every member of every match it splits).
    pub(crate) fn counts(&self, step: usize, masks: &[u8]) -> u64 {
        if let Some(Some(per)) = self.packed.get(step) {
            return masks.iter().map(|&m| per[usize::from(m)]).sum();
        }
        match self.demands.get(step) {
            Some(Some(demands)) => Self::packed_counts(demands, masks),
            _ => 0,
        }
    }

    /// [`Room::counts`] counted: for the `k`th set of `demands`, in lane `k`,
    /// how many of the players of `masks` accept one of its roles.
    fn packed_counts(demands: &[(u8, u16)], masks: &[u8]) -> u64 {
        demands.iter().enumerate().fold(0, |out, (k, &(s, _))| {
            let n = masks.iter().filter(|&&m| m & s != 0).count() as u64;
            out | n << (8 * k)
        })
    }

    /// Whether the players of `masks`, one party and so on one team of
    /// `team_size`, can each take a different place of that team at `step`
    /// (Hall's condition on the party's side: for every set of needed roles,
    /// the players who accept none outside it are no more than its slots plus
    /// the places no role claims). A party of four who only play damage fits
    /// no team that needs a tank, a healer and three damage players, whoever
    /// else joins it.
    pub(crate) fn party_fits(&self, step: usize, masks: &[u8], team_size: usize) -> bool {
        let Some(Some(demands)) = self.demands.get(step) else {
            return true;
        };
        let every = demands.iter().fold(0u8, |all, &(s, _)| all | s);
        let claimed = demands
            .iter()
            .find(|&&(s, _)| s == every)
            .map_or(0, |&(_, slots)| usize::from(slots));
        let free = team_size.saturating_sub(claimed);
        let within = |s: u8| masks.iter().filter(|&&m| m & every & !s == 0).count();
        within(0) <= free
            && demands
                .iter()
                .all(|&(s, slots)| within(s) <= usize::from(slots) + free)
    }

    /// How many needed roles the check numbers (role masks are below `1 << bits`).
    pub(crate) fn bits(&self) -> usize {
        self.bits
    }

    /// A set of needed roles that every player of the next ticket to join a
    /// match with `counts` and `remaining` players still to come (before it
    /// joins) must accept one of, at `step`: a set whose slots only the
    /// players still to come can fill, so each of them must help fill it
    /// (of several, the one with the fewest roles). `None` when any player
    /// may join. A ticket none of whose players accepts one of these roles
    /// fails [`Room::fits`], whatever its size. The set of every needed role
    /// is left out: when the roles take every place it is always this tight,
    /// and says no more than "a player who takes some needed role".
    pub(crate) fn tight(
        &self,
        step: usize,
        counts: &[u16],
        remaining: usize,
        teams: usize,
    ) -> Option<u8> {
        if let (Some(lanes), Ok(counts)) = (&self.lanes, <&[u16; LANES]>::try_from(counts)) {
            let (floor, every) = lanes.floors.get(step)?.as_ref()?;
            // The lanes that only the players still to come can fill (every
            // lane compared, no branch, so that several go at once).
            let (remaining, teams) = (remaining as u32, teams as u32);
            let mut tight = 0u32;
            for (l, (&c, &f)) in counts.iter().zip(floor).enumerate() {
                let short = (f > 0) & (u32::from(c) + remaining <= teams * u32::from(f));
                tight |= u32::from(short) << l;
            }
            if tight >> 8 != 0 {
                return Some(1 << (tight >> 8).trailing_zeros());
            }
            // Of the sets, the one with the fewest roles, the first on a tie.
            let mut sets = tight & 0xFE & !(1 << every);
            let mut best: Option<u8> = None;
            while sets != 0 {
                let s = sets.trailing_zeros() as u8;
                if best.is_none_or(|b| s.count_ones() < b.count_ones()) {
                    best = Some(s);
                }
                sets &= sets - 1;
            }
            return best;
        }
        let Some(Some(demands)) = self.demands.get(step) else {
            return None;
        };
        // A role too few tickets bring for every team to have one: the next
        // ticket must bring it (the players still to come are at most as
        // many tickets).
        let tickets = &counts[1 << self.bits..];
        if let Some(k) =
            Self::singles(demands).find(|&k| usize::from(tickets[k]) + remaining <= teams)
        {
            return Some(1 << k);
        }
        let every = demands.iter().fold(0u8, |all, &(s, _)| all | s);
        demands
            .iter()
            .filter(|&&(s, slots)| {
                s != every
                    && usize::from(counts[usize::from(s)]) + remaining <= teams * usize::from(slots)
            })
            .min_by_key(|&&(s, _)| s.count_ones())
            .map(|&(s, _)| s)
    }

    /// Whether a match with `counts`, joined by players of `masks`, with
    /// `remaining` players still to come, can fill `teams` teams' roles at
    /// `step`.
    pub(crate) fn fits(
        &self,
        step: usize,
        counts: &[u16],
        masks: &[u8],
        remaining: usize,
        teams: usize,
    ) -> bool {
        if let (Some(lanes), Ok(counts)) = (&self.lanes, <&[u16; LANES]>::try_from(counts)) {
            let Some(Some((floor, _))) = lanes.floors.get(step) else {
                return true;
            };
            return Lanes::reach(
                floor,
                counts,
                &lanes.joining(masks),
                remaining as u32,
                teams as u32,
            );
        }
        let Some(Some(demands)) = self.demands.get(step) else {
            return true;
        };
        let any = masks.iter().fold(0u8, |all, &m| all | m);
        let tickets = &counts[1 << self.bits..];
        Self::singles(demands)
            .all(|k| usize::from(tickets[k]) + usize::from(any >> k & 1) + remaining >= teams)
            && demands.iter().all(|&(s, slots)| {
                let joining = masks.iter().filter(|&&m| m & s != 0).count();
                usize::from(counts[usize::from(s)]) + joining + remaining
                    >= teams * usize::from(slots)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(bit: usize, count: usize) -> Need {
        Need {
            bit,
            count,
            any: false,
        }
    }

    /// Tank (bit 0), healer (1), damage (2): one, one and three per team.
    fn five() -> Room {
        Room::new(3, &[Some(vec![need(0, 1), need(1, 1), need(2, 3)])]).unwrap()
    }

    #[test]
    fn two_flexible_players_do_not_fill_four_slots() {
        let room = five();
        let flex = room.mask(0b111);
        let damage = room.mask(0b100);
        let mut counts = Vec::new();
        room.clear(&mut counts);
        room.add(&mut counts, &[flex, flex]);
        room.add(&mut counts, &[damage; 6]);
        // Two flexible and six damage-only players in, one more to come: a
        // damage-only player leaves three for the four tank and healer slots,
        // though each role alone would count three for its two.
        assert!(!room.fits(0, &counts, &[damage], 1, 2));
        // A tank makes it four.
        assert!(room.fits(0, &counts, &[room.mask(0b001)], 1, 2));
        // With two still to come, anyone may join.
        assert!(room.fits(0, &counts, &[damage], 2, 2));
    }

    #[test]
    fn a_party_must_find_places_in_one_team() {
        let room = five();
        let (damage, tank, healer) = (room.mask(0b100), room.mask(0b001), room.mask(0b010));
        // Three damage players take the three damage places.
        assert!(room.party_fits(0, &[damage; 3], 5));
        // A fourth has no place left: the tank and healer places are not theirs.
        assert!(!room.party_fits(0, &[damage; 4], 5));
        // Two tanks cannot both tank one team.
        assert!(!room.party_fits(0, &[tank, tank], 5));
        assert!(room.party_fits(0, &[tank, healer, damage, damage, damage], 5));
        assert!(room.party_fits(0, &[tank | damage, tank], 5));
        // A player who takes no needed role fits only where a place is free.
        assert!(!room.party_fits(0, &[0, damage], 5));
        let roomy = Room::new(3, &[Some(vec![need(0, 1), need(1, 1)])]).unwrap();
        assert!(roomy.party_fits(0, &[0, 0, 0, tank, healer], 5));
        assert!(!roomy.party_fits(0, &[0, 0, 0, 0, tank], 5));
    }

    proptest::proptest! {
        /// The packed counts reach the floor in every lane exactly when the
        /// team fits (what the team split counts on to skip splits).
        #[test]
        fn packed_counts_reach_the_floor_when_the_team_fits(
            team in proptest::collection::vec(0u16..8, 0..=7),
            per_unit in 1usize..=3,
            relaxed in proptest::bool::ANY,
        ) {
            // The same rule with a second step where the healer is "any".
            let mut healer = need(1, 1);
            healer.any = true;
            let room = Room::new(3, &[
                Some(vec![need(0, 1), need(1, 1), need(2, 3)]),
                Some(vec![need(0, 1), healer, need(2, 3)]),
            ]).unwrap();
            let step = usize::from(relaxed);
            let masks: Vec<u8> = team.iter().map(|&set| room.mask(set)).collect();
            let floor = room.floor(step).expect("eight sets at most");
            // Counted a ticket (of up to three players) at a time, as the split does.
            let sum: u64 = masks.chunks(per_unit).map(|m| room.counts(step, m)).sum();
            let reaches = (0..8).all(|k| sum >> (8 * k) & 0xFF >= floor >> (8 * k) & 0xFF);
            proptest::prop_assert_eq!(reaches, room.team_fits(step, masks.iter().copied()));
        }
    }

    #[test]
    fn masks_are_looked_up_as_counted() {
        let room = five();
        // Every set of the three roles, and sets naming a role past them.
        let sets: Vec<u16> = (0..16).collect();
        let masks = room.masks(&sets);
        for (&set, &mask) in sets.iter().zip(&masks) {
            assert_eq!(mask, room.mask(set), "set {set:b}");
        }
        assert_ne!(masks[0b111], 0);
    }

    #[test]
    fn the_last_slots_name_the_roles_a_joiner_must_take() {
        let room = five();
        let (damage, tank) = (room.mask(0b100), room.mask(0b001));
        let healer = room.mask(0b010);
        let mut counts = Vec::new();
        room.clear(&mut counts);
        room.add(&mut counts, &[damage; 5]);
        // Five damage-only players in, five to come: any of them may join.
        assert_eq!(room.tight(0, &counts, 5, 2), None);
        room.add(&mut counts, &[damage; 1]);
        // Four to come for two tanks and two healers: each must take one.
        let set = room.tight(0, &counts, 4, 2).expect("tight");
        assert_eq!(set, tank | healer);
        assert!(!room.fits(0, &counts, &[damage], 3, 2));
        room.add(&mut counts, &[tank, tank]);
        // Two to come for two healers: only healers.
        assert_eq!(room.tight(0, &counts, 2, 2), Some(healer));
        for m in [damage, tank, tank | damage] {
            assert!(!room.fits(0, &counts, &[m], 1, 2));
        }
        assert!(room.fits(0, &counts, &[healer], 1, 2));
    }

    #[test]
    fn each_team_needs_its_own_ticket_for_a_role() {
        let room = five();
        let (damage, tank, healer) = (room.mask(0b100), room.mask(0b001), room.mask(0b010));
        let mut counts = Vec::new();
        room.clear(&mut counts);
        // A pair who both take tank is one ticket: it tanks one team.
        room.add(&mut counts, &[tank | damage, tank | damage]);
        for m in [healer, healer, damage, damage, damage, damage, damage] {
            room.add(&mut counts, &[m]);
        }
        // Nine players in, two of them able to tank, one to come: it must.
        assert_eq!(room.tight(0, &counts, 1, 2), Some(tank));
        assert!(!room.fits(0, &counts, &[damage], 0, 2));
        assert!(room.fits(0, &counts, &[tank], 0, 2));
        // Two solos able to tank would do.
        room.clear(&mut counts);
        for m in [tank | damage, tank | damage, healer, healer] {
            room.add(&mut counts, &[m]);
        }
        for _ in 0..5 {
            room.add(&mut counts, &[damage]);
        }
        assert_ne!(room.tight(0, &counts, 1, 2), Some(tank));
        assert!(room.fits(0, &counts, &[damage], 0, 2));
    }

    #[test]
    fn relaxed_roles_and_off_steps_need_nothing() {
        let any_tank = Need {
            bit: 0,
            count: 1,
            any: true,
        };
        let room = Room::new(
            3,
            &[
                Some(vec![need(0, 1), need(1, 1), need(2, 3)]),
                Some(vec![any_tank, need(1, 1), need(2, 3)]),
                None,
            ],
        )
        .unwrap();
        let damage = room.mask(0b100);
        let mut counts = Vec::new();
        room.clear(&mut counts);
        room.add(&mut counts, &[damage; 9]);
        assert!(!room.fits(0, &counts, &[damage], 0, 2));
        // A tank may be anyone, but the healers are still missing.
        assert!(!room.fits(1, &counts, &[damage], 0, 2));
        assert!(room.fits(2, &counts, &[damage], 0, 2));
        let healer = room.mask(0b010);
        room.clear(&mut counts);
        for m in [damage; 7].into_iter().chain([healer; 2]) {
            room.add(&mut counts, &[m]);
        }
        assert!(room.fits(1, &counts, &[damage], 0, 2));
        assert!(!room.fits(0, &counts, &[damage], 0, 2));
    }

    #[test]
    fn too_many_roles_are_left_to_the_split() {
        let many: Vec<Need> = (0..=ROOM_ROLES).map(|b| need(b, 1)).collect();
        assert!(Room::new(ROOM_ROLES + 1, &[Some(many)]).is_none());
    }

    proptest::proptest! {
        /// The lanes count, admit and name the tight set as counting set by
        /// set does (the check for more than three roles, here made to serve
        /// three), for solos and parties, at a strict, a relaxed and an off
        /// step, with two and three needed roles.
        #[test]
        fn the_lanes_agree_with_counting_set_by_set(
            inside in proptest::collection::vec(proptest::collection::vec(0u16..8, 1..=3), 0..8),
            joining in proptest::collection::vec(0u16..8, 1..=4),
            remaining in 0usize..10,
            teams in 1usize..4,
            step in 0usize..3,
            two_roles in proptest::bool::ANY,
        ) {
            let mut healer = need(1, 1);
            healer.any = true;
            let room = if two_roles {
                Room::new(3, &[
                    Some(vec![need(0, 1), need(1, 2)]),
                    Some(vec![need(0, 2), healer]),
                    None,
                ]).unwrap()
            } else {
                Room::new(3, &[
                    Some(vec![need(0, 1), need(1, 2), need(2, 3)]),
                    Some(vec![need(0, 1), healer, need(2, 2)]),
                    None,
                ]).unwrap()
            };
            proptest::prop_assert!(room.lanes.is_some());
            let mut by_sets = room.clone();
            by_sets.lanes = None;
            let (mut counts, mut counted) = (Vec::new(), Vec::new());
            room.clear(&mut counts);
            by_sets.clear(&mut counted);
            for ticket in &inside {
                let masks: Vec<u8> = ticket.iter().map(|&s| room.mask(s)).collect();
                room.add(&mut counts, &masks);
                by_sets.add(&mut counted, &masks);
            }
            // Lane s for set s, lane 8 + k for role k; the rest stay 0.
            let sets = 1 << room.bits;
            let mut laid = [0u16; LANES];
            laid[..sets].copy_from_slice(&counted[..sets]);
            laid[8..8 + room.bits].copy_from_slice(&counted[sets..]);
            proptest::prop_assert_eq!(&counts[..], &laid[..]);
            let masks: Vec<u8> = joining.iter().map(|&s| room.mask(s)).collect();
            proptest::prop_assert_eq!(
                room.fits(step, &counts, &masks, remaining, teams),
                by_sets.fits(step, &counted, &masks, remaining, teams)
            );
            proptest::prop_assert_eq!(
                room.tight(step, &counts, remaining, teams),
                by_sets.tight(step, &counted, remaining, teams)
            );
        }
    }

    proptest::proptest! {
        /// A ticket none of whose players takes a role of the tight set never
        /// fits, whatever its size and the match so far.
        #[test]
        fn a_tight_set_is_necessary(
            counts_in in proptest::collection::vec(0u16..8, 0..10),
            joining in proptest::collection::vec(0u16..8, 1..4),
            remaining in 0usize..10,
            teams in 1usize..3,
        ) {
            let room = five();
            let mut counts = Vec::new();
            room.clear(&mut counts);
            let inside: Vec<u8> = counts_in.iter().map(|&s| room.mask(s)).collect();
            room.add(&mut counts, &inside);
            let masks: Vec<u8> = joining.iter().map(|&s| room.mask(s)).collect();
            proptest::prop_assume!(remaining >= masks.len());
            if let Some(set) = room.tight(0, &counts, remaining, teams)
                && masks.iter().all(|&m| m & set == 0)
            {
                proptest::prop_assert!(
                    !room.fits(0, &counts, &masks, remaining - masks.len(), teams)
                );
            }
        }

        /// For one team whose players are all in, the check is exact: it
        /// passes exactly when the roles can be assigned (Hall's theorem).
        #[test]
        fn exact_for_a_full_team(
            needs in proptest::collection::vec((0usize..3, proptest::bool::weighted(0.2)), 3),
            sets in proptest::collection::vec(0u16..8, 9),
        ) {
            let need: Vec<Need> = needs
                .iter()
                .enumerate()
                .map(|(bit, &(count, any))| Need { bit, count, any })
                .collect();
            let slots: usize = need.iter().map(|n| n.count).sum();
            proptest::prop_assume!(slots > 0);
            let players = &sets[..slots];
            let room = Room::new(3, &[Some(need.clone())]).unwrap();
            let masks: Vec<u8> = players.iter().map(|&s| room.mask(s)).collect();
            let mut counts = Vec::new();
            room.clear(&mut counts);
            room.add(&mut counts, &masks[..slots - 1]);
            let fits = room.fits(0, &counts, &masks[slots - 1..], 0, 1);
            let assigned = super::super::roles::assign(players, &need).is_some();
            proptest::prop_assert_eq!(fits, assigned);
            proptest::prop_assert_eq!(room.team_fits(0, masks.iter().copied()), assigned);
        }
    }
}
