//! Round trips through real signatures: every algorithm we accept, and every way a
//! token must be refused.

use mm_auth::{
    Algorithm, AuthError, Authenticator, Caller, JwtAuth, JwtConfig, KeySet, TokenSigner,
    public_jwk,
};
use mm_domain::PlayerId;
use serde_json::json;
use std::time::Duration;

const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef-test";
use mm_testkit::keys::{ED1, RSA1, RSA2};
const HOUR: Duration = Duration::from_secs(3600);

fn config() -> JwtConfig {
    JwtConfig {
        issuer: "login.example".into(),
        audience: "matchmaker".into(),
        leeway: Duration::from_secs(5),
    }
}

fn jwks(keys: &[(&[u8], Algorithm, &str)]) -> String {
    let keys: Vec<_> = keys
        .iter()
        .map(|(pem, alg, kid)| public_jwk(pem, *alg, kid).unwrap())
        .collect();
    json!({ "keys": keys }).to_string()
}

fn auth() -> JwtAuth {
    let keys = KeySet::default()
        .with_secret(SECRET)
        .unwrap()
        .with_jwks(&jwks(&[
            (RSA1, Algorithm::RS256, "rsa-1"),
            (RSA2, Algorithm::RS256, "rsa-2"),
            (ED1, Algorithm::EdDSA, "ed-1"),
        ]))
        .unwrap();
    JwtAuth::new(config(), keys)
}

fn hs() -> TokenSigner {
    TokenSigner::hs256(SECRET, "login.example", "matchmaker").unwrap()
}

fn player(id: &str) -> Caller {
    Caller::Player(PlayerId::new(id).unwrap())
}

#[test]
fn every_algorithm_round_trips_and_keys_are_chosen_by_kid() {
    let auth = auth();
    let t = hs().sign("alice", None, HOUR).unwrap();
    assert_eq!(auth.authenticate(&t), Ok(player("alice")));
    for (pem, alg, kid) in [
        (RSA1, Algorithm::RS256, "rsa-1"),
        (RSA2, Algorithm::RS256, "rsa-2"),
        (ED1, Algorithm::EdDSA, "ed-1"),
    ] {
        let signer =
            TokenSigner::from_pem(pem, alg, Some(kid), "login.example", "matchmaker").unwrap();
        let t = signer.sign("bob", None, HOUR).unwrap();
        assert_eq!(auth.authenticate(&t), Ok(player("bob")), "{kid}");
        // The same key under another key's id does not verify.
        let wrong = TokenSigner::from_pem(
            pem,
            alg,
            Some(if kid == "rsa-1" { "rsa-2" } else { "rsa-1" }),
            "login.example",
            "matchmaker",
        )
        .unwrap();
        let t = wrong.sign("bob", None, HOUR).unwrap();
        assert!(auth.authenticate(&t).is_err(), "{kid} under another kid");
    }
}

#[test]
fn the_service_role_is_a_backend() {
    let t = hs().sign("imports", Some("service"), HOUR).unwrap();
    assert_eq!(
        auth().authenticate(&t),
        Ok(Caller::Service("imports".into()))
    );
    let t = hs().sign("alice", Some("admin"), HOUR).unwrap();
    assert!(matches!(
        auth().authenticate(&t),
        Err(AuthError::UnknownRole(_))
    ));
    let t = hs().sign("not a player", None, HOUR).unwrap();
    assert!(matches!(
        auth().authenticate(&t),
        Err(AuthError::BadSubject(_))
    ));
}

#[test]
fn expired_early_misaddressed_and_incomplete_tokens_are_refused() {
    let auth = auth();
    let signer = hs();
    let base = signer.claims("alice", HOUR);
    let now = base["iat"].as_u64().unwrap();
    let cases = [
        (json!({"exp": now - 60}), AuthError::Expired),
        (json!({"nbf": now + 600}), AuthError::NotYetValid),
        (json!({"aud": "another-service"}), AuthError::WrongAudience),
        (json!({"iss": "someone-else"}), AuthError::WrongIssuer),
    ];
    for (change, want) in cases {
        let mut claims = base.clone();
        for (k, v) in change.as_object().unwrap() {
            claims[k] = v.clone();
        }
        let t = signer.sign_claims(&claims).unwrap();
        assert_eq!(auth.authenticate(&t), Err(want), "{change}");
    }
    for missing in ["exp", "aud", "iss", "sub"] {
        let mut claims = base.clone();
        claims.as_object_mut().unwrap().remove(missing);
        let t = signer.sign_claims(&claims).unwrap();
        assert_eq!(
            auth.authenticate(&t),
            Err(AuthError::MissingClaim(missing.into())),
            "without {missing}"
        );
    }
    // Within the leeway an expired token still passes.
    let mut claims = base.clone();
    claims["exp"] = (now - 2).into();
    assert!(
        auth.authenticate(&signer.sign_claims(&claims).unwrap())
            .is_ok()
    );
}

#[test]
fn forged_tampered_and_confused_tokens_are_refused() {
    let auth = auth();
    // Signed with another secret.
    let forger = TokenSigner::hs256(
        b"another-secret-of-at-least-32-bytes!!",
        "login.example",
        "matchmaker",
    )
    .unwrap();
    let t = forger.sign("alice", None, HOUR).unwrap();
    assert_eq!(auth.authenticate(&t), Err(AuthError::BadSignature));
    // A valid token whose payload was swapped for another player's.
    let good = hs().sign("alice", None, HOUR).unwrap();
    let other = hs().sign("mallory", None, HOUR).unwrap();
    let parts: Vec<&str> = good.split('.').collect();
    let payload = other.split('.').nth(1).unwrap();
    let tampered = format!("{}.{}.{}", parts[0], payload, parts[2]);
    assert_eq!(auth.authenticate(&tampered), Err(AuthError::BadSignature));
    // An HS256 token naming an RSA key (the public key used as an HMAC secret).
    let confused = TokenSigner::hs256(
        public_jwk(RSA1, Algorithm::RS256, "rsa-1").unwrap()["n"]
            .as_str()
            .unwrap()
            .as_bytes(),
        "login.example",
        "matchmaker",
    )
    .unwrap()
    .with_kid("rsa-1");
    let t = confused.sign("alice", None, HOUR).unwrap();
    assert!(matches!(
        auth.authenticate(&t),
        Err(AuthError::WrongAlgorithm(_))
    ));
    // alg "none".
    let header = base64_url(br#"{"alg":"none","typ":"JWT"}"#);
    let body = base64_url(hs().claims("alice", HOUR).to_string().as_bytes());
    assert!(auth.authenticate(&format!("{header}.{body}.")).is_err());
    // Unknown key, garbage.
    let t = TokenSigner::from_pem(
        RSA1,
        Algorithm::RS256,
        Some("rsa-9"),
        "login.example",
        "matchmaker",
    )
    .unwrap()
    .sign("alice", None, HOUR)
    .unwrap();
    assert_eq!(
        auth.authenticate(&t),
        Err(AuthError::UnknownKey("rsa-9".into()))
    );
    for junk in ["", "alice", "a.b.c", "....", "eyJ.eyJ.x"] {
        assert!(auth.authenticate(junk).is_err(), "{junk:?}");
    }
}

#[test]
fn rotated_keys_take_effect_without_a_restart() {
    let auth = JwtAuth::new(
        config(),
        KeySet::default()
            .with_jwks(&jwks(&[(RSA1, Algorithm::RS256, "rsa-1")]))
            .unwrap(),
    );
    let old = TokenSigner::from_pem(
        RSA1,
        Algorithm::RS256,
        Some("rsa-1"),
        "login.example",
        "matchmaker",
    )
    .unwrap();
    let new = TokenSigner::from_pem(
        RSA2,
        Algorithm::RS256,
        Some("rsa-2"),
        "login.example",
        "matchmaker",
    )
    .unwrap();
    assert!(
        auth.authenticate(&old.sign("a", None, HOUR).unwrap())
            .is_ok()
    );
    assert!(
        auth.authenticate(&new.sign("a", None, HOUR).unwrap())
            .is_err()
    );
    auth.replace_keys(
        KeySet::default()
            .with_jwks(&jwks(&[(RSA2, Algorithm::RS256, "rsa-2")]))
            .unwrap(),
    );
    assert!(
        auth.authenticate(&old.sign("a", None, HOUR).unwrap())
            .is_err()
    );
    assert!(
        auth.authenticate(&new.sign("a", None, HOUR).unwrap())
            .is_ok()
    );
}

#[test]
fn bad_key_material_is_refused_at_load() {
    assert!(KeySet::default().with_secret(b"short").is_err());
    assert!(KeySet::default().with_jwks("{}").is_err());
    assert!(
        KeySet::default()
            .with_jwks(r#"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}"#)
            .is_err()
    );
    let twice = jwks(&[(RSA1, Algorithm::RS256, "k"), (RSA2, Algorithm::RS256, "k")]);
    assert!(KeySet::default().with_jwks(&twice).is_err());
    assert!(KeySet::default().non_empty().is_err());
}

fn base64_url(bytes: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[test]
fn the_operator_role_is_an_operator() {
    let t = hs().sign("ops-ann", Some("operator"), HOUR).unwrap();
    assert_eq!(
        auth().authenticate(&t),
        Ok(Caller::Operator("ops-ann".into()))
    );
}

/// RFC 7515 4.1.11: a header that names critical extensions is refused, since
/// none is implemented, even with a good signature and good claims.
#[test]
fn a_critical_header_extension_is_refused() {
    let claims = hs().claims("alice", HOUR);
    let key = jsonwebtoken::EncodingKey::from_secret(SECRET);
    let mut header = jsonwebtoken::Header::new(Algorithm::HS256);
    header.crit = Some(vec!["exp".into()]);
    let t = jsonwebtoken::encode(&header, &claims, &key).unwrap();
    assert_eq!(
        auth().authenticate(&t),
        Err(AuthError::CriticalExtension(vec!["exp".into()]))
    );
    // The same token without it passes.
    let t =
        jsonwebtoken::encode(&jsonwebtoken::Header::new(Algorithm::HS256), &claims, &key).unwrap();
    assert_eq!(auth().authenticate(&t), Ok(player("alice")));
    // What a refused caller is told names neither key nor claim.
    for e in [
        AuthError::UnknownKey("rsa-9".into()),
        AuthError::NoKey,
        AuthError::CriticalExtension(vec!["exp".into()]),
        AuthError::BadSignature,
    ] {
        assert_eq!(e.public_message(), "the token is not valid");
    }
    assert_eq!(AuthError::Expired.public_message(), "the token has expired");
}
