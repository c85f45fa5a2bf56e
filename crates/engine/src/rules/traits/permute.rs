//! The rules' view of a snapshot reordered: what entry `entries[i]` holds,
//! at `i`. The search walks the pool in rating order and asks about each
//! ticket it passes; laid out in that order, what it reads next lies beside
//! what it read last, instead of anywhere in megabytes of columns.

use super::{Column, Traits};
use crate::rules::append;

impl Traits {
    /// These traits with entry `entries[i]` moved to `i` (entries not listed
    /// are left out).
    pub fn permuted(&self, entries: &[usize]) -> Traits {
        let rules = self
            .rules
            .iter()
            .map(|(rule, column)| (rule.clone(), permute_column(column, entries)))
            .collect();
        let (people_start, people) = ranges(&self.people_start, &self.people, entries);
        let (blocks_start, blocked) = ranges(&self.blocks_start, &self.blocked, entries);
        let mut permuted = Traits {
            rules,
            labels: self.labels.clone(),
            sizes: pick(&self.sizes, entries),
            people_start,
            people,
            blocks_start,
            blocked,
            settled: 0,
            plan: Default::default(),
            steps: Vec::new(),
            ops: Vec::new(),
            room: None,
        };
        permuted.make_plan();
        permuted
    }
}

fn permute_column(column: &Column, entries: &[usize]) -> Column {
    match column {
        Column::Equal {
            start,
            values,
            group,
        } => {
            let (start, values) = ranges(start, values, entries);
            Column::Equal {
                start,
                values,
                group: group.clone(),
            }
        }
        Column::Intersect {
            sets,
            firsts,
            names,
        } => Column::Intersect {
            sets: pick(sets, entries),
            firsts: pick(firsts, entries),
            names: names.clone(),
        },
        Column::Distance { lo, hi } => Column::Distance {
            lo: pick(lo, entries),
            hi: pick(hi, entries),
        },
        Column::Roles {
            start,
            sets,
            names,
            needs,
            room,
        } => {
            let (new_start, sets) = ranges(start, sets, entries);
            let room = room
                .as_ref()
                .map(|(room, masks)| (room.clone(), ranges(start, masks, entries).1));
            Column::Roles {
                start: new_start,
                sets,
                names: names.clone(),
                needs: needs.clone(),
                room,
            }
        }
        Column::PartyBalance => Column::PartyBalance,
    }
}

/// `column[e]` for each of `entries`, in order (nothing for an empty column).
fn pick<T: Copy>(column: &[T], entries: &[usize]) -> Vec<T> {
    if column.is_empty() {
        return Vec::new();
    }
    entries.iter().map(|&e| column[e]).collect()
}

/// Per-entry ranges (`data[start[e]..start[e + 1]]`) for each of `entries`,
/// in order, as a new `start` and `data` (nothing for an empty `start`).
fn ranges<T: Copy>(start: &[u32], data: &[T], entries: &[usize]) -> (Vec<u32>, Vec<T>) {
    if start.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut new_start = Vec::with_capacity(entries.len() + 1);
    let mut new_data = Vec::with_capacity(data.len());
    for &e in entries {
        new_start.push(new_data.len() as u32);
        append(
            &mut new_data,
            &data[start[e] as usize..start[e + 1] as usize],
        );
    }
    new_start.push(new_data.len() as u32);
    (new_start, new_data)
}

#[cfg(test)]
mod tests {
    use crate::rules::traits::fixture::{T, compile};
    use mm_domain::{Attributes, Value};

    const MODE: &str = r#"
[modes.m]
teams = 2
team_size = 2
rules = [
  { kind = "equal", attribute = "build", relax = [{ after = "10s", off = true }] },
  { kind = "intersect", attribute = "maps" },
  { kind = "distance", attribute = "level", max_distance = 5 },
  { kind = "roles", attribute = "roles", need = { tank = 1, damage = 1 } },
]
"#;

    #[test]
    fn a_moved_entry_reads_as_it_did() {
        let tickets: Vec<T> = (0..6)
            .map(|i| {
                let mut a = Attributes::default();
                a.insert("build", Value::Text(format!("b{}", i % 2)));
                let maps = vec![format!("m{}", i % 3), "m9".to_string()];
                a.insert("maps", Value::List(maps));
                a.insert("level", Value::Number(f64::from(i * 3)));
                let role = if i % 2 == 0 { "tank" } else { "damage" };
                a.insert("roles", Value::List(vec![role.to_string()]));
                T(a)
            })
            .collect();
        let traits = compile(MODE, &tickets);
        let order = [4, 1, 5, 0, 3];
        let moved = traits.permuted(&order);
        let mut differ = 0;
        for wait in [0, 20_000] {
            for (i, &a) in order.iter().enumerate() {
                for (j, &b) in order.iter().enumerate() {
                    let before = traits.meets(&[a, b], wait);
                    assert_eq!(before, moved.meets(&[i, j], wait), "{a} {b} at {wait}");
                    differ += usize::from(!before);
                    assert_eq!(
                        traits.chosen(&[a, b], wait, 7),
                        moved.chosen(&[i, j], wait, 7)
                    );
                }
            }
        }
        // The rules tell some pairs apart: the comparison means something.
        assert!(differ > 0);
    }
}
