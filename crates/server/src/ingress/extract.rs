//! Extractors whose rejections are JSON [`ApiError`]s instead of axum's plain text.

use super::ApiError;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// A JSON body.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(ApiJson(v)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

fn json_rejection(r: JsonRejection) -> ApiError {
    let status = r.status();
    let code = match &r {
        JsonRejection::MissingJsonContentType(_) => "unsupported_media_type",
        JsonRejection::JsonSyntaxError(_) => "malformed_json",
        JsonRejection::JsonDataError(_) => "invalid_request",
        _ if status == StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
        _ => "bad_body",
    };
    let message = match code {
        "unsupported_media_type" => {
            "send the body as JSON with Content-Type: application/json".to_string()
        }
        "body_too_large" => format!(
            "request body is larger than {} bytes",
            super::MAX_BODY_BYTES
        ),
        _ => r.body_text(),
    };
    ApiError::new(status, code, message)
}

/// A query string.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(ApiQuery(v)),
            Err(r @ QueryRejection::FailedToDeserializeQueryString(_)) => {
                Err(ApiError::bad_request("invalid_query", r.body_text()))
            }
            Err(r) => Err(ApiError::bad_request("invalid_query", r.body_text())),
        }
    }
}
