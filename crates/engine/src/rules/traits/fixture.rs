//! Tests' solo tickets described by their attributes, and the traits a mode's
//! rules compile over them.

use crate::rules::{Compiler, Described, Traits};
use crate::{Modes, WindowPolicy};
use mm_domain::{Attributes, Value};

/// A solo ticket: its player's attributes.
pub(super) struct T(pub Attributes);

impl T {
    /// A solo ticket whose attributes are these names and strings.
    pub(super) fn texts(pairs: &[(&str, &str)]) -> Self {
        let mut a = Attributes::default();
        for &(name, value) in pairs {
            a.insert(name, Value::Text(value.into()));
        }
        T(a)
    }
}

impl Described for T {
    fn players(&self) -> usize {
        1
    }
    fn value(&self, _: usize, name: &str) -> Option<&Value> {
        self.0.get(name)
    }
}

/// The traits of mode `m` in the modes TOML `mode` over `tickets`.
pub(super) fn compile(mode: &str, tickets: &[T]) -> Traits {
    let modes = Modes::load(Some(mode), WindowPolicy::default()).expect("mode");
    let mut compiler = Compiler::new(&modes.get("m").expect("m").rules);
    let rows: Vec<_> = tickets.iter().map(|t| compiler.compile(t)).collect();
    compiler.traits(rows.iter())
}
