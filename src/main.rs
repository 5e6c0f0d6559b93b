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
        None => Err("serve is not built yet".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arbiter: {}", e.lines().next().unwrap_or("error"));
            ExitCode::FAILURE
        }
    }
}
