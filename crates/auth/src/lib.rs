//! Who is calling. A bearer token becomes a [`Caller`]: a player (the token's
//! subject is their id) or a trusted backend (a token with the service role, which
//! may act for players). [`Authenticator`] is the narrow trait the ingress asks;
//! [`JwtAuth`] verifies the studio's signed tokens, [`DevTokens`] takes the token as
//! the player id (laptops only). [`TokenSigner`] mints tokens for tools and tests.
//! [`FleetCredentials`] are the game servers' and allocators' tokens for gRPC.

mod dev;
mod fleet;
mod jwt;
mod keys;
mod mint;

pub use dev::{DevTokens, SERVICE_PREFIX};
pub use fleet::{FleetCredentials, FleetError, Grant};
pub use jwt::{JwtAuth, JwtConfig};
pub use keys::{KeyError, KeySet, MIN_SECRET_BYTES, read_secret_file};
pub use mint::{MintError, TokenSigner, public_jwk};

pub use jsonwebtoken::Algorithm;
use mm_domain::{Attributes, PlayerId};

/// The role claim (`"role"`) that marks a trusted backend's token.
pub const SERVICE_ROLE: &str = "service";
/// The role claim that marks an operator's token (the operator plane: the live
/// dashboard). Such a token acts for no player.
pub const OPERATOR_ROLE: &str = "operator";

/// Who a verified token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A player, identified by the token's subject.
    Player(PlayerId),
    /// A trusted backend (the studio's own services), named by the token's subject.
    Service(String),
    /// An operator (role `operator`), named by the token's subject: admitted to
    /// the operator plane, nothing else.
    Operator(String),
}

/// Why a token was refused. Every variant is a 401 at the API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the token is not a well-formed JWT")]
    Malformed,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet (nbf)")]
    NotYetValid,
    #[error("the token's signature does not verify")]
    BadSignature,
    #[error("the token is for another audience")]
    WrongAudience,
    #[error("the token is from an unexpected issuer")]
    WrongIssuer,
    #[error("the token lacks the {0} claim")]
    MissingClaim(String),
    #[error("the token's {0} claim is not valid")]
    BadClaim(String),
    #[error("no key with id {0:?} is configured")]
    UnknownKey(String),
    #[error("the token names no key (kid) and no default key is configured")]
    NoKey,
    #[error("algorithm {0} is not accepted for this key")]
    WrongAlgorithm(String),
    #[error("the token's subject is not a valid player id: {0}")]
    BadSubject(String),
    #[error("unknown role {0:?} (expected \"player\", \"service\" or \"operator\")")]
    UnknownRole(String),
    #[error("the token's header marks extensions {0:?} critical (crit), and none is implemented")]
    CriticalExtension(Vec<String>),
}

impl AuthError {
    /// What a refused caller is told: whether the token has expired (or is not
    /// valid yet), which a client can act on, and nothing else. The detail (which
    /// key, which claim) goes to the log only.
    pub fn public_message(&self) -> &'static str {
        match self {
            AuthError::Expired => "the token has expired",
            AuthError::NotYetValid => "the token is not valid yet",
            _ => "the token is not valid",
        }
    }
}

/// A verified token: who it speaks for, and the claims it carries that can be
/// ticket attributes (strings, numbers, lists of strings, under valid names), for
/// modes that take attributes from the token (`from_claims`).
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    pub caller: Caller,
    pub claims: Attributes,
}

/// Turns a bearer token into the caller it speaks for.
pub trait Authenticator: Send + Sync + 'static {
    fn authenticate(&self, token: &str) -> Result<Caller, AuthError>;

    /// [`Authenticator::authenticate`], with the token's claims (none by default:
    /// dev tokens carry none).
    fn verify(&self, token: &str) -> Result<Verified, AuthError> {
        Ok(Verified {
            caller: self.authenticate(token)?,
            claims: Attributes::default(),
        })
    }

    /// Dev mode: tokens are not verified (the API and logs say so).
    fn is_dev(&self) -> bool {
        false
    }
}

/// The caller named by a verified subject and role.
fn caller(sub: String, role: Option<&str>) -> Result<Caller, AuthError> {
    match role {
        None | Some("player") => PlayerId::new(sub)
            .map(Caller::Player)
            .map_err(|e| AuthError::BadSubject(e.to_string())),
        Some(role @ (SERVICE_ROLE | OPERATOR_ROLE)) => {
            if sub.is_empty() || sub.len() > 128 || sub.chars().any(char::is_control) {
                return Err(AuthError::BadClaim("sub".into()));
            }
            Ok(if role == SERVICE_ROLE {
                Caller::Service(sub)
            } else {
                Caller::Operator(sub)
            })
        }
        Some(other) => Err(AuthError::UnknownRole(other.to_string())),
    }
}
