//! Filling a team's roles: each player lists the roles they accept, the team
//! needs so many of each, and every player gets exactly one. A small bipartite
//! matching (players to the team's role slots; Kuhn's augmenting paths), checked
//! against brute force by a property test.

/// One role a team needs: its bit in the players' sets, how many players, and
/// whether anyone may fill it (relaxed to "any").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    pub bit: usize,
    pub count: usize,
    pub any: bool,
}

/// The role (index into `need`) of each player, or `None` when the players
/// cannot fill the needs exactly (as many players as slots, each slot taken by
/// a player who accepts it).
pub fn assign(players: &[u16], need: &[Need]) -> Option<Vec<usize>> {
    let mut role = vec![0; players.len()];
    assign_into(players, need, &mut role).then_some(role)
}

/// Most slots [`assign_into`] matches without allocating (a team's places:
/// any shipped shape has far fewer).
const SMALL: usize = 32;

/// [`assign`], writing each player's role into `role` (as long as `players`):
/// false (and `role` unspecified) when the needs cannot be filled exactly.
/// Without allocating for teams of up to [`SMALL`] places: the team split
/// asks this of many candidate teams.
pub fn assign_into(players: &[u16], need: &[Need], role: &mut [usize]) -> bool {
    let total: usize = need.iter().map(|n| n.count).sum();
    if total > SMALL {
        return assign_large(players, need, role);
    }
    let (mut slots, mut taken, mut seen) = ([0; SMALL], [FREE; SMALL], [0u64; 1]);
    matched(
        players,
        need,
        &mut slots[..total],
        &mut taken[..total],
        &mut seen,
        role,
    )
}

/// [`assign_into`] with its buffers on the heap, for teams of more than
/// [`SMALL`] places.
fn assign_large(players: &[u16], need: &[Need], role: &mut [usize]) -> bool {
    let total: usize = need.iter().map(|n| n.count).sum();
    let mut seen = vec![0u64; total.div_ceil(64)];
    matched(
        players,
        need,
        &mut vec![0; total],
        &mut vec![FREE; total],
        &mut seen,
        role,
    )
}

/// A slot no player holds.
const FREE: usize = usize::MAX;

/// Kuhn's matching of `players` to the slots of `need`, in the buffers given:
/// `slots` (one per slot: which need it is of), `taken` (all [`FREE`]: the
/// player holding each slot) and `seen` (a bit per slot).
fn matched(
    players: &[u16],
    need: &[Need],
    slots: &mut [usize],
    taken: &mut [usize],
    seen: &mut [u64],
    role: &mut [usize],
) -> bool {
    if slots.len() != players.len() || role.len() != players.len() {
        return false;
    }
    let mut k = 0;
    for (j, n) in need.iter().enumerate() {
        slots[k..k + n.count].fill(j);
        k += n.count;
    }
    // An augmenting path from player `p`, `seen` the slots visited.
    fn augment(
        p: usize,
        players: &[u16],
        need: &[Need],
        slots: &[usize],
        taken: &mut [usize],
        seen: &mut [u64],
    ) -> bool {
        for s in 0..slots.len() {
            let n = need[slots[s]];
            if seen[s / 64] >> (s % 64) & 1 == 1 || !(n.any || players[p] >> n.bit & 1 == 1) {
                continue;
            }
            seen[s / 64] |= 1 << (s % 64);
            if taken[s] == FREE || augment(taken[s], players, need, slots, taken, seen) {
                taken[s] = p;
                return true;
            }
        }
        false
    }
    for p in 0..players.len() {
        seen.fill(0);
        if !augment(p, players, need, slots, taken, seen) {
            return false;
        }
    }
    for (s, &p) in taken.iter().enumerate() {
        role[p] = slots[s];
    }
    true
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
    fn a_team_larger_than_the_small_path_is_matched_the_same_way() {
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
            // The path for big teams agrees.
            let mut large = vec![0; players.len()];
            prop_assert_eq!(assign_large(&players, &need, &mut large), got.is_some());
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
