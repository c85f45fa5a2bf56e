//! `matchmaker`: one binary, one subcommand per component. This file only parses
//! the command line and wires the pieces together.

mod auth;
mod config;
mod game_server;
mod ops;
mod run;
mod signals;
mod simulate;
mod telemetry;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "matchmaker",
    version,
    about = "Matchmaking service for online games: tickets in over HTTP/WebSocket, fair matches out.",
    long_about = "Matchmaking service for online games: tickets in over HTTP/WebSocket, fair matches out.\n\n\
        Run everything in one process with `matchmaker serve` (in-memory store and a SQLite rating \
        file, no external services), or run `ingress`, `worker`, `supervisor`, `server-manager` and \
        `rating-service` as separate processes sharing Redis (REDIS_URL) and a rating database \
        (DATABASE_URL). Game servers register over gRPC; `example-game-server` shows the contract.\n\n\
        Every option can also be set with the environment variable shown next to it."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    telemetry: telemetry::TelemetryArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ingress, worker, supervisor, server manager and rating service in one process.
    /// In-memory store unless REDIS_URL is given; ratings in SQLite under DATA_DIR
    /// unless DATABASE_URL is given.
    Serve(Box<run::ServeArgs>),
    /// The HTTP/WebSocket API for game clients (stateless; needs REDIS_URL).
    Ingress(Box<run::IngressArgs>),
    /// Claims tickets and forms matches (stateless; needs REDIS_URL).
    Worker(run::WorkerCmd),
    /// Returns tickets of dead workers to the queue, finishes interrupted fan-outs and
    /// match sagas, fails matches of lost game servers (needs REDIS_URL).
    Supervisor(run::SupervisorCmd),
    /// The gRPC control plane game servers register with (needs REDIS_URL).
    ServerManager(run::ServerManagerCmd),
    /// Applies finished matches' results to the players' ratings, exactly once,
    /// and decays idle players (needs REDIS_URL and DATABASE_URL).
    RatingService(run::RatingServiceCmd),
    /// An example game server: registers with the server manager, plays the
    /// matches it is given for a while, reports a result and releases the slot.
    ExampleGameServer(game_server::GameServerArgs),
    /// Benchmarks against a deployment the command starts itself, or one on
    /// loopback given by URL.
    #[command(subcommand)]
    Bench(mm_bench::Scenario),
    /// Replays seeded synthetic arrivals through our engine and the seed-000 baseline
    /// on a simulated clock and compares match quality (no Redis needed).
    Simulate(simulate::SimulateArgs),
    /// Prints the shipped modes file (copy it to start your own MODES_FILE).
    Modes,
    /// Prints the API's OpenAPI 3.1 document (what `/openapi.json` serves and
    /// `docs/openapi.json` holds).
    Openapi,
    /// Prints a signed token for a player (or, with --service, a trusted backend),
    /// as your login service would issue it: for trying the API and for scripts.
    Token(auth::TokenArgs),
}

fn main() {
    let cli = Cli::parse();
    // Pure computations need no runtime.
    let direct = match &cli.command {
        Command::Modes => {
            print!("{}", mm_engine::DEFAULT_MODES);
            Some(Ok(()))
        }
        Command::Simulate(args) => Some(simulate::simulate(args.clone())),
        Command::Token(args) => Some(auth::token(args.clone())),
        Command::Openapi => {
            print!(
                "{}",
                mm_server::ingress::openapi_json(&mm_server::ingress::openapi_document())
            );
            Some(Ok(()))
        }
        _ => None,
    };
    if let Some(result) = direct {
        if let Err(e) = result {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    cli.telemetry.init_logs();
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(run(cli.command, cli.telemetry)));
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(command: Command, telemetry: telemetry::TelemetryArgs) -> anyhow::Result<()> {
    // The services record metrics; the bench and the example game server do not.
    let service = matches!(
        command,
        Command::Serve(_)
            | Command::Ingress(_)
            | Command::Worker(_)
            | Command::Supervisor(_)
            | Command::ServerManager(_)
            | Command::RatingService(_)
    );
    let metrics = if service {
        telemetry.start_metrics()?
    } else {
        mm_telemetry::Metrics::off()
    };
    // The ingress and serve build their operator plane themselves (it holds the
    // dashboard too); the other services serve /metrics alone there.
    let ops = telemetry.ops_addr()?;
    if service && !matches!(command, Command::Serve(_) | Command::Ingress(_)) {
        telemetry.serve_metrics(&metrics).await?;
    }
    {
        match command {
            Command::Serve(args) => run::serve(*args, metrics, ops).await,
            Command::Ingress(args) => run::ingress(*args, metrics, ops).await,
            Command::Worker(args) => run::worker(args).await,
            Command::Supervisor(args) => run::supervisor(args).await,
            Command::ServerManager(args) => run::server_manager(args).await,
            Command::RatingService(args) => run::rating_service(args).await,
            Command::ExampleGameServer(args) => game_server::run(args).await,
            Command::Bench(scenario) => mm_bench::run(scenario).await,
            Command::Simulate(_) | Command::Modes | Command::Token(_) | Command::Openapi => {
                unreachable!("handled without a runtime")
            }
        }
    }
}
