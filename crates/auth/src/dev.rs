//! Dev tokens: the bearer token *is* the player id, and `service:NAME` is a
//! trusted backend. Nothing is verified, so anyone can act as anyone: the binary
//! allows this mode only on a loopback address.

use crate::{AuthError, Authenticator, Caller};
use mm_domain::PlayerId;

/// A dev token starting with this names a trusted backend (player ids cannot
/// contain `:`).
pub const SERVICE_PREFIX: &str = "service:";

pub struct DevTokens;

impl Authenticator for DevTokens {
    fn authenticate(&self, token: &str) -> Result<Caller, AuthError> {
        if let Some(name) = token.strip_prefix(SERVICE_PREFIX) {
            return crate::caller(name.to_string(), Some(crate::SERVICE_ROLE));
        }
        PlayerId::new(token)
            .map(Caller::Player)
            .map_err(|e| AuthError::BadSubject(e.to_string()))
    }

    fn is_dev(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_the_player_or_a_service() {
        let dev = DevTokens;
        assert_eq!(
            dev.authenticate("alice"),
            Ok(Caller::Player(PlayerId::new("alice").unwrap()))
        );
        assert_eq!(
            dev.authenticate("service:imports"),
            Ok(Caller::Service("imports".into()))
        );
        assert!(matches!(
            dev.authenticate("bad token"),
            Err(AuthError::BadSubject(_))
        ));
        assert!(dev.authenticate("service:").is_err());
    }
}
