//! The drain with rules (`bench drain --rules`): the same tickets, carrying the
//! `rules` scenario's attributes (builds 60/30/10%, pc or console, two or three
//! of five maps, 20% accept tank, 20% healer, everyone damage), drained once by
//! a 5v5 with the scenario's rules (builds kept apart, crossplay after 30 s, a
//! shared map, a tank and a healer a team, party balance) and once by the same
//! 5v5 without them. The ratio of the two drain rates is the rules' cost to
//! the pipeline.

use anyhow::{Context, Result};
use mm_domain::Ticket;
use mm_sim::attrs::AttributeMix;
use mm_sim::scenarios::{RULES_ATTRIBUTES, RULES_MODE};
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::path::Path;

/// The 5v5 the drain runs, as the modes TOML of mode `name`: the rules
/// scenario's, with no ready check and no game server (as the plain drain),
/// and its rules kept or dropped (they are the table's last key).
pub(super) fn mode_toml(name: &str, with_rules: bool) -> Result<String> {
    let body = RULES_MODE
        .split_once("[modes.5v5]\n")
        .map(|(_, body)| body)
        .context("the rules mode defines modes.5v5")?;
    let body = if with_rules {
        body
    } else {
        body.split_once("rules = [")
            .map(|(before, _)| before)
            .context("the rules mode has rules")?
    };
    Ok(format!(
        "[modes.{name}]\nready_check = false\nplacement = \"none\"\n{body}"
    ))
}

/// Gives every ticket attributes drawn from the TOML at `file` (default: the
/// rules scenario's) with `seed` (the same tickets get the same attributes in
/// every run).
pub(super) fn give_attributes(
    tickets: &mut [Ticket],
    file: Option<&Path>,
    seed: u64,
) -> Result<()> {
    let text = match file {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("reading --attributes {}", path.display()))?,
        None => RULES_ATTRIBUTES.to_string(),
    };
    let mix = AttributeMix::parse(&text).map_err(anyhow::Error::msg)?;
    let mut rng = StdRng::seed_from_u64(seed);
    for t in tickets {
        let (group, players) = mix.draw(&mut rng, t.players.len());
        t.attributes = group;
        t.player_attributes = players;
    }
    Ok(())
}

/// Puts every ticket in the lane the ingress would give it in the drain's
/// mode `name` (with or without its rules), as `POST /v1/tickets` does.
pub(super) fn give_lanes(tickets: &mut [Ticket], name: &str, with_rules: bool) -> Result<()> {
    let modes = mm_engine::Modes::load(
        Some(&mode_toml(name, with_rules)?),
        mm_engine::WindowPolicy::default(),
    )?;
    let mode = modes.get(name).context("the drain's mode")?;
    for t in tickets {
        t.lane = mode.lane(&*t);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_engine::{Modes, WindowPolicy};

    #[test]
    fn both_modes_load_and_differ_only_in_rules() {
        let ruled = mode_toml("bench", true).unwrap();
        let plain = mode_toml("bench", false).unwrap();
        let load = |text: &str| {
            Modes::load(Some(text), WindowPolicy::default())
                .unwrap()
                .get("bench")
                .unwrap()
                .clone()
        };
        let (ruled, plain) = (load(&ruled), load(&plain));
        assert_eq!(ruled.rules.len(), 5);
        assert!(plain.rules.is_empty());
        // Everything but the rules is the same mode.
        let mut stripped = ruled.clone();
        stripped.rules.clear();
        assert_eq!(format!("{stripped:?}"), format!("{plain:?}"));
        assert_eq!((ruled.teams, ruled.team_size), (2, 5));
        assert_eq!((plain.teams, plain.team_size), (2, 5));
        assert!(
            ruled.lifecycle.ready_check_ms.is_none() && plain.lifecycle.ready_check_ms.is_none()
        );
    }
}
