//! The committed `docs/openapi.json` is exactly what the handlers generate, so the
//! published contract cannot drift from the code.

#[test]
fn the_committed_document_is_what_the_code_generates() {
    let generated = mm_server::ingress::openapi_json(&mm_server::ingress::openapi_document());
    let committed = include_str!("../../../docs/openapi.json");
    if generated != committed {
        let line = generated
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "the length".to_string(), |n| format!("line {}", n + 1));
        panic!(
            "docs/openapi.json differs from the generated document (first at {line}); regenerate it with\n  cargo run -q -- openapi > docs/openapi.json"
        );
    }
    let doc: serde_json::Value = serde_json::from_str(&generated).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    for path in [
        "/v1/tickets",
        "/v1/tickets/{id}",
        "/v1/parties/{id}/join",
        "/v1/leaderboards/{mode}",
        "/v1/ws",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} is not documented");
    }
    assert!(doc["components"]["schemas"].get("Event").is_some());
    assert!(doc["components"]["securitySchemes"].get("bearer").is_some());
}

/// OpenAPI requires every operation's `operationId` to be unique; generators
/// (the TypeScript SDK's `openapi-typescript`) name types after them.
#[test]
fn every_operation_has_its_own_id() {
    let doc: serde_json::Value = serde_json::from_str(&mm_server::ingress::openapi_json(
        &mm_server::ingress::openapi_document(),
    ))
    .unwrap();
    let mut seen = std::collections::BTreeMap::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
            if let Some(other) = seen.insert(id.to_string(), format!("{method} {path}")) {
                panic!("operationId {id} is both {other} and {method} {path}");
            }
        }
    }
}
