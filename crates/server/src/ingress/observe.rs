//! What the ingress reports of every HTTP request: a response counter by route
//! template, method and status, and a latency histogram by route and method. The
//! route is the matched template (`/v1/tickets/{id}`), so ids never become label
//! values; requests that match no route count as `unmatched`.

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use mm_telemetry::names;
use std::time::Instant;

/// The method as a label without allocating (the API uses only these).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

pub async fn layer(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = method_label(req.method());
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    metrics::histogram!(names::HTTP_DURATION, "route" => route.clone(), "method" => method)
        .record(started.elapsed().as_secs_f64());
    metrics::counter!(names::HTTP_REQUESTS, "route" => route, "method" => method, "status" => status)
        .increment(1);
    response
}
