//! Set-up and CI tasks for vizdeck: `cargo xtask run`, `cargo xtask test`, `cargo xtask services`.
//!
//! Standard library only. Linux (Debian/Ubuntu) is the target; on other systems the package step is
//! skipped with a message and `test`/`services` need `Xvfb` and `pulseaudio` on the PATH.

mod packages;
mod services;

use std::env;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::{Command, ExitCode, ExitStatus};
use std::time::{Duration, Instant};

use services::Services;

/// Errors are plain messages: every one is printed once, in `main`.
type Result<T> = std::result::Result<T, String>;

const USAGE: &str = "\
usage: cargo xtask <command> [args...]

commands:
  run [ARGS...]        install missing system packages (Debian/Ubuntu), build vizdeck in release
                       mode, then launch target/release/vizdeck ARGS...
  test [ARGS...]       install what the tests need, start Xvfb and a private PulseAudio server,
                       then run cargo fmt --check, cargo clippy and cargo test with them.
                       ARGS go to `cargo test`; ARGS after `--` go to the test binaries,
                       e.g. `cargo xtask test spectrogram -- --nocapture`
  services [--] [CMD...]
                       start the same Xvfb and PulseAudio as `test`, run CMD (default: $SHELL)
                       with DISPLAY, XDG_RUNTIME_DIR, PULSE_SERVER and VIZDECK_TEST_* set,
                       then stop them; exits with CMD's exit code. VIZDECK_TEST_PULSE_CTL is a
                       script: `stop` / `start` the private PulseAudio on the same socket
";

fn main() -> ExitCode {
    let mut args = env::args_os().skip(1);
    let command = args.next().map(|a| a.to_string_lossy().into_owned());
    let rest: Vec<OsString> = args.collect();
    let result = match command.as_deref() {
        Some("run") => run(rest),
        Some("test") => test(rest),
        Some("services") => services(rest),
        None | Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("xtask: unknown command `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    result.unwrap_or_else(|message| {
        eprintln!("xtask: error: {message}");
        ExitCode::FAILURE
    })
}

/// `cargo xtask run [--] [ARGS...]`: packages, release build, then become the app. A leading
/// `--` (as in `cargo xtask run -- --headless`) only separates and is not passed on.
fn run(mut app_args: Vec<OsString>) -> Result<ExitCode> {
    if app_args.first().is_some_and(|a| a == "--") {
        app_args.remove(0);
    }
    packages::ensure(&[packages::BUILD, packages::RUN]);

    let root = repo_root();
    banner("cargo build --release --bin vizdeck");
    let status = run_status(
        cargo()
            .args(["build", "--release", "--bin", "vizdeck"])
            .current_dir(&root),
    )?;
    if !status.success() {
        eprintln!("xtask: the build failed");
        return Ok(exit_code(status));
    }

    // The app keeps the caller's working directory so that relative paths in ARGS
    // (a WAV file, a CSV file, an output directory) mean what the caller meant.
    let exe = target_dir()
        .join("release")
        .join(format!("vizdeck{}", env::consts::EXE_SUFFIX));
    let mut app = Command::new(&exe);
    app.args(&app_args);
    exec(app)
}

/// `cargo xtask test [CARGO TEST ARGS...] [-- TEST BINARY ARGS...]`.
fn test(args: Vec<OsString>) -> Result<ExitCode> {
    packages::ensure(&[packages::BUILD, packages::RUN, packages::TEST]);

    let (cargo_test_args, binary_args) = split_at_double_dash(args);
    // --no-fail-fast: a failing test binary does not hide the results of the others.
    // --tests: the libraries' unit tests and the integration tests (the binaries they run are
    // built too); not the examples (lab tools clippy checks) nor the test-less binaries.
    let mut test_args: Vec<OsString> = [
        "test",
        "--release",
        "--workspace",
        "--tests",
        "--no-fail-fast",
    ]
    .map(OsString::from)
    .to_vec();
    test_args.extend(cargo_test_args);
    test_args.push("--".into());
    // libtest rejects a repeated --test-threads, so the caller's wins.
    if !binary_args
        .iter()
        .any(|a| a.to_string_lossy().starts_with("--test-threads"))
    {
        test_args.push("--test-threads=2".into());
    }
    // Tests that need the screen or the sound server are #[ignore]d for plain `cargo test`;
    // here those services run, so every test runs.
    if !binary_args
        .iter()
        .any(|a| a == "--ignored" || a == "--include-ignored")
    {
        test_args.push("--include-ignored".into());
    }
    test_args.extend(binary_args);

    let steps: Vec<(&str, Vec<OsString>)> = vec![
        ("fmt", os_args(&["fmt", "--all", "--", "--check"])),
        (
            "clippy",
            os_args(&[
                "clippy",
                "--release",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]),
        ),
        ("test", test_args),
    ];

    let root = repo_root();
    let started = Instant::now();
    let services = Services::start()?;
    services.describe();

    let mut results: Vec<(&str, bool, Duration)> = Vec::new();
    for (name, step_args) in steps {
        let mut command = cargo();
        command.args(&step_args).current_dir(&root);
        services.apply_env(&mut command);
        banner(&format!("{name}: cargo {}", show_args(&step_args)));
        let step_started = Instant::now();
        let passed = match command.status() {
            Ok(status) => status.success(),
            Err(e) => {
                eprintln!("xtask: cannot run cargo: {e}");
                false
            }
        };
        let took = step_started.elapsed();
        println!(
            "xtask: step {name} {} in {}",
            if passed { "passed" } else { "FAILED" },
            minutes(took)
        );
        results.push((name, passed, took));
    }

    drop(services); // stop Xvfb and PulseAudio before the summary, so their messages come first

    let all_passed = results.iter().all(|(_, passed, _)| *passed);
    let summary: Vec<String> = results
        .iter()
        .map(|(name, passed, took)| {
            format!(
                "{name} {} ({})",
                if *passed { "passed" } else { "FAILED" },
                minutes(*took)
            )
        })
        .collect();
    banner(&format!(
        "xtask test {}: {} — total {}",
        if all_passed { "PASSED" } else { "FAILED" },
        summary.join(", "),
        minutes(started.elapsed())
    ));
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `cargo xtask services [--] [CMD...]`: the test environment around any command.
fn services(args: Vec<OsString>) -> Result<ExitCode> {
    packages::ensure(&[packages::BUILD, packages::RUN, packages::TEST]);

    let (before, after) = split_at_double_dash(args);
    let mut argv: Vec<OsString> = before.into_iter().chain(after).collect();
    if argv.is_empty() {
        argv.push(env::var_os("SHELL").unwrap_or_else(|| "sh".into()));
    }

    let services = Services::start()?;
    services.describe();
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    services.apply_env(&mut command);
    banner(&format!("services: {}", show_args(&argv)));
    let status = command
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", argv[0]));
    drop(services);
    let status = status?;
    println!("xtask: {:?} exited with {status}", argv[0]);
    Ok(exit_code(status))
}

// ---------------------------------------------------------------------------------------------
// Small helpers shared by the commands.

/// The workspace root: the parent of this crate's directory.
fn repo_root() -> PathBuf {
    let xtask_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    xtask_dir.parent().map(PathBuf::from).unwrap_or(xtask_dir)
}

/// Where cargo puts build outputs: $CARGO_TARGET_DIR, else `<root>/target`.
fn target_dir() -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => repo_root().join(dir), // join keeps an absolute path as it is
        None => repo_root().join("target"),
    }
}

/// The cargo that started us (cargo sets $CARGO for `cargo run`), else the one on the PATH.
fn cargo() -> Command {
    Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn run_status(command: &mut Command) -> Result<ExitStatus> {
    command
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", command.get_program()))
}

/// Replaces this process with `command` (Unix), so the app's exit code is ours.
#[cfg(unix)]
fn exec(mut command: Command) -> Result<ExitCode> {
    use std::os::unix::process::CommandExt;
    let error = command.exec(); // returns only on failure
    Err(format!(
        "cannot start {}: {error}",
        PathBuf::from(command.get_program()).display()
    ))
}

#[cfg(not(unix))]
fn exec(mut command: Command) -> Result<ExitCode> {
    Ok(exit_code(run_status(&mut command)?))
}

/// The exit code to pass on: the child's own, or 128 + signal when a signal ended it.
fn exit_code(status: ExitStatus) -> ExitCode {
    if let Some(code) = status.code() {
        return ExitCode::from(code as u8);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return ExitCode::from(128u8.wrapping_add(signal as u8));
        }
    }
    ExitCode::FAILURE
}

/// Splits `a b -- c d` into `[a, b]` and `[c, d]` (only the first `--` is consumed).
fn split_at_double_dash(args: Vec<OsString>) -> (Vec<OsString>, Vec<OsString>) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args, Vec::new()),
    }
}

fn os_args(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn show_args(args: &[OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

fn banner(title: &str) {
    let line = "=".repeat(title.chars().count().clamp(20, 100));
    println!("\n{line}\n{title}\n{line}");
}

/// Whether `program` is an executable file on the PATH.
fn on_path(program: &str) -> bool {
    let Some(path) = env::var_os("PATH") else {
        return false;
    };
    env::split_paths(&path).any(|dir| is_executable(&dir.join(program)))
}

fn is_executable(file: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        file.is_file() || file.with_extension("exe").is_file()
    }
}

/// Runs `program args...` quietly and returns its stdout when it succeeds.
fn output_of(program: impl AsRef<OsStr>, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
