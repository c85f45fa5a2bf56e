//! Minting tokens: what `matchmaker token` prints, what benchmarks and tests send.
//! A studio's login service mints its own; this signs the same claims with an
//! HS256 secret or a private key (PEM), and can publish a key's public half as a
//! JWK.

use jsonwebtoken::jwk::{Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, EncodingKey, Header};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug, thiserror::Error)]
pub enum MintError {
    #[error("the key: {0}")]
    Key(String),
    #[error("signing: {0}")]
    Sign(String),
    #[error("the HS256 secret must be at least {min} bytes, got {0}", min = crate::keys::MIN_SECRET_BYTES)]
    ShortSecret(usize),
}

/// Signs tokens for one issuer and audience.
#[derive(Clone)]
pub struct TokenSigner {
    alg: Algorithm,
    key: EncodingKey,
    kid: Option<String>,
    issuer: String,
    audience: String,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl TokenSigner {
    /// HS256 with a shared secret.
    pub fn hs256(secret: &[u8], issuer: &str, audience: &str) -> Result<Self, MintError> {
        if secret.len() < crate::keys::MIN_SECRET_BYTES {
            return Err(MintError::ShortSecret(secret.len()));
        }
        Ok(Self {
            alg: Algorithm::HS256,
            key: EncodingKey::from_secret(secret),
            kid: None,
            issuer: issuer.to_string(),
            audience: audience.to_string(),
        })
    }

    /// RS256/PS256/ES256/EdDSA with a private key in PEM, naming `kid`.
    pub fn from_pem(
        pem: &[u8],
        alg: Algorithm,
        kid: Option<&str>,
        issuer: &str,
        audience: &str,
    ) -> Result<Self, MintError> {
        let key = private_key(pem, alg)?;
        Ok(Self {
            alg,
            key,
            kid: kid.map(String::from),
            issuer: issuer.to_string(),
            audience: audience.to_string(),
        })
    }

    /// Names `kid` in the tokens' header.
    pub fn with_kid(mut self, kid: &str) -> Self {
        self.kid = Some(kid.to_string());
        self
    }

    /// A token for `sub` (a player id, or a service's name with `role` `service`)
    /// valid from now for `ttl`.
    pub fn sign(&self, sub: &str, role: Option<&str>, ttl: Duration) -> Result<String, MintError> {
        let now = now_secs();
        let mut claims = json!({
            "sub": sub,
            "iss": self.issuer,
            "aud": self.audience,
            "iat": now,
            "nbf": now,
            "exp": now + ttl.as_secs().max(1),
        });
        if let Some(role) = role {
            claims["role"] = role.into();
        }
        self.sign_claims(&claims)
    }

    /// Signs arbitrary claims (tests use it for expired, early or misaddressed tokens).
    pub fn sign_claims(&self, claims: &Value) -> Result<String, MintError> {
        let mut header = Header::new(self.alg);
        header.kid = self.kid.clone();
        jsonwebtoken::encode(&header, claims, &self.key).map_err(|e| MintError::Sign(e.to_string()))
    }

    /// The standard claims [`TokenSigner::sign`] would use, for tests to alter.
    pub fn claims(&self, sub: &str, ttl: Duration) -> Value {
        let now = now_secs();
        json!({"sub": sub, "iss": self.issuer, "aud": self.audience, "iat": now, "exp": now + ttl.as_secs()})
    }
}

/// The public JWK (with `kid`, `alg` and `"use": "sig"`) of a private key in PEM.
pub fn public_jwk(pem: &[u8], alg: Algorithm, kid: &str) -> Result<Value, MintError> {
    let key = private_key(pem, alg)?;
    let mut jwk = Jwk::from_encoding_key(&key, alg).map_err(|e| MintError::Key(e.to_string()))?;
    jwk.common.key_id = Some(kid.to_string());
    jwk.common.public_key_use = Some(PublicKeyUse::Signature);
    jwk.common.key_algorithm = Some(key_algorithm(alg)?);
    serde_json::to_value(jwk).map_err(|e| MintError::Key(e.to_string()))
}

/// A private key in PEM for `alg` (RSA, EC or Ed25519; HMAC keys are secrets).
fn private_key(pem: &[u8], alg: Algorithm) -> Result<EncodingKey, MintError> {
    match alg.family() {
        AlgorithmFamily::Rsa => EncodingKey::from_rsa_pem(pem),
        AlgorithmFamily::Ec => EncodingKey::from_ec_pem(pem),
        AlgorithmFamily::Ed => EncodingKey::from_ed_pem(pem),
        AlgorithmFamily::Hmac => {
            return Err(MintError::Key("HMAC keys are secrets, not PEM".into()));
        }
    }
    .map_err(|e| MintError::Key(e.to_string()))
}

fn key_algorithm(alg: Algorithm) -> Result<KeyAlgorithm, MintError> {
    format!("{alg:?}")
        .parse()
        .map_err(|_| MintError::Key(format!("no JWK algorithm for {alg:?}")))
}
