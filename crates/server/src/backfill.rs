//! What both planes check before a backfill opens (issue 34): the HTTP API for
//! trusted backends ([`crate::ingress`]) and the game servers' gRPC
//! ([`crate::server_manager`]) answer the same refusals, each in its own
//! error form.

use mm_engine::{BackfillPolicy, Mode};
use mm_store::MAX_BACKFILL_TEAMS;

/// Why seats cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeatsError {
    /// The mode does not fill running matches.
    #[error("mode {0} does not fill running matches (set backfill = \"manual\" or \"auto\")")]
    Off(String),
    /// The mode is closed (`closed = true`): no ticket may fill a seat.
    #[error("mode {0} is closed: it takes no new players")]
    Closed(String),
    /// The match's region is closed (`CLOSED_REGIONS`): no ticket may fill a
    /// seat there.
    #[error("region {0} is closed: it takes no new players")]
    RegionClosed(String),
    /// Seats the mode cannot have.
    #[error("{0}")]
    Invalid(String),
}

/// Checks that `pool`'s region takes new players: it is not closed (a match
/// formed there before it closed plays on, with the players it has).
pub fn check_region(catalog: &crate::Catalog, pool: &mm_domain::Pool) -> Result<(), SeatsError> {
    if catalog.region_closed(&pool.region) {
        return Err(SeatsError::RegionClosed(pool.region.clone()));
    }
    Ok(())
}

/// Checks `open` (seats per team) against `mode`: backfill on, the mode not
/// closed, at least one team, no more teams than the mode has, no more seats
/// than a team holds.
pub fn check_seats(mode: &Mode, open: &[u32]) -> Result<(), SeatsError> {
    if mode.backfill == BackfillPolicy::Off {
        return Err(SeatsError::Off(mode.name.clone()));
    }
    if mode.closed {
        return Err(SeatsError::Closed(mode.name.clone()));
    }
    if open.is_empty() {
        return Err(SeatsError::Invalid(
            "open must name the open seats of at least one team (closing is its own call)".into(),
        ));
    }
    if open.len() > mode.teams.min(MAX_BACKFILL_TEAMS) {
        return Err(SeatsError::Invalid(format!(
            "open names {} teams; mode {} has {}",
            open.len(),
            mode.name,
            mode.teams
        )));
    }
    if let Some((team, n)) = open
        .iter()
        .enumerate()
        .find(|(_, n)| **n as usize > mode.team_size)
    {
        return Err(SeatsError::Invalid(format!(
            "team {team} cannot have {n} open seats: mode {} has {} players per team",
            mode.name, mode.team_size
        )));
    }
    Ok(())
}

/// The seats after a player of `team` left: `current` (or none open) with one
/// more on that team, up to a full team.
pub fn one_more_seat(mode: &Mode, current: Option<&[u32]>, team: usize) -> Vec<u32> {
    let teams = mode.teams.min(MAX_BACKFILL_TEAMS).max(team + 1);
    let mut open: Vec<u32> = (0..teams)
        .map(|k| current.and_then(|c| c.get(k).copied()).unwrap_or(0))
        .collect();
    open[team] = (open[team] + 1).min(mode.team_size as u32);
    open
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_engine::Modes;

    fn mode(backfill: &str) -> Mode {
        let text = format!("[modes.m]\nteams = 2\nteam_size = 3\nbackfill = \"{backfill}\"\n");
        Modes::load(Some(&text), Default::default())
            .unwrap()
            .get("m")
            .unwrap()
            .clone()
    }

    #[test]
    fn seats_are_checked_against_the_mode() {
        let m = mode("manual");
        assert_eq!(check_seats(&m, &[1, 0]), Ok(()));
        assert_eq!(check_seats(&m, &[3]), Ok(()));
        for bad in [&[][..], &[1, 1, 1], &[4, 0]] {
            assert!(
                matches!(check_seats(&m, bad), Err(SeatsError::Invalid(_))),
                "{bad:?}"
            );
        }
        assert_eq!(
            check_seats(&mode("off"), &[1, 0]),
            Err(SeatsError::Off("m".into()))
        );
        let mut closed = mode("manual");
        closed.closed = true;
        assert_eq!(
            check_seats(&closed, &[1, 0]),
            Err(SeatsError::Closed("m".into()))
        );
    }

    #[test]
    fn a_closed_region_fills_no_seat() {
        let catalog =
            crate::Catalog::new(mm_engine::Modes::defaults(), vec!["eu".into(), "na".into()])
                .unwrap()
                .with_closed(vec!["na".into()])
                .unwrap();
        let pool = |r: &str| mm_domain::Pool::new("5v5", r);
        assert_eq!(check_region(&catalog, &pool("eu")), Ok(()));
        assert_eq!(
            check_region(&catalog, &pool("na")),
            Err(SeatsError::RegionClosed("na".into()))
        );
    }

    #[test]
    fn a_leaver_adds_one_seat_up_to_a_full_team() {
        let m = mode("auto");
        assert_eq!(one_more_seat(&m, None, 1), vec![0, 1]);
        assert_eq!(one_more_seat(&m, Some(&[2, 0]), 0), vec![3, 0]);
        assert_eq!(one_more_seat(&m, Some(&[3, 0]), 0), vec![3, 0]);
    }
}
