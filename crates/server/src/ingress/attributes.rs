//! A new ticket's attributes: the ticket's own, each player's where it differs,
//! checked against the limits (`400 invalid_attribute` naming it); those a mode
//! takes from the token (`from_claims`) refused from the client (`403
//! attribute_from_token`) and filled from the caller's verified claims, or, for
//! the other members of a party, from the claims their own token carried when
//! they joined it. A trusted backend may set them itself.

use super::ApiError;
use axum::http::StatusCode;
use mm_domain::{AttributeError, Attributes, PlayerId};
use mm_engine::{Kind, Mode};

/// The 400 of attributes over the limits, naming the attribute.
pub(crate) fn invalid(e: AttributeError, whose: &str) -> ApiError {
    let mut err = ApiError::bad_request("invalid_attribute", format!("{whose}: {e}"));
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
                    "attribute_from_token",
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
    hard_rules_agree(mode, &ticket, &own, players)?;
    Ok((ticket, own))
}

/// The players of one ticket never disagree on the attribute of a hard `equal`
/// rule (values of one group agree): such a ticket could never be matched.
fn hard_rules_agree(
    mode: &Mode,
    ticket: &Attributes,
    own: &[Attributes],
    players: &[PlayerId],
) -> Result<(), ApiError> {
    for rule in mode
        .rules
        .iter()
        .filter(|r| r.kind == Kind::Equal && r.is_hard())
    {
        let value = |i: usize| {
            own.get(i)
                .and_then(|a| a.get(&rule.attribute))
                .or_else(|| ticket.get(&rule.attribute))
                .and_then(|v| v.as_text())
                .unwrap_or("")
        };
        let groups = match &rule.steps[0].params {
            mm_engine::Params::Equal { groups } => groups.as_slice(),
            _ => &[],
        };
        let group = |v: &str| {
            groups
                .iter()
                .position(|g| g.iter().any(|x| x == v))
                .ok_or_else(|| v.to_string())
        };
        let first = group(value(0));
        if let Some(i) = (1..players.len()).find(|&i| group(value(i)) != first) {
            return Err(ApiError::bad_request(
                "attributes_disagree",
                format!(
                    "players {} and {} disagree on attribute {}, which mode {} requires to be equal within a match",
                    players[0], players[i], rule.attribute, mode.name
                ),
            )
            .with("attribute", rule.attribute.clone()));
        }
    }
    Ok(())
}
