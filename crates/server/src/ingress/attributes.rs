//! A new ticket's attributes: the ticket's own, each player's where it differs,
//! checked against the limits (`400 invalid_attribute` naming it); those a mode
//! takes from the token (`from_claims`) refused from the client (`403
//! attribute_from_token`) and filled from the caller's verified claims, or, for
//! the other members of a party, from the claims their own token carried when
//! they joined it. A trusted backend may set them itself. A ticket the mode's
//! rules could never match (a value of the wrong kind, an attribute a rule that
//! never turns off needs, players who could never meet a rule together) is a
//! 400 naming the attribute.

use super::ApiError;
use super::Code;
use axum::http::StatusCode;
use mm_domain::{AttributeError, Attributes, PlayerId, Ticket};
use mm_engine::Mode;
use mm_engine::rules::never::Why;

/// The 400 of attributes over the limits, naming the attribute.
pub(crate) fn invalid(e: AttributeError, whose: &str) -> ApiError {
    let mut err = ApiError::bad_request(Code::INVALID_ATTRIBUTE, format!("{whose}: {e}"));
    if let Some(a) = e.attribute() {
        err = err.with("attribute", a.to_string());
    }
    err
}

/// Attributes as a client sends them: any JSON under each name, checked here so
/// that every mistake is a 400 naming the attribute.
pub type Raw = std::collections::BTreeMap<String, serde_json::Value>;

/// What a client sent, per ticket and per player.
pub(crate) struct Sent {
    pub ticket: Option<Raw>,
    /// In the order of the ticket's players.
    pub players: Vec<Option<Raw>>,
}

/// The ticket's attributes and each player's (empty when none differ), from
/// what was `sent`, the caller's token `claims`, and each other member's
/// `attested` claims (in the order of `players`; the caller's is ignored).
pub(crate) fn resolve(
    mode: &Mode,
    sent: Sent,
    players: &[PlayerId],
    caller: Option<&PlayerId>,
    trusted: bool,
    claims: &Attributes,
    attested: &[Option<Attributes>],
) -> Result<(Attributes, Vec<Attributes>), ApiError> {
    let ticket = Attributes::from_json(sent.ticket.unwrap_or_default())
        .map_err(|e| invalid(e, "attributes"))?;
    let mut own: Vec<Attributes> = Vec::with_capacity(players.len());
    for (p, a) in players.iter().zip(sent.players) {
        let a = Attributes::from_json(a.unwrap_or_default())
            .map_err(|e| invalid(e, &format!("attributes of player {p}")))?;
        own.push(a);
    }
    if !trusted {
        let set = std::iter::once(&ticket).chain(&own);
        for a in set {
            if let Some(name) = mode.from_claims.iter().find(|n| a.get(n).is_some()) {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    Code::ATTRIBUTE_FROM_TOKEN,
                    format!(
                        "attribute {name} of mode {} comes from the player's token; leave it out",
                        mode.name
                    ),
                )
                .with("attribute", name.clone()));
            }
        }
        for (i, p) in players.iter().enumerate() {
            let source = if Some(p) == caller {
                Some(claims)
            } else {
                attested.get(i).and_then(Option::as_ref)
            };
            for name in &mode.from_claims {
                if let Some(v) = source.and_then(|c| c.get(name)) {
                    own[i].insert(name.clone(), v.clone());
                }
            }
        }
    }
    // A player's own attributes are only those that differ from the ticket's.
    for a in &mut own {
        a.retain(|k, v| ticket.get(k) != Some(v));
    }
    if own.iter().all(Attributes::is_empty) {
        own.clear();
    }
    Ok((ticket, own))
}

/// A ticket the mode's rules could ever match: every value of the kind its
/// rule reads, every attribute a rule that never turns off needs, and the
/// players agreeing under each rule at its loosest step (`400` naming the
/// attribute: `invalid_attribute`, `attribute_required`,
/// `attributes_disagree`). Such a ticket would otherwise wait for ever.
pub(crate) fn matchable(mode: &Mode, ticket: &Ticket, trusted: bool) -> Result<(), ApiError> {
    let Some(u) = mm_engine::rules::never::refused(&mode.rules, ticket) else {
        return Ok(());
    };
    let code = match u.why {
        Why::Invalid => Code::INVALID_ATTRIBUTE,
        Why::Missing => Code::ATTRIBUTE_REQUIRED,
        Why::Apart => Code::ATTRIBUTES_DISAGREE,
    };
    let mut message = format!("mode {}: {}", mode.name, u.message);
    if u.why == Why::Missing && !trusted && mode.from_claims.contains(&u.attribute) {
        message.push_str(" (the mode takes it from the player's token, which has no such claim)");
    }
    Err(ApiError::bad_request(code, message).with("attribute", u.attribute))
}
