//! Where the rules enter the search ([`crate::rules`]): a candidate joins a
//! growing match only if it is in the match's partition (hard `equal` rules
//! split the pool), meets every group rule at the step the match's longest wait
//! allows, is on nobody's block list, and leaves room to fill the teams' roles
//! and balance their parties; a full match is split into teams that fill their
//! roles and have alike parties, and gets what the rules chose (a map, the
//! players' roles, each rule's step).

use super::Proposal;
use super::snapshot::{Group, Snapshot};
use crate::rules::Steps;
use crate::rules::roles::{self, Need};
use crate::teams::{self, Unit};
use mm_domain::Millis;
use smallvec::{SmallVec, smallvec};

/// A split of a match into teams: the team of each member and, under a
/// roles rule, the role (index into the rule's needs at the match's step) of
/// each player, the members' players one after another. What the rules
/// decided in words (the chosen values, the steps, the roles' names) is only
/// written out for the match taken ([`Snapshot::proposal`]): most splits are
/// looked at and dropped.
#[derive(Debug)]
pub(super) struct Split {
    pub team_of: Vec<usize>,
    pub roles: Option<Vec<usize>>,
}

impl Snapshot<'_> {
    /// Whether positions `a` and `b` are in one partition.
    pub(super) fn same_part(&self, a: usize, b: usize) -> bool {
        self.part.is_empty() || self.part[a] == self.part[b]
    }

    /// The wait of a match whose oldest member was queued at `oldest`.
    pub(super) fn wait_since(&self, oldest: Millis) -> Millis {
        self.now.saturating_sub(oldest)
    }

    /// The entries at positions `members`.
    fn orders<'m>(&'m self, members: &'m [usize]) -> impl Iterator<Item = usize> + 'm {
        members.iter().map(|&m| self.at[m].order as usize)
    }

    /// Whether position `c` may join group `g` under the rules.
    pub(super) fn rules_admit(&self, g: &Group, c: usize) -> bool {
        let wait = self.wait_since(g.oldest.min(self.since[c]));
        // Nearly always the group's own steps: `c` waited less than its oldest.
        let fresh;
        let steps = if g.steps.hold(wait) {
            &g.steps
        } else {
            fresh = self.traits.steps_at(wait);
            &fresh
        };
        (!self.tracks || self.traits.admits_at(&g.rules, c, steps)) && self.shape_room(g, c, steps)
    }

    /// Whether, with position `c` in it, group `g` can still be completed into
    /// teams that fill their roles and balance their parties (counting the
    /// players still to come as able to fill anything).
    fn shape_room(&self, g: &Group, c: usize, steps: &Steps) -> bool {
        let max = self.mode.max_players();
        let teams = self.mode.teams;
        let players = g.players + self.at[c].size();
        let remaining = max.saturating_sub(players);
        if self.tracks && !self.traits.roles_room(&g.rules, c, steps, remaining, teams) {
            return false;
        }
        if !self.party_has_places(c, steps) {
            return false;
        }
        if let Some(gap) = self.traits.party_gap_at(steps)
            && !parties_can_balance(
                &g.sizes,
                g.largest,
                self.at[c].size(),
                teams,
                gap,
                remaining,
            )
        {
            return false;
        }
        true
    }

    /// Whether the party at position `c` (a solo always) can take places of
    /// one team under the roles at `steps`, whoever else joins its team.
    /// Worked out once per party and step of the roles rule ([`PartyFit`]):
    /// a party is asked again by every growth that passes it.
    pub(super) fn party_has_places(&self, c: usize, steps: &Steps) -> bool {
        if !self.tracks || self.at[c].size() == 1 {
            return true;
        }
        let Some(step) = self.traits.room_step(steps) else {
            return true;
        };
        // Kept for every position when a match keeps rule state (`tracks`).
        let memo = &self.party_fit[c];
        memo.get(step).unwrap_or_else(|| {
            let fits = self.traits.party_roles_fit_at(c, step, self.mode.team_size);
            memo.set(step, fits);
            fits
        })
    }

    /// Splits group `g` into teams (balanced, roles filled, parties alike);
    /// `None` when no split meets the rules.
    pub(super) fn split(&self, g: &Group, units: &[Unit]) -> Option<Split> {
        let teams = g.players / self.mode.team_size;
        let wait = self.wait_since(g.oldest);
        let roles = self.traits.roles_at(wait);
        let gap = self.traits.party_gap(wait);
        let members = &g.members;
        let mut picked: Option<Vec<usize>> = None;
        let team_of = if roles.is_none() && gap.is_none() {
            teams::balance(units, teams, self.mode.team_size)?
        } else {
            // Most splits fail the roles: the search skips those whose teams
            // fail the room count before asking the closure below.
            let mut counts: SmallVec<[u64; 16]> = SmallVec::new();
            let floor = roles.as_ref().and_then(|_| {
                self.traits
                    .team_floors(members.iter().copied(), wait, &mut counts)
            });
            let floors = floor.map(|floor| teams::Floors {
                counts: &counts,
                floor,
            });
            teams::balance_with(
                units,
                teams,
                self.mode.team_size,
                floors,
                &mut |assign, floored| {
                    if let Some(gap) = gap
                        && !parties_alike(units, assign, teams, gap)
                    {
                        return false;
                    }
                    match &roles {
                        None => true,
                        // Most splits fail the roles: tell them by counting first
                        // (the floors count the same, when the split reached them).
                        Some(_)
                            if !floored
                                && !self.teams_may_fill_roles(members, assign, teams, wait) =>
                        {
                            false
                        }
                        Some(r) => match fill_roles(r.need, members, assign, teams, r) {
                            Some(per_player) => {
                                picked = Some(per_player);
                                true
                            }
                            None => false,
                        },
                    }
                },
            )?
        };
        Some(Split {
            team_of,
            roles: picked,
        })
    }

    /// Whether every team of the split `assign` of `members` passes the room
    /// count of its roles at `wait` (exact for full teams; true without one).
    fn teams_may_fill_roles(
        &self,
        members: &[usize],
        assign: &[usize],
        teams: usize,
        wait: Millis,
    ) -> bool {
        (0..teams).all(|t| {
            let team = members
                .iter()
                .zip(assign)
                .filter(move |&(_, &a)| a == t)
                .map(|(&m, _)| m);
            self.traits.team_roles_fit(team, wait) != Some(false)
        })
    }

    /// The proposal of group `g` split as `split`, with what the rules decided:
    /// the values chosen, each rule's step, each player's role.
    pub(super) fn proposal(&self, g: &Group, split: Split) -> Proposal {
        let wait = self.wait_since(g.oldest);
        let mut roles = Vec::new();
        if let (Some(r), Some(per_player)) = (self.traits.roles_at(wait), split.roles) {
            let mut of_player = per_player.into_iter();
            for (k, &m) in g.members.iter().enumerate() {
                for (i, role) in of_player.by_ref().take(r.of(m).len()).enumerate() {
                    roles.push((k, i, r.names[r.need[role].bit].clone()));
                }
            }
        }
        Proposal {
            members: self.orders(&g.members).collect(),
            teams: split.team_of,
            chosen: self
                .traits
                .chosen(&g.members, wait, seed(self.orders(&g.members))),
            steps: self.traits.steps(wait),
            roles,
        }
    }
}

/// Whether a party fits one team's roles ([`Snapshot::party_has_places`]),
/// kept for the roles rule's first eight steps: two bits a step, whether it
/// is known and whether the party fits.
#[derive(Debug, Default, Clone)]
pub(super) struct PartyFit(std::cell::Cell<u16>);

impl PartyFit {
    /// What is known at `step`.
    fn get(&self, step: usize) -> Option<bool> {
        let bits = self.0.get();
        (step < 8 && bits >> (2 * step) & 1 == 1).then(|| bits >> (2 * step + 1) & 1 == 1)
    }

    /// Keeps `fits` at `step` (nothing past the eighth step).
    fn set(&self, step: usize, fits: bool) {
        if step < 8 {
            let bits = self.0.get() | 1 << (2 * step) | u16::from(fits) << (2 * step + 1);
            self.0.set(bits);
        }
    }
}

/// A match's own number (from its entries) for breaking ties among equally
/// liked values.
fn seed(orders: impl Iterator<Item = usize>) -> u64 {
    orders.fold(0xCBF2_9CE4_8422_2325u64, |h, o| {
        (h ^ o as u64).wrapping_mul(0x0100_0000_01B3)
    })
}

/// Whether parties of `sizes` (the largest of them `largest`, 0 for none)
/// and one more of `extra` players (and `remaining` players still to come)
/// can make teams whose largest parties differ by at most `gap`: every team
/// but the one with the largest party needs a party of at least `largest -
/// gap` players. Without a party above `gap + 1` players, the sizes are not
/// read.
fn parties_can_balance(
    sizes: &[usize],
    largest: usize,
    extra: usize,
    teams: usize,
    gap: usize,
    remaining: usize,
) -> bool {
    debug_assert_eq!(largest, sizes.iter().copied().max().unwrap_or(0));
    let floor = largest.max(extra).saturating_sub(gap);
    if floor <= 1 {
        return true;
    }
    let big = sizes.iter().filter(|&&s| s >= floor).count() + usize::from(extra >= floor) - 1;
    big + remaining / floor >= teams - 1
}

/// Whether the split `assign` of `units` into `teams` has alike parties: the
/// largest parties of any two teams differ by at most `gap` players.
fn parties_alike(units: &[Unit], assign: &[usize], teams: usize, gap: usize) -> bool {
    let mut largest: SmallVec<[usize; 8]> = smallvec![0; teams];
    for (u, &t) in units.iter().zip(assign) {
        largest[t] = largest[t].max(u.size);
    }
    let hi = largest.iter().max().copied().unwrap_or(0);
    let lo = largest.iter().min().copied().unwrap_or(0);
    hi - lo <= gap
}

/// Each team's roles, if every team of the split `assign` can fill its needs:
/// the role (index into `need`) of each player, the players of `members`
/// one after another.
fn fill_roles(
    need: &[Need],
    members: &[usize],
    assign: &[usize],
    teams: usize,
    roles: &crate::rules::RolesAt<'_>,
) -> Option<Vec<usize>> {
    let players: usize = members.iter().map(|&m| roles.of(m).len()).sum();
    let mut out = vec![0; players];
    // One team's players' sets, where each goes in `out`, and their roles (on
    // the stack for teams of up to 16: the split asks this of many).
    let mut sets: SmallVec<[u16; 16]> = SmallVec::new();
    let mut at: SmallVec<[usize; 16]> = SmallVec::new();
    let mut got: SmallVec<[usize; 16]> = SmallVec::new();
    for t in 0..teams {
        sets.clear();
        at.clear();
        let mut next = 0;
        for (&m, &team) in members.iter().zip(assign) {
            let of = roles.of(m);
            if team == t {
                // A solo's one set: a push, not a call to copy memory.
                if let [one] = of {
                    sets.push(*one);
                    at.push(next);
                } else {
                    sets.extend_from_slice(of);
                    at.extend(next..next + of.len());
                }
            }
            next += of.len();
        }
        got.clear();
        got.resize(sets.len(), 0);
        if !roles::assign_into(&sets, need, &mut got) {
            return None;
        }
        for (&role, &k) in got.iter().zip(&at) {
            out[k] = role;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`parties_can_balance`], its largest worked out.
    fn can(sizes: &[usize], extra: usize, teams: usize, gap: usize, remaining: usize) -> bool {
        let largest = sizes.iter().copied().max().unwrap_or(0);
        parties_can_balance(sizes, largest, extra, teams, gap, remaining)
    }

    #[test]
    fn a_party_fit_is_kept_step_by_step() {
        let fit = PartyFit::default();
        assert_eq!(fit.get(0), None);
        fit.set(0, true);
        fit.set(3, false);
        fit.set(7, true);
        assert_eq!(fit.get(0), Some(true));
        assert_eq!(fit.get(3), Some(false));
        assert_eq!(fit.get(7), Some(true));
        // Steps not asked about stay unknown; past the eighth, nothing is kept.
        assert_eq!(fit.get(1), None);
        assert_eq!(fit.get(4), None);
        fit.set(8, true);
        assert_eq!(fit.get(8), None);
        assert_eq!(fit.get(0), Some(true));
    }

    #[test]
    fn a_five_stack_needs_a_big_party_on_the_other_side() {
        // A five-stack and room for five more: they could be a four-stack.
        assert!(can(&[], 5, 2, 1, 5));
        // A five-stack and five solos: never alike.
        assert!(!can(&[5, 1, 1, 1, 1], 1, 2, 1, 0));
        assert!(!can(&[5, 1], 1, 2, 1, 3));
        assert!(can(&[5, 4], 1, 2, 1, 0));
        // With a gap of 3, a pair is enough.
        assert!(can(&[5, 2, 1, 1], 1, 2, 3, 0));
        let u = |size| Unit {
            size,
            rating: 1500.0,
        };
        let units = [u(5), u(4), u(1)];
        assert!(parties_alike(&units, &[0, 1, 1], 2, 1));
        assert!(!parties_alike(&units, &[0, 0, 1], 2, 1) || units[0].size + units[1].size > 5);
    }
}
