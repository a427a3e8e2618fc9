//! `vizdeck-lab`: the kernel and transfer tables (see the library's docs and `--help`).

use clap::Parser as _;

fn main() -> std::process::ExitCode {
    vizdeck::logging::init();
    let args = vizdeck_lab::LabArgs::parse();
    match vizdeck_lab::run(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
