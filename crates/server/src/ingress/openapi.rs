//! The published API contract: an OpenAPI 3.1 document generated from the
//! handlers' own `#[utoipa::path]` annotations and the request and response types'
//! schemas (no hand-written copy to drift), served at `/openapi.json` and committed
//! as `docs/openapi.json`. The WebSocket's events are in it too, as the `Event`
//! schema (one object per `type`).

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// The body of every error answer.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ErrorBody {
    pub error: ErrorObject,
}

/// What went wrong; some codes add fields (`banned_until`, `retry_after_ms`,
/// `scope`, `match_id`, `party_id`, `player_id`, `ticket_id`).
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ErrorObject {
    /// A stable machine-readable code, e.g. `player_busy`, `rate_limited`: one
    /// of the `ErrorCode` schema's.
    pub code: String,
    /// What happened and what to do, for people.
    pub message: String,
}

/// Every error an endpoint may answer with (which ones apply depends on the
/// endpoint; each is the same JSON shape).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum Errors {
    /// The request is malformed or names something unknown.
    #[response(status = 400)]
    BadRequest(#[to_schema] ErrorBody),
    /// No valid token: `unauthorized` when missing, `invalid_token` when expired,
    /// forged or for another audience.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// A valid caller acting on what is not theirs to act on.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// No such thing (or not the caller's to see).
    #[response(status = 404)]
    NotFound(ErrorBody),
    /// The method is not allowed on this path.
    #[response(status = 405)]
    MethodNotAllowed(ErrorBody),
    /// The state does not allow it (busy, matched, full, ...).
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// The body did not arrive within 10 s (the connection is closed).
    #[response(status = 408)]
    Timeout(ErrorBody),
    /// The body is larger than 16 KiB.
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// The body is not `application/json`.
    #[response(status = 415)]
    UnsupportedMediaType(ErrorBody),
    /// The JSON does not have the expected shape.
    #[response(status = 422)]
    Unprocessable(ErrorBody),
    /// Over a rate limit; see `Retry-After`.
    #[response(status = 429)]
    TooManyRequests(ErrorBody),
    /// The store or the rating database is unavailable; retry shortly.
    #[response(status = 503)]
    Unavailable(ErrorBody),
}

/// Declares the bearer token, and lists the error codes (`ErrorCode`).
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components
            .schemas
            .insert("ErrorCode".to_string(), super::codes::schema());
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "A JWT from the studio's login service (`sub`: the player id; `role: service` for a trusted backend, which names the player it acts for in `X-Player-Id`), or in dev mode the player id itself.",
                    ))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "matchmaker",
        description = "Matchmaking for online games: tickets, matches, ready checks, parties, ratings. Events arrive on the WebSocket `GET /v1/ws` as the `Event` schema.",
        license(name = "Apache-2.0")
    ),
    modifiers(&Bearer),
    components(schemas(mm_domain::Event, ErrorBody)),
    tags(
        (name = "tickets", description = "Queueing"),
        (name = "matches", description = "Matches and ready checks"),
        (name = "parties", description = "Parties by invitation"),
        (name = "ratings", description = "Ratings and leaderboards"),
        (name = "events", description = "The WebSocket"),
        (name = "health", description = "Probes"),
    )
)]
pub struct ApiDoc;

/// The document as JSON, pretty-printed (what `docs/openapi.json` holds).
pub fn json(doc: &utoipa::openapi::OpenApi) -> String {
    let mut text = doc.to_pretty_json().expect("the document serializes");
    text.push('\n');
    text
}
