//! How a ticket's players and regions are written in `POST /v1/tickets`: a
//! player as an id or an object with their own rating and attributes, a
//! region as a name or an object with the latency measured to it.
//!
//! Each is read by a visitor of its own rather than serde's `untagged`, which
//! answered any mistake in such an object with "data did not match any variant
//! of untagged enum RegionSpec" (our type's name, and not the field at fault).
//! Here a string is the short form and an object the long one, read with its
//! own field checks, so a client hears e.g. "unknown field `latency`, expected
//! `region` or `latency_ms`"; anything else is named for what was expected.

use super::super::attributes;
use mm_domain::{Attributes, PlayerId};
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;

/// A player of a ticket: just the id (the ticket's `rating` applies), or the id
/// with the player's own rating.
#[derive(Debug, utoipa::ToSchema)]
#[serde(untagged)]
pub enum PlayerSpec {
    Id(String),
    Rated(RatedPlayer),
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RatedPlayer {
    #[schema(value_type = PlayerId)]
    pub id: String,
    /// Trusted backends only (or dev mode with ALLOW_CLIENT_RATINGS).
    #[schema(minimum = 0, maximum = 10000)]
    pub rating: Option<f64>,
    /// This player's attributes where they differ from the ticket's (e.g. the
    /// roles they accept).
    #[schema(value_type = Option<Attributes>)]
    pub attributes: Option<attributes::Raw>,
}

/// A region a ticket accepts: just the name, or the name with the latency the
/// client measured to it.
#[derive(Debug, utoipa::ToSchema)]
#[serde(untagged)]
pub enum RegionSpec {
    Name(String),
    Measured(MeasuredRegion),
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MeasuredRegion {
    pub region: String,
    #[schema(maximum = 10000)]
    pub latency_ms: Option<u32>,
}

/// Reads a string as the short form `S` and an object as the long form `L`.
struct ShortOrLong<S, L> {
    expecting: &'static str,
    short: fn(String) -> S,
    long: fn(L) -> S,
}

impl<'de, S, L: Deserialize<'de>> Visitor<'de> for ShortOrLong<S, L> {
    type Value = S;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<S, E> {
        Ok((self.short)(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<S, E> {
        Ok((self.short)(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<S, A::Error> {
        L::deserialize(MapAccessDeserializer::new(map)).map(self.long)
    }
}

impl<'de> Deserialize<'de> for PlayerSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShortOrLong {
            expecting: "a player id, or an object with `id` and optionally `rating` and \
                        `attributes`",
            short: PlayerSpec::Id,
            long: PlayerSpec::Rated,
        })
    }
}

impl<'de> Deserialize<'de> for RegionSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShortOrLong {
            expecting: "a region name, or an object with `region` and optionally `latency_ms`",
            short: RegionSpec::Name,
            long: RegionSpec::Measured,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error<T: for<'de> Deserialize<'de> + fmt::Debug>(json: &str) -> String {
        serde_json::from_str::<T>(json).unwrap_err().to_string()
    }

    #[test]
    fn short_and_long_forms() {
        match serde_json::from_str::<PlayerSpec>(r#""ann""#).unwrap() {
            PlayerSpec::Id(id) => assert_eq!(id, "ann"),
            other => panic!("{other:?}"),
        }
        let long = r#"{"id": "bob", "rating": 1600, "attributes": {"roles": ["tank"]}}"#;
        match serde_json::from_str::<PlayerSpec>(long).unwrap() {
            PlayerSpec::Rated(p) => {
                assert_eq!((p.id.as_str(), p.rating), ("bob", Some(1600.0)));
                assert!(p.attributes.unwrap().contains_key("roles"));
            }
            other => panic!("{other:?}"),
        }
        match serde_json::from_str::<RegionSpec>(r#""eu""#).unwrap() {
            RegionSpec::Name(r) => assert_eq!(r, "eu"),
            other => panic!("{other:?}"),
        }
        match serde_json::from_str::<RegionSpec>(r#"{"region": "us", "latency_ms": 40}"#).unwrap() {
            RegionSpec::Measured(m) => {
                assert_eq!((m.region.as_str(), m.latency_ms), ("us", Some(40)))
            }
            other => panic!("{other:?}"),
        }
        // From a JSON tree as well (what a caller holding a `Value` reads).
        let tree = serde_json::json!({"region": "eu"});
        assert!(matches!(
            serde_json::from_value::<RegionSpec>(tree).unwrap(),
            RegionSpec::Measured(_)
        ));
    }

    #[test]
    fn a_mistake_is_named_for_the_field_or_the_form_expected() {
        let e = error::<RegionSpec>(r#"{"region": "eu", "latency": 3}"#);
        assert!(
            e.contains("unknown field `latency`, expected `region` or `latency_ms`"),
            "{e}"
        );
        let e = error::<RegionSpec>(r#"{"latency_ms": 3}"#);
        assert!(e.contains("missing field `region`"), "{e}");
        let e = error::<RegionSpec>("7");
        assert!(
            e.contains("expected a region name, or an object with `region`"),
            "{e}"
        );
        let e = error::<PlayerSpec>(r#"{"id": "ann", "rating": "x"}"#);
        assert!(
            e.contains("invalid type: string \"x\", expected f64"),
            "{e}"
        );
        let e = error::<PlayerSpec>(r#"{"name": "ann"}"#);
        assert!(e.contains("unknown field `name`"), "{e}");
        let e = error::<PlayerSpec>("[1]");
        assert!(
            e.contains("expected a player id, or an object with `id`"),
            "{e}"
        );
        assert!(!e.contains("untagged"), "{e}");
    }
}
