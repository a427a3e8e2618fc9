//! The test environment: an Xvfb screen and a private PulseAudio server with a null sink.
//!
//! Every piece is a guard that stops or removes what it started when it is dropped, so the
//! services go away on every path out of `test` and `services`: success, a failed step, an
//! error while starting, a panic. (A signal that kills xtask itself skips destructors; Ctrl-C
//! reaches Xvfb and pulseaudio too, as they share the terminal's process group; whatever is
//! left behind, servers or runtime directory, the next run stops and removes.)

use std::env;
use std::ffi::OsString;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{self, Child, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::{Result, on_path, output_of};

/// The PulseAudio null sink; its monitor `viz.monitor` is the default source.
pub const SINK: &str = "viz";
const SCREEN: &str = "1280x800x24";
const FIRST_DISPLAY: u32 = 99;
const LAST_DISPLAY: u32 = 199;
const READY_TIMEOUT: Duration = Duration::from_secs(10);
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
const RUNTIME_DIR_PREFIX: &str = "vizdeck-xtask-";

/// Xvfb + PulseAudio + their runtime directory. Fields drop in this order: the sound
/// server, then the X server, then the directory that held their sockets and logs.
pub struct Services {
    pulseaudio: Server,
    xvfb: Xvfb,
    runtime_dir: RuntimeDir,
}

impl Services {
    pub fn start() -> Result<Services> {
        let runtime_dir = RuntimeDir::create()?;
        // If a later start fails, the guards already made are dropped here, in reverse order.
        let xvfb = Xvfb::start(&runtime_dir.0)?;
        let pulseaudio = start_pulseaudio(&runtime_dir.0)?;
        Ok(Services {
            pulseaudio,
            xvfb,
            runtime_dir,
        })
    }

    fn display(&self) -> String {
        format!(":{}", self.xvfb.display)
    }

    /// The variables a test process needs to find the screen and the sound server.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        let dir = &self.runtime_dir.0;
        vec![
            ("DISPLAY", self.display().into()),
            ("VIZDECK_TEST_DISPLAY", self.display().into()),
            ("XDG_RUNTIME_DIR", dir.into()),
            ("PULSE_SERVER", pulse_server(dir).into()),
            ("PULSE_COOKIE", pulse_cookie(dir).into()),
            ("VIZDECK_TEST_PULSE_SINK", SINK.into()),
            ("VIZDECK_TEST_PULSE_CTL", pulse_ctl(dir).into()),
            ("RUST_BACKTRACE", "1".into()),
            // vizdeck's settings file (and anything else kept per user) in the run's own
            // directory, never the user's ~/.config.
            ("XDG_CONFIG_HOME", dir.join("config").into()),
        ]
    }

    /// Sets `env()` on `command`, and removes what would send it elsewhere: a chosen wgpu
    /// adapter, a Wayland compositor (winit would prefer it to Xvfb), another PulseAudio.
    pub fn apply_env(&self, command: &mut Command) {
        command.envs(self.env());
        for name in [
            "WGPU_ADAPTER_NAME",
            "WAYLAND_DISPLAY",
            "PULSE_RUNTIME_PATH",
            "PULSE_SINK",
            "PULSE_SOURCE",
        ] {
            command.env_remove(name);
        }
    }

    /// Prints where everything is, and which Vulkan devices the tests will see.
    pub fn describe(&self) {
        println!(
            "xtask: Xvfb on {} ({SCREEN}); PulseAudio (pid {}) at {}, null sink `{SINK}`, \
             default source `{SINK}.monitor`",
            self.display(),
            self.pulseaudio.child.id(),
            pulse_server(&self.runtime_dir.0),
        );
        for (name, value) in self.env() {
            println!("xtask:   {name}={}", value.to_string_lossy());
        }
        if on_path("vulkaninfo") {
            let summary = output_of("vulkaninfo", &["--summary"]).unwrap_or_default();
            let devices: Vec<&str> = summary
                .lines()
                .filter_map(|line| line.trim().strip_prefix("deviceName"))
                .map(|rest| rest.trim_start_matches([' ', '=']).trim())
                .collect();
            if devices.is_empty() {
                println!("xtask: vulkaninfo found no Vulkan device");
            } else {
                println!("xtask: Vulkan devices: {}", devices.join("; "));
            }
        }
    }
}

impl Drop for Services {
    /// A PulseAudio that a test restarted through `VIZDECK_TEST_PULSE_CTL` is not our child:
    /// it is stopped through its pid file, before the fields drop.
    fn drop(&mut self) {
        stop_orphan(
            "pulseaudio",
            &restarted_pid_file(&self.runtime_dir.0),
            "restarted by a test",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A child process that is stopped (SIGTERM, then SIGKILL) when dropped.
// Its pid is also written to `<runtime dir>/<name>.pid`, for `remove_stale_runtime_dirs`.

struct Server {
    name: &'static str,
    child: Child,
}

enum NotReady {
    Exited(ExitStatus),
    TimedOut,
}

impl Server {
    fn new(name: &'static str, child: Child, runtime_dir: &Path) -> Server {
        let _ = fs::write(
            runtime_dir.join(format!("{name}.pid")),
            child.id().to_string(),
        );
        Server { name, child }
    }

    /// Polls `ready` until it is true, the process exits, or `timeout` passes.
    fn wait_until(
        &mut self,
        timeout: Duration,
        mut ready: impl FnMut() -> bool,
    ) -> std::result::Result<(), NotReady> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(NotReady::Exited(status));
            }
            if ready() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(NotReady::TimedOut);
            }
            sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM first, so the server removes its own socket and lock files; SIGKILL if it
    /// is still there after STOP_TIMEOUT.
    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return; // already gone (and reaped)
        }
        let pid = self.child.id();
        send_signal(pid, "TERM");
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                println!("xtask: stopped {} (pid {pid})", self.name);
                return;
            }
            sleep(Duration::from_millis(20));
        }
        eprintln!(
            "xtask: {} (pid {pid}) ignored SIGTERM for {STOP_TIMEOUT:?}; killing it",
            self.name
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// std can only send SIGKILL, and only to its own children; the shell's built-in `kill`
/// exists on every system.
fn send_signal(pid: u32, signal: &str) {
    let _ = Command::new("sh")
        .args([
            "-c",
            "kill -s \"$1\" \"$2\"",
            "sh",
            signal,
            &pid.to_string(),
        ])
        .stderr(Stdio::null())
        .status();
}

// ---------------------------------------------------------------------------------------------
// Xvfb on the first free display from :99.

struct Xvfb {
    server: Server,
    display: u32,
}

impl Xvfb {
    fn start(log_dir: &Path) -> Result<Xvfb> {
        let mut failures = 0;
        for display in FIRST_DISPLAY..=LAST_DISPLAY {
            if display_in_use(display) {
                continue;
            }
            let log_path = log_dir.join(format!("Xvfb-{display}.log"));
            let child = Command::new("Xvfb")
                .arg(format!(":{display}"))
                .args(["-screen", "0", SCREEN, "-nolisten", "tcp", "-noreset"])
                .stdin(Stdio::null())
                .stdout(log_file(&log_path)?)
                .stderr(log_file(&log_path)?)
                .spawn()
                .map_err(|e| {
                    format!("cannot start Xvfb: {e} (it is in the Debian package `xvfb`)")
                })?;
            let mut server = Server::new("Xvfb", child, log_dir);
            match server.wait_until(READY_TIMEOUT, || x_server_accepts(display)) {
                Ok(()) => return Ok(Xvfb { server, display }),
                Err(NotReady::Exited(status)) => {
                    // Most likely another X server took this display meanwhile: try the next.
                    failures += 1;
                    eprintln!(
                        "xtask: Xvfb :{display} exited at start ({status}):\n{}",
                        read_log(&log_path)
                    );
                    if failures == 5 {
                        return Err("Xvfb failed to start 5 times; see its messages above".into());
                    }
                }
                Err(NotReady::TimedOut) => {
                    return Err(format!(
                        "Xvfb :{display} did not accept connections within {READY_TIMEOUT:?}. Its log:\n{}",
                        read_log(&log_path)
                    ));
                }
            }
        }
        Err(format!(
            "no free X display between :{FIRST_DISPLAY} and :{LAST_DISPLAY}"
        ))
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        self.server.stop();
        // Xvfb removes these on SIGTERM; after a SIGKILL they are left over. Remove them only
        // while the lock still names our (now dead) Xvfb.
        let (lock, socket) = x_paths(self.display);
        if lock_pid(&lock) == Some(self.server.child.id()) {
            let _ = fs::remove_file(&socket);
            let _ = fs::remove_file(&lock);
        }
    }
}

fn x_paths(display: u32) -> (PathBuf, PathBuf) {
    (
        PathBuf::from(format!("/tmp/.X{display}-lock")),
        PathBuf::from(format!("/tmp/.X11-unix/X{display}")),
    )
}

/// In use: its lock file names a live process (or cannot be read), or a server answers on its
/// socket. A lock left by a dead server is not "in use": Xvfb replaces stale locks itself.
fn display_in_use(display: u32) -> bool {
    let (lock, _) = x_paths(display);
    if lock.exists() {
        match lock_pid(&lock) {
            Some(pid) if !process_alive(pid) => {}
            _ => return true,
        }
    }
    x_server_accepts(display)
}

/// An X lock file holds the server's pid as text, padded with spaces.
fn lock_pid(lock: &Path) -> Option<u32> {
    fs::read_to_string(lock).ok()?.trim().parse().ok()
}

fn process_alive(pid: u32) -> bool {
    // Without /proc (not Linux) we cannot tell: call it alive, the careful answer.
    !Path::new("/proc/self").exists() || Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(unix)]
fn x_server_accepts(display: u32) -> bool {
    std::os::unix::net::UnixStream::connect(x_paths(display).1).is_ok()
}

#[cfg(not(unix))]
fn x_server_accepts(display: u32) -> bool {
    x_paths(display).1.exists()
}

// ---------------------------------------------------------------------------------------------
// PulseAudio: a private server whose socket lives in our runtime directory.

fn pulse_server(runtime_dir: &Path) -> String {
    format!(
        "unix:{}",
        runtime_dir.join("pulse").join("native").display()
    )
}

/// pulseaudio keeps its cookie (and would keep state) under $XDG_CONFIG_HOME/pulse; we point
/// that into the runtime directory, so the user's ~/.config/pulse is left alone and a HOME
/// without ~/.config (or a read-only one) does not stop it.
fn pulse_config_home(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join("config")
}

fn pulse_cookie(runtime_dir: &Path) -> PathBuf {
    pulse_config_home(runtime_dir).join("pulse").join("cookie")
}

/// The private server's command-line arguments (after `pulseaudio`).
fn pulse_args() -> Vec<String> {
    vec![
        "--daemonize=no".into(), // our child, so we can stop it
        "--exit-idle-time=-1".into(),
        "-n".into(),            // no default.pa: only the modules below
        "--realtime=no".into(), // as root it would otherwise take real-time priority
        "--high-priority=no".into(),
        "--log-target=stderr".into(),
        // Anonymous clients too: one that misses PULSE_COOKIE still gets in.
        "--load=module-native-protocol-unix auth-anonymous=1".into(),
        format!("--load=module-null-sink sink_name={SINK}"),
        "--load=module-always-sink".into(),
    ]
}

/// `<runtime dir>/pulse-ctl`: the script behind `VIZDECK_TEST_PULSE_CTL`.
fn pulse_ctl(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join("pulse-ctl")
}

/// Pid file of a PulseAudio started by `pulse-ctl start`.
fn restarted_pid_file(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join("pulseaudio-restarted.pid")
}

/// Single-quotes `s` for sh.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Writes `pulse-ctl`, for tests that need the sound server to go away and come back on the same
/// socket: `pulse-ctl stop` stops the running private server (SIGTERM, waits up to 5 s until it
/// is gone), `pulse-ctl start` starts it again with the same command line, environment, socket
/// and log, waits until `pactl info` answers and sets the null sink and its monitor as defaults
/// again; exit status 0 on success. The restarted server's pid goes to
/// `pulseaudio-restarted.pid`, and [`Services`] stops it when dropped.
fn write_pulse_ctl(runtime_dir: &Path) -> Result<()> {
    let dir = sh_quote(&runtime_dir.display().to_string());
    let args: Vec<String> = pulse_args().iter().map(|a| sh_quote(a)).collect();
    let script = format!(
        r#"#!/bin/sh
# Written by `cargo xtask` (xtask/src/services.rs): stop / start the private PulseAudio.
dir={dir}
export XDG_RUNTIME_DIR="$dir" XDG_CONFIG_HOME="$dir/config"
unset PULSE_SERVER PULSE_RUNTIME_PATH
server="unix:$dir/pulse/native"
running() {{ [ -r "/proc/$1/stat" ] && grep -q '(pulseaudio) [^Z]' "/proc/$1/stat"; }}
case "$1" in
stop)
    for f in "$dir/pulseaudio.pid" "$dir/pulseaudio-restarted.pid"; do
        [ -r "$f" ] || continue
        pid=$(cat "$f")
        running "$pid" || continue
        kill -TERM "$pid"
        n=0
        while running "$pid"; do
            n=$((n + 1)); [ "$n" -gt 250 ] && {{ echo "pulse-ctl: $pid still runs" >&2; exit 1; }}
            sleep 0.02
        done
    done ;;
start)
    pulseaudio {args} </dev/null >>"$dir/pulseaudio.log" 2>&1 &
    echo $! >"$dir/pulseaudio-restarted.pid"
    n=0
    until PULSE_SERVER="$server" pactl info >/dev/null 2>&1; do
        n=$((n + 1)); [ "$n" -gt 200 ] && {{ echo "pulse-ctl: no answer from pulseaudio" >&2; exit 1; }}
        sleep 0.05
    done
    PULSE_SERVER="$server" pactl set-default-sink {SINK} &&
        PULSE_SERVER="$server" pactl set-default-source {SINK}.monitor ;;
*)
    echo "usage: $0 stop|start" >&2; exit 2 ;;
esac
"#,
        args = args.join(" "),
    );
    let path = pulse_ctl(runtime_dir);
    fs::write(&path, script).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot make {} executable: {e}", path.display()))?;
    }
    Ok(())
}

fn start_pulseaudio(runtime_dir: &Path) -> Result<Server> {
    if !on_path("pactl") {
        return Err("pactl not found (it is in the Debian package `pulseaudio-utils`)".into());
    }
    let log_path = runtime_dir.join("pulseaudio.log");
    let config_home = pulse_config_home(runtime_dir);
    fs::create_dir(&config_home)
        .map_err(|e| format!("cannot create {}: {e}", config_home.display()))?;
    write_pulse_ctl(runtime_dir)?;
    let child = Command::new("pulseaudio")
        .args(pulse_args())
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .env("XDG_CONFIG_HOME", &config_home)
        .env_remove("PULSE_SERVER")
        .env_remove("PULSE_RUNTIME_PATH")
        .stdin(Stdio::null())
        .stdout(log_file(&log_path)?)
        .stderr(log_file(&log_path)?)
        .spawn()
        .map_err(|e| {
            format!("cannot start pulseaudio: {e} (it is in the Debian package `pulseaudio`)")
        })?;
    let mut server = Server::new("pulseaudio", child, runtime_dir);

    let pactl = |args: &[&str]| {
        Command::new("pactl")
            .args(args)
            .env("XDG_RUNTIME_DIR", runtime_dir)
            .env("PULSE_SERVER", pulse_server(runtime_dir))
            .env("PULSE_COOKIE", pulse_cookie(runtime_dir))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    match server.wait_until(READY_TIMEOUT, || pactl(&["info"])) {
        Ok(()) => {}
        Err(NotReady::Exited(status)) => {
            return Err(format!(
                "pulseaudio exited at start ({status}). Its log:\n{}",
                read_log(&log_path)
            ));
        }
        Err(NotReady::TimedOut) => {
            return Err(format!(
                "`pactl info` did not reach pulseaudio within {READY_TIMEOUT:?}. Its log:\n{}",
                read_log(&log_path)
            ));
        }
    }
    let monitor = format!("{SINK}.monitor");
    for args in [
        ["set-default-sink", SINK],
        ["set-default-source", monitor.as_str()],
    ] {
        if !pactl(&args) {
            return Err(format!(
                "`pactl {}` failed. pulseaudio's log:\n{}",
                args.join(" "),
                read_log(&log_path)
            ));
        }
    }
    Ok(server)
}

// ---------------------------------------------------------------------------------------------
// The runtime directory ($XDG_RUNTIME_DIR, mode 700): sockets and logs; removed on drop.

struct RuntimeDir(PathBuf);

impl RuntimeDir {
    fn create() -> Result<RuntimeDir> {
        remove_stale_runtime_dirs();
        let path = env::temp_dir().join(format!("{RUNTIME_DIR_PREFIX}{}", process::id()));
        let _ = fs::remove_dir_all(&path); // left by an earlier process that had our pid
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(RuntimeDir(path))
    }
}

impl Drop for RuntimeDir {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.0) {
            eprintln!("xtask: cannot remove {}: {e}", self.0.display());
        }
    }
}

/// Cleans up after xtask processes that were killed before they could: stops the servers
/// they left running (found through the `.pid` files, checked against /proc/PID/comm so that
/// a reused pid is left alone), then removes their runtime directories.
fn remove_stale_runtime_dirs() {
    let Ok(entries) = fs::read_dir(env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(RUNTIME_DIR_PREFIX))
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid == process::id() || process_alive(pid) {
            continue;
        }
        for name in ["pulseaudio", "Xvfb"] {
            stop_orphan(
                name,
                &entry.path().join(format!("{name}.pid")),
                "left running by an earlier run",
            );
        }
        stop_orphan(
            "pulseaudio",
            &restarted_pid_file(&entry.path()),
            "left running by an earlier run",
        );
        if fs::remove_dir_all(entry.path()).is_ok() {
            println!(
                "xtask: removed {}, left by an earlier run",
                entry.path().display()
            );
        }
    }
}

/// Stops the process named in `pid_file` if it still runs and is called `name`; `why` is for
/// the message.
fn stop_orphan(name: &str, pid_file: &Path, why: &str) {
    let Some(pid) = fs::read_to_string(pid_file)
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
    else {
        return;
    };
    // /proc/PID/stat is `PID (COMM) STATE ...`; a zombie (Z) has exited already.
    let stat = format!("/proc/{pid}/stat");
    let is_ours = || {
        fs::read_to_string(&stat).is_ok_and(|s| {
            s.contains(&format!("({name})"))
                && !s
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
        })
    };
    if !is_ours() {
        return;
    }
    println!("xtask: stopping {name} (pid {pid}), {why}");
    send_signal(pid, "TERM");
    let deadline = Instant::now() + STOP_TIMEOUT;
    while is_ours() && Instant::now() < deadline {
        sleep(Duration::from_millis(20));
    }
    if is_ours() {
        send_signal(pid, "KILL");
    }
}

fn log_file(path: &Path) -> Result<File> {
    File::options()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// The last lines of a log, indented, for error messages.
fn read_log(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(30)..];
    if tail.is_empty() {
        "    (empty)".into()
    } else {
        tail.iter().map(|l| format!("    {l}\n")).collect()
    }
}
