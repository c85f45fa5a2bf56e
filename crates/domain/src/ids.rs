//! Validated identifiers for players, tickets and matches.
//!
//! Identifiers end up inside Redis key names and JSON, so they are restricted to a
//! small, safe alphabet and a bounded length.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest identifier accepted from clients.
pub const MAX_ID_LEN: usize = 64;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IdError {
    #[error("{0} must not be empty")]
    Empty(&'static str),
    #[error("{0} is longer than {MAX_ID_LEN} characters")]
    TooLong(&'static str),
    #[error("{0} may only contain letters, digits, '-', '_' and '.'")]
    BadChar(&'static str),
}

fn check(kind: &'static str, s: &str) -> Result<(), IdError> {
    if s.is_empty() {
        return Err(IdError::Empty(kind));
    }
    if s.len() > MAX_ID_LEN {
        return Err(IdError::TooLong(kind));
    }
    if !s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(IdError::BadChar(kind));
    }
    Ok(())
}

macro_rules! id_type {
    ($name:ident, $kind:literal) => {
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Validates and wraps an identifier.
            pub fn new(s: impl Into<String>) -> Result<Self, IdError> {
                let s = s.into();
                check($kind, &s)?;
                Ok(Self(s))
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
        impl TryFrom<String> for $name {
            type Error = IdError;
            fn try_from(s: String) -> Result<Self, IdError> {
                Self::new(s)
            }
        }
        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .description(Some(concat!(
                        "A ",
                        $kind,
                        ": 1-64 letters, digits, '-', '_' or '.'."
                    )))
                    .min_length(Some(1))
                    .max_length(Some(MAX_ID_LEN))
                    .pattern(Some("^[A-Za-z0-9._-]{1,64}$"))
                    .into()
            }
        }
        impl utoipa::ToSchema for $name {}
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(PlayerId, "player id");
id_type!(TicketId, "ticket id");
id_type!(MatchId, "match id");
id_type!(PartyId, "party id");

impl PartyId {
    /// A fresh random party id.
    pub fn random(uuid_simple: &str) -> Self {
        Self(format!("pt-{uuid_simple}"))
    }
}

impl TicketId {
    /// A fresh random ticket id.
    pub fn random(uuid_simple: &str) -> Self {
        Self(format!("t-{uuid_simple}"))
    }
}

impl MatchId {
    /// A fresh random match id.
    pub fn random(uuid_simple: &str) -> Self {
        Self(format!("m-{uuid_simple}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_ids_and_refuses_unsafe_ones() {
        assert!(PlayerId::new("alice_01.x-y").is_ok());
        assert_eq!(PlayerId::new(""), Err(IdError::Empty("player id")));
        assert_eq!(PlayerId::new("a{b}"), Err(IdError::BadChar("player id")));
        assert_eq!(PlayerId::new("a:b"), Err(IdError::BadChar("player id")));
        assert_eq!(
            PlayerId::new("x".repeat(65)),
            Err(IdError::TooLong("player id"))
        );
        let parsed: Result<PlayerId, _> = serde_json::from_str("\"bad id\"");
        assert!(parsed.is_err());
    }
}
