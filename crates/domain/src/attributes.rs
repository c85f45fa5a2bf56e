//! What players run and want, as a ticket carries it: named values (a client
//! build, a platform, a level, the maps a player would play), checked against
//! the limits every ticket obeys. The rules of a mode read them.
//!
//! A value is a string, a number or a list of strings. A ticket holds at most
//! [`MAX_ATTRIBUTES`], named `[a-z0-9_]{1,32}`; a string is at most
//! [`MAX_TEXT`] bytes and a list at most [`MAX_ITEMS`] strings.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most attributes a ticket (or one of its players) may carry.
pub const MAX_ATTRIBUTES: usize = 32;
/// Longest attribute name.
pub const MAX_NAME: usize = 32;
/// Longest string value (bytes), alone or in a list.
pub const MAX_TEXT: usize = 64;
/// Most strings in a list.
pub const MAX_ITEMS: usize = 32;

/// One attribute's value.
///
/// Read by a visitor of its own ([`ValueVisitor`]) rather than serde's
/// `untagged`: that buffers every value and tries the kinds in turn, writing
/// out an error message for each kind a value is not (a string was first
/// tried as a number, a list as a number and a string), and every worker
/// reads every claimed ticket's attributes.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum Value {
    Number(f64),
    Text(String),
    List(Vec<String>),
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// Reads a [`Value`] from whichever kind the data holds.
struct ValueVisitor;

impl<'de> serde::de::Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string, a number or a list of strings")
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Text(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Text(v))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX_ITEMS));
        while let Some(item) = seq.next_element::<String>()? {
            items.push(item);
        }
        Ok(Value::List(items))
    }
}

impl Value {
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The strings of a list (a single string reads as a list of one).
    pub fn as_list(&self) -> Option<&[String]> {
        match self {
            Value::List(l) => Some(l),
            Value::Text(t) => Some(std::slice::from_ref(t)),
            Value::Number(_) => None,
        }
    }
}

/// Why attributes were refused; the message names the attribute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttributeError {
    #[error("at most {MAX_ATTRIBUTES} attributes, got {0}")]
    TooMany(usize),
    #[error("attribute name {0:?} must be 1-{MAX_NAME} characters of a-z, 0-9 or '_'")]
    BadName(String),
    #[error("attribute {0}: strings are at most {MAX_TEXT} bytes")]
    TooLong(String),
    #[error("attribute {0}: lists hold at most {MAX_ITEMS} strings")]
    TooManyItems(String),
    #[error("attribute {0}: numbers must be finite")]
    NotFinite(String),
    #[error("attribute {0}: a value is a string, a number or a list of strings")]
    BadValue(String),
}

impl AttributeError {
    /// The attribute the error is about (none for [`AttributeError::TooMany`]).
    pub fn attribute(&self) -> Option<&str> {
        match self {
            AttributeError::TooMany(_) => None,
            AttributeError::BadName(a)
            | AttributeError::TooLong(a)
            | AttributeError::TooManyItems(a)
            | AttributeError::NotFinite(a)
            | AttributeError::BadValue(a) => Some(a),
        }
    }
}

/// Whether `name` may name an attribute.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A ticket's (or a player's) attributes, by name.
// Kept in name order in a list rather than a tree: a ticket has a handful, and
// every worker builds and drops them for each ticket it reads. Written and read
// as a JSON object. (Not a doc comment: the API document shows the line above.)
#[derive(Debug, Clone, Default, PartialEq, utoipa::ToSchema)]
#[schema(value_type = BTreeMap<String, Value>)]
pub struct Attributes(Vec<(String, Value)>);

impl Attributes {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many attributes there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(name))
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.find(name).ok().map(|i| &self.0[i].1)
    }

    /// Sets `name` to `value`, over any value it had.
    pub fn insert(&mut self, name: impl Into<String>, value: Value) {
        let name = name.into();
        match self.find(&name) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (name, value)),
        }
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// Each attribute's name and value, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Keeps the attributes for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &Value) -> bool) {
        self.0.retain(|(k, v)| keep(k, v));
    }

    /// Checks the limits every ticket obeys.
    pub fn check(&self) -> Result<(), AttributeError> {
        if self.0.len() > MAX_ATTRIBUTES {
            return Err(AttributeError::TooMany(self.0.len()));
        }
        for (name, value) in &self.0 {
            if !valid_name(name) {
                return Err(AttributeError::BadName(name.clone()));
            }
            match value {
                Value::Number(n) if !n.is_finite() => {
                    return Err(AttributeError::NotFinite(name.clone()));
                }
                Value::Number(_) => {}
                Value::Text(t) if t.len() > MAX_TEXT => {
                    return Err(AttributeError::TooLong(name.clone()));
                }
                Value::Text(_) => {}
                Value::List(items) => {
                    if items.len() > MAX_ITEMS {
                        return Err(AttributeError::TooManyItems(name.clone()));
                    }
                    if items.iter().any(|i| i.len() > MAX_TEXT) {
                        return Err(AttributeError::TooLong(name.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    /// Attributes from JSON as a client sent them, checked: any other kind of
    /// value, or one over the limits, is an error naming the attribute.
    pub fn from_json(
        map: BTreeMap<String, serde_json::Value>,
    ) -> Result<Attributes, AttributeError> {
        let mut out = Attributes::default();
        for (name, v) in map {
            let value = serde_json::from_value::<Value>(v)
                .map_err(|_| AttributeError::BadValue(name.clone()))?;
            out.insert(name, value);
        }
        out.check()?;
        Ok(out)
    }

    /// These attributes with `over`'s on top (a player's own over the ticket's).
    pub fn overlaid(&self, over: &Attributes) -> Attributes {
        let mut out = self.clone();
        for (k, v) in &over.0 {
            out.insert(k.clone(), v.clone());
        }
        out
    }
}

impl Serialize for Attributes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Attributes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(AttributesVisitor)
    }
}

/// Reads [`Attributes`] from an object: in name order, the last of a name
/// written twice kept (as a map keeps it).
struct AttributesVisitor;

impl<'de> serde::de::Visitor<'de> for AttributesVisitor {
    type Value = Attributes;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of attributes")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Attributes, A::Error> {
        let mut pairs: Vec<(String, Value)> =
            Vec::with_capacity(map.size_hint().unwrap_or(0).min(MAX_ATTRIBUTES));
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            pairs.push((k, v));
        }
        // What this service wrote is in order already.
        if !pairs.windows(2).all(|w| w[0].0 < w[1].0) {
            // Stable: of equal names the last written stays last, and is kept.
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Vec<(String, Value)> = Vec::with_capacity(pairs.len());
            for pair in pairs {
                match kept.last_mut() {
                    Some(last) if last.0 == pair.0 => *last = pair,
                    _ => kept.push(pair),
                }
            }
            pairs = kept;
        }
        Ok(Attributes(pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Attributes {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn strings_numbers_and_lists() {
        let a = parse(r#"{"build": "1.4.2", "level": 37, "maps": ["dust", "harbor"]}"#);
        a.check().unwrap();
        assert_eq!(a.get("build").and_then(Value::as_text), Some("1.4.2"));
        assert_eq!(a.get("level").and_then(Value::as_number), Some(37.0));
        assert_eq!(
            a.get("maps").and_then(Value::as_list),
            Some(&["dust".to_string(), "harbor".to_string()][..])
        );
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"build":"1.4.2","level":37.0,"maps":["dust","harbor"]}"#
        );
    }

    #[test]
    fn the_limits_name_the_attribute() {
        let long = "x".repeat(65);
        let cases = [
            (r#"{"Build": "1"}"#.to_string(), "Build"),
            (format!(r#"{{"{}": "1"}}"#, "a".repeat(33)), "aaaa"),
            (format!(r#"{{"build": "{long}"}}"#), "build"),
            (format!(r#"{{"maps": ["{long}"]}}"#), "maps"),
        ];
        for (json, name) in cases {
            let e = parse(&json).check().unwrap_err();
            assert!(e.attribute().unwrap().starts_with(name), "{e}");
            assert!(e.to_string().contains(name), "{e}");
        }
        let many: Vec<String> = (0..33).map(|i| format!("\"m{i}\"")).collect();
        let e = parse(&format!(r#"{{"maps": [{}]}}"#, many.join(","))).check();
        assert_eq!(e, Err(AttributeError::TooManyItems("maps".into())));
        let lots: Vec<String> = (0..33).map(|i| format!("\"a{i}\": 1")).collect();
        let e = parse(&format!("{{{}}}", lots.join(","))).check();
        assert_eq!(e, Err(AttributeError::TooMany(33)));
        // Objects, booleans and mixed lists are not values.
        for bad in [r#"{"a": {"b": 1}}"#, r#"{"a": true}"#, r#"{"a": ["x", 1]}"#] {
            assert!(serde_json::from_str::<Attributes>(bad).is_err(), "{bad}");
            let raw = serde_json::from_str(bad).unwrap();
            assert_eq!(
                Attributes::from_json(raw),
                Err(AttributeError::BadValue("a".into()))
            );
        }
    }

    #[test]
    fn each_kind_reads_back_as_written() {
        let a = parse(
            r#"{"n": 3, "neg": -2, "f": 2.5, "big": 18446744073709551615, "t": "pc",
                "l": ["a", "b"], "empty": []}"#,
        );
        assert_eq!(a.get("n"), Some(&Value::Number(3.0)));
        assert_eq!(a.get("neg"), Some(&Value::Number(-2.0)));
        assert_eq!(a.get("f"), Some(&Value::Number(2.5)));
        assert_eq!(a.get("big"), Some(&Value::Number(u64::MAX as f64)));
        assert_eq!(a.get("t"), Some(&Value::Text("pc".into())));
        assert_eq!(a.get("l"), Some(&Value::List(vec!["a".into(), "b".into()])));
        assert_eq!(a.get("empty"), Some(&Value::List(Vec::new())));
        let again: Attributes = parse(&serde_json::to_string(&a).unwrap());
        assert_eq!(again, a);
        // Strings with escapes come back whole (serde_json hands them over
        // owned, not borrowed).
        let e = parse(r#"{"t": "a\"b\u00e9"}"#);
        assert_eq!(e.get("t"), Some(&Value::Text("a\"bé".into())));
        // Null and lists of lists are not values either.
        for bad in [r#"{"a": null}"#, r#"{"a": [["x"]]}"#, r#"{"a": [null]}"#] {
            let err = serde_json::from_str::<Attributes>(bad).unwrap_err();
            assert!(err.to_string().contains("expected"), "{bad}: {err}");
        }
    }

    proptest::proptest! {
        /// Inserted, overlaid, written and read in any order, with names
        /// written twice: what a map of the same would hold, in name order.
        #[test]
        fn attributes_hold_what_a_map_would(
            pairs in proptest::collection::vec(("[a-e]{1,2}", 0u8..4), 0..12),
            over in proptest::collection::vec(("[a-e]{1,2}", 0u8..4), 0..6),
        ) {
            let value = |n: u8| match n {
                0 => Value::Number(f64::from(n)),
                1 => Value::Text(format!("t{n}")),
                _ => Value::List(vec![format!("l{n}"); usize::from(n)]),
            };
            let (mut ours, mut map) = (Attributes::default(), BTreeMap::new());
            for (k, n) in &pairs {
                ours.insert(k.clone(), value(*n));
                map.insert(k.clone(), value(*n));
            }
            let mut on_top = Attributes::default();
            for (k, n) in &over {
                on_top.insert(k.clone(), value(*n));
                map.insert(k.clone(), value(*n));
            }
            let ours = ours.overlaid(&on_top);
            let expected: Vec<(&str, &Value)> = map.iter().map(|(k, v)| (k.as_str(), v)).collect();
            proptest::prop_assert_eq!(ours.iter().collect::<Vec<_>>(), expected.clone());
            for (k, v) in &map {
                proptest::prop_assert_eq!(ours.get(k), Some(v));
            }
            proptest::prop_assert_eq!(ours.get("zz"), None);
            // Written as the map is written, and read back the same.
            let json = serde_json::to_string(&ours).unwrap();
            proptest::prop_assert_eq!(&json, &serde_json::to_string(&map).unwrap());
            proptest::prop_assert_eq!(&parse(&json), &ours);
            // An object in any order, names repeated: the last one counts.
            let written: Vec<String> = pairs
                .iter()
                .chain(&over)
                .map(|(k, n)| format!("{:?}: {}", k, serde_json::to_string(&value(*n)).unwrap()))
                .collect();
            let mut last = BTreeMap::new();
            for (k, n) in pairs.iter().chain(&over) {
                last.insert(k.clone(), value(*n));
            }
            let read = parse(&format!("{{{}}}", written.join(", ")));
            let want: Vec<(&str, &Value)> = last.iter().map(|(k, v)| (k.as_str(), v)).collect();
            proptest::prop_assert_eq!(read.iter().collect::<Vec<_>>(), want);
        }
    }

    #[test]
    fn a_players_own_attributes_go_over_the_tickets() {
        let ticket = parse(r#"{"build": "1.4.2", "roles": ["damage"]}"#);
        let own = parse(r#"{"roles": ["tank", "healer"]}"#);
        let both = ticket.overlaid(&own);
        assert_eq!(both.get("build").and_then(Value::as_text), Some("1.4.2"));
        assert_eq!(both.get("roles").and_then(Value::as_list).unwrap().len(), 2);
    }
}
