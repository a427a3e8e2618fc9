//! vizdeck binary: parses the command line and runs the window, headless mode, or a subcommand
//! (`stats`, `bench`).

use std::process::ExitCode;

fn main() -> ExitCode {
    env_logger::Builder::from_env(
        // symphonia logs a failed format probe as an error and the PulseAudio client logs its own
        // disconnect at exit; vizdeck reports both cases itself, in one line.
        env_logger::Env::default().default_filter_or(
            "warn,vizdeck=info,symphonia_core=off,pulseaudio::client::reactor=off",
        ),
    )
    .init();
    let cli = vizdeck::cli::Cli::parse_checked();
    let result = match &cli.command {
        Some(vizdeck::cli::Command::Stats { files, json }) => {
            vizdeck::stats::cli::run(files, *json).map_err(anyhow::Error::from)
        }
        Some(vizdeck::cli::Command::Bench(args)) => vizdeck::stats::bench::run(args),
        None if cli.headless => vizdeck::headless::run(&cli),
        None => vizdeck::app::run(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vizdeck: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
