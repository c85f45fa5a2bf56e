//! The keys tokens are verified with: an HS256 shared secret and the public keys
//! of a JWKS document, each bound to one algorithm so a token cannot pick another
//! (no RS256 public key used as an HMAC secret). A token names its key by `kid`;
//! one without a `kid` uses the secret (or the only JWKS key when there is no
//! secret).

use crate::AuthError;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Header};
use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

/// Shortest HS256 secret accepted (RFC 7518 asks for a key as long as the hash).
pub const MIN_SECRET_BYTES: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the HS256 secret must be at least {MIN_SECRET_BYTES} bytes, got {0}")]
    ShortSecret(usize),
    #[error("not a JWKS document (expected {{\"keys\": [...]}}): {0}")]
    Jwks(String),
    #[error("JWKS key {index}: {reason}")]
    BadKey { index: usize, reason: String },
    #[error("JWKS key id {0:?} appears twice")]
    DuplicateKid(String),
    #[error("no keys: configure a secret or a JWKS file")]
    Empty,
}

/// A verification key and the one algorithm it verifies.
pub struct Key {
    pub alg: Algorithm,
    pub key: DecodingKey,
}

/// Every key tokens may be signed with.
#[derive(Default)]
pub struct KeySet {
    by_kid: HashMap<String, Key>,
    secret: Option<Key>,
}

/// Reads a secret file, without the trailing newline an editor or `echo` leaves.
pub fn read_secret_file(path: &Path) -> Result<Vec<u8>, KeyError> {
    let mut bytes = std::fs::read(path).map_err(|source| KeyError::Read {
        path: path.display().to_string(),
        source,
    })?;
    while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        bytes.pop();
    }
    Ok(bytes)
}

impl KeySet {
    /// Adds the HS256 shared secret (tokens without a `kid`).
    pub fn with_secret(mut self, secret: &[u8]) -> Result<Self, KeyError> {
        if secret.len() < MIN_SECRET_BYTES {
            return Err(KeyError::ShortSecret(secret.len()));
        }
        self.secret = Some(Key {
            alg: Algorithm::HS256,
            key: DecodingKey::from_secret(secret),
        });
        Ok(self)
    }

    /// Adds every signing key of a JWKS document. Keys must have a `kid`; keys
    /// marked for encryption (`"use": "enc"`) are skipped.
    pub fn with_jwks(mut self, json: &str) -> Result<Self, KeyError> {
        let set: JwkSet = serde_json::from_str(json).map_err(|e| KeyError::Jwks(e.to_string()))?;
        for (index, jwk) in set.keys.iter().enumerate() {
            let bad = |reason: String| KeyError::BadKey { index, reason };
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                continue;
            }
            let kid = jwk
                .common
                .key_id
                .clone()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| bad("has no kid".into()))?;
            let alg = match jwk.common.key_algorithm {
                Some(a) => Algorithm::from_str(&a.to_string())
                    .map_err(|_| bad(format!("algorithm {a} cannot sign tokens")))?,
                None => {
                    infer_alg(&jwk.algorithm).ok_or_else(|| bad("unsupported key type".into()))?
                }
            };
            let key = DecodingKey::from_jwk(jwk).map_err(|e| bad(e.to_string()))?;
            if key.family() != alg.family() {
                return Err(bad(format!("the key cannot verify {alg:?}")));
            }
            if self.by_kid.insert(kid.clone(), Key { alg, key }).is_some() {
                return Err(KeyError::DuplicateKid(kid));
            }
        }
        Ok(self)
    }

    /// Reads a JWKS file.
    pub fn with_jwks_file(self, path: &Path) -> Result<Self, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Read {
            path: path.display().to_string(),
            source,
        })?;
        self.with_jwks(&text)
    }

    /// Refuses an empty set.
    pub fn non_empty(self) -> Result<Self, KeyError> {
        if self.by_kid.is_empty() && self.secret.is_none() {
            return Err(KeyError::Empty);
        }
        Ok(self)
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.by_kid.len() + usize::from(self.secret.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key a token's header names, if its algorithm is the key's.
    pub fn pick(&self, header: &Header) -> Result<&Key, AuthError> {
        let key = match &header.kid {
            Some(kid) => self
                .by_kid
                .get(kid)
                .ok_or_else(|| AuthError::UnknownKey(kid.clone()))?,
            None => match (&self.secret, self.by_kid.len()) {
                (Some(k), _) => k,
                (None, 1) => self.by_kid.values().next().expect("one key"),
                (None, _) => return Err(AuthError::NoKey),
            },
        };
        if key.alg != header.alg {
            return Err(AuthError::WrongAlgorithm(format!("{:?}", header.alg)));
        }
        Ok(key)
    }
}

fn infer_alg(params: &AlgorithmParameters) -> Option<Algorithm> {
    Some(match params {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::OctetKey(_) => Algorithm::HS256,
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            Algorithm::EdDSA
        }
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => Algorithm::ES256,
            EllipticCurve::P384 => Algorithm::ES384,
            _ => return None,
        },
        _ => return None,
    })
}
