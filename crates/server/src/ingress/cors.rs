//! Cross-origin access for browser games: which web origins may call the API
//! (`CORS_ALLOWED_ORIGINS`). Players authenticate with bearer tokens, never
//! cookies, so credentials are not allowed and `*` is safe where a studio wants
//! any origin. Preflights are answered here, before authentication and rate
//! limits; every answer (errors too) carries the headers, so a browser client
//! can read the API's error bodies and `Retry-After`. The WebSocket is not
//! subject to CORS.

use axum::http::{HeaderName, HeaderValue, Method, header};
use std::time::Duration;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The web origins allowed to call the API.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// No cross-origin calls (the default).
    #[default]
    None,
    /// Any origin (`*`).
    Any,
    /// These origins exactly (`https://game.example.com`).
    List(Vec<HeaderValue>),
}

/// An entry that is not an origin.
#[derive(Debug, thiserror::Error)]
#[error("not a web origin (scheme://host[:port], no path): {0:?}")]
pub struct BadOrigin(String);

impl std::str::FromStr for AllowedOrigins {
    type Err = BadOrigin;

    /// Comma-separated origins, `*` for any, empty for none.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let entries: Vec<&str> = s
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        if entries.is_empty() {
            return Ok(Self::None);
        }
        if entries == ["*"] {
            return Ok(Self::Any);
        }
        entries
            .into_iter()
            .map(|e| {
                let (scheme, rest) = e.split_once("://").ok_or_else(|| BadOrigin(e.into()))?;
                let ok = matches!(scheme, "http" | "https")
                    && !rest.is_empty()
                    && !rest.contains(['/', '?', '#', '*', ' ']);
                if !ok {
                    return Err(BadOrigin(e.into()));
                }
                HeaderValue::from_str(e).map_err(|_| BadOrigin(e.into()))
            })
            .collect::<Result<_, _>>()
            .map(Self::List)
    }
}

impl AllowedOrigins {
    /// The layer answering preflights and marking answers, or `None` when no
    /// origin is allowed.
    pub fn layer(&self) -> Option<CorsLayer> {
        let origin = match self {
            Self::None => return None,
            Self::Any => AllowOrigin::any(),
            Self::List(list) => AllowOrigin::list(list.clone()),
        };
        Some(
            CorsLayer::new()
                .allow_origin(origin)
                .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
                .allow_headers([
                    header::AUTHORIZATION,
                    header::CONTENT_TYPE,
                    header::ACCEPT,
                    HeaderName::from_static("x-player-id"),
                ])
                .expose_headers([header::RETRY_AFTER])
                .max_age(Duration::from_secs(600)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse() {
        assert_eq!("".parse::<AllowedOrigins>().unwrap(), AllowedOrigins::None);
        assert_eq!(
            " * ".parse::<AllowedOrigins>().unwrap(),
            AllowedOrigins::Any
        );
        let AllowedOrigins::List(list) = "https://game.example.com, http://127.0.0.1:5173"
            .parse::<AllowedOrigins>()
            .unwrap()
        else {
            panic!("a list")
        };
        assert_eq!(list.len(), 2);
        for bad in [
            "game.example.com",
            "https://game.example.com/play",
            "ftp://x",
            "https://",
            "https://*.example.com",
            "*,https://a.example",
        ] {
            assert!(bad.parse::<AllowedOrigins>().is_err(), "{bad}");
        }
    }
}
