//! `matchmaker example-game-server`: a small game server that shows the server
//! manager's contract end to end. It registers, heartbeats, and for every match a
//! heartbeat lists it "plays" for `--match-duration`, then reports a result (team 0
//! wins, the others lose; in a one-player-per-team mode the players are ranked by
//! team) and releases the slot. If the manager forgot it (it missed heartbeats), it
//! registers again. Each match it starts and finishes is printed as a JSON line on
//! stdout, which is what the tests read.
//!
//! Backfill: with `--leave-rate`, players leave its matches at random (that many
//! per match per minute of play); it reports each with `PlayerLeft`, which opens
//! a seat in a `backfill = "auto"` mode, and otherwise opens the seat itself
//! (`OpenBackfill`, in a `"manual"` mode). It acknowledges the players who fill
//! seats (heartbeats name them) and reports results for everyone who played,
//! the leavers as `abandoned`.

use anyhow::{Context, Result};
use clap::Args;
use mm_proto::v1 as pb;
use mm_proto::{Client, Credential};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::transport::Endpoint;

#[derive(Debug, Clone, Args)]
pub struct GameServerArgs {
    /// The server manager's gRPC address.
    #[arg(
        long,
        env = "SERVER_MANAGER_URL",
        default_value = "http://127.0.0.1:50051"
    )]
    pub manager: String,
    /// This server's id (default: random).
    #[arg(long, env = "GAME_SERVER_ID")]
    pub id: Option<String>,
    /// Region the server runs in.
    #[arg(long, env = "GAME_SERVER_REGION", default_value = "eu")]
    pub region: String,
    /// Modes it hosts, comma-separated (default: every mode).
    #[arg(long, env = "GAME_SERVER_MODES", value_delimiter = ',')]
    pub modes: Vec<String>,
    /// Matches it hosts at once.
    #[arg(long, env = "GAME_SERVER_CAPACITY", default_value_t = 4)]
    pub capacity: u32,
    /// Where players connect.
    #[arg(long, env = "GAME_SERVER_ADDRESS", default_value = "127.0.0.1:7777")]
    pub address: String,
    /// How long each match lasts before its result is reported.
    #[arg(long, env = "MATCH_DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
    pub match_duration: Duration,
    /// Players leaving each match, per minute of play (0: nobody leaves).
    #[arg(long, env = "LEAVE_RATE", default_value_t = 0.0)]
    pub leave_rate: f64,
    /// The fleet token sent with every call (one of FLEET_CREDENTIALS_FILE's, bound
    /// to this server's id); not needed when the manager runs in dev mode.
    #[arg(long, env = "GAME_SERVER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// CA (PEM) to trust for the server manager's certificate (with an https://
    /// SERVER_MANAGER_URL).
    #[arg(long, env = "GAME_SERVER_TLS_CA")]
    pub tls_ca: Option<std::path::PathBuf>,
    /// This server's client certificate (PEM), for a manager that asks for mutual TLS.
    #[arg(long, env = "GAME_SERVER_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The private key of GAME_SERVER_TLS_CERT (PEM).
    #[arg(long, env = "GAME_SERVER_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
}

impl GameServerArgs {
    /// TLS to the manager, if configured.
    fn tls(&self) -> Result<Option<tonic::transport::ClientTlsConfig>> {
        if self.tls_ca.is_none() && self.tls_cert.is_none() {
            return Ok(None);
        }
        let read = |var: &str, path: &std::path::PathBuf| {
            std::fs::read(path).with_context(|| format!("{var} {}", path.display()))
        };
        let mut tls = tonic::transport::ClientTlsConfig::new();
        if let Some(ca) = &self.tls_ca {
            tls = tls.ca_certificate(tonic::transport::Certificate::from_pem(read(
                "GAME_SERVER_TLS_CA",
                ca,
            )?));
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            tls = tls.identity(tonic::transport::Identity::from_pem(
                read("GAME_SERVER_TLS_CERT", cert)?,
                read("GAME_SERVER_TLS_KEY", key)?,
            ));
        }
        Ok(Some(tls))
    }
}

/// Connects, retrying for a while (the manager may still be starting).
async fn connect(
    url: &str,
    token: Option<&str>,
    tls: Option<tonic::transport::ClientTlsConfig>,
) -> Result<Client> {
    let credential =
        Credential::new(token).map_err(|e| anyhow::anyhow!("GAME_SERVER_TOKEN (--token): {e}"))?;
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .with_context(|| format!("SERVER_MANAGER_URL (--manager) {url:?}"))?;
    if let Some(tls) = tls {
        endpoint = endpoint
            .tls_config(tls)
            .context("GAME_SERVER_TLS_* settings")?;
    }
    let mut last = None;
    for _ in 0..50 {
        match endpoint.connect().await {
            Ok(c) => return Ok(mm_proto::client(c, credential)),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(last.expect("tried")).with_context(|| format!("cannot reach the server manager at {url}"))
}

async fn register(client: &mut Client, args: &GameServerArgs, id: &str) -> Result<Duration> {
    let r = client
        .register(pb::RegisterRequest {
            server_id: id.to_string(),
            region: args.region.clone(),
            modes: args.modes.clone(),
            capacity: args.capacity,
            address: args.address.clone(),
        })
        .await
        .context("register")?
        .into_inner();
    println!(
        "{}",
        serde_json::json!({"event": "registered", "server_id": id})
    );
    Ok(Duration::from_millis(r.heartbeat_interval_ms.max(50)))
}

/// A plausible result, so ratings move: two teams win or lose (about one match in
/// ten is a draw) at random; more teams are ranked in a random order (placement 1
/// is the winner).
fn result_of(server_id: &str, a: &pb::Allocation) -> pb::ReportResultRequest {
    use rand::seq::SliceRandom;
    let mut rng = rand::rng();
    let n = a.teams.len();
    let mut order: Vec<u32> = (1..=n as u32).collect();
    order.shuffle(&mut rng);
    let draw = n == 2 && rand::Rng::random_bool(&mut rng, 0.1);
    pb::ReportResultRequest {
        server_id: server_id.to_string(),
        match_id: a.match_id.clone(),
        teams: a
            .teams
            .iter()
            .enumerate()
            .map(|(i, t)| pb::TeamResult {
                team: t.index,
                outcome: if draw {
                    pb::Outcome::Draw
                } else if order[i] == 1 {
                    pb::Outcome::Win
                } else {
                    pb::Outcome::Loss
                } as i32,
                placement: if draw { 0 } else { order[i] },
            })
            .collect(),
        players: Vec::new(),
        abandoned: Vec::new(),
    }
}

/// Who is in a running match: its players with their teams (joined by
/// backfill too), and those who left.
#[derive(Default)]
struct Roster {
    players: Vec<(String, u32)>,
    left: HashSet<String>,
    /// Fills acknowledged.
    acked: HashSet<String>,
}

type Rosters = Arc<Mutex<HashMap<String, Roster>>>;

fn lock(r: &Rosters) -> std::sync::MutexGuard<'_, HashMap<String, Roster>> {
    r.lock().unwrap_or_else(|p| p.into_inner())
}

/// One player of match `a` leaves: the manager is told, and a seat opens
/// (by the mode's automatic backfill, or here).
async fn leave(client: &mut Client, id: &str, a: &pb::Allocation, rosters: &Rosters) {
    let pick = {
        let mut all = lock(rosters);
        let Some(r) = all.get_mut(&a.match_id) else {
            return;
        };
        let here: Vec<(String, u32)> = r
            .players
            .iter()
            .filter(|(p, _)| !r.left.contains(p))
            .cloned()
            .collect();
        let Some(one) = here.get(rand::random_range(0..here.len().max(1))).cloned() else {
            return;
        };
        r.left.insert(one.0.clone());
        one
    };
    let (player, team) = pick;
    println!(
        "{}",
        serde_json::json!({"event": "player_left", "match_id": a.match_id, "player_id": player, "team": team})
    );
    let left = client
        .player_left(pb::PlayerLeftRequest {
            server_id: id.to_string(),
            match_id: a.match_id.clone(),
            player_id: player.clone(),
        })
        .await;
    let (opened, current) = match left {
        Ok(r) => {
            let r = r.into_inner();
            (
                r.seat_opened,
                r.backfill.map(|b| b.open).unwrap_or_default(),
            )
        }
        Err(e) => {
            eprintln!("player_left {}: {e}", a.match_id);
            return;
        }
    };
    if opened {
        return;
    }
    // Not an automatic mode: open the seat here, one more on the leaver's team
    // than the backfill has open now.
    let mut open = current;
    open.resize(a.teams.len().max(team as usize + 1), 0);
    open[team as usize] += 1;
    if let Err(e) = client
        .open_backfill(pb::OpenBackfillRequest {
            server_id: id.to_string(),
            match_id: a.match_id.clone(),
            open,
        })
        .await
    {
        eprintln!("open_backfill {}: {e}", a.match_id);
    }
}

async fn play(
    mut client: Client,
    id: String,
    a: pb::Allocation,
    d: Duration,
    leave_rate: f64,
    rosters: Rosters,
) {
    let players: Vec<&String> = a.teams.iter().flat_map(|t| &t.player_ids).collect();
    println!(
        "{}",
        serde_json::json!({"event": "match_started", "match_id": a.match_id, "players": players,
                           "chosen": a.chosen, "roles": a.roles, "allocated_at_ms": a.allocated_at_ms,
                           "expires_at_ms": (a.expires_at_ms > 0).then_some(a.expires_at_ms)})
    );
    let end = tokio::time::Instant::now() + d;
    while leave_rate > 0.0 && !a.match_id.is_empty() {
        // Leaves come as a Poisson process: exponential gaps.
        let u: f64 = rand::random_range(f64::EPSILON..1.0);
        let gap = Duration::from_secs_f64(-u.ln() * 60.0 / leave_rate);
        let at = tokio::time::Instant::now() + gap;
        if at >= end {
            break;
        }
        tokio::time::sleep_until(at).await;
        leave(&mut client, &id, &a, &rosters).await;
    }
    tokio::time::sleep_until(end).await;
    // A slot taken through Allocate is a session with no match to report.
    let outside = a.match_id.is_empty();
    let reported = if outside {
        Ok(())
    } else {
        let mut report = result_of(&id, &a);
        if let Some(r) = lock(&rosters).get(&a.match_id) {
            report.abandoned = r.left.iter().cloned().collect();
        }
        client
            .report_result(report)
            .await
            .map(|_| ())
            .inspect_err(|e| eprintln!("report_result {}: {e}", a.match_id))
    };
    let released = client
        .release(pb::ReleaseRequest {
            server_id: id.clone(),
            match_id: a.match_id.clone(),
            allocation_id: a.allocation_id.clone(),
        })
        .await;
    if let Err(e) = &released {
        eprintln!("release {}{}: {e}", a.match_id, a.allocation_id);
    }
    let roster = lock(&rosters).remove(&a.match_id);
    let (played, left) = roster.map_or((0, 0), |r| (r.players.len(), r.left.len()));
    println!(
        "{}",
        serde_json::json!({"event": "match_finished", "match_id": a.match_id, "allocation_id": a.allocation_id, "reported": !outside && reported.is_ok(), "released": released.is_ok(), "players": played, "left": left})
    );
}

/// Takes the players who filled seats of match `a` (its heartbeat names them):
/// adds them to its roster and acknowledges each fill once.
async fn take_fillers(client: &mut Client, id: &str, a: &pb::Allocation, rosters: &Rosters) {
    let mut new: Vec<(String, Vec<String>)> = Vec::new();
    {
        let mut all = lock(rosters);
        let Some(r) = all.get_mut(&a.match_id) else {
            return;
        };
        for seat in &a.filled {
            if r.acked.contains(&seat.fill_id) {
                continue;
            }
            r.players.push((seat.player_id.clone(), seat.team));
            match new.iter_mut().find(|(f, _)| *f == seat.fill_id) {
                Some((_, ps)) => ps.push(seat.player_id.clone()),
                None => new.push((seat.fill_id.clone(), vec![seat.player_id.clone()])),
            }
        }
        for (fill, _) in &new {
            r.acked.insert(fill.clone());
        }
    }
    for (fill, players) in new {
        let acked = client
            .ack_backfill(pb::AckBackfillRequest {
                server_id: id.to_string(),
                match_id: a.match_id.clone(),
                fill_id: fill.clone(),
                accept: true,
            })
            .await;
        if let Err(e) = &acked {
            eprintln!("ack_backfill {fill}: {e}");
        }
        println!(
            "{}",
            serde_json::json!({"event": "backfill_joined", "match_id": a.match_id, "fill_id": fill, "players": players, "acknowledged": acked.is_ok()})
        );
    }
}

pub async fn run(args: GameServerArgs) -> Result<()> {
    let id = args
        .id
        .clone()
        .unwrap_or_else(|| format!("gs-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]));
    let mut stop = crate::signals::Stop::new();
    let mut client = connect(&args.manager, args.token.as_deref(), args.tls()?).await?;
    let mut every = register(&mut client, &args, &id).await?;
    let playing: Arc<Mutex<HashSet<String>>> = Arc::default();
    // The sessions running, by allocation: one the heartbeat stops listing
    // was ended by the matchmaker (its max_match_duration passed, or it
    // failed), so it stops here too.
    let mut running: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    let rosters: Rosters = Arc::default();
    loop {
        tokio::select! {
            () = stop.recv() => break,
            _ = tokio::time::sleep(every) => {}
        }
        let beat = client
            .heartbeat(pb::HeartbeatRequest {
                server_id: id.clone(),
            })
            .await;
        let allocations = match beat {
            Ok(r) => r.into_inner().allocations,
            Err(s) if s.code() == tonic::Code::NotFound => {
                every = register(&mut client, &args, &id).await?;
                continue;
            }
            Err(s) => {
                eprintln!("heartbeat: {s}");
                continue;
            }
        };
        let listed: HashSet<String> = allocations
            .iter()
            .map(|a| format!("{}|{}", a.match_id, a.allocation_id))
            .collect();
        running.retain(|key, task| {
            if listed.contains(key) {
                return true;
            }
            if !task.is_finished() {
                task.abort();
                let match_id = key.split('|').next().unwrap_or_default();
                lock(&rosters).remove(match_id);
                println!(
                    "{}",
                    serde_json::json!({"event": "match_dropped", "match_id": match_id, "why": "no longer allocated to this server"})
                );
            }
            playing.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
            false
        });
        for a in allocations {
            let key = format!("{}|{}", a.match_id, a.allocation_id);
            let new = playing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key.clone());
            if new && !a.match_id.is_empty() {
                let players = a
                    .teams
                    .iter()
                    .flat_map(|t| t.player_ids.iter().map(move |p| (p.clone(), t.index)))
                    .collect();
                lock(&rosters).insert(
                    a.match_id.clone(),
                    Roster {
                        players,
                        ..Roster::default()
                    },
                );
            }
            take_fillers(&mut client, &id, &a, &rosters).await;
            if new {
                let task = tokio::spawn(play(
                    client.clone(),
                    id.clone(),
                    a,
                    args.match_duration,
                    args.leave_rate,
                    rosters.clone(),
                ));
                running.insert(key, task);
            }
        }
    }
    // Out of the fleet: no match is allocated to a server that is gone.
    match client
        .release(pb::ReleaseRequest {
            server_id: id.clone(),
            ..Default::default()
        })
        .await
    {
        Ok(_) => println!(
            "{}",
            serde_json::json!({"event": "left_fleet", "server_id": id})
        ),
        Err(s) => eprintln!("could not leave the fleet: {s}"),
    }
    Ok(())
}
