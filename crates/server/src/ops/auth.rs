//! Who may use the operator plane: a caller with the operator secret
//! (`OPS_TOKEN_FILE`, compared in constant time) or a signed token whose role
//! is `operator`. In dev mode with no secret configured, anyone (the plane is
//! then on loopback only). A browser hands its credential over once, as
//! `/dashboard?token=...`, and keeps it in a cookie scoped to the dashboard.

use mm_auth::{Authenticator, Caller};
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The cookie a browser keeps the operator credential in.
pub const COOKIE: &str = "mm_ops";

/// Why a caller is not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No credential at all.
    Missing,
    /// A credential that is neither the secret nor a token that verifies.
    Invalid,
    /// A valid token of a player or a backend, not of an operator.
    NotOperator,
}

/// The operator credentials this process accepts.
#[derive(Clone)]
pub struct OperatorAuth {
    secret: Option<Arc<Vec<u8>>>,
    tokens: Option<Arc<dyn Authenticator>>,
    open: bool,
}

impl OperatorAuth {
    /// Admits the holder of `secret` and, when `tokens` verifies signed tokens
    /// (not dev tokens), tokens with the operator role.
    pub fn new(secret: Option<Vec<u8>>, tokens: Option<Arc<dyn Authenticator>>) -> Self {
        Self {
            secret: secret.map(Arc::new),
            tokens: tokens.filter(|t| !t.is_dev()),
            open: false,
        }
    }

    /// Admits everyone (dev mode on loopback, no secret configured).
    pub fn open() -> Self {
        Self {
            secret: None,
            tokens: None,
            open: true,
        }
    }

    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Whether any credential can pass (otherwise the dashboard cannot be used).
    pub fn admits_anyone(&self) -> bool {
        self.open || self.secret.is_some() || self.tokens.is_some()
    }

    /// The operator `token` names: `ops` for the secret's holder, the token's
    /// subject for a signed token, `dev` when the plane is open.
    pub fn check(&self, token: Option<&str>) -> Result<String, Refusal> {
        if self.open {
            return Ok("dev".into());
        }
        let token = token.ok_or(Refusal::Missing)?;
        if let Some(secret) = &self.secret
            && bool::from(secret.as_slice().ct_eq(token.as_bytes()))
        {
            return Ok("ops".into());
        }
        let tokens = self.tokens.as_ref().ok_or(Refusal::Invalid)?;
        match tokens.authenticate(token) {
            Ok(Caller::Operator(name)) => Ok(name),
            Ok(_) => Err(Refusal::NotOperator),
            Err(e) => {
                tracing::debug!(error = %e, "operator token refused");
                Err(Refusal::Invalid)
            }
        }
    }
}

/// Whether `secret` can travel in a header and a cookie as it is: printable
/// ASCII without spaces, quotes, commas, semicolons or backslashes.
pub fn cookie_safe(secret: &[u8]) -> bool {
    secret
        .iter()
        .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_auth::{DevTokens, JwtAuth, JwtConfig, KeySet, TokenSigner};
    use std::time::Duration;

    const SECRET: &[u8] = b"an-operator-secret-of-32-bytes-or-more";
    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef-test";

    fn jwt() -> Arc<dyn Authenticator> {
        Arc::new(JwtAuth::new(
            JwtConfig {
                issuer: "i".into(),
                audience: "a".into(),
                leeway: Duration::ZERO,
            },
            KeySet::default().with_secret(KEY).unwrap(),
        ))
    }

    #[test]
    fn the_secret_or_an_operator_token_passes() {
        let auth = OperatorAuth::new(Some(SECRET.to_vec()), Some(jwt()));
        let signer = TokenSigner::hs256(KEY, "i", "a").unwrap();
        let hour = Duration::from_secs(3600);
        assert_eq!(
            auth.check(Some(std::str::from_utf8(SECRET).unwrap())),
            Ok("ops".into())
        );
        let op = signer.sign("ann", Some("operator"), hour).unwrap();
        assert_eq!(auth.check(Some(&op)), Ok("ann".into()));
        let player = signer.sign("bob", None, hour).unwrap();
        assert_eq!(auth.check(Some(&player)), Err(Refusal::NotOperator));
        assert_eq!(auth.check(Some("guess")), Err(Refusal::Invalid));
        assert_eq!(auth.check(None), Err(Refusal::Missing));
        // A prefix of the secret is not the secret.
        let prefix = std::str::from_utf8(&SECRET[..10]).unwrap();
        assert_eq!(auth.check(Some(prefix)), Err(Refusal::Invalid));
    }

    #[test]
    fn dev_tokens_never_make_an_operator() {
        let auth = OperatorAuth::new(None, Some(Arc::new(DevTokens)));
        assert!(!auth.admits_anyone());
        assert_eq!(auth.check(Some("alice")), Err(Refusal::Invalid));
        assert_eq!(OperatorAuth::open().check(None), Ok("dev".into()));
    }

    #[test]
    fn secrets_must_be_cookie_safe() {
        assert!(cookie_safe(b"abcDEF0123-_.~+/="));
        for bad in [
            &b"a b"[..],
            b"a;b",
            b"a,b",
            b"a\"b",
            b"a\\b",
            "é".as_bytes(),
        ] {
            assert!(!cookie_safe(bad), "{bad:?}");
        }
    }
}
