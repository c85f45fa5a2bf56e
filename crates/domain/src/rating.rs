//! Ratings as data: a player's skill in one mode, the rating policy a mode
//! configures (model, abandon penalty, decay), and the job that carries a finished
//! match's result to the rating service. The maths live in `mm-ratings`.

use crate::{Match, MatchResult, Millis};
use serde::{Deserialize, Serialize};

/// A player's skill in one mode, as the rating model keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Skill {
    /// Elo rating, or the mean (mu) of a model with uncertainty, in rating points.
    pub rating: f64,
    /// Standard deviation (sigma) of a model with uncertainty, in rating points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<f64>,
    /// How many results changed this skill (0: never rated, the mode's default).
    #[serde(default)]
    pub version: u64,
}

/// How a mode learns skill from results.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatingPolicy {
    pub model: RatingModel,
    /// Rating points an abandoning player loses on top of scoring the match as a loss.
    pub abandon_penalty: f64,
    /// Inactive players' ratings sink toward a floor.
    pub decay: Option<Decay>,
}

/// The rating model of a mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RatingModel {
    /// Seed 004's team Elo: each team's average rating, expected score
    /// `1 / (1 + 10^((opponent - own) / 400))`, change `k * (actual - expected)`,
    /// rounded and clamped to `min..=max`.
    Elo {
        k: f64,
        initial: f64,
        min: f64,
        max: f64,
    },
    /// Weng-Lin (OpenSkill's Bayesian model): mean and uncertainty per player, teams
    /// and free-for-all placements. `scale` rating points per native unit (the
    /// model's own unit has mu 25, sigma 25/3); `beta` in native units.
    WengLin {
        scale: f64,
        beta: f64,
        initial: f64,
        initial_uncertainty: f64,
        match_on: MatchOn,
    },
}

/// Which figure of a skill with uncertainty the matchmaker matches on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MatchOn {
    /// The mean.
    Mean,
    /// The mean minus this many standard deviations (new players match low until
    /// the model is sure of them).
    Conservative(f64),
}

/// Decay of inactive players: after `after_ms` without a match, a rating above
/// `floor` loses `per_day` points a day (never going below the floor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decay {
    pub after_ms: Millis,
    pub per_day: f64,
    pub floor: f64,
}

impl RatingPolicy {
    /// Team Elo with seed 004's figures: K = 32, start 1500, clamp 0..3000.
    pub const ELO: RatingPolicy = RatingPolicy {
        model: RatingModel::Elo {
            k: 32.0,
            initial: 1500.0,
            min: 0.0,
            max: 3000.0,
        },
        abandon_penalty: 10.0,
        decay: None,
    };

    /// Weng-Lin on a 1500-point scale (mu 25 x 60), matching on the mean.
    pub const WENG_LIN: RatingPolicy = RatingPolicy {
        model: RatingModel::WengLin {
            scale: 60.0,
            beta: 25.0 / 6.0,
            initial: 1500.0,
            initial_uncertainty: 500.0,
            match_on: MatchOn::Mean,
        },
        abandon_penalty: 10.0,
        decay: None,
    };

    /// The skill of a player the mode has never rated.
    pub fn initial(&self) -> Skill {
        match self.model {
            RatingModel::Elo { initial, .. } => Skill {
                rating: initial,
                uncertainty: None,
                version: 0,
            },
            RatingModel::WengLin {
                initial,
                initial_uncertainty,
                ..
            } => Skill {
                rating: initial,
                uncertainty: Some(initial_uncertainty),
                version: 0,
            },
        }
    }

    /// The skill after decay for a player last rated at `last_played` (pure: the
    /// same inputs give the same figure, so applying it on read or in a periodic
    /// job is idempotent).
    pub fn decayed(&self, skill: Skill, last_played: Millis, now: Millis) -> Skill {
        let Some(d) = self.decay else { return skill };
        if skill.version == 0 || skill.rating <= d.floor {
            return skill;
        }
        let idle = now.saturating_sub(last_played.saturating_add(d.after_ms));
        let lost = d.per_day * idle as f64 / 86_400_000.0;
        Skill {
            rating: (skill.rating - lost).max(d.floor),
            ..skill
        }
    }

    /// The figure the matchmaker matches on (and leaderboards rank by).
    pub fn matching_value(&self, skill: &Skill) -> f64 {
        let v = match self.model {
            RatingModel::WengLin {
                match_on: MatchOn::Conservative(n),
                ..
            } => skill.rating - n * skill.uncertainty.unwrap_or(0.0),
            _ => skill.rating,
        };
        v.clamp(crate::MIN_RATING, crate::MAX_RATING)
    }

    /// Whether the model keeps an uncertainty.
    pub fn has_uncertainty(&self) -> bool {
        matches!(self.model, RatingModel::WengLin { .. })
    }

    /// The model's name, as the modes file and the API spell it.
    pub fn model_name(&self) -> &'static str {
        match self.model {
            RatingModel::Elo { .. } => "elo",
            RatingModel::WengLin { .. } => "weng_lin",
        }
    }
}

/// A finished match's result on its way to the rating service: kept in the store
/// from the moment the game server's report is acknowledged until a rating
/// consumer has applied it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatingJob {
    #[serde(rename = "match")]
    pub matched: Match,
    pub result: MatchResult,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_sinks_toward_the_floor_and_is_a_pure_function() {
        let p = RatingPolicy {
            decay: Some(Decay {
                after_ms: 86_400_000,
                per_day: 10.0,
                floor: 1200.0,
            }),
            ..RatingPolicy::ELO
        };
        let s = Skill {
            rating: 1500.0,
            uncertainty: None,
            version: 3,
        };
        let day = 86_400_000;
        assert_eq!(p.decayed(s, 0, day).rating, 1500.0);
        assert_eq!(p.decayed(s, 0, 3 * day).rating, 1480.0);
        assert_eq!(p.decayed(s, 0, 3 * day), p.decayed(s, 0, 3 * day));
        assert_eq!(p.decayed(s, 0, 100 * day).rating, 1200.0);
        let low = Skill {
            rating: 1100.0,
            ..s
        };
        assert_eq!(p.decayed(low, 0, 100 * day).rating, 1100.0);
        let fresh = Skill { version: 0, ..s };
        assert_eq!(p.decayed(fresh, 0, 100 * day).rating, 1500.0);
    }

    #[test]
    fn conservative_matching_value() {
        let p = RatingPolicy {
            model: RatingModel::WengLin {
                scale: 60.0,
                beta: 25.0 / 6.0,
                initial: 1500.0,
                initial_uncertainty: 500.0,
                match_on: MatchOn::Conservative(3.0),
            },
            ..RatingPolicy::WENG_LIN
        };
        assert_eq!(p.matching_value(&p.initial()), 0.0);
        let s = Skill {
            rating: 1800.0,
            uncertainty: Some(100.0),
            version: 9,
        };
        assert_eq!(p.matching_value(&s), 1500.0);
        assert_eq!(RatingPolicy::WENG_LIN.matching_value(&s), 1800.0);
    }
}
