//! vizdeck binary: parses the command line and runs the window or headless mode.

use std::process::ExitCode;

fn main() -> ExitCode {
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,vizdeck=info"),
    )
    .init();
    let cli = vizdeck::cli::Cli::parse_checked();
    let result = if cli.headless {
        vizdeck::headless::run(&cli)
    } else {
        vizdeck::app::run(&cli)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vizdeck: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
