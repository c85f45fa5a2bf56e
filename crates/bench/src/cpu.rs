//! What each process of a bench run spent on the CPU, from the kernel's own
//! accounting (`/proc/PID/stat`: user and system time of all the process's
//! threads, ended ones included), so a run can say what one request cost the
//! server, its workers, Redis and the load generator itself. The benches share
//! the machine's cores with what they measure: the sum per request, against the
//! cores there are, is the most requests per second the machine could answer
//! at all, whatever the server did with its share.

use std::ops::{AddAssign, Sub};

/// CPU time process `pid` has used so far (user + system), in microseconds;
/// `None` once it is gone (or off Linux).
pub fn process_usec(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(stat_ticks(&stat)? as f64 * 1e6 / ticks_per_second())
}

/// This process's CPU time so far (the load generator's), in microseconds.
pub fn own_usec() -> Option<f64> {
    process_usec(std::process::id())
}

/// The user and system clock ticks of a `/proc/PID/stat` line (its 14th and
/// 15th fields). The 2nd, the command's name in parentheses, may itself hold
/// spaces and parentheses, so the fields are counted from its last `)`.
fn stat_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // The 3rd field (the state) comes first: utime is 11 further on.
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// The unit of `/proc/PID/stat`'s times (`sysconf(_SC_CLK_TCK)`).
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf only reads a constant of the running system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    // Linux's USER_HZ, should the call ever fail.
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

/// CPU time of the parts of a deployment and of the load generator, in
/// microseconds: a reading, or what was spent between two. The default is
/// nothing spent yet: every part at zero, so spans add onto it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spent {
    /// The process serving the API (`ingress`, or `serve` with its worker).
    pub server: Option<f64>,
    /// Worker and supervisor processes, together.
    pub workers: Option<f64>,
    pub redis: Option<f64>,
    /// This process: the load generator.
    pub load: Option<f64>,
}

impl Default for Spent {
    fn default() -> Self {
        Spent {
            server: Some(0.0),
            workers: Some(0.0),
            redis: Some(0.0),
            load: Some(0.0),
        }
    }
}

/// `12.3`, or `-` for a part that could not be read.
pub fn show(us: Option<f64>) -> String {
    us.map_or("-".to_string(), |us| format!("{us:.1}"))
}

impl Spent {
    /// Each part's time per one of `n` requests.
    pub fn per(&self, n: u64) -> Spent {
        let each = |x: Option<f64>| x.map(|x| x / n.max(1) as f64);
        Spent {
            server: each(self.server),
            workers: each(self.workers),
            redis: each(self.redis),
            load: each(self.load),
        }
    }

    /// The parts' sum, over those known.
    pub fn all(&self) -> f64 {
        [self.server, self.workers, self.redis, self.load]
            .into_iter()
            .flatten()
            .sum()
    }

    /// `server 38.0, workers -, redis 26.0, load generator 23.0, all 87.0`.
    pub fn describe(&self) -> String {
        format!(
            "server {}, workers {}, redis {}, load generator {}, all {:.1}",
            show(self.server),
            show(self.workers),
            show(self.redis),
            show(self.load),
            self.all()
        )
    }
}

fn both(a: Option<f64>, b: Option<f64>, f: impl Fn(f64, f64) -> f64) -> Option<f64> {
    Some(f(a?, b?))
}

impl Sub for Spent {
    type Output = Spent;

    fn sub(self, before: Spent) -> Spent {
        let minus = |a, b| both(a, b, |a, b| (a - b).max(0.0));
        Spent {
            server: minus(self.server, before.server),
            workers: minus(self.workers, before.workers),
            redis: minus(self.redis, before.redis),
            load: minus(self.load, before.load),
        }
    }
}

impl AddAssign for Spent {
    /// Adds a later span's time; a part one span could not read stays unknown.
    fn add_assign(&mut self, more: Spent) {
        let plus = |a, b| both(a, b, |a, b| a + b);
        *self = Spent {
            server: plus(self.server, more.server),
            workers: plus(self.workers, more.workers),
            redis: plus(self.redis, more.redis),
            load: plus(self.load, more.load),
        };
    }
}

/// The machine's cores (those this process may run on).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_times_are_read_past_a_name_with_spaces_and_parentheses() {
        let line = "4242 (tokio (rt) 1) S 1 4242 4242 0 -1 4194560 \
                    150 0 0 0 731 269 0 0 20 0 3 0 100 0 0";
        assert_eq!(stat_ticks(line), Some(1000));
        assert_eq!(stat_ticks("4242 (cut short) S 1 2"), None);
        assert_eq!(stat_ticks("no name at all"), None);
    }

    #[test]
    fn this_process_s_time_grows_as_it_works_and_in_microseconds() {
        let before = own_usec().expect("this process's /proc entry");
        // Work until the kernel has counted 50 ms of it (on a busy machine
        // that takes longer than 50 ms of wall clock, never less).
        let started = std::time::Instant::now();
        let mut x = 1u64;
        let mut spent = 0.0;
        while spent < 50_000.0 && started.elapsed() < std::time::Duration::from_secs(20) {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            spent = own_usec().unwrap() - before;
        }
        let wall = started.elapsed().as_secs_f64() * 1e6;
        assert!(spent >= 50_000.0, "{spent} us counted in {wall} us of work");
        // Microseconds, not some other unit: no more than every core for the
        // whole time, give or take the kernel's tick (10 ms).
        let most = wall * cores() as f64 + 20_000.0;
        assert!(spent <= most, "{spent} us counted in {wall} us");
        assert_eq!(process_usec(u32::MAX), None);
    }

    #[test]
    fn spans_are_told_apart_summed_and_shared_out() {
        let at = |s, w, r, l| Spent {
            server: Some(s),
            workers: w,
            redis: r,
            load: Some(l),
        };
        let first = at(100.0, None, Some(50.0), 30.0) - at(40.0, None, Some(20.0), 10.0);
        assert_eq!(first, at(60.0, None, Some(30.0), 20.0));
        let mut sum = first;
        sum += at(40.0, None, Some(10.0), 20.0);
        assert_eq!(sum, at(100.0, None, Some(40.0), 40.0));
        // A part unread in one span is unknown in the sum.
        sum += at(1.0, None, None, 1.0);
        assert_eq!(sum.redis, None);
        let each = at(100.0, None, Some(50.0), 30.0).per(10);
        assert_eq!(each, at(10.0, None, Some(5.0), 3.0));
        assert_eq!(each.all(), 18.0);
        assert_eq!(
            each.describe(),
            "server 10.0, workers -, redis 5.0, load generator 3.0, all 18.0"
        );
    }
}
