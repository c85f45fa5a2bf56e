//! Game modes as data: team shape, match size, how a party is rated, how the skill
//! window grows and when other regions become acceptable. Modes are read from TOML;
//! the defaults ship in `modes.toml` and a user file replaces or adds modes by name.

use crate::WindowPolicy;
use crate::rules::{RawRule, Rule};
use mm_domain::{Decay, Lifecycle, MatchOn, Millis, Placement, RatingModel, RatingPolicy};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The modes shipped with matchmaker (`1v1`, `5v5`, `br100`).
pub const DEFAULT_MODES: &str = include_str!("../modes.toml");

/// Default share of the window a match of fresh tickets may use.
pub const DEFAULT_PATIENCE: f64 = 0.85;

/// Largest party the product supports (seed 004: parties of 2 to 5).
pub const MAX_PARTY: usize = 5;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ModeError {
    #[error("modes file is not valid TOML for modes: {0}")]
    Parse(String),
    #[error("mode {mode:?}: {reason}")]
    Invalid { mode: String, reason: String },
    #[error("no modes defined")]
    Empty,
}

/// How one rating is chosen for a party to be matched with.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartyRating {
    /// The highest member's rating (seed 004's default: a strong player cannot
    /// hide behind weaker friends).
    Highest,
    /// The members' average.
    Average,
    /// The average plus `factor` times the spread between the best and the worst.
    AveragePlusSpread(f64),
}

impl PartyRating {
    /// The rating a party of members rated `ratings` is matched with.
    pub fn rate(&self, ratings: &[f64]) -> f64 {
        if ratings.is_empty() {
            return 0.0;
        }
        let max = ratings.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = ratings.iter().copied().fold(f64::INFINITY, f64::min);
        let avg = ratings.iter().sum::<f64>() / ratings.len() as f64;
        match *self {
            PartyRating::Highest => max,
            PartyRating::Average => avg,
            PartyRating::AveragePlusSpread(f) => (avg + f * (max - min)).min(max),
        }
    }
}

/// One game mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Mode {
    pub name: String,
    /// Teams in a full match.
    pub teams: usize,
    /// Players per team.
    pub team_size: usize,
    /// Smallest match, in players (a multiple of `team_size`).
    pub min_players: usize,
    /// How long the longest-waiting ticket must have waited before a match smaller
    /// than full may start.
    pub start_below_max_after: Millis,
    pub party_rating: PartyRating,
    pub window: WindowPolicy,
    /// Wait after which a ticket is also matched in its other acceptable regions.
    pub cross_region_after: Millis,
    /// Regions with a higher measured latency are never used.
    pub max_latency_ms: u32,
    /// Largest party accepted.
    pub max_party: usize,
    /// Wait after which a ticket is overdue: it is matched first, in the tightest
    /// match that includes it, using its whole window.
    pub overdue_after: Millis,
    /// Share of the window (0..=1) a match of tickets that are not overdue may use:
    /// below 1, fresh tickets wait for a tighter match rather than take the first
    /// barely fair one.
    pub patience: f64,
    /// Ready check, bans and placement of the mode's matches.
    pub lifecycle: Lifecycle,
    /// How results change the players' ratings in this mode.
    pub rating: RatingPolicy,
    /// What a match must also respect beyond skill: attributes, roles, party
    /// make-up ([`crate::rules`]).
    pub rules: Vec<Rule>,
    /// A ticket still waiting this long ends `timed_out` (`no_match_found`).
    pub give_up_after: Option<Millis>,
    /// Closed to new tickets (`closed = true`): creating one is refused, the
    /// tickets still waiting end `timed_out` (`mode_closed`), no match forms;
    /// matches formed before play on, their results rated. How a mode is
    /// retired: closed first, removed once nobody waits in it.
    pub closed: bool,
    /// A match still on its game server this long after it was placed
    /// (`max_match_duration`) ends `failed` (`match_expired`): its players
    /// are free to queue again and its slot is given back, however the game
    /// server fares. `None`: a match lasts until its server reports, releases
    /// or stops heartbeating.
    pub max_match_duration: Option<Millis>,
    /// A waiting ticket ends `cancelled` (`disconnected`) once one of its
    /// players has had no event socket open for this long
    /// (`cancel_offline_after`): the player left the game. `None`: tickets
    /// wait whether or not their players are connected.
    pub cancel_offline_after: Option<Millis>,
    /// Attributes taken from the player's token, which the client may not set.
    pub from_claims: Vec<String>,
    /// Whether running matches' empty seats are filled (`backfill`).
    pub backfill: BackfillPolicy,
    /// The ready check of players filling seats (`backfill_ready_check`; by
    /// default the mode's own).
    pub backfill_ready_check_ms: Option<Millis>,
    /// How long a backfill stays open unless its game server refreshes it
    /// (`backfill_ttl`).
    pub backfill_ttl_ms: Millis,
    /// Largest gap between the teams' average ratings a match may form with,
    /// growing with the wait of its longest-waiting ticket like a window
    /// (`max_team_gap`; default: any gap, the best split is taken).
    pub max_team_gap: Option<WindowPolicy>,
}

/// Whether a mode fills the empty seats of its running matches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackfillPolicy {
    /// Never (the default).
    #[default]
    Off,
    /// When the game server (or a trusted backend) opens a backfill.
    Manual,
    /// Also opened by the matchmaker: when a match is placed below full and
    /// when the server reports that a player left.
    Auto,
}

/// Default time a backfill stays open without a refresh.
pub const DEFAULT_BACKFILL_TTL: Millis = 10_000;

/// Default time players have to accept a match.
pub const DEFAULT_READY_CHECK: Millis = 30_000;
/// Default queue ban after declining or ignoring a ready check.
pub const DEFAULT_DECLINE_BAN: Millis = 60_000;
/// Default time a player dropped during a ready check has to come back.
pub const DEFAULT_DISCONNECT_GRACE: Millis = 10_000;

impl Mode {
    /// The lane a ticket waits in in this mode's queues (see
    /// [`crate::rules::lane`]).
    pub fn lane(&self, ticket: &impl crate::Described) -> u32 {
        crate::rules::lane::lane(&self.rules, ticket)
    }

    /// Players in a full match.
    pub fn max_players(&self) -> usize {
        self.teams * self.team_size
    }

    /// How a fill (players joining a running match) proceeds: the backfill's
    /// ready check, then the running match's game server.
    pub fn fill_lifecycle(&self) -> Lifecycle {
        Lifecycle {
            ready_check_ms: self.backfill_ready_check_ms,
            placement: Placement::Servers,
            // A fill joins a match on its server: it has no seats of its own.
            auto_backfill: None,
            ..self.lifecycle
        }
    }

    /// Checks that the numbers make sense together.
    pub fn validate(&self) -> Result<(), ModeError> {
        let bad = |reason: String| {
            Err(ModeError::Invalid {
                mode: self.name.clone(),
                reason,
            })
        };
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 32
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !name_ok {
            return bad("the name must be 1-32 characters of a-z, 0-9, '-' or '_'".into());
        }
        if self.teams < 2 || self.teams > 200 {
            return bad(format!("teams must be 2..=200, got {}", self.teams));
        }
        if self.team_size < 1 || self.team_size > 50 {
            return bad(format!("team_size must be 1..=50, got {}", self.team_size));
        }
        if self.max_players() > 1000 {
            return bad("a match may have at most 1000 players".into());
        }
        if self.min_players > self.max_players()
            || !self.min_players.is_multiple_of(self.team_size)
            || self.min_players / self.team_size < 2
        {
            return bad(format!(
                "min_players must be a multiple of team_size ({}), at least two teams and at most teams * team_size ({}), got {}",
                self.team_size,
                self.max_players(),
                self.min_players
            ));
        }
        if self.max_party < 1 || self.max_party > self.team_size.min(MAX_PARTY) {
            return bad(format!(
                "max_party must be 1..={}, got {}",
                self.team_size.min(MAX_PARTY),
                self.max_party
            ));
        }
        let w = &self.window;
        if ![w.initial, w.per_second, w.cap]
            .iter()
            .all(|v| v.is_finite() && *v >= 0.0)
            || w.cap < w.initial
        {
            return bad("window values must be non-negative and cap >= initial".into());
        }
        if let Some(g) = &self.max_team_gap
            && (![g.initial, g.per_second, g.cap]
                .iter()
                .all(|v| v.is_finite() && *v >= 0.0)
                || g.cap < g.initial)
        {
            return bad("max_team_gap values must be non-negative and cap >= initial".into());
        }
        if !(self.patience > 0.0 && self.patience <= 1.0) {
            return bad(format!("patience must be in (0, 1], got {}", self.patience));
        }
        if self
            .lifecycle
            .ready_check_ms
            .is_some_and(|t| !(1_000..=600_000).contains(&t))
        {
            return bad("ready_check must be between 1s and 10m (or false)".into());
        }
        if self.lifecycle.decline_ban_ms > 86_400_000 {
            return bad("decline_ban must be at most 24h".into());
        }
        if !(1_000..=600_000).contains(&self.lifecycle.placement_timeout_ms) {
            return bad("placement_timeout must be between 1s and 10m".into());
        }
        if self.lifecycle.disconnect_grace_ms > 600_000 {
            return bad("disconnect_grace must be at most 10m".into());
        }
        if let PartyRating::AveragePlusSpread(f) = self.party_rating
            && !(0.0..=1.0).contains(&f)
        {
            return bad("average_plus_spread must be between 0 and 1".into());
        }
        crate::rules::check_set(&self.rules).map_err(|reason| ModeError::Invalid {
            mode: self.name.clone(),
            reason,
        })?;
        if self
            .give_up_after
            .is_some_and(|g| !(1_000..=86_400_000).contains(&g))
        {
            return bad("give_up_after must be between 1s and 24h".into());
        }
        if self
            .max_match_duration
            .is_some_and(|d| !(1_000..=30 * 86_400_000).contains(&d))
        {
            return bad("max_match_duration must be between 1s and 30d".into());
        }
        if self
            .cancel_offline_after
            .is_some_and(|d| !(1_000..=600_000).contains(&d))
        {
            return bad("cancel_offline_after must be between 1s and 10m".into());
        }
        if self.max_match_duration.is_some() && self.lifecycle.placement != Placement::Servers {
            return bad(
                "max_match_duration needs placement = \"servers\": it ends matches on game servers"
                    .into(),
            );
        }
        if self.backfill != BackfillPolicy::Off && self.lifecycle.placement != Placement::Servers {
            return bad(
                "backfill needs placement = \"servers\": it fills matches on game servers".into(),
            );
        }
        if !(1_000..=600_000).contains(&self.backfill_ttl_ms) {
            return bad("backfill_ttl must be between 1s and 10m".into());
        }
        if let Some(a) = self.from_claims.iter().find(|a| !mm_domain::valid_name(a)) {
            return bad(format!(
                "from_claims: {a:?} must be 1-32 characters of a-z, 0-9 or '_'"
            ));
        }
        Ok(())
    }
}

/// The modes a deployment serves, by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Modes {
    modes: BTreeMap<String, Mode>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    modes: BTreeMap<String, RawMode>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWindow {
    initial: f64,
    per_second: f64,
    cap: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMode {
    teams: usize,
    team_size: usize,
    min_players: Option<usize>,
    start_below_max_after: Option<String>,
    party_rating: Option<PartyRating>,
    window: Option<RawWindow>,
    cross_region_after: Option<String>,
    max_latency_ms: Option<u32>,
    max_party: Option<usize>,
    overdue_after: Option<String>,
    patience: Option<f64>,
    ready_check: Option<Switch>,
    decline_ban: Option<String>,
    disconnect_grace: Option<String>,
    placement: Option<Placement>,
    placement_timeout: Option<String>,
    rating: Option<RawRating>,
    #[serde(default)]
    rules: Vec<RawRule>,
    give_up_after: Option<String>,
    #[serde(default)]
    closed: bool,
    max_match_duration: Option<String>,
    cancel_offline_after: Option<String>,
    #[serde(default)]
    from_claims: Vec<String>,
    backfill: Option<BackfillPolicy>,
    max_team_gap: Option<RawWindow>,
    backfill_ready_check: Option<Switch>,
    backfill_ttl: Option<String>,
}

/// `rating = { model = "elo" | "weng_lin", ... }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRating {
    model: String,
    k: Option<f64>,
    initial: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    scale: Option<f64>,
    beta: Option<f64>,
    initial_uncertainty: Option<f64>,
    match_on: Option<RawMatchOn>,
    abandon_penalty: Option<f64>,
    decay: Option<RawDecay>,
}

/// `match_on = "mean"` or `{ conservative = 3 }` (mean minus 3 sigma).
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawMatchOn {
    Mean,
    Conservative(f64),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDecay {
    after: String,
    per_day: f64,
    floor: f64,
}

impl RawRating {
    fn build(self, mode: &str) -> Result<RatingPolicy, ModeError> {
        let bad = |reason: String| ModeError::Invalid {
            mode: mode.to_string(),
            reason: format!("rating: {reason}"),
        };
        let only = |allowed: &[&str], given: &[(&str, bool)]| match given
            .iter()
            .find(|(k, set)| *set && !allowed.contains(k))
        {
            Some((k, _)) => Err(bad(format!("{k} does not apply to model {:?}", self.model))),
            None => Ok(()),
        };
        let given = [
            ("k", self.k.is_some()),
            ("min", self.min.is_some()),
            ("max", self.max.is_some()),
            ("scale", self.scale.is_some()),
            ("beta", self.beta.is_some()),
            ("initial_uncertainty", self.initial_uncertainty.is_some()),
            ("match_on", self.match_on.is_some()),
        ];
        let model = match self.model.as_str() {
            "elo" => {
                only(&["k", "min", "max"], &given)?;
                let RatingModel::Elo {
                    k,
                    initial,
                    min,
                    max,
                } = RatingPolicy::ELO.model
                else {
                    unreachable!("the Elo default is Elo")
                };
                RatingModel::Elo {
                    k: self.k.unwrap_or(k),
                    initial: self.initial.unwrap_or(initial),
                    min: self.min.unwrap_or(min),
                    max: self.max.unwrap_or(max),
                }
            }
            "weng_lin" => {
                only(
                    &["scale", "beta", "initial_uncertainty", "match_on"],
                    &given,
                )?;
                let scale = self.scale.unwrap_or(60.0);
                RatingModel::WengLin {
                    scale,
                    beta: self.beta.unwrap_or(25.0 / 6.0),
                    initial: self.initial.unwrap_or(25.0 * scale),
                    initial_uncertainty: self.initial_uncertainty.unwrap_or(25.0 / 3.0 * scale),
                    match_on: match self.match_on {
                        None | Some(RawMatchOn::Mean) => MatchOn::Mean,
                        Some(RawMatchOn::Conservative(n)) => MatchOn::Conservative(n),
                    },
                }
            }
            other => {
                return Err(bad(format!(
                    "unknown model {other:?} (use \"elo\" or \"weng_lin\")"
                )));
            }
        };
        let decay = match self.decay {
            None => None,
            Some(d) => Some(Decay {
                after_ms: millis(mode, "rating.decay.after", Some(d.after), 0)?,
                per_day: d.per_day,
                floor: d.floor,
            }),
        };
        let policy = RatingPolicy {
            model,
            abandon_penalty: self
                .abandon_penalty
                .unwrap_or(RatingPolicy::ELO.abandon_penalty),
            decay,
        };
        check_rating(&policy).map_err(bad)?;
        Ok(policy)
    }
}

/// The numbers of a rating policy make sense: finite, in range, ordered.
fn check_rating(p: &RatingPolicy) -> Result<(), String> {
    let range = mm_domain::MIN_RATING..=mm_domain::MAX_RATING;
    match p.model {
        RatingModel::Elo {
            k,
            initial,
            min,
            max,
        } => {
            if !(k > 0.0 && k <= 400.0) {
                return Err(format!("k must be in (0, 400], got {k}"));
            }
            if !(range.contains(&min) && range.contains(&max) && min < max) {
                return Err(format!(
                    "min and max must be in 0..=10000 with min < max, got {min}..{max}"
                ));
            }
            if !(min..=max).contains(&initial) {
                return Err(format!("initial must be within min..=max, got {initial}"));
            }
        }
        RatingModel::WengLin {
            scale,
            beta,
            initial,
            initial_uncertainty,
            match_on,
        } => {
            if !(scale > 0.0 && scale <= 1000.0) {
                return Err(format!("scale must be in (0, 1000], got {scale}"));
            }
            if !(beta > 0.0 && beta.is_finite()) {
                return Err(format!("beta must be positive, got {beta}"));
            }
            if !range.contains(&initial) {
                return Err(format!("initial must be in 0..=10000, got {initial}"));
            }
            if !(initial_uncertainty > 0.0 && initial_uncertainty <= mm_domain::MAX_RATING) {
                return Err(format!(
                    "initial_uncertainty must be in (0, 10000], got {initial_uncertainty}"
                ));
            }
            if let MatchOn::Conservative(n) = match_on
                && !(0.0..=10.0).contains(&n)
            {
                return Err(format!(
                    "conservative must be 0..=10 standard deviations, got {n}"
                ));
            }
        }
    }
    if !(0.0..=1000.0).contains(&p.abandon_penalty) {
        return Err(format!(
            "abandon_penalty must be 0..=1000, got {}",
            p.abandon_penalty
        ));
    }
    if let Some(d) = p.decay
        && !(d.per_day > 0.0 && d.per_day <= 1000.0 && range.contains(&d.floor))
    {
        return Err("decay needs per_day in (0, 1000] and floor in 0..=10000".into());
    }
    Ok(())
}

/// `ready_check = "30s"`, `= true` (the default time) or `= false` (off).
#[derive(Deserialize)]
#[serde(untagged)]
enum Switch {
    On(bool),
    After(String),
}

fn millis(mode: &str, key: &str, v: Option<String>, default: Millis) -> Result<Millis, ModeError> {
    match v {
        None => Ok(default),
        Some(s) => humantime::parse_duration(&s)
            .map(|d| d.as_millis() as Millis)
            .map_err(|e| ModeError::Invalid {
                mode: mode.to_string(),
                reason: format!("{key}: {e} (use e.g. 30s, 500ms)"),
            }),
    }
}

impl RawMode {
    fn build(self, name: &str, default_window: WindowPolicy) -> Result<Mode, ModeError> {
        let mut mode = self.build_plain(name, default_window)?;
        if mode.backfill == BackfillPolicy::Auto {
            mode.lifecycle.auto_backfill = Some(mm_domain::AutoBackfill {
                teams: mode.teams as u32,
                team_size: mode.team_size as u32,
                ttl_ms: mode.backfill_ttl_ms,
            });
        }
        Ok(mode)
    }

    fn build_plain(self, name: &str, default_window: WindowPolicy) -> Result<Mode, ModeError> {
        let switch = |key: &str, v: Option<Switch>, default: Option<Millis>| match v {
            None => Ok(default),
            Some(Switch::On(true)) => Ok(Some(DEFAULT_READY_CHECK)),
            Some(Switch::On(false)) => Ok(None),
            Some(Switch::After(d)) => millis(name, key, Some(d), DEFAULT_READY_CHECK).map(Some),
        };
        let ready_check = switch("ready_check", self.ready_check, Some(DEFAULT_READY_CHECK))?;
        let backfill_ready_check = switch(
            "backfill_ready_check",
            self.backfill_ready_check,
            ready_check,
        )?;
        let window = self
            .window
            .map(|w| WindowPolicy {
                initial: w.initial,
                per_second: w.per_second,
                cap: w.cap,
            })
            .unwrap_or(default_window);
        // By default a ticket is overdue once its window has grown to four times
        // its initial width.
        let overdue_default = if window.per_second > 0.0 {
            (3.0 * window.initial / window.per_second * 1000.0).min(3_600_000.0) as Millis
        } else {
            30_000
        };
        let rating = match self.rating {
            Some(r) => r.build(name)?,
            // Two teams: seed 004's team Elo; free-for-all needs placements.
            None if self.teams == 2 => RatingPolicy::ELO,
            None => RatingPolicy::WENG_LIN,
        };
        let mode = Mode {
            name: name.to_string(),
            teams: self.teams,
            team_size: self.team_size,
            min_players: self.min_players.unwrap_or(self.teams * self.team_size),
            start_below_max_after: millis(
                name,
                "start_below_max_after",
                self.start_below_max_after,
                60_000,
            )?,
            party_rating: self.party_rating.unwrap_or(PartyRating::Highest),
            window,
            cross_region_after: millis(
                name,
                "cross_region_after",
                self.cross_region_after,
                20_000,
            )?,
            max_latency_ms: self.max_latency_ms.unwrap_or(150),
            max_party: self.max_party.unwrap_or(self.team_size.min(MAX_PARTY)),
            overdue_after: millis(name, "overdue_after", self.overdue_after, overdue_default)?,
            patience: self.patience.unwrap_or(DEFAULT_PATIENCE),
            lifecycle: Lifecycle {
                ready_check_ms: ready_check,
                decline_ban_ms: millis(name, "decline_ban", self.decline_ban, DEFAULT_DECLINE_BAN)?,
                disconnect_grace_ms: millis(
                    name,
                    "disconnect_grace",
                    self.disconnect_grace,
                    DEFAULT_DISCONNECT_GRACE,
                )?,
                placement: self.placement.unwrap_or(Placement::Servers),
                placement_timeout_ms: millis(
                    name,
                    "placement_timeout",
                    self.placement_timeout,
                    mm_domain::DEFAULT_PLACEMENT_TIMEOUT,
                )?,
                auto_backfill: None,
            },
            rating,
            rules: self
                .rules
                .into_iter()
                .map(|r| r.build(self.teams, self.team_size))
                .collect::<Result<_, _>>()
                .map_err(|reason| ModeError::Invalid {
                    mode: name.to_string(),
                    reason,
                })?,
            give_up_after: match self.give_up_after {
                None => None,
                Some(d) => Some(millis(name, "give_up_after", Some(d), 0)?),
            },
            closed: self.closed,
            max_match_duration: match self.max_match_duration {
                None => None,
                Some(d) => Some(millis(name, "max_match_duration", Some(d), 0)?),
            },
            cancel_offline_after: match self.cancel_offline_after {
                None => None,
                Some(d) => Some(millis(name, "cancel_offline_after", Some(d), 0)?),
            },
            from_claims: self.from_claims,
            backfill: self.backfill.unwrap_or_default(),
            backfill_ready_check_ms: backfill_ready_check,
            backfill_ttl_ms: millis(
                name,
                "backfill_ttl",
                self.backfill_ttl,
                DEFAULT_BACKFILL_TTL,
            )?,
            max_team_gap: self.max_team_gap.map(|g| WindowPolicy {
                initial: g.initial,
                per_second: g.per_second,
                cap: g.cap,
            }),
        };
        mode.validate()?;
        Ok(mode)
    }
}

impl Modes {
    /// The shipped defaults, then every mode of `user` (TOML) replacing or adding by
    /// name. A mode without a `window` gets `default_window`.
    pub fn load(user: Option<&str>, default_window: WindowPolicy) -> Result<Self, ModeError> {
        let mut modes = BTreeMap::new();
        for text in std::iter::once(DEFAULT_MODES).chain(user) {
            let file: File = toml::from_str(text).map_err(|e| ModeError::Parse(e.to_string()))?;
            for (name, raw) in file.modes {
                let mode = raw.build(&name, default_window)?;
                modes.insert(name, mode);
            }
        }
        if modes.is_empty() {
            return Err(ModeError::Empty);
        }
        Ok(Self { modes })
    }

    /// The shipped defaults only.
    pub fn defaults() -> Self {
        Self::load(None, WindowPolicy::default()).expect("shipped modes are valid")
    }

    /// A set of exactly these modes.
    pub fn of(modes: impl IntoIterator<Item = Mode>) -> Result<Self, ModeError> {
        let mut map = BTreeMap::new();
        for m in modes {
            m.validate()?;
            map.insert(m.name.clone(), m);
        }
        if map.is_empty() {
            return Err(ModeError::Empty);
        }
        Ok(Self { modes: map })
    }

    pub fn get(&self, name: &str) -> Option<&Mode> {
        self.modes.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.modes.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Mode> {
        self.modes.values()
    }
}

#[cfg(test)]
mod tests;
