//! Verifying the studio's signed tokens: the signature with the key the token
//! names ([`KeySet`]), then `exp`, `nbf`, `iss` and `aud` (all but `nbf`
//! required), then `sub` (the player id, or the service's name when `role` is
//! `service`). A header with `crit` is refused: no extension is implemented
//! (RFC 7515 4.1.11). Keys can be swapped while running ([`JwtAuth::replace_keys`]) so a
//! rotated JWKS file takes effect without a restart.

use crate::{AuthError, Authenticator, Caller, KeySet, Verified};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use mm_domain::{Attributes, Value};
use serde::Deserialize;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// What a token must say besides its signature.
#[derive(Debug, Clone)]
pub struct JwtConfig {
    /// The `iss` tokens must carry (the studio's login service).
    pub issuer: String,
    /// The `aud` tokens must carry (this service).
    pub audience: String,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
}

pub struct JwtAuth {
    config: JwtConfig,
    keys: RwLock<Arc<Loaded>>,
}

/// A key set with one validation per algorithm it uses.
struct Loaded {
    keys: KeySet,
    validations: Vec<(Algorithm, Validation)>,
}

#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    #[serde(default)]
    role: Option<String>,
    /// Every other claim; those that can be attributes become the token's
    /// attribute claims.
    #[serde(flatten)]
    rest: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The claims that can be ticket attributes: a valid name and a string, a
/// number, or a list of strings, within the limits of a ticket's attributes.
fn attribute_claims(rest: std::collections::BTreeMap<String, serde_json::Value>) -> Attributes {
    let mut out = Attributes::default();
    for (name, v) in rest {
        if !mm_domain::valid_name(&name) {
            continue;
        }
        let Ok(value) = serde_json::from_value::<Value>(v) else {
            continue;
        };
        let mut one = Attributes::default();
        one.insert(name.clone(), value.clone());
        if one.check().is_ok() && out.len() < mm_domain::MAX_ATTRIBUTES {
            out.insert(name, value);
        }
    }
    out
}

impl JwtAuth {
    pub fn new(config: JwtConfig, keys: KeySet) -> Self {
        let loaded = Loaded::new(&config, keys);
        Self {
            config,
            keys: RwLock::new(Arc::new(loaded)),
        }
    }

    /// Verifies with `keys` from now on.
    pub fn replace_keys(&self, keys: KeySet) {
        let loaded = Arc::new(Loaded::new(&self.config, keys));
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = loaded;
    }

    fn loaded(&self) -> Arc<Loaded> {
        self.keys.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Loaded {
    fn new(config: &JwtConfig, keys: KeySet) -> Self {
        let mut validations = Vec::new();
        for alg in [
            Algorithm::HS256,
            Algorithm::HS384,
            Algorithm::HS512,
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
            Algorithm::ES256,
            Algorithm::ES384,
            Algorithm::EdDSA,
        ] {
            let mut v = Validation::new(alg);
            v.set_issuer(&[&config.issuer]);
            v.set_audience(&[&config.audience]);
            v.set_required_spec_claims(&["exp", "iss", "aud"]);
            v.validate_exp = true;
            v.validate_nbf = true;
            v.validate_aud = true;
            v.leeway = config.leeway.as_secs();
            validations.push((alg, v));
        }
        Self { keys, validations }
    }
}

fn map_error(e: jsonwebtoken::errors::Error) -> AuthError {
    match e.into_kind() {
        ErrorKind::ExpiredSignature => AuthError::Expired,
        ErrorKind::ImmatureSignature => AuthError::NotYetValid,
        ErrorKind::InvalidSignature => AuthError::BadSignature,
        ErrorKind::InvalidAudience => AuthError::WrongAudience,
        ErrorKind::InvalidIssuer => AuthError::WrongIssuer,
        ErrorKind::MissingRequiredClaim(c) => AuthError::MissingClaim(c),
        ErrorKind::InvalidClaimFormat(c) => AuthError::BadClaim(c),
        ErrorKind::InvalidAlgorithm => AuthError::WrongAlgorithm("in header".into()),
        _ => AuthError::Malformed,
    }
}

impl Authenticator for JwtAuth {
    fn authenticate(&self, token: &str) -> Result<Caller, AuthError> {
        self.verify(token).map(|v| v.caller)
    }

    fn verify(&self, token: &str) -> Result<Verified, AuthError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| AuthError::Malformed)?;
        // RFC 7515 4.1.11: a token whose header names a critical extension the
        // recipient does not implement must be refused. We implement none.
        if let Some(crit) = header.crit {
            return Err(AuthError::CriticalExtension(crit));
        }
        let loaded = self.loaded();
        let key = loaded.keys.pick(&header)?;
        let validation = loaded
            .validations
            .iter()
            .find(|(a, _)| *a == key.alg)
            .map(|(_, v)| v)
            .ok_or_else(|| AuthError::WrongAlgorithm(format!("{:?}", key.alg)))?;
        let data =
            jsonwebtoken::decode::<Claims>(token, &key.key, validation).map_err(map_error)?;
        let Claims { sub, role, rest } = data.claims;
        let sub = sub.ok_or_else(|| AuthError::MissingClaim("sub".into()))?;
        Ok(Verified {
            caller: crate::caller(sub, role.as_deref())?,
            claims: attribute_claims(rest),
        })
    }
}
