//! Walking the free positions of a snapshot: "next unused position" links with
//! path compression in both directions ([`Free`]), and the walks up from a start
//! that a candidate match grows along ([`Upward`]): straight up the free links,
//! or up a [`Ladder`] of positions around an overdue ticket looked up once.

/// "Next unused position" links with path compression, one per direction.
pub(super) struct Free {
    pub(super) right: Vec<u32>,
    pub(super) left: Vec<u32>,
}

impl Free {
    pub(super) fn new(n: usize) -> Self {
        // Position p is stored at p + 1 so that 0 and n + 1 are sentinels.
        let ids: Vec<u32> = (0..n as u32 + 2).collect();
        Self {
            right: ids.clone(),
            left: ids,
        }
    }

    pub(super) fn find(links: &mut [u32], mut x: u32) -> u32 {
        let mut root = x;
        while links[root as usize] != root {
            root = links[root as usize];
        }
        while links[x as usize] != root {
            let next = links[x as usize];
            links[x as usize] = root;
            x = next;
        }
        root
    }

    /// First unused position at or right of `p`, if any.
    pub(super) fn right_of(&mut self, p: usize, n: usize) -> Option<usize> {
        let r = Self::find(&mut self.right, p as u32 + 1) as usize;
        (r <= n).then(|| r - 1)
    }

    /// First unused position at or left of `p` (p may be -1 as `None`).
    pub(super) fn left_of(&mut self, p: Option<usize>) -> Option<usize> {
        let p = p?;
        let l = Self::find(&mut self.left, p as u32 + 1) as usize;
        (l >= 1).then(|| l - 1)
    }

    pub(super) fn take(&mut self, p: usize) {
        self.right[p + 1] = p as u32 + 2;
        self.left[p + 1] = p as u32;
    }
}

/// The free positions above a start, one after another.
pub(super) trait Upward {
    fn next(&mut self, free: &mut Free, n: usize) -> Option<usize>;
}

/// Looked up in the free links, from above a start.
pub(super) struct FreeAbove(pub(super) usize);

impl Upward for FreeAbove {
    fn next(&mut self, free: &mut Free, n: usize) -> Option<usize> {
        let p = free.right_of(self.0 + 1, n)?;
        self.0 = p;
        Some(p)
    }
}

/// The free positions around an overdue ticket, looked up once for all the starts
/// its search tries (nothing is taken while it searches).
#[derive(Debug, Default)]
pub(super) struct Ladder {
    /// Starts below the anchor tried so far, nearest first.
    pub(super) below: Vec<usize>,
    /// The anchor, then the free positions above it found so far, in order.
    pub(super) above: Vec<usize>,
    /// Whether `above` reaches the top of the pool.
    pub(super) top: bool,
}

impl Ladder {
    pub(super) fn reset(&mut self, anchor: usize) {
        self.below.clear();
        self.above.clear();
        self.above.push(anchor);
        self.top = false;
    }

    /// Records the next start below the anchor, if there is one (the walk from it
    /// comes up through the ones already recorded).
    pub(super) fn push_below(&mut self, start: Option<usize>) {
        self.below.extend(start);
    }

    /// A walk from the lowest start found so far.
    pub(super) fn climb(&mut self) -> Climb<'_> {
        Climb {
            below: self.below.len(),
            k: 0,
            ladder: self,
        }
    }
}

/// A walk up a [`Ladder`] from one of its starts: what is left of `below` (the
/// start itself excluded), then `above`.
pub(super) struct Climb<'a> {
    pub(super) ladder: &'a mut Ladder,
    pub(super) below: usize,
    pub(super) k: usize,
}

impl Upward for Climb<'_> {
    fn next(&mut self, free: &mut Free, n: usize) -> Option<usize> {
        if self.below > 0 {
            // The start is `below[self.below - 1]`: next come the ones nearer the
            // anchor, then the anchor.
            self.below -= 1;
            return Some(if self.below > 0 {
                self.ladder.below[self.below - 1]
            } else {
                self.ladder.above[0]
            });
        }
        self.k += 1;
        let l = &mut *self.ladder;
        while l.above.len() <= self.k && !l.top {
            let last = *l.above.last().expect("holds the anchor");
            match free.right_of(last + 1, n) {
                Some(p) => l.above.push(p),
                None => l.top = true,
            }
        }
        l.above.get(self.k).copied()
    }
}

/// A walk that notes every position it hands out.
pub(super) struct Recording<'a, W: Upward> {
    pub(super) inner: &'a mut W,
    pub(super) seen: &'a mut Vec<usize>,
}

impl<W: Upward> Upward for Recording<'_, W> {
    fn next(&mut self, free: &mut Free, n: usize) -> Option<usize> {
        let p = self.inner.next(free, n)?;
        self.seen.push(p);
        Some(p)
    }
}

/// The positions a [`Recording`] noted, then the rest of its walk.
pub(super) struct Replay<'a, W: Upward> {
    pub(super) recorded: &'a [usize],
    pub(super) k: usize,
    pub(super) inner: &'a mut W,
}

impl<W: Upward> Upward for Replay<'_, W> {
    fn next(&mut self, free: &mut Free, n: usize) -> Option<usize> {
        if let Some(&p) = self.recorded.get(self.k) {
            self.k += 1;
            return Some(p);
        }
        self.inner.next(free, n)
    }
}
