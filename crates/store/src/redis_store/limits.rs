//! Rate-limit checks on Redis, batched: the checks of concurrent requests share
//! script calls (`rate.lua`, one call per slot on a cluster), the way a proxy
//! pipelines its rate-limit lookups. A check queues its keys for one driver task;
//! while [`IN_FLIGHT`] calls are out, new checks gather, and the next call carries
//! all of them, each key once with the number of calls wanted of it. An idle
//! ingress sends each check at once, a saturated one sends one call for many
//! requests instead of a round trip each, which is what a round trip costs on a
//! busy machine (system calls and wake-ups on both sides).
//!
//! An address that sends many calls (a flood, or many players behind one NAT)
//! gets **leases** ([`Leases`]): when its calls keep coming, the ingress asks
//! Redis for more calls than are waiting and answers the next ones from what it
//! was granted, without a round trip (one such call out at a time); a refused
//! address spends what it still holds, then is refused locally until its wait
//! is over. Granted calls are charged in Redis before they are used, so
//! the limit still holds across every ingress: a lease can only leave calls
//! unused (it expires after [`LEASE_TTL`]), never let one too many through.
//! Players' limiters are checked call by call; so are addresses with small
//! limits (under 8 calls a period), though their refusals are remembered too.
//!
//! Within a call, a key's requests are served in arrival order; two calls in
//! flight may run in either order, as two requests' own calls would.

use super::conn::Conn;
use crate::keys;
use crate::{Rate, RateCheck, RateKey, StoreError, Verdict, Who};
use redis::Script;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, mpsc, oneshot};

/// Calls out at once; checks arriving meanwhile wait for the next call.
const IN_FLIGHT: usize = 2;
/// Most keys one call carries.
const MAX_KEYS: usize = 256;
/// How long calls granted ahead stay usable; also how soon after its last grant
/// another call makes an address count as busy.
const LEASE_TTL: Duration = Duration::from_millis(250);
/// Most calls taken ahead for one address at once.
const MAX_LEASE: u32 = 64;
/// Most addresses an ingress keeps leases for before it drops expired ones.
const MAX_LEASES: usize = 4096;

/// One request's checks, with the calls to take ahead for each, and where its
/// verdicts go.
struct Pending {
    checks: Vec<(RateCheck, u32)>,
    reply: oneshot::Sender<Result<Vec<Verdict>, String>>,
}

/// The queue of checks waiting for a script call.
pub(crate) struct RateChecks {
    queue: mpsc::UnboundedSender<Pending>,
    leases: Arc<Leases>,
}

impl RateChecks {
    /// Starts the driver (on the current Tokio runtime); it ends with the handle.
    pub fn start(conn: Conn, script: Script) -> Self {
        let (queue, rx) = mpsc::unbounded_channel();
        let leases = Arc::new(Leases::default());
        tokio::spawn(drive(conn, Arc::new(script), leases.clone(), rx));
        Self { queue, leases }
    }

    /// Counts one call against each `(key, rate)`: one verdict per check, in order.
    pub async fn check(&self, checks: &[RateCheck]) -> Result<Vec<Verdict>, StoreError> {
        let now = Instant::now();
        let mut verdicts = vec![Verdict::Allowed; checks.len()];
        let mut remote = Vec::new();
        let mut positions = Vec::new();
        for (i, (key, rate)) in checks.iter().enumerate() {
            match self.leases.local(key, *rate, now) {
                Local::Answered(v) => verdicts[i] = v,
                Local::Ask(ahead) => {
                    remote.push(((key.clone(), *rate), ahead));
                    positions.push(i);
                }
            }
        }
        if remote.is_empty() {
            return Ok(verdicts);
        }
        let (reply, answer) = oneshot::channel();
        let gone = || StoreError::Corrupt("the rate-limit driver stopped".into());
        self.queue
            .send(Pending {
                checks: remote,
                reply,
            })
            .map_err(|_| gone())?;
        let answered = answer
            .await
            .map_err(|_| gone())?
            .map_err(|e| StoreError::Redis(redis_error(e)))?;
        for (i, v) in positions.into_iter().zip(answered) {
            verdicts[i] = v;
        }
        Ok(verdicts)
    }
}

fn redis_error(message: String) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Io, "rate limits", message))
}

/// An address's limiter as one ingress sees it.
type AddressKey = (&'static str, IpAddr);

/// What this ingress holds of one address's limiter.
#[derive(Debug, Clone, Copy)]
struct Lease {
    /// Calls granted ahead and not used yet.
    calls: u32,
    /// When they (and the lease) expire.
    expires: Instant,
    /// How many calls the last grant took ahead.
    ahead: u32,
    /// Refused until then: the limiter's wait at the last refusal.
    refused_until: Option<Instant>,
    /// A call taking calls ahead is out (given up on after this instant, in
    /// case its answer never comes).
    asking: Option<Instant>,
}

/// Leases of busy addresses' limiters (see the module doc).
#[derive(Default)]
struct Leases(Mutex<LeaseMap>);

type LeaseMap = HashMap<AddressKey, Lease, foldhash::quality::RandomState>;

/// A check answered here, or to ask Redis, taking `u32` calls ahead.
enum Local {
    Answered(Verdict),
    Ask(u32),
}

impl Leases {
    fn lock(&self) -> std::sync::MutexGuard<'_, LeaseMap> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Answers a check from a lease, or says how many calls to take ahead.
    fn local(&self, key: &RateKey, rate: Rate, now: Instant) -> Local {
        let Who::Address(ip) = key.who else {
            return Local::Ask(0);
        };
        let mut leases = self.lock();
        let Some(lease) = leases.get_mut(&(key.class, ip)) else {
            return Local::Ask(0);
        };
        // Small limits are counted call by call: a lease could hold a real share.
        let most = (rate.count / 8).min(MAX_LEASE);
        // Calls charged ahead are this ingress's to give, refused or not: left
        // unused, they would be lost to the address until its period is over.
        if most > 0 && lease.calls > 0 && lease.expires > now {
            lease.calls -= 1;
            return Local::Answered(Verdict::Allowed);
        }
        if let Some(until) = lease.refused_until.filter(|t| *t > now) {
            return Local::Answered(Verdict::Limited(until - now));
        }
        if most == 0 || lease.expires <= now {
            return Local::Ask(0);
        }
        // One call takes calls ahead at a time: checks made while it is out
        // ask for their own call only, or every call out would come back with
        // a lease and all but the last be left unused.
        if lease.asking.is_some_and(|t| t > now) {
            return Local::Ask(0);
        }
        // Used up before it expired: the address is busy, take more ahead.
        lease.asking = Some(now + LEASE_TTL);
        Local::Ask((lease.ahead * 2).clamp(1, most))
    }

    /// Records what Redis granted an address: `got` calls of which `used` went to
    /// waiting requests, having asked `ahead` more; refused for `wait` if the
    /// waiting requests did not all get one.
    fn granted(&self, key: AddressKey, got: u32, used: u32, ahead: u32, wait: Option<Duration>) {
        let now = Instant::now();
        let mut leases = self.lock();
        if leases.len() >= MAX_LEASES {
            leases.retain(|_, l| l.expires > now || l.refused_until.is_some_and(|t| t > now));
        }
        let lease = leases.entry(key).or_insert(Lease {
            calls: 0,
            expires: now,
            ahead: 0,
            refused_until: None,
            asking: None,
        });
        if lease.expires <= now {
            lease.calls = 0;
        }
        lease.calls += got - used;
        lease.expires = now + LEASE_TTL;
        lease.ahead = ahead;
        lease.refused_until = wait.map(|w| now + w);
        if ahead > 0 {
            lease.asking = None;
        }
    }
}

async fn drive(
    conn: Conn,
    script: Arc<Script>,
    leases: Arc<Leases>,
    mut rx: mpsc::UnboundedReceiver<Pending>,
) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    loop {
        // Wait for a free call first: checks gather in the queue meanwhile.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = rx.recv().await else {
            return;
        };
        let mut keys = first.checks.len();
        let mut batch = vec![first];
        while keys < MAX_KEYS {
            let Ok(next) = rx.try_recv() else { break };
            keys += next.checks.len();
            batch.push(next);
        }
        let (conn, script, leases) = (conn.clone(), script.clone(), leases.clone());
        tokio::spawn(async move {
            let answers = call(&conn, &script, &leases, &batch).await;
            drop(slot);
            reply(batch, answers);
        });
    }
}

/// One limiter a call asks about: its Redis key, slot, rate, the requests
/// waiting on it (positions among the batch's checks) and the calls to take ahead.
struct Wanted {
    key: String,
    tag: String,
    rate: Rate,
    address: Option<AddressKey>,
    waiting: Vec<usize>,
    ahead: u32,
}

/// One call per slot on a cluster, one in all on a single node; the verdicts of
/// every check of `batch`, in order.
async fn call(
    conn: &Conn,
    script: &Script,
    leases: &Leases,
    batch: &[Pending],
) -> Result<Vec<Verdict>, String> {
    let mut wanted: Vec<Wanted> = Vec::new();
    let mut index: HashMap<&RateKey, usize> = HashMap::new();
    let all = batch.iter().flat_map(|p| &p.checks);
    for (position, ((key, rate), ahead)) in all.enumerate() {
        let w = *index.entry(key).or_insert_with(|| {
            let (redis_key, tag) = keys::limiter(key);
            wanted.push(Wanted {
                key: redis_key,
                tag,
                rate: *rate,
                address: match key.who {
                    Who::Address(ip) => Some((key.class, ip)),
                    Who::Player(_) => None,
                },
                waiting: Vec::new(),
                ahead: 0,
            });
            wanted.len() - 1
        });
        wanted[w].waiting.push(position);
        wanted[w].ahead = wanted[w].ahead.max(*ahead);
    }
    // Limiters of one slot share a call.
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, w) in wanted.iter().enumerate() {
        let group = match conn {
            Conn::Cluster(_) => w.tag.as_str(),
            Conn::Single(_) => "",
        };
        groups.entry(group).or_default().push(i);
    }
    let calls = groups.into_values().map(|members| {
        let mut inv = script.prepare_invoke();
        for &i in &members {
            let w = &wanted[i];
            inv.key(&w.key)
                .arg(w.rate.interval().as_micros() as u64)
                .arg(w.rate.count.max(1))
                .arg(w.waiting.len() as u32 + w.ahead);
        }
        let mut conn = conn.clone();
        async move {
            let got: Vec<u64> = inv.invoke_async(&mut conn).await?;
            Ok::<_, redis::RedisError>((members, got))
        }
    });
    let mut verdicts = vec![Verdict::Allowed; batch.iter().map(|p| p.checks.len()).sum()];
    for (members, got) in futures_util::future::try_join_all(calls)
        .await
        .map_err(|e| e.to_string())?
    {
        if got.len() != 2 * members.len() {
            return Err(format!(
                "{} answers for {} limiters",
                got.len(),
                members.len()
            ));
        }
        for (i, answer) in members.into_iter().zip(got.chunks_exact(2)) {
            let w = &wanted[i];
            let (granted, wait) = (answer[0] as u32, Duration::from_micros(answer[1]));
            let used = granted.min(w.waiting.len() as u32);
            for (n, &position) in w.waiting.iter().enumerate() {
                if n as u32 >= used {
                    verdicts[position] = Verdict::Limited(wait);
                }
            }
            if let Some(address) = w.address {
                let refused = (used < w.waiting.len() as u32).then_some(wait);
                leases.granted(address, granted, used, w.ahead, refused);
            }
        }
    }
    Ok(verdicts)
}

/// Hands each request its verdicts.
fn reply(batch: Vec<Pending>, answers: Result<Vec<Verdict>, String>) {
    let mut verdicts = answers.as_ref().map(|v| v.iter());
    for pending in batch {
        let mine = match &mut verdicts {
            Ok(v) => Ok(v.by_ref().take(pending.checks.len()).copied().collect()),
            Err(e) => Err(e.clone()),
        };
        // A request that gave up waiting has nobody to tell.
        let _ = pending.reply.send(mine);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(class: &'static str) -> RateKey {
        RateKey::address(class, "10.1.2.3".parse().unwrap())
    }

    const BIG: Rate = Rate {
        count: 1_000,
        period: Duration::from_secs(60),
    };

    fn asks(l: Local) -> Option<u32> {
        match l {
            Local::Ask(n) => Some(n),
            Local::Answered(_) => None,
        }
    }

    fn allowed(l: Local) -> bool {
        matches!(l, Local::Answered(Verdict::Allowed))
    }

    #[test]
    fn a_busy_address_takes_calls_ahead_and_spends_them_here() {
        let leases = Leases::default();
        let (key, now) = (address("t"), Instant::now());
        // Never seen: ask for the call alone.
        assert_eq!(asks(leases.local(&key, BIG, now)), Some(0));
        leases.granted(("t", "10.1.2.3".parse().unwrap()), 1, 1, 0, None);
        // Seen again while its lease lives: busy, so take calls ahead, doubling.
        assert_eq!(asks(leases.local(&key, BIG, Instant::now())), Some(1));
        leases.granted(("t", "10.1.2.3".parse().unwrap()), 5, 1, 4, None);
        for _ in 0..4 {
            assert!(allowed(leases.local(&key, BIG, Instant::now())));
        }
        assert_eq!(asks(leases.local(&key, BIG, Instant::now())), Some(8));
        // Capped at an eighth of the burst and MAX_LEASE.
        leases.granted(("t", "10.1.2.3".parse().unwrap()), 1, 1, 60, None);
        assert_eq!(
            asks(leases.local(&key, BIG, Instant::now())),
            Some(MAX_LEASE)
        );
        // A lease expires, and with it the calls it held.
        leases.granted(("t", "10.1.2.3".parse().unwrap()), 3, 1, 2, None);
        let later = Instant::now() + LEASE_TTL + Duration::from_millis(1);
        assert_eq!(asks(leases.local(&key, BIG, later)), Some(0));
        // Another class of call from the same address is another limiter.
        assert_eq!(
            asks(leases.local(&address("u"), BIG, Instant::now())),
            Some(0)
        );
    }

    #[test]
    fn a_refused_address_is_refused_here_until_its_wait_is_over() {
        let leases = Leases::default();
        let key = address("t");
        let wait = Duration::from_secs(2);
        leases.granted(("t", "10.1.2.3".parse().unwrap()), 0, 0, 0, Some(wait));
        match leases.local(&key, BIG, Instant::now()) {
            Local::Answered(Verdict::Limited(w)) => assert!(w <= wait && w > wait / 2, "{w:?}"),
            _ => panic!("not refused locally"),
        }
        let after = Instant::now() + wait + Duration::from_millis(1);
        assert_eq!(asks(leases.local(&key, BIG, after)), Some(0));
    }

    #[test]
    fn calls_held_are_spent_before_a_refusal_is_answered_here() {
        let leases = Leases::default();
        let (key, ip) = (address("t"), "10.1.2.3".parse().unwrap());
        leases.granted(("t", ip), 1, 1, 0, None);
        assert_eq!(asks(leases.local(&key, BIG, Instant::now())), Some(1));
        // Two calls out: the first took 8 ahead, the second came back refused.
        leases.granted(("t", ip), 9, 1, 8, None);
        leases.granted(("t", ip), 0, 0, 0, Some(Duration::from_secs(5)));
        for _ in 0..8 {
            assert!(allowed(leases.local(&key, BIG, Instant::now())));
        }
        assert!(matches!(
            leases.local(&key, BIG, Instant::now()),
            Local::Answered(Verdict::Limited(_))
        ));
    }

    #[test]
    fn one_call_at_a_time_takes_calls_ahead() {
        let leases = Leases::default();
        let (key, ip) = (address("t"), "10.1.2.3".parse().unwrap());
        leases.granted(("t", ip), 1, 1, 0, None);
        assert_eq!(asks(leases.local(&key, BIG, Instant::now())), Some(1));
        // While that call is out, the next checks ask for themselves only.
        assert_eq!(asks(leases.local(&key, BIG, Instant::now())), Some(0));
        assert_eq!(asks(leases.local(&key, BIG, Instant::now())), Some(0));
        leases.granted(("t", ip), 2, 1, 1, None);
        assert!(allowed(leases.local(&key, BIG, Instant::now())));
        assert_eq!(asks(leases.local(&key, BIG, Instant::now())), Some(2));
        // An answer that never comes is given up on with the lease's time.
        let later = Instant::now() + LEASE_TTL + Duration::from_millis(1);
        leases.granted(("t", ip), 0, 0, 0, None);
        assert_eq!(asks(leases.local(&key, BIG, Instant::now())), Some(0));
        assert_eq!(asks(leases.local(&key, BIG, later)), Some(0));
    }

    #[test]
    fn players_and_small_limits_are_counted_call_by_call() {
        let leases = Leases::default();
        let player = RateKey::player("t", mm_domain::PlayerId::new("p").unwrap());
        leases.granted(("t", "10.1.2.3".parse().unwrap()), 9, 1, 8, None);
        assert_eq!(asks(leases.local(&player, BIG, Instant::now())), Some(0));
        let small = Rate {
            count: 7,
            period: Duration::from_secs(60),
        };
        assert_eq!(
            asks(leases.local(&address("t"), small, Instant::now())),
            Some(0)
        );
        // A refusal is remembered whatever the limit.
        let wait = Some(Duration::from_secs(5));
        leases.granted(("t", "10.1.2.3".parse().unwrap()), 0, 0, 0, wait);
        assert!(matches!(
            leases.local(&address("t"), small, Instant::now()),
            Local::Answered(Verdict::Limited(_))
        ));
    }
}
