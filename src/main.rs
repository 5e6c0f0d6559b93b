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

fn serve(addr: std::net::SocketAddr, scenes: Vec<PathBuf>) -> Result<(), String> {
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
            limits: arbiter::server::Limits::default(),
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
    let cli = Cli::parse();
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
        Some(Command::CcdQueries { files, per_query }) => files.iter().try_for_each(|f| {
            let text = arbiter::physics::ccd_queries::run_file(f, per_query)?;
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
            Ok(())
        }),
        Some(Command::Serve { addr, scene }) => serve(addr, scene),
        None => serve(([127, 0, 0, 1], 7700).into(), Vec::new()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arbiter: {}", e.lines().next().unwrap_or("error"));
            ExitCode::FAILURE
        }
    }
}
