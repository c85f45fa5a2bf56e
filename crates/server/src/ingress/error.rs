//! API errors: a status and a JSON body `{"error": {"code", "message", ...}}`, with
//! extra fields for some codes (e.g. `banned_until`).

use super::Code;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mm_store::StoreError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: Code,
    pub message: String,
    /// Extra fields of the error object.
    pub details: Option<serde_json::Map<String, serde_json::Value>>,
    /// `Retry-After` seconds.
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: Code, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    /// Adds a field to the error object.
    pub fn with(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.details
            .get_or_insert_with(Default::default)
            .insert(key.to_string(), value.into());
        self
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    pub fn bad_request(code: Code, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(code: Code, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn conflict(code: Code, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    /// 401 `unauthorized`: no credential, or not in the form asked for.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, Code::UNAUTHORIZED, message)
    }

    /// 401 `invalid_token`: a credential that does not verify (RFC 6750).
    pub fn invalid_token(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, Code::INVALID_TOKEN, message)
    }

    /// 503 with `code`: something the call needs is down for now; the client is
    /// asked to retry after [`STORE_RETRY_AFTER_SECS`].
    pub fn unavailable_as(code: Code, message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, code, message)
            .retry_after(STORE_RETRY_AFTER_SECS)
    }

    /// 503 `store_unavailable`.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::unavailable_as(Code::STORE_UNAVAILABLE, message)
    }
}

impl From<crate::ratings::lookup::LookupError> for ApiError {
    fn from(e: crate::ratings::lookup::LookupError) -> Self {
        tracing::error!(error = %e, "rating lookup failed");
        ApiError::unavailable_as(
            Code::RATINGS_UNAVAILABLE,
            "the rating database is unavailable; retry shortly",
        )
    }
}

impl From<mm_ratings::RatingError> for ApiError {
    fn from(e: mm_ratings::RatingError) -> Self {
        tracing::error!(error = %e, "rating database error");
        ApiError::unavailable_as(
            Code::RATINGS_UNAVAILABLE,
            "the rating database is unavailable; retry shortly",
        )
    }
}

/// Seconds a client is asked to wait before retrying while the store is down.
pub const STORE_RETRY_AFTER_SECS: u64 = 1;

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        if let StoreError::NotReplicated { .. } = e {
            tracing::warn!(error = %e, "a write was not replicated in time");
            return ApiError::unavailable_as(
                Code::NOT_REPLICATED,
                "the ticket was written but not yet replicated; look it up or retry shortly",
            );
        }
        if e.is_unreachable() {
            // Logged once per outage by the store (mm_store::outage).
            tracing::debug!(error = %e, "store unreachable");
        } else {
            tracing::error!(error = %e, "store error");
        }
        ApiError::unavailable("the matchmaking store is unavailable; retry shortly")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = serde_json::Map::new();
        error.insert("code".into(), self.code.as_str().into());
        error.insert("message".into(), self.message.into());
        error.extend(self.details.unwrap_or_default());
        let body = serde_json::json!({ "error": error });
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static(if self.code == Code::INVALID_TOKEN {
                    "Bearer realm=\"matchmaker\", error=\"invalid_token\""
                } else {
                    "Bearer realm=\"matchmaker\""
                }),
            );
        }
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, secs.into());
        }
        response
    }
}
