//! vizdeck binary: parses the command line and runs the window, headless mode, or a subcommand
//! (`stats`, `bench`).

use std::process::ExitCode;

fn main() -> ExitCode {
    // First: ALSA's, libwayland's and winit's own messages go through vizdeck's log from here on.
    vizdeck::logging::init();
    let mut cli = vizdeck::cli::Cli::parse_checked();
    let result = match &cli.command {
        Some(vizdeck::cli::Command::Stats { files, json }) => {
            vizdeck::stats::cli::run(files, *json).map_err(anyhow::Error::from)
        }
        Some(vizdeck::cli::Command::Bench(args)) => vizdeck::bench::run(args),
        None => {
            // The saved settings (window, last scene, each scene's) for the flags not given.
            let start = cli.start_settings();
            for m in &start.messages {
                log::warn!("{m}");
            }
            if cli.headless {
                vizdeck::headless::run(&cli, start)
            } else {
                vizdeck::app::run(&cli, start)
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vizdeck: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
