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
//! match) travel as one element holding the match ([`Messages::formed`]); each subscriber
//! makes the events of the players connected to it. An ingress before 2026-11-28
//! cannot read such a message: replace the ingresses first (README).

use mm_domain::{EventEnvelope, Match, TicketId};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::HashSet;

/// Most envelopes in one message.
pub const EVENTS_PER_MESSAGE: usize = 256;
/// A message is closed once it holds this many bytes.
pub const BYTES_PER_MESSAGE: usize = 128 * 1024;

/// `events` as the channel's messages, in order.
pub fn encode<'a>(
    events: impl IntoIterator<Item = &'a EventEnvelope>,
) -> Result<Vec<String>, serde_json::Error> {
    let mut messages = Messages::default();
    for e in events {
        messages.event(e)?;
    }
    Ok(messages.finish())
}

/// The channel's messages, written element by element straight into the
/// message they go in (no string per element).
#[derive(Default)]
pub struct Messages {
    out: Vec<String>,
    message: Vec<u8>,
    n: usize,
}

impl Messages {
    /// Adds one player's event.
    pub fn event(&mut self, e: &EventEnvelope) -> Result<(), serde_json::Error> {
        self.push(e)
    }

    /// Adds committed match `m`, standing for [`crate::api::formed_events`]
    /// of it: the match once, `{"formed": MATCH}`, rather than one envelope per
    /// player each carrying the whole match (a 5v5's first events were ten
    /// copies of it, cloned, serialized, sent through Redis and parsed by every
    /// subscriber). A subscriber makes the players' events from it
    /// ([`Element::Formed`]). The players of its tickets in `first` (first
    /// claimed by the cycle that formed it) hear `ticket.searching` just
    /// before: `"searching": [TICKET, ...]`.
    pub fn formed(
        &mut self,
        m: &Match,
        first: &HashSet<TicketId>,
    ) -> Result<(), serde_json::Error> {
        let searching = m
            .tickets
            .iter()
            .map(|t| &t.ticket_id)
            .filter(|id| first.contains(*id))
            .collect();
        self.push(&FormedOut {
            formed: m,
            searching,
        })
    }

    /// The messages, in order.
    pub fn finish(mut self) -> Vec<String> {
        if self.n > 0 {
            self.close();
        }
        self.out
    }

    /// Writes one element into the open message, closing it once full.
    fn push(&mut self, element: &impl Serialize) -> Result<(), serde_json::Error> {
        self.message.push(if self.n == 0 { b'[' } else { b',' });
        serde_json::to_writer(&mut self.message, element)?;
        self.n += 1;
        if self.n == EVENTS_PER_MESSAGE || self.message.len() >= BYTES_PER_MESSAGE {
            self.close();
        }
        Ok(())
    }

    fn close(&mut self) {
        self.message.push(b']');
        let bytes = std::mem::take(&mut self.message);
        // serde_json writes UTF-8 only.
        self.out
            .push(String::from_utf8(bytes).expect("serde_json writes UTF-8"));
        self.n = 0;
    }
}

/// A committed match, in a message, standing for its players' first events
/// (and `ticket.searching` for its tickets in `searching`).
#[derive(Serialize)]
struct FormedOut<'a> {
    formed: &'a Match,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    searching: Vec<&'a TicketId>,
}

#[derive(Deserialize)]
struct FormedIn {
    formed: Match,
    #[serde(default)]
    searching: Vec<TicketId>,
}

/// How a formed match's element starts (see [`Messages::formed`]); an envelope starts
/// with `{"player":`.
pub const FORMED_HEAD: &str = r#"{"formed":"#;

/// One element of a message.
#[derive(Debug, PartialEq)]
pub enum Element {
    /// One player's event.
    Event(EventEnvelope),
    /// A committed match: the first event of each of its players, after
    /// `ticket.searching` for the players of the tickets in `searching`
    /// ([`Element::events`]).
    Formed {
        matched: Match,
        searching: HashSet<TicketId>,
    },
}

impl Element {
    /// The players' events this element stands for, in order.
    pub fn events(self) -> Vec<EventEnvelope> {
        match self {
            Element::Event(e) => vec![e],
            Element::Formed { matched, searching } => {
                let matched = std::slice::from_ref(&matched);
                let mut events = crate::api::searching_events(matched, &searching);
                events.extend(crate::api::formed_events(&matched[0]));
                events
            }
        }
    }
}

/// The elements of one message: an array of envelopes and formed matches, or
/// one bare envelope.
pub fn decode(payload: &str) -> Result<Vec<Element>, serde_json::Error> {
    if !payload.trim_start().starts_with('[') {
        return serde_json::from_str(payload).map(|e| vec![Element::Event(e)]);
    }
    let raw: Vec<&RawValue> = serde_json::from_str(payload)?;
    raw.into_iter()
        .map(|r| {
            let json = r.get();
            if json.starts_with(FORMED_HEAD) {
                serde_json::from_str::<FormedIn>(json).map(|f| Element::Formed {
                    matched: f.formed,
                    searching: f.searching.into_iter().collect(),
                })
            } else {
                serde_json::from_str(json).map(Element::Event)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_domain::{Event, Lifecycle, MatchId, MatchTicket, Placement, PlayerId, TicketId};

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
        let back: Vec<EventEnvelope> = messages.iter().flat_map(|m| events_of(m)).collect();
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

    /// Every player's event in a message, in order.
    fn events_of(message: &str) -> Vec<EventEnvelope> {
        decode(message)
            .unwrap()
            .into_iter()
            .flat_map(Element::events)
            .collect()
    }

    #[test]
    fn a_formed_match_stands_for_its_players_first_events() {
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
            let before = envelope(1);
            let after = envelope(2);
            // The party's ticket was first claimed by the cycle that formed
            // the match: its two players hear ticket.searching first.
            let first: HashSet<TicketId> = [TicketId::new("t-a").unwrap()].into();
            let mut messages = Messages::default();
            messages.event(&before).unwrap();
            messages.formed(&m, &first).unwrap();
            messages.formed(&m, &HashSet::new()).unwrap();
            messages.event(&after).unwrap();
            let messages = messages.finish();
            assert_eq!(messages.len(), 1);
            let searching = |p: &str| EventEnvelope {
                player: PlayerId::new(p).unwrap(),
                event: Event::Searching {
                    ticket_id: TicketId::new("t-a").unwrap(),
                },
            };
            let mut expected = vec![before, searching("ann"), searching("bob")];
            expected.extend(crate::api::formed_events(&m));
            expected.extend(crate::api::formed_events(&m));
            expected.push(after);
            assert_eq!(events_of(&messages[0]), expected);
            // The match is in the message once a formed element, not once per
            // player (two tickets each).
            assert_eq!(messages[0].matches(r#""rating":1512.5"#).count(), 4);
            let head: serde_json::Value = serde_json::to_value(&expected[3]).unwrap();
            types.push(head["event"]["type"].as_str().unwrap().to_string());
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
        assert_eq!(decode(&bare).unwrap(), vec![Element::Event(e)]);
        assert!(decode("not json").is_err());
    }
}
