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
    /// Run the edge-edge / vertex-face CCD routines on query files.
    CcdQueries {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long)]
        per_query: bool,
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
        Some(Command::CcdQueries { files, per_query }) => files.iter().try_for_each(|f| {
            let text = arbiter::physics::ccd_queries::run_file(f, per_query)?;
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
            Ok(())
        }),
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
