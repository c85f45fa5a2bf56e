//! What the events channel (`mm:events`) carries: a JSON array of event envelopes
//! per message. A Redis `PUBLISH` costs its server about 2.4 µs of CPU for parsing,
//! replying and delivering, whatever it carries; a match tells each of its players
//! and a claim each new ticket's player, so one message per event was the largest
//! Redis cost per ticket left outside the scripts. Messages hold at most
//! [`EVENTS_PER_MESSAGE`] envelopes or about [`BYTES_PER_MESSAGE`], so a subscriber's
//! output buffer grows by a bounded step. A message of one bare envelope (what
//! processes before 2026-11-25 published) is still read.
//!
//! A committed match's first events (one per player, each carrying the whole
//! match) are written by [`formed`], which serializes the match once for all its
//! players instead of cloning and serializing it once per player.

use mm_domain::{
    EventEnvelope, Match, MatchId, MatchRecord, MatchStatus, Millis, PlayerId, TicketId,
};
use serde::Serialize;
use serde_json::value::RawValue;

/// Most envelopes in one message.
pub const EVENTS_PER_MESSAGE: usize = 256;
/// A message is closed once it holds this many bytes.
pub const BYTES_PER_MESSAGE: usize = 128 * 1024;

/// `events` as the channel's messages, in order.
pub fn encode<'a>(
    events: impl IntoIterator<Item = &'a EventEnvelope>,
) -> Result<Vec<String>, serde_json::Error> {
    let json: Vec<String> = events
        .into_iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()?;
    Ok(pack(json))
}

/// Envelopes already serialized (see [`formed`]) as the channel's messages, in
/// order.
pub fn pack(envelopes: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let (mut message, mut n) = (String::new(), 0);
    for e in envelopes {
        message.push(if n == 0 { '[' } else { ',' });
        message.push_str(&e);
        n += 1;
        if n == EVENTS_PER_MESSAGE || message.len() >= BYTES_PER_MESSAGE {
            message.push(']');
            out.push(std::mem::take(&mut message));
            n = 0;
        }
    }
    if n > 0 {
        message.push(']');
        out.push(message);
    }
    out
}

/// A player's first event of a committed match, as [`mm_domain::Event`]
/// serializes it, with the match as JSON written once.
#[derive(Serialize)]
struct FormedEnvelope<'a> {
    player: &'a PlayerId,
    event: FormedEvent<'a>,
}

/// The three first events of [`crate::api::formed_events`], field for field
/// (the test below holds them to the same bytes).
#[derive(Serialize)]
#[serde(tag = "type")]
enum FormedEvent<'a> {
    #[serde(rename = "match.ready_check")]
    ReadyCheck {
        ticket_id: &'a TicketId,
        match_id: &'a MatchId,
        deadline: Millis,
        #[serde(rename = "match")]
        matched: &'a RawValue,
    },
    #[serde(rename = "match.placing")]
    Placing {
        ticket_id: &'a TicketId,
        match_id: &'a MatchId,
        #[serde(rename = "match")]
        matched: &'a RawValue,
    },
    #[serde(rename = "match.completed")]
    Completed {
        ticket_id: &'a TicketId,
        match_id: &'a MatchId,
        #[serde(rename = "match")]
        matched: &'a RawValue,
    },
}

/// [`crate::api::formed_events`] of `m` as serialized envelopes: the same bytes,
/// with the match serialized once rather than once per player (a 5v5's first
/// events were ten clones of the match, each serialized).
pub fn formed(m: &Match) -> Result<Vec<String>, serde_json::Error> {
    let record = MatchRecord::start(m);
    let matched = serde_json::value::to_raw_value(m)?;
    let matched = matched.as_ref();
    let mut out = Vec::with_capacity(m.player_count());
    for t in &m.tickets {
        let (ticket_id, match_id) = (&t.ticket_id, &m.id);
        for player in &t.players {
            let event = match record.status {
                MatchStatus::RequiresAcceptance => FormedEvent::ReadyCheck {
                    ticket_id,
                    match_id,
                    deadline: record.deadline.unwrap_or(m.created_at),
                    matched,
                },
                MatchStatus::Placing => FormedEvent::Placing {
                    ticket_id,
                    match_id,
                    matched,
                },
                _ => FormedEvent::Completed {
                    ticket_id,
                    match_id,
                    matched,
                },
            };
            out.push(serde_json::to_string(&FormedEnvelope { player, event })?);
        }
    }
    Ok(out)
}

/// The envelopes of one message: an array, or one bare envelope.
pub fn decode(payload: &str) -> Result<Vec<EventEnvelope>, serde_json::Error> {
    if payload.trim_start().starts_with('[') {
        serde_json::from_str(payload)
    } else {
        serde_json::from_str(payload).map(|e| vec![e])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_domain::{Event, Lifecycle, MatchTicket, Placement};

    fn envelope(i: usize) -> EventEnvelope {
        EventEnvelope {
            player: PlayerId::new(format!("p{i}")).unwrap(),
            event: Event::Cancelled {
                ticket_id: TicketId::new(format!("t{i}")).unwrap(),
                reason: None,
            },
        }
    }

    #[test]
    fn events_travel_in_order_in_bounded_messages() {
        let events: Vec<EventEnvelope> = (0..600).map(envelope).collect();
        let messages = encode(&events).unwrap();
        assert_eq!(messages.len(), 3);
        let back: Vec<EventEnvelope> = messages.iter().flat_map(|m| decode(m).unwrap()).collect();
        assert_eq!(back, events);
        assert!(encode(&[]).unwrap().is_empty());
    }

    #[test]
    fn a_large_event_closes_its_message() {
        let mut big = envelope(0);
        big.event = Event::Cancelled {
            ticket_id: TicketId::new("t0").unwrap(),
            reason: Some("x".repeat(1_000)),
        };
        let events = vec![big; 2_000];
        let messages = encode(&events).unwrap();
        assert!(messages.len() > 1);
        for m in &messages {
            assert!(m.len() < BYTES_PER_MESSAGE + 1024, "{}", m.len());
        }
        let n: usize = messages.iter().map(|m| decode(m).unwrap().len()).sum();
        assert_eq!(n, 2_000);
    }

    /// A match of a party of two and a solo, with attributes and roles enough
    /// that its JSON has nesting and escapes.
    fn formed_match(lifecycle: Lifecycle) -> Match {
        let ticket = |id: &str, players: &[&str], team| MatchTicket {
            ticket_id: TicketId::new(id).unwrap(),
            players: players.iter().map(|p| PlayerId::new(*p).unwrap()).collect(),
            rating: 1512.5,
            enqueued_at: 1_700_000_000_000,
            team,
            skills: Vec::new(),
            attributes: serde_json::from_str(r#"{"maps": ["dust", "har\"bor"], "level": 37}"#)
                .unwrap(),
            player_attributes: Vec::new(),
        };
        Match {
            id: MatchId::new("m-1").unwrap(),
            mode: "2v1".into(),
            region: "eu".into(),
            tickets: vec![ticket("t-a", &["ann", "bob"], 0), ticket("t-c", &["cy"], 1)],
            created_at: 1_700_000_001_000,
            lifecycle,
            decided: Default::default(),
        }
    }

    #[test]
    fn formed_events_are_the_same_bytes_with_the_match_serialized_once() {
        let lifecycles = [
            Lifecycle::default(),
            Lifecycle {
                ready_check_ms: Some(10_000),
                ..Default::default()
            },
            Lifecycle {
                placement: Placement::Servers,
                ..Default::default()
            },
        ];
        let mut types = Vec::new();
        for lifecycle in lifecycles {
            let m = formed_match(lifecycle);
            let expected: Vec<String> = crate::api::formed_events(&m)
                .iter()
                .map(|e| serde_json::to_string(e).unwrap())
                .collect();
            assert_eq!(formed(&m).unwrap(), expected);
            assert_eq!(expected.len(), 3);
            let first: serde_json::Value = serde_json::from_str(&expected[0]).unwrap();
            types.push(first["event"]["type"].as_str().unwrap().to_string());
        }
        assert_eq!(
            types,
            ["match.completed", "match.ready_check", "match.placing"]
        );
    }

    #[test]
    fn a_bare_envelope_is_read_as_one() {
        let e = envelope(7);
        let bare = serde_json::to_string(&e).unwrap();
        assert_eq!(decode(&bare).unwrap(), vec![e]);
        assert!(decode("not json").is_err());
    }
}
