//! The `arbiter` command line: serve | simulate | ccd-queries.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "arbiter",
    version,
    about = "Authoritative physics server for multiplayer games"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve worlds over REST and WebSocket (the default with no subcommand).
    Serve {
        #[arg(long, default_value = "127.0.0.1:7700")]
        addr: std::net::SocketAddr,
        /// A scene file to run as an extra world (repeatable).
        #[arg(long)]
        scene: Vec<PathBuf>,
        /// Most worlds at once.
        #[arg(long, default_value_t = arbiter::server::Limits::default().max_worlds)]
        max_worlds: usize,
        /// Most bodies in one world.
        #[arg(long, default_value_t = arbiter::server::Limits::default().max_bodies_per_world)]
        max_bodies: usize,
        /// Largest request body in bytes.
        #[arg(long, default_value_t = arbiter::server::Limits::default().max_request_bytes)]
        max_request_bytes: usize,
    },
    /// Run a scene headless and print or write the final scene.
    Simulate {
        scene: PathBuf,
        #[arg(long)]
        steps: u64,
        #[arg(long)]
        output: Option<PathBuf>,
        #[arg(long)]
        every: Option<u64>,
    },
    /// Run the edge-edge / vertex-face CCD routines on query files.
    CcdQueries {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long)]
        per_query: bool,
    },
}

fn serve(
    addr: std::net::SocketAddr,
    scenes: Vec<PathBuf>,
    limits: arbiter::server::Limits,
) -> Result<(), String> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(arbiter::server::serve(
        arbiter::server::ServeConfig {
            addr,
            scenes,
            limits,
        },
        shutdown_signal(),
    ))
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}

fn main() -> ExitCode {
    // Bad flags get one line and exit 2, as bad scenes get one line (clap's
    // own message runs to a usage block); help and the version print as
    // clap prints them.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // (The message's lines before the usage, joined: "the following
            // required arguments were not provided:" lists them below.)
            let text = e.to_string();
            let message: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
                .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
                .collect();
            let message = message.join(" ");
            eprintln!("arbiter: {}", message.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Some(Command::Simulate {
            scene,
            steps,
            output,
            every,
        }) => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            arbiter::simulate::run(&scene, steps, output.as_deref(), every, &mut lock)
        }
        Some(Command::CcdQueries { files, per_query }) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let io = |e: std::io::Error| format!("cannot write output: {e}");
            files
                .iter()
                .try_for_each(|f| {
                    let text = arbiter::physics::ccd_queries::run_file(f, per_query)?;
                    out.write_all(text.as_bytes()).map_err(io)?;
                    if !text.ends_with('\n') {
                        out.write_all(b"\n").map_err(io)?;
                    }
                    Ok(())
                })
                .and_then(|()| out.flush().map_err(io))
        }
        Some(Command::Serve {
            addr,
            scene,
            max_worlds,
            max_bodies,
            max_request_bytes,
        }) => {
            let limits = arbiter::server::Limits {
                max_worlds,
                max_bodies_per_world: max_bodies,
                max_request_bytes,
                ..Default::default()
            };
            serve(addr, scene, limits)
        }
        None => serve(
            ([127, 0, 0, 1], 7700).into(),
            Vec::new(),
            Default::default(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arbiter: {}", e.lines().next().unwrap_or("error"));
            ExitCode::FAILURE
        }
    }
}
