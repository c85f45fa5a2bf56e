//! Game-server credentials for the gRPC control plane. A TOML file lists fleet
//! tokens, each bound to the game servers it may act for (exact ids, or prefixes
//! ending in `*`), and allocator tokens, which may call `Allocate`. A presented
//! token is compared with every configured one in constant time.
//!
//! ```toml
//! [[fleet]]
//! name = "eu-west"
//! token = "long random string"
//! servers = ["eu-*"]
//!
//! [[allocator]]
//! name = "lobby"
//! token = "another long random string"
//! ```

use serde::Deserialize;
use subtle::ConstantTimeEq;

/// Shortest token accepted in the file.
pub const MIN_TOKEN_BYTES: usize = 24;

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("{0}")]
    Parse(String),
    #[error("{kind} {name:?}: {reason}")]
    Bad {
        kind: &'static str,
        name: String,
        reason: String,
    },
    #[error("the file lists no [[fleet]] or [[allocator]] credential")]
    Empty,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    fleet: Vec<FleetEntry>,
    #[serde(default)]
    allocator: Vec<AllocatorEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetEntry {
    name: String,
    token: String,
    servers: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AllocatorEntry {
    name: String,
    token: String,
}

/// What a credential may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// Dev mode (loopback, no credentials configured): anything.
    Dev,
    /// A fleet: register, heartbeat, report and release as the servers it binds.
    Fleet { name: String, servers: Vec<String> },
    /// May allocate slots.
    Allocator { name: String },
}

impl Grant {
    /// May act as game server `server_id`.
    pub fn may_act_for(&self, server_id: &str) -> bool {
        match self {
            Grant::Dev => true,
            Grant::Fleet { servers, .. } => servers.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => server_id.starts_with(prefix),
                None => p == server_id,
            }),
            Grant::Allocator { .. } => false,
        }
    }

    /// May call `Allocate`.
    pub fn may_allocate(&self) -> bool {
        matches!(self, Grant::Dev | Grant::Allocator { .. })
    }

    /// The credential's name, for logs.
    pub fn name(&self) -> &str {
        match self {
            Grant::Dev => "dev",
            Grant::Fleet { name, .. } | Grant::Allocator { name } => name,
        }
    }
}

/// Every configured credential.
pub struct FleetCredentials {
    entries: Vec<(Vec<u8>, Grant)>,
}

impl FleetCredentials {
    pub fn parse(text: &str) -> Result<Self, FleetError> {
        let file: File = toml::from_str(text).map_err(|e| FleetError::Parse(e.to_string()))?;
        let mut entries = Vec::new();
        let bad = |kind, name: &str, reason: &str| FleetError::Bad {
            kind,
            name: name.to_string(),
            reason: reason.to_string(),
        };
        for f in file.fleet {
            if f.servers.is_empty() {
                return Err(bad(
                    "fleet",
                    &f.name,
                    "servers must list at least one server id or prefix*",
                ));
            }
            if f.servers
                .iter()
                .any(|s| s.is_empty() || s[..s.len() - 1].contains('*'))
            {
                return Err(bad(
                    "fleet",
                    &f.name,
                    "a server pattern is an id, or a prefix ending in a single '*'",
                ));
            }
            entries.push((
                f.token.into_bytes(),
                Grant::Fleet {
                    name: f.name,
                    servers: f.servers,
                },
            ));
        }
        for a in file.allocator {
            entries.push((a.token.into_bytes(), Grant::Allocator { name: a.name }));
        }
        if entries.is_empty() {
            return Err(FleetError::Empty);
        }
        for (i, (token, grant)) in entries.iter().enumerate() {
            let kind = if grant.may_allocate() {
                "allocator"
            } else {
                "fleet"
            };
            if token.len() < MIN_TOKEN_BYTES {
                return Err(bad(
                    kind,
                    grant.name(),
                    &format!("token must be at least {MIN_TOKEN_BYTES} bytes"),
                ));
            }
            if entries[..i].iter().any(|(t, _)| t == token) {
                return Err(bad(
                    kind,
                    grant.name(),
                    "token is used by another credential",
                ));
            }
        }
        Ok(Self { entries })
    }

    /// The grant of `token`, if it is a configured credential.
    pub fn identify(&self, token: &[u8]) -> Option<&Grant> {
        let mut found = None;
        // Every entry is compared, so the time taken does not say which matched.
        for (t, grant) in &self.entries {
            if bool::from(t.as_slice().ct_eq(token)) {
                found = Some(grant);
            }
        }
        found
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
        [[fleet]]
        name = "eu"
        token = "eu-fleet-token-0123456789abcdef"
        servers = ["eu-*", "special"]

        [[allocator]]
        name = "lobby"
        token = "lobby-token-0123456789abcdef"
    "#;

    #[test]
    fn tokens_grant_what_the_file_says() {
        let creds = FleetCredentials::parse(FILE).unwrap();
        let eu = creds.identify(b"eu-fleet-token-0123456789abcdef").unwrap();
        assert!(eu.may_act_for("eu-1") && eu.may_act_for("special"));
        assert!(!eu.may_act_for("na-1") && !eu.may_act_for("special-2") && !eu.may_allocate());
        let lobby = creds.identify(b"lobby-token-0123456789abcdef").unwrap();
        assert!(lobby.may_allocate() && !lobby.may_act_for("eu-1"));
        assert!(creds.identify(b"eu-fleet-token-0123456789abcdeX").is_none());
        assert!(creds.identify(b"").is_none());
        assert!(Grant::Dev.may_act_for("x") && Grant::Dev.may_allocate());
    }

    #[test]
    fn bad_files_are_refused() {
        for bad in [
            "",
            "[[fleet]]\nname='a'\ntoken='short'\nservers=['x']",
            "[[fleet]]\nname='a'\ntoken='0123456789012345678901234'\nservers=[]",
            "[[fleet]]\nname='a'\ntoken='0123456789012345678901234'\nservers=['a*b*']",
            "[[allocator]]\nname='a'\ntoken='0123456789012345678901234'\n[[allocator]]\nname='b'\ntoken='0123456789012345678901234'",
            "[[fleet]]\nname='a'\ntoken='0123456789012345678901234'\nservers=['x']\nextra=1",
        ] {
            assert!(FleetCredentials::parse(bad).is_err(), "{bad}");
        }
    }
}
