//! Request bodies are read whole before anything else looks at the request.
//!
//! A request refused early (a bad token, a rate limit) never reaches the
//! handler that would read its body. Left unread, that body makes the server
//! close the connection after its answer, and a keep-alive client's next
//! request on it fails with a network error instead of, say, the 429 and its
//! Retry-After. Read first (at most [`MAX_BODY_BYTES`], which every handler's
//! limit is anyway), the connection stays usable whatever the answer. A body
//! that is too large, too slow or broken cannot be read to its end, so that
//! answer says `Connection: close`.

use super::Code;
use super::{ApiError, MAX_BODY_BYTES};
use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// How long a client may take to send a body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn layer(req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    if body.size_hint().exact() == Some(0) {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let read = tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, MAX_BODY_BYTES));
    let refused = match read.await {
        Ok(Ok(bytes)) => {
            return next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
        }
        Ok(Err(e)) if is_too_large(&e) => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            Code::BODY_TOO_LARGE,
            format!("request body is larger than {MAX_BODY_BYTES} bytes"),
        ),
        Ok(Err(_)) => ApiError::bad_request(Code::BAD_BODY, "the request body could not be read"),
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            Code::BODY_TIMEOUT,
            format!(
                "the request body did not arrive within {} s",
                BODY_TIMEOUT.as_secs()
            ),
        ),
    };
    let mut response = refused.into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Whether reading stopped at the size limit (rather than on a broken stream).
fn is_too_large(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = s.source();
    }
    false
}
