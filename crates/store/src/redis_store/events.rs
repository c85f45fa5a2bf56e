//! What the events channel (`mm:events`) carries: a JSON array of event envelopes
//! per message. A Redis `PUBLISH` costs its server about 2.4 µs of CPU for parsing,
//! replying and delivering, whatever it carries; a match tells each of its players
//! and a claim each new ticket's player, so one message per event was the largest
//! Redis cost per ticket left outside the scripts. Messages hold at most
//! [`EVENTS_PER_MESSAGE`] envelopes or about [`BYTES_PER_MESSAGE`], so a subscriber's
//! output buffer grows by a bounded step. A message of one bare envelope (what
//! processes before 2026-11-25 published) is still read.

use mm_domain::EventEnvelope;

/// Most envelopes in one message.
pub const EVENTS_PER_MESSAGE: usize = 256;
/// A message is closed once it holds this many bytes.
pub const BYTES_PER_MESSAGE: usize = 128 * 1024;

/// `events` as the channel's messages, in order.
pub fn encode<'a>(
    events: impl IntoIterator<Item = &'a EventEnvelope>,
) -> Result<Vec<String>, serde_json::Error> {
    let mut out = Vec::new();
    let (mut message, mut n) = (String::new(), 0);
    for e in events {
        message.push(if n == 0 { '[' } else { ',' });
        message.push_str(&serde_json::to_string(e)?);
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
    use mm_domain::{Event, PlayerId, TicketId};

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

    #[test]
    fn a_bare_envelope_is_read_as_one() {
        let e = envelope(7);
        let bare = serde_json::to_string(&e).unwrap();
        assert_eq!(decode(&bare).unwrap(), vec![e]);
        assert!(decode("not json").is_err());
    }
}
