//! How the API identifies callers (`AUTH`, `JWT_*`), the JWKS file watcher that
//! makes key rotation take effect without a restart, and `matchmaker token`.

use anyhow::{Context, Result, bail};
use clap::Args;
use mm_auth::{Algorithm, Authenticator, DevTokens, JwtAuth, JwtConfig, KeySet, TokenSigner};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;

fn duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("{e} (use e.g. 30s, 1h)"))
}

/// How often the JWKS file is checked for changes.
const JWKS_CHECK: Duration = Duration::from_secs(5);

/// Player identity.
#[derive(Debug, Clone, Args)]
pub struct AuthArgs {
    /// How callers are identified: `jwt` (tokens signed by your login service) or
    /// `dev` (the token is the player id, so anyone can act as anyone; loopback
    /// addresses only). `serve` defaults to `jwt` when JWT_SECRET_FILE or
    /// JWT_JWKS_FILE is set, else to `dev` on a loopback address.
    #[arg(long, env = "AUTH", value_parser = ["dev", "jwt"])]
    pub auth: Option<String>,
    /// File holding the HS256 secret shared with the login service (32 bytes or more).
    #[arg(long, env = "JWT_SECRET_FILE")]
    pub jwt_secret_file: Option<PathBuf>,
    /// JWKS file of the login service's public keys (RS256, PS256, ES256, EdDSA),
    /// chosen by each token's `kid`; re-read when it changes, so keys can rotate.
    #[arg(long, env = "JWT_JWKS_FILE")]
    pub jwt_jwks_file: Option<PathBuf>,
    /// The `iss` every token must carry.
    #[arg(long, env = "JWT_ISSUER", default_value = "matchmaker")]
    pub jwt_issuer: String,
    /// The `aud` every token must carry.
    #[arg(long, env = "JWT_AUDIENCE", default_value = "matchmaker")]
    pub jwt_audience: String,
    /// Clock skew allowed on `exp` and `nbf`.
    #[arg(long, env = "JWT_LEEWAY", default_value = "30s", value_parser = duration)]
    pub jwt_leeway: Duration,
}

/// The configured authenticator, and the JWKS watcher to run beside it.
pub struct Identity {
    pub auth: Arc<dyn Authenticator>,
    jwt: Option<(Arc<JwtAuth>, Option<PathBuf>)>,
}

impl AuthArgs {
    /// The authenticator for an API listening on `listen`. With `dev_default`
    /// (`serve`), AUTH defaults to jwt when token keys are configured
    /// (JWT_SECRET_FILE or JWT_JWKS_FILE), else to dev on a loopback address.
    pub fn identity(&self, listen: SocketAddr, dev_default: bool) -> Result<Identity> {
        let keys_given = self.jwt_secret_file.is_some() || self.jwt_jwks_file.is_some();
        let mode = match (self.auth.as_deref(), dev_default) {
            (Some(m), _) => m,
            // Keys mean signed tokens are wanted: never fall back to dev mode.
            (None, true) if keys_given => "jwt",
            (None, true) if listen.ip().is_loopback() => "dev",
            (None, true) => bail!(
                "LISTEN_ADDR (--listen) {listen} is not a loopback address, so dev tokens (token = player id, anyone can act as anyone) are off: set AUTH=jwt with JWT_SECRET_FILE or JWT_JWKS_FILE"
            ),
            (None, false) => bail!(
                "AUTH (--auth) is required: jwt (with JWT_SECRET_FILE or JWT_JWKS_FILE) or dev (token = player id; loopback addresses only)"
            ),
        };
        if mode == "dev" {
            if !listen.ip().is_loopback() {
                bail!(
                    "AUTH=dev lets anyone act as anyone (the token is the player id), so it is refused on {listen}: listen on a loopback address (127.0.0.1) or set AUTH=jwt"
                );
            }
            return Ok(Identity {
                auth: Arc::new(DevTokens),
                jwt: None,
            });
        }
        let keys = self.keys()?;
        tracing::info!(
            keys = keys.len(),
            issuer = %self.jwt_issuer,
            audience = %self.jwt_audience,
            "verifying signed tokens"
        );
        let jwt = Arc::new(JwtAuth::new(
            JwtConfig {
                issuer: self.jwt_issuer.clone(),
                audience: self.jwt_audience.clone(),
                leeway: self.jwt_leeway,
            },
            keys,
        ));
        Ok(Identity {
            auth: jwt.clone(),
            jwt: Some((jwt, self.jwt_jwks_file.clone())),
        })
    }

    fn keys(&self) -> Result<KeySet> {
        let mut keys = KeySet::default();
        if let Some(path) = &self.jwt_secret_file {
            let secret =
                mm_auth::read_secret_file(path).context("JWT_SECRET_FILE (--jwt-secret-file)")?;
            keys = keys.with_secret(&secret).with_context(|| {
                format!("JWT_SECRET_FILE (--jwt-secret-file) {}", path.display())
            })?;
        }
        if let Some(path) = &self.jwt_jwks_file {
            keys = keys
                .with_jwks_file(path)
                .context("JWT_JWKS_FILE (--jwt-jwks-file)")?;
        }
        keys.non_empty().map_err(|_| {
            anyhow::anyhow!(
                "AUTH=jwt needs keys: set JWT_SECRET_FILE (HS256) and/or JWT_JWKS_FILE (public keys)"
            )
        })
    }
}

impl Identity {
    /// Re-reads the JWKS file whenever it changes until `shutdown`; a file that
    /// does not parse is logged and the keys in use are kept.
    pub fn watch(&self, args: &AuthArgs, shutdown: CancellationToken) {
        let Some((jwt, Some(path))) = self.jwt.clone() else {
            return;
        };
        let args = args.clone();
        tokio::spawn(async move {
            let mut seen = modified(&path);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(JWKS_CHECK) => {}
                }
                let now = modified(&path);
                if now == seen {
                    continue;
                }
                seen = now;
                match args.keys() {
                    Ok(keys) => {
                        tracing::info!(keys = keys.len(), file = %path.display(), "JWKS reloaded");
                        jwt.replace_keys(keys);
                    }
                    Err(e) => {
                        tracing::error!(error = %format!("{e:#}"), "JWKS file changed but cannot be used; keeping the keys in use")
                    }
                }
            }
        });
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// `matchmaker token`: prints a signed token.
#[derive(Debug, Clone, Args)]
pub struct TokenArgs {
    /// The player id (or, with --service or --operator, the backend's or the
    /// operator's name).
    pub subject: String,
    /// A trusted-backend token: it may act for any player (X-Player-Id), name any
    /// players on a ticket, and pass ratings.
    #[arg(long, conflicts_with = "operator")]
    pub service: bool,
    /// An operator's token (role "operator"): opens the live dashboard on the
    /// operator plane, and nothing on the player API.
    #[arg(long)]
    pub operator: bool,
    /// Sign with this HS256 secret file.
    #[arg(long, env = "JWT_SECRET_FILE", conflicts_with = "key_file")]
    pub secret_file: Option<PathBuf>,
    /// Sign with this private key (PEM) instead; its public half must be in the
    /// service's JWKS file under --kid.
    #[arg(long, requires = "kid")]
    pub key_file: Option<PathBuf>,
    /// The key id to name (required with --key-file).
    #[arg(long)]
    pub kid: Option<String>,
    /// Algorithm for --key-file: RS256, PS256, ES256 or EdDSA.
    #[arg(long, default_value = "RS256")]
    pub alg: String,
    /// How long the token is valid.
    #[arg(long, default_value = "1h", value_parser = duration)]
    pub ttl: Duration,
    #[arg(long, env = "JWT_ISSUER", default_value = "matchmaker")]
    pub issuer: String,
    #[arg(long, env = "JWT_AUDIENCE", default_value = "matchmaker")]
    pub audience: String,
}

pub fn token(args: TokenArgs) -> Result<()> {
    let signer = match (&args.secret_file, &args.key_file) {
        (Some(path), _) => {
            let secret = mm_auth::read_secret_file(path).context("--secret-file")?;
            TokenSigner::hs256(&secret, &args.issuer, &args.audience)
                .with_context(|| format!("--secret-file {}", path.display()))?
        }
        (None, Some(path)) => {
            let pem =
                std::fs::read(path).with_context(|| format!("--key-file {}", path.display()))?;
            let alg: Algorithm = args.alg.parse().map_err(|_| {
                anyhow::anyhow!("--alg {:?}: use RS256, PS256, ES256 or EdDSA", args.alg)
            })?;
            TokenSigner::from_pem(&pem, alg, args.kid.as_deref(), &args.issuer, &args.audience)
                .with_context(|| format!("--key-file {}", path.display()))?
        }
        (None, None) => bail!("give --secret-file (or JWT_SECRET_FILE) or --key-file with --kid"),
    };
    if args.ttl.is_zero() {
        bail!("--ttl must be more than zero");
    }
    let role = if args.service {
        Some(mm_auth::SERVICE_ROLE)
    } else if args.operator {
        Some(mm_auth::OPERATOR_ROLE)
    } else {
        None
    };
    if role.is_none() {
        mm_domain::PlayerId::new(args.subject.clone())
            .map_err(|e| anyhow::anyhow!("PLAYER {:?}: {e}", args.subject))?;
    }
    let token = signer.sign(&args.subject, role, args.ttl)?;
    println!("{token}");
    Ok(())
}
