//! Modes read from TOML: the shipped defaults, user keys, and the refusals.

use super::*;

#[test]
fn shipped_defaults_load() {
    let m = Modes::defaults();
    assert_eq!(m.names().collect::<Vec<_>>(), ["1v1", "5v5", "br100"]);
    let five = m.get("5v5").unwrap();
    assert_eq!((five.teams, five.team_size, five.min_players), (2, 5, 10));
    assert_eq!(five.max_party, 5);
    let br = m.get("br100").unwrap();
    assert_eq!(
        (br.max_players(), br.min_players, br.max_party),
        (100, 60, 1)
    );
    assert_eq!(br.start_below_max_after, 60_000);
    assert_eq!(five.max_match_duration, Some(7_200_000));
    assert_eq!(m.get("1v1").unwrap().max_match_duration, Some(3_600_000));
    assert_eq!(
        five.lifecycle,
        Lifecycle {
            ready_check_ms: Some(30_000),
            decline_ban_ms: 60_000,
            disconnect_grace_ms: 10_000,
            placement: Placement::Servers,
            placement_timeout_ms: 10_000,
            auto_backfill: None,
        }
    );
}

#[test]
fn lifecycle_keys() {
    let user = r#"
        [modes.quick]
        teams = 2
        team_size = 1
        ready_check = false
        placement = "none"
        [modes.slow]
        teams = 2
        team_size = 1
        ready_check = "5s"
        decline_ban = "2m"
        disconnect_grace = "0s"
        max_match_duration = "2h"
        cancel_offline_after = "20s"
        closed = true
    "#;
    let m = Modes::load(Some(user), WindowPolicy::default()).unwrap();
    let quick = m.get("quick").unwrap().lifecycle;
    assert_eq!(quick.ready_check_ms, None);
    assert_eq!(quick.placement, Placement::None);
    assert_eq!(m.get("quick").unwrap().max_match_duration, None);
    assert!(!m.get("quick").unwrap().closed);
    assert_eq!(m.get("slow").unwrap().max_match_duration, Some(7_200_000));
    assert!(m.get("slow").unwrap().closed);
    assert_eq!(m.get("slow").unwrap().cancel_offline_after, Some(20_000));
    assert_eq!(m.get("quick").unwrap().cancel_offline_after, None);
    let slow = m.get("slow").unwrap().lifecycle;
    assert_eq!(
        (
            slow.ready_check_ms,
            slow.decline_ban_ms,
            slow.disconnect_grace_ms
        ),
        (Some(5_000), 120_000, 0)
    );
    for bad in [
        "[modes.x]\nteams = 2\nteam_size = 1\nready_check = \"1ms\"",
        "[modes.x]\nteams = 2\nteam_size = 1\nplacement = \"cloud\"",
        "[modes.x]\nteams = 2\nteam_size = 1\ndecline_ban = \"soon\"",
        "[modes.x]\nteams = 2\nteam_size = 1\nmax_match_duration = \"500ms\"",
        "[modes.x]\nteams = 2\nteam_size = 1\nmax_match_duration = \"31d\"",
        "[modes.x]\nteams = 2\nteam_size = 1\nplacement = \"none\"\nmax_match_duration = \"1h\"",
        "[modes.x]\nteams = 2\nteam_size = 1\nclosed = \"yes\"",
        "[modes.x]\nteams = 2\nteam_size = 1\ncancel_offline_after = \"500ms\"",
        "[modes.x]\nteams = 2\nteam_size = 1\ncancel_offline_after = \"11m\"",
    ] {
        assert!(
            Modes::load(Some(bad), WindowPolicy::default()).is_err(),
            "accepted {bad}"
        );
    }
}

#[test]
fn a_user_file_adds_and_replaces_modes_without_code() {
    let user = r#"
        [modes.3v3]
        teams = 2
        team_size = 3
        party_rating = "average"
        [modes.duos]
        teams = 50
        team_size = 2
        min_players = 40
        party_rating = { average_plus_spread = 0.25 }
        [modes.1v1]
        teams = 2
        team_size = 1
        window = { initial = 10, per_second = 1, cap = 100 }
    "#;
    let m = Modes::load(Some(user), WindowPolicy::default()).unwrap();
    assert_eq!(m.get("3v3").unwrap().max_party, 3);
    assert_eq!(
        m.get("duos").unwrap().party_rating,
        PartyRating::AveragePlusSpread(0.25)
    );
    assert_eq!(m.get("1v1").unwrap().window.cap, 100.0);
    assert!(m.get("5v5").is_some());
}

#[test]
fn bad_modes_are_refused_with_the_reason() {
    for bad in [
        "[modes.x]\nteams = 1\nteam_size = 5",
        "[modes.x]\nteams = 2\nteam_size = 5\nmin_players = 7",
        "[modes.x]\nteams = 2\nteam_size = 3\nmax_party = 4",
        "[modes.x]\nteams = 2\nteam_size = 3\ncross_region_after = \"soon\"",
        "[modes.X]\nteams = 2\nteam_size = 3",
        "[modes.x]\nteams = 2\nteam_size = 3\ncolour = 1",
        "[modes.x]\nteams = 2\nteam_size = 3\nwindow = { initial = 50, per_second = 1, cap = 10 }",
    ] {
        assert!(
            Modes::load(Some(bad), WindowPolicy::default()).is_err(),
            "accepted {bad}"
        );
    }
}

#[test]
fn rating_policies_per_mode() {
    let m = Modes::defaults();
    assert_eq!(m.get("1v1").unwrap().rating, RatingPolicy::ELO);
    assert_eq!(m.get("5v5").unwrap().rating, RatingPolicy::ELO);
    assert_eq!(m.get("br100").unwrap().rating, RatingPolicy::WENG_LIN);
    let user = r#"
        [modes.ffa]
        teams = 8
        team_size = 1
        [modes.duel]
        teams = 2
        team_size = 1
        rating = { model = "elo", k = 16, abandon_penalty = 25, decay = { after = "14d", per_day = 5, floor = 1200 } }
        [modes.ranked]
        teams = 2
        team_size = 3
        rating = { model = "weng_lin", match_on = { conservative = 3 } }
    "#;
    let m = Modes::load(Some(user), WindowPolicy::default()).unwrap();
    assert_eq!(m.get("ffa").unwrap().rating, RatingPolicy::WENG_LIN);
    let duel = m.get("duel").unwrap().rating;
    assert!(matches!(duel.model, RatingModel::Elo { k: 16.0, .. }));
    assert_eq!(duel.abandon_penalty, 25.0);
    assert_eq!(
        duel.decay,
        Some(Decay {
            after_ms: 14 * 86_400_000,
            per_day: 5.0,
            floor: 1200.0
        })
    );
    assert!(matches!(
        m.get("ranked").unwrap().rating.model,
        RatingModel::WengLin {
            match_on: MatchOn::Conservative(3.0),
            ..
        }
    ));
    for bad in [
        "rating = { model = \"glicko\" }",
        "rating = { model = \"elo\", k = -1 }",
        "rating = { model = \"elo\", scale = 60 }",
        "rating = { model = \"weng_lin\", k = 32 }",
        "rating = { model = \"elo\", min = 2000, max = 1000 }",
        "rating = { model = \"elo\", decay = { after = \"soon\", per_day = 1, floor = 0 } }",
        "rating = { model = \"elo\", colour = 1 }",
    ] {
        let text = format!("[modes.x]\nteams = 2\nteam_size = 1\n{bad}");
        assert!(
            Modes::load(Some(&text), WindowPolicy::default()).is_err(),
            "accepted {bad}"
        );
    }
}

#[test]
fn party_rating_policies() {
    let r = [1000.0, 1400.0, 1600.0];
    assert_eq!(PartyRating::Highest.rate(&r), 1600.0);
    assert_eq!(PartyRating::Average.rate(&r), 1333.3333333333333);
    assert_eq!(PartyRating::AveragePlusSpread(0.5).rate(&r), 1600.0);
    assert_eq!(
        PartyRating::AveragePlusSpread(0.1).rate(&r),
        1333.3333333333333 + 60.0
    );
}

#[test]
fn backfill_keys() {
    let user = r#"
        [modes.arena]
        teams = 2
        team_size = 3
        backfill = "auto"
        backfill_ttl = "20s"
        [modes.quiet]
        teams = 2
        team_size = 3
        ready_check = "5s"
        backfill = "manual"
        backfill_ready_check = false
    "#;
    let m = Modes::load(Some(user), WindowPolicy::default()).unwrap();
    let arena = m.get("arena").unwrap();
    assert_eq!(arena.backfill, BackfillPolicy::Auto);
    assert_eq!(arena.backfill_ttl_ms, 20_000);
    // By default a filler gets the mode's ready check, and goes to a server.
    let fill = arena.fill_lifecycle();
    assert_eq!(fill.ready_check_ms, Some(DEFAULT_READY_CHECK));
    assert_eq!(fill.placement, Placement::Servers);
    let quiet = m.get("quiet").unwrap();
    assert_eq!(quiet.lifecycle.ready_check_ms, Some(5_000));
    assert_eq!(quiet.fill_lifecycle().ready_check_ms, None);
    assert_eq!(m.get("5v5").unwrap().backfill, BackfillPolicy::Off);
    // Backfill needs game servers; the time to live is bounded.
    for (bad, says) in [
        ("placement = \"none\"\nbackfill = \"auto\"", "placement"),
        (
            "backfill = \"manual\"\nbackfill_ttl = \"0s\"",
            "backfill_ttl",
        ),
        ("backfill = \"sometimes\"", "backfill"),
    ] {
        let text = format!("[modes.x]\nteams = 2\nteam_size = 1\n{bad}\n");
        let err = Modes::load(Some(&text), WindowPolicy::default()).unwrap_err();
        assert!(err.to_string().contains(says), "{bad}: {err}");
    }
}

#[test]
fn max_team_gap_is_read_and_checked() {
    let ok = "[modes.duo]\nteams = 2\nteam_size = 2\nmax_team_gap = { initial = 10, per_second = 0.25, cap = 200 }\n";
    let modes = Modes::load(Some(ok), WindowPolicy::default()).unwrap();
    let g = modes.get("duo").unwrap().max_team_gap.unwrap();
    assert_eq!((g.initial, g.per_second, g.cap), (10.0, 0.25, 200.0));
    assert_eq!(Modes::defaults().get("5v5").unwrap().max_team_gap, None);
    for bad in [
        "max_team_gap = { initial = 10, per_second = -1, cap = 200 }",
        "max_team_gap = { initial = 300, per_second = 1, cap = 200 }",
        "max_team_gap = { initial = 10, per_second = 1 }",
    ] {
        let text = format!("[modes.duo]\nteams = 2\nteam_size = 2\n{bad}\n");
        assert!(
            Modes::load(Some(&text), WindowPolicy::default()).is_err(),
            "{bad}"
        );
    }
}
