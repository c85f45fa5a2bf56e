//! Extractors whose rejections are JSON [`ApiError`]s instead of axum's plain text.

use super::ApiError;
use super::Code;
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
        JsonRejection::MissingJsonContentType(_) => Code::UNSUPPORTED_MEDIA_TYPE,
        JsonRejection::JsonSyntaxError(_) => Code::MALFORMED_JSON,
        JsonRejection::JsonDataError(_) => Code::INVALID_REQUEST,
        _ if status == StatusCode::PAYLOAD_TOO_LARGE => Code::BODY_TOO_LARGE,
        _ => Code::BAD_BODY,
    };
    let message = match code {
        Code::UNSUPPORTED_MEDIA_TYPE => {
            "send the body as JSON with Content-Type: application/json".to_string()
        }
        Code::BODY_TOO_LARGE => format!(
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
                Err(ApiError::bad_request(Code::INVALID_QUERY, r.body_text()))
            }
            Err(r) => Err(ApiError::bad_request(Code::INVALID_QUERY, r.body_text())),
        }
    }
}
