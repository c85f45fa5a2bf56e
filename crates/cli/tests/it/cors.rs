//! Browser games on another origin (`CORS_ALLOWED_ORIGINS`): preflights are
//! answered before authentication and limits, every answer (errors too) names
//! the allowed origin and exposes `Retry-After`, other origins get nothing, and
//! without the setting no origin is allowed.

use crate::Deployment;
use reqwest::{Method, StatusCode};

const GAME: &str = "https://game.example.com";

async fn preflight(d: &Deployment, origin: &str) -> reqwest::Response {
    reqwest::Client::new()
        .request(Method::OPTIONS, format!("http://{}/v1/tickets", d.addr))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "authorization,content-type",
        )
        .send()
        .await
        .unwrap()
}

fn header<'a>(r: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    r.headers().get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_origins_may_call_the_api_from_a_browser() {
    let d = Deployment::embedded_with(&[(
        "CORS_ALLOWED_ORIGINS",
        &format!("{GAME}, http://127.0.0.1:5173"),
    )])
    .await;
    let r = preflight(&d, GAME).await;
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(header(&r, "access-control-allow-origin"), Some(GAME));
    let allowed = header(&r, "access-control-allow-headers")
        .unwrap()
        .to_lowercase();
    assert!(
        allowed.contains("authorization") && allowed.contains("content-type"),
        "{allowed}"
    );
    assert!(
        header(&r, "access-control-allow-methods")
            .unwrap()
            .contains("POST")
    );
    assert_eq!(header(&r, "access-control-allow-credentials"), None);

    // An error answer carries the headers too, so the page can read its body.
    let r = reqwest::Client::new()
        .get(format!("http://{}/v1/players/me/ratings", d.addr))
        .header("Origin", GAME)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(header(&r, "access-control-allow-origin"), Some(GAME));
    assert!(
        header(&r, "access-control-expose-headers")
            .unwrap()
            .to_lowercase()
            .contains("retry-after")
    );

    // Another origin is not named.
    let r = preflight(&d, "https://elsewhere.example").await;
    assert_eq!(header(&r, "access-control-allow-origin"), None);
    let (status, _) = d.client("ann").get("/v1/players/me/ratings").await;
    assert_eq!(
        status,
        StatusCode::OK,
        "same-origin and non-browser calls are unchanged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_setting_no_origin_is_allowed() {
    let d = Deployment::embedded().await;
    let r = preflight(&d, GAME).await;
    assert_eq!(header(&r, "access-control-allow-origin"), None);
}
