//! A ticket compiled for a mode's rules once, when it arrives, and reused every
//! cycle: each value as a number, lists as bit sets, players' roles as bit sets,
//! block lists as numbered players ([`Compiled`]). A [`Compiler`] keeps the
//! numbering of one pool (a pool leader's, a simulated pool's, or one claimed
//! batch's) and turns compiled rows into the [`Traits`] the search reads, with
//! no string looked at again.

use super::append;
use super::config::{Kind, Params, Rule};
use super::roles::Need;
use super::room::Room;
use super::traits::{Column, Traits};
use mm_domain::{PlayerId, Value};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// The compiler's maps: players' ids and values are hashed once per ticket
/// read, a pool's worth each cycle for a claimed batch; SipHash was an eighth
/// of the reading. Never iterated, so the numbering does not depend on it.
type Map<K> = HashMap<K, u32, foldhash::fast::RandomState>;

/// Most distinct values of one `intersect` attribute a pool tells apart; values
/// beyond are dropped from the lists that carry them.
pub const MAX_LIST_VALUES: usize = 64;
/// Most roles a `roles` rule may name.
pub const MAX_ROLES: usize = 16;

/// What the engine asks of a ticket.
pub trait Described {
    /// Players in the ticket.
    fn players(&self) -> usize;
    /// Player `i`'s value of `attribute`.
    fn value(&self, i: usize, attribute: &str) -> Option<&Value>;
    /// Player `i`'s id (for block lists).
    fn player(&self, i: usize) -> Option<&PlayerId> {
        let _ = i;
        None
    }
    /// Players this ticket's players may not be matched with.
    fn blocks(&self) -> &[PlayerId] {
        &[]
    }
}

impl<T: Described> Described for &T {
    fn players(&self) -> usize {
        (**self).players()
    }
    fn value(&self, i: usize, attribute: &str) -> Option<&Value> {
        (**self).value(i, attribute)
    }
    fn player(&self, i: usize) -> Option<&PlayerId> {
        (**self).player(i)
    }
    fn blocks(&self) -> &[PlayerId] {
        (**self).blocks()
    }
}

impl Described for mm_domain::Ticket {
    fn players(&self) -> usize {
        self.players.len()
    }
    fn value(&self, i: usize, attribute: &str) -> Option<&Value> {
        self.attribute(i, attribute)
    }
    fn player(&self, i: usize) -> Option<&PlayerId> {
        self.players.get(i)
    }
    fn blocks(&self) -> &[PlayerId] {
        &self.blocks
    }
}

/// One rule's reading of one ticket.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    /// The distinct values of its players (inline for up to four: rows are
    /// read every cycle, and a pointer less per row is a cache miss less).
    Equal(SmallVec<[u32; 4]>),
    /// The values all its players listed, and the one its first player listed
    /// first (`u8::MAX`: none).
    Intersect(u64, u8),
    /// The lowest and highest of its players' numbers (NaN: one is missing).
    Distance(f64, f64),
    /// Each player's accepted roles (inline for parties of up to eight).
    Roles(SmallVec<[u16; 8]>),
    /// Nothing to read (party make-up reads only the size).
    Shape,
}

/// A ticket as the rules read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compiled {
    pub(super) size: u16,
    cells: Vec<Cell>,
    pub(super) people: Vec<u32>,
    pub(super) blocked: Vec<u32>,
}

/// The number of `value` among a rule's values (`names`, `numbers`), a new
/// one if it has none yet; `None` when it has none and `cap` are taken.
fn number(
    names: &mut Vec<Arc<str>>,
    numbers: &mut Map<String>,
    value: &str,
    cap: usize,
) -> Option<u32> {
    if let Some(&n) = numbers.get(value) {
        return Some(n);
    }
    if names.len() >= cap {
        return None;
    }
    let n = names.len() as u32;
    names.push(Arc::from(value));
    numbers.insert(value.to_string(), n);
    Some(n)
}

/// The numbering of values and players for one pool.
#[derive(Debug, Clone)]
pub struct Compiler {
    rules: Vec<Rule>,
    /// Per rule: the names of its values, in number order.
    names: Vec<Vec<Arc<str>>>,
    numbers: Vec<Map<String>>,
    people: Map<PlayerId>,
    /// Whether players are numbered (see [`Compiler::with_people`]).
    sees_people: bool,
    /// A ticket with a block list was read while players were not numbered.
    missed_blocks: bool,
}

/// What an `equal` rule reads of a value: a string (a list of one is its
/// string); a number as its decimal text, so that `142` and `"142"` are one
/// build and a rule's groups may name it; a longer list as the whole list (the
/// ingress refuses those); nothing as the empty string.
pub(super) fn equal_key(v: Option<&Value>) -> Cow<'_, str> {
    match v {
        None => Cow::Borrowed(""),
        Some(Value::Text(t)) => Cow::Borrowed(t),
        Some(Value::List(l)) if l.len() == 1 => Cow::Borrowed(&l[0]),
        Some(Value::Number(n)) => Cow::Owned(n.to_string()),
        Some(Value::List(l)) => Cow::Owned(format!("\u{1f}{}", l.join("\u{1f}"))),
    }
}

impl Compiler {
    pub fn new(rules: &[Rule]) -> Self {
        let names = rules
            .iter()
            .map(|r| match (&r.kind, &r.steps[0].params) {
                (Kind::Roles, Params::Roles { need, .. }) => need
                    .iter()
                    .take(MAX_ROLES)
                    .map(|(n, _)| Arc::from(n.as_str()))
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        Self {
            rules: rules.to_vec(),
            names,
            numbers: vec![Map::default(); rules.len()],
            people: Map::default(),
            sees_people: true,
            missed_blocks: false,
        }
    }

    /// A compiler that numbers players only if `people`. Block lists are
    /// all that reads those numbers, and numbering every player was about a
    /// third of reading a pool; so a pool none of whose tickets blocks anyone
    /// is read without. Rows read without give traits without block lists:
    /// once such a compiler has read a ticket with one it is
    /// [`Compiler::worn`], and the rows must be read again by one that
    /// numbers players.
    pub fn with_people(rules: &[Rule], people: bool) -> Self {
        Self {
            sees_people: people,
            ..Self::new(rules)
        }
    }

    /// Whether it numbers players (see [`Compiler::with_people`]).
    pub fn sees_people(&self) -> bool {
        self.sees_people
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether a numbering kept from ticket to ticket (a pool leader's) is
    /// worn: it numbers more than `most` players and values, a list
    /// attribute has no number left for a new value (it would be dropped), or
    /// one that numbers no players read a ticket with a block list.
    pub fn worn(&self, most: usize) -> bool {
        let values: usize = self.names.iter().map(Vec::len).sum();
        self.missed_blocks
            || self.people.len() + values > most
            || self
                .rules
                .iter()
                .zip(&self.names)
                .any(|(r, names)| r.kind == Kind::Intersect && names.len() >= MAX_LIST_VALUES)
    }

    /// Reads ticket `t` for the rules.
    pub fn compile(&mut self, t: &impl Described) -> Compiled {
        let players = t.players();
        let mut cells = Vec::with_capacity(self.rules.len());
        for (k, rule) in self.rules.iter().enumerate() {
            let attribute = rule.attribute.as_str();
            let (names, numbers) = (&mut self.names[k], &mut self.numbers[k]);
            let cell = match rule.kind {
                Kind::Equal => {
                    let mut values = SmallVec::new();
                    for i in 0..players.max(1) {
                        let v = equal_key(t.value(i, attribute));
                        let n = number(names, numbers, &v, usize::MAX).expect("no cap");
                        if !values.contains(&n) {
                            values.push(n);
                        }
                    }
                    Cell::Equal(values)
                }
                Kind::Intersect => {
                    let mut set = u64::MAX;
                    let mut first = u8::MAX;
                    for i in 0..players {
                        let mut mine = 0u64;
                        let list = t
                            .value(i, attribute)
                            .and_then(Value::as_list)
                            .unwrap_or(&[]);
                        for (j, v) in list.iter().enumerate() {
                            let Some(n) = number(names, numbers, v, MAX_LIST_VALUES) else {
                                continue;
                            };
                            mine |= 1 << n;
                            if i == 0 && j == 0 {
                                first = n as u8;
                            }
                        }
                        set &= mine;
                    }
                    Cell::Intersect(if players == 0 { 0 } else { set }, first)
                }
                Kind::Distance => {
                    // A player without a number: the ticket fits no match.
                    let mut bounds = (players > 0).then_some((f64::INFINITY, f64::NEG_INFINITY));
                    for i in 0..players {
                        match (
                            t.value(i, attribute).and_then(Value::as_number),
                            &mut bounds,
                        ) {
                            (Some(n), Some((lo, hi))) if !n.is_nan() => {
                                *lo = lo.min(n);
                                *hi = hi.max(n);
                            }
                            _ => {
                                bounds = None;
                                break;
                            }
                        }
                    }
                    let (lo, hi) = bounds.unwrap_or((f64::NAN, f64::NAN));
                    Cell::Distance(lo, hi)
                }
                Kind::Roles => {
                    let every: u16 = if names.len() >= 16 {
                        u16::MAX
                    } else {
                        (1u16 << names.len()) - 1
                    };
                    Cell::Roles(
                        (0..players)
                            .map(|i| match t.value(i, attribute).and_then(Value::as_list) {
                                None => every,
                                Some(list) => list
                                    .iter()
                                    .filter_map(|r| names.iter().position(|n| **n == **r))
                                    .fold(0u16, |s, b| s | 1 << b),
                            })
                            .collect(),
                    )
                }
                Kind::PartyBalance => Cell::Shape,
            };
            cells.push(cell);
        }
        if !self.sees_people {
            self.missed_blocks |= !t.blocks().is_empty();
            return Compiled {
                size: u16::try_from(players).unwrap_or(u16::MAX),
                cells,
                people: Vec::new(),
                blocked: Vec::new(),
            };
        }
        // Every player is numbered (a ticket queued later may block them).
        let people = &mut self.people;
        let mut person = |p: &PlayerId| match people.get(p) {
            Some(&n) => n,
            None => {
                let n = people.len() as u32;
                people.insert(p.clone(), n);
                n
            }
        };
        let mut people = Vec::with_capacity(players);
        for i in 0..players {
            if let Some(p) = t.player(i) {
                people.push(person(p));
            }
        }
        let blocked: Vec<u32> = t.blocks().iter().map(&mut person).collect();
        Compiled {
            size: u16::try_from(players).unwrap_or(u16::MAX),
            cells,
            people,
            blocked,
        }
    }

    /// The traits of `rows` (in the order of the engine's entries). The rows
    /// are read in one pass, each rule's column built beside the others (a
    /// leader does this every cycle: one visit of each row, not one per rule).
    pub fn traits<'a>(&self, rows: impl ExactSizeIterator<Item = &'a Compiled> + Clone) -> Traits {
        let n = rows.len();
        let mut cols: Vec<Building> = self
            .rules
            .iter()
            .map(|rule| Building::new(rule.kind, n))
            .collect();
        for r in rows.clone() {
            for (k, col) in cols.iter_mut().enumerate() {
                col.push(r.cells.get(k));
            }
        }
        for col in &mut cols {
            col.close();
        }
        let mut out = Traits::default();
        for ((k, rule), col) in self.rules.iter().enumerate().zip(cols) {
            let column = match col {
                Building::Equal { start, values } => {
                    let group = rule
                        .steps
                        .iter()
                        .map(|s| {
                            let groups = match &s.params {
                                Params::Equal { groups } => groups.as_slice(),
                                _ => &[],
                            };
                            self.names[k]
                                .iter()
                                .enumerate()
                                .map(|(i, name)| {
                                    match groups
                                        .iter()
                                        .position(|g| g.iter().any(|v| **v == **name))
                                    {
                                        Some(g) => g as u32,
                                        None => (groups.len() + i) as u32,
                                    }
                                })
                                .collect()
                        })
                        .collect();
                    Column::Equal {
                        start,
                        values,
                        group,
                    }
                }
                Building::Intersect { sets, firsts } => Column::Intersect {
                    sets,
                    firsts,
                    names: self.names[k].clone(),
                },
                Building::Distance { lo, hi } => Column::Distance { lo, hi },
                Building::Roles { start, sets } => {
                    let names = &self.names[k];
                    let needs: Vec<Option<Vec<Need>>> = rule
                        .steps
                        .iter()
                        .map(|s| match &s.params {
                            Params::Roles { need, any } => Some(
                                need.iter()
                                    .map(|(r, n)| Need {
                                        bit: names.iter().position(|x| **x == **r).unwrap_or(0),
                                        count: *n,
                                        any: any.contains(r),
                                    })
                                    .collect(),
                            ),
                            _ => None,
                        })
                        .collect();
                    let room = Room::new(names.len(), &needs).map(|room| {
                        let masks = room.masks(&sets);
                        (room, masks)
                    });
                    Column::Roles {
                        start,
                        sets,
                        names: names.clone(),
                        needs,
                        room,
                    }
                }
                Building::Shape => Column::PartyBalance,
            };
            out.push_rule(rule.clone(), column);
        }
        out.set_people(rows);
        out
    }
}

/// One rule's column as [`Compiler::traits`] gathers it, row by row.
enum Building {
    Equal { start: Vec<u32>, values: Vec<u32> },
    Intersect { sets: Vec<u64>, firsts: Vec<u8> },
    Distance { lo: Vec<f64>, hi: Vec<f64> },
    Roles { start: Vec<u32>, sets: Vec<u16> },
    Shape,
}

impl Building {
    /// An empty column of a rule of `kind`, for `n` rows.
    fn new(kind: Kind, n: usize) -> Self {
        match kind {
            Kind::Equal => Building::Equal {
                start: Vec::with_capacity(n + 1),
                values: Vec::with_capacity(n),
            },
            Kind::Intersect => Building::Intersect {
                sets: Vec::with_capacity(n),
                firsts: Vec::with_capacity(n),
            },
            Kind::Distance => Building::Distance {
                lo: Vec::with_capacity(n),
                hi: Vec::with_capacity(n),
            },
            Kind::Roles => Building::Roles {
                start: Vec::with_capacity(n + 1),
                sets: Vec::with_capacity(n),
            },
            Kind::PartyBalance => Building::Shape,
        }
    }

    /// Adds a row's cell of this rule (a row compiled for other rules adds
    /// what a ticket without the attribute would).
    #[inline(always)]
    fn push(&mut self, cell: Option<&Cell>) {
        match self {
            Building::Equal { start, values } => {
                start.push(values.len() as u32);
                if let Some(Cell::Equal(v)) = cell {
                    append(values, v);
                }
            }
            Building::Intersect { sets, firsts } => {
                let (s, f) = match cell {
                    Some(&Cell::Intersect(s, f)) => (s, f),
                    _ => (0, u8::MAX),
                };
                sets.push(s);
                firsts.push(f);
            }
            Building::Distance { lo, hi } => {
                let (a, b) = match cell {
                    Some(&Cell::Distance(a, b)) => (a, b),
                    _ => (f64::NAN, f64::NAN),
                };
                lo.push(a);
                hi.push(b);
            }
            Building::Roles { start, sets } => {
                start.push(sets.len() as u32);
                if let Some(Cell::Roles(s)) = cell {
                    append(sets, s);
                }
            }
            Building::Shape => {}
        }
    }

    /// Ends the column after its last row: where that row's values end.
    fn close(&mut self) {
        match self {
            Building::Equal { start, values } => start.push(values.len() as u32),
            Building::Roles { start, sets } => start.push(sets.len() as u32),
            _ => {}
        }
    }
}
