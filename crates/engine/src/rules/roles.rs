//! Filling a team's roles: each player lists the roles they accept, the team
//! needs so many of each, and every player gets exactly one. A small bipartite
//! matching of players to the team's needs, each need taking as many players
//! as it counts (Kuhn's augmenting paths over the needs, a need with room
//! taken before any player is moved), checked against brute force by a
//! property test.

use smallvec::{SmallVec, smallvec};

/// One role a team needs: its bit in the players' sets, how many players, and
/// whether anyone may fill it (relaxed to "any").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    pub bit: usize,
    pub count: usize,
    pub any: bool,
}

impl Need {
    /// Whether a player who accepts the roles of `set` may fill it.
    fn takes(&self, set: u16) -> bool {
        self.any || set >> self.bit & 1 == 1
    }
}

/// The role (index into `need`) of each player, or `None` when the players
/// cannot fill the needs exactly (as many players as slots, each slot taken by
/// a player who accepts it).
pub fn assign(players: &[u16], need: &[Need]) -> Option<Vec<usize>> {
    let mut role = vec![0; players.len()];
    assign_into(players, need, &mut role).then_some(role)
}

/// A player not yet given a role.
const NONE: usize = usize::MAX;

/// [`assign`], writing each player's role into `role` (as long as `players`):
/// false (and `role` unspecified) when the needs cannot be filled exactly.
/// Without allocating for up to sixteen needs (a rule names at most
/// [`crate::rules::MAX_ROLES`]): the team split asks this of every match it
/// takes.
pub fn assign_into(players: &[u16], need: &[Need], role: &mut [usize]) -> bool {
    let total: usize = need.iter().map(|n| n.count).sum();
    if total != players.len() || role.len() != players.len() {
        return false;
    }
    let mut left: SmallVec<[usize; 16]> = need.iter().map(|n| n.count).collect();
    let mut seen: SmallVec<[bool; 16]> = smallvec![false; need.len()];
    role.fill(NONE);
    let mut search = Search {
        players,
        need,
        left: &mut left,
        seen: &mut seen,
        role,
    };
    (0..players.len()).all(|p| {
        search.seen.fill(false);
        search.augment(p)
    })
}

/// One matching in progress: the players' sets, the needs, each need's
/// places still free, the needs visited by the current search, and each
/// player's need so far ([`NONE`] for none).
struct Search<'a> {
    players: &'a [u16],
    need: &'a [Need],
    left: &'a mut [usize],
    seen: &'a mut [bool],
    role: &'a mut [usize],
}

impl Search<'_> {
    /// Gives player `p` a need: one with a place free, or one whose holder
    /// can move to another (an augmenting path); false, and nothing changed,
    /// when neither.
    fn augment(&mut self, p: usize) -> bool {
        let set = self.players[p];
        for (j, n) in self.need.iter().enumerate() {
            if self.left[j] > 0 && n.takes(set) {
                self.left[j] -= 1;
                self.role[p] = j;
                return true;
            }
        }
        for (j, n) in self.need.iter().enumerate() {
            if self.seen[j] || !n.takes(set) {
                continue;
            }
            self.seen[j] = true;
            for q in 0..self.players.len() {
                // `q` moves to another need and `p` takes its place in `j`.
                if q != p && self.role[q] == j && self.augment(q) {
                    self.role[p] = j;
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TANK: usize = 0;
    const HEALER: usize = 1;
    const DAMAGE: usize = 2;

    fn need(tank: usize, healer: usize, damage: usize) -> Vec<Need> {
        vec![
            Need {
                bit: TANK,
                count: tank,
                any: false,
            },
            Need {
                bit: HEALER,
                count: healer,
                any: false,
            },
            Need {
                bit: DAMAGE,
                count: damage,
                any: false,
            },
        ]
    }

    #[test]
    fn a_team_of_five_gets_its_tank_and_healer() {
        let (t, h, d) = (1u16 << TANK, 1u16 << HEALER, 1u16 << DAMAGE);
        let players = [d, d | t, d, h | d, d];
        let roles = assign(&players, &need(1, 1, 3)).unwrap();
        assert_eq!(roles[1], TANK);
        assert_eq!(roles[3], HEALER);
        assert_eq!(roles.iter().filter(|&&r| r == DAMAGE).count(), 3);
        // Nobody accepts healer: no team, until healer is relaxed to "any".
        let players = [d, d | t, d, d, d];
        assert_eq!(assign(&players, &need(1, 1, 3)), None);
        let mut relaxed = need(1, 1, 3);
        relaxed[HEALER].any = true;
        assert!(assign(&players, &relaxed).is_some());
    }

    /// Whether some assignment exists, by trying every one.
    fn brute(players: &[u16], need: &[Need]) -> bool {
        fn go(i: usize, players: &[u16], need: &[Need], left: &mut [usize]) -> bool {
            if i == players.len() {
                return left.iter().all(|&l| l == 0);
            }
            for j in 0..need.len() {
                if left[j] > 0 && (need[j].any || players[i] >> need[j].bit & 1 == 1) {
                    left[j] -= 1;
                    if go(i + 1, players, need, left) {
                        return true;
                    }
                    left[j] += 1;
                }
            }
            false
        }
        let mut left: Vec<usize> = need.iter().map(|n| n.count).collect();
        go(0, players, need, &mut left)
    }

    #[test]
    fn a_large_team_is_matched() {
        // 40 places: 10 tanks, 30 damage; every fourth player takes tank.
        let (t, d) = (1u16 << TANK, 1u16 << DAMAGE);
        let players: Vec<u16> = (0..40)
            .map(|i| if i % 4 == 0 { t | d } else { d })
            .collect();
        let roles = assign(&players, &need(10, 0, 30)).unwrap();
        assert_eq!(roles.iter().filter(|&&r| r == TANK).count(), 10);
        for (p, &r) in roles.iter().enumerate() {
            assert!(r == DAMAGE || p % 4 == 0);
        }
        // One tank short.
        let mut short = players.clone();
        short[0] = d;
        assert_eq!(assign(&short, &need(10, 0, 30)), None);
    }

    proptest! {
        #[test]
        fn matches_brute_force(
            players in proptest::collection::vec(0u16..8, 1..7),
            counts in proptest::collection::vec(0usize..4, 3),
            any in proptest::collection::vec(any::<bool>(), 3),
        ) {
            let need: Vec<Need> = (0..3)
                .map(|b| Need { bit: b, count: counts[b], any: any[b] })
                .collect();
            let got = assign(&players, &need);
            prop_assert_eq!(got.is_some(), brute(&players, &need));
            if let Some(roles) = got {
                for (p, &r) in roles.iter().enumerate() {
                    prop_assert!(need[r].any || players[p] >> need[r].bit & 1 == 1);
                }
                for (j, n) in need.iter().enumerate() {
                    prop_assert_eq!(roles.iter().filter(|&&r| r == j).count(), n.count);
                }
            }
        }
    }
}
