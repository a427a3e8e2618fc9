//! Installs the Debian/Ubuntu packages vizdeck needs, when some are missing.
//!
//! Never fatal: when it cannot install (not Debian, no apt-get, not root and no password-less
//! sudo, no network), it prints the command to run and carries on; a later step then fails
//! with its own, more specific message.

use std::process::{Command, Stdio};

use crate::{on_path, output_of};

/// Needed to build the app (alsa-sys links libasound through pkg-config).
pub const BUILD: &[&str] = &["pkg-config", "libasound2-dev"];

/// Needed to run the app: the Vulkan loader and lavapipe, GL/EGL, and what winit loads for X11.
pub const RUN: &[&str] = &[
    "libvulkan1",
    "mesa-vulkan-drivers",
    "libegl1",
    "libgl1",
    "libxkbcommon-x11-0",
    "libx11-xcb1",
    "libxcursor1",
    "libxrandr2",
    "libxi6",
];

/// Needed by the tests: a screen, input, screenshots, a sound server, signals, Vulkan tools.
pub const TEST: &[&str] = &[
    "xvfb",
    "xauth",
    "xdotool",
    "imagemagick",
    "pulseaudio",
    "pulseaudio-utils",
    "libsox-fmt-mp3",
    "sox",
    "mesa-vulkan-drivers",
    "vulkan-tools",
    "openbox",
    // Live series sources: the MQTT broker the tests start, and libzmq's Python binding as a
    // ZeroMQ publisher that is not vizdeck's own crate.
    "mosquitto",
    "mosquitto-clients",
    "python3-zmq",
    // File ▸ Open…'s dialog where no desktop portal runs (rfd falls back to zenity): the
    // window test picks a file in it.
    "zenity",
    // Video recording (`--record-video`): vizdeck pipes frames into ffmpeg; the tests read the
    // files back with ffprobe and ffmpeg.
    "ffmpeg",
];

/// Makes sure every package of `lists` is installed, installing the missing ones if it can.
pub fn ensure(lists: &[&[&'static str]]) {
    let mut wanted: Vec<&str> = Vec::new();
    for package in lists.iter().flat_map(|list| list.iter()) {
        if !wanted.contains(package) {
            wanted.push(package);
        }
    }

    if !on_path("dpkg-query") {
        println!(
            "xtask: no dpkg-query here (not Debian/Ubuntu?): skipping the package check. \
             Make sure the equivalents of these are installed: {}",
            wanted.join(" ")
        );
        return;
    }

    let missing = missing(&wanted);
    if missing.is_empty() {
        println!("xtask: all {} system packages are installed", wanted.len());
        return;
    }
    println!("xtask: missing system packages: {}", missing.join(" "));

    let Some(prefix) = privilege_prefix() else {
        print_manual_command(
            &missing,
            "not root, and `sudo -n` is not available without a password",
        );
        return;
    };
    if !on_path("apt-get") {
        print_manual_command(&missing, "apt-get is not on the PATH");
        return;
    }

    if !apt_get(&prefix, &["update"]) {
        eprintln!(
            "xtask: apt-get update failed; trying the install with the package lists there are"
        );
    }
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(&missing);
    if !apt_get(&prefix, &install) {
        eprintln!("xtask: apt-get install failed");
    }

    let still_missing = self::missing(&missing);
    if still_missing.is_empty() {
        println!("xtask: installed {}", missing.join(" "));
    } else {
        print_manual_command(
            &still_missing,
            "apt-get did not install everything (see its output above)",
        );
    }
}

/// The packages of `packages` that dpkg does not report as installed.
fn missing<'a>(packages: &[&'a str]) -> Vec<&'a str> {
    packages
        .iter()
        .copied()
        .filter(|p| !is_installed(p))
        .collect()
}

/// `dpkg-query -W -f='${Status}\n' PKG` prints e.g. `install ok installed` (one line per
/// architecture); the last word is the state, and only `installed` means the files are there.
fn is_installed(package: &str) -> bool {
    match output_of("dpkg-query", &["-W", "-f=${Status}\n", package]) {
        Some(status) => status
            .lines()
            .any(|line| line.split_whitespace().last() == Some("installed")),
        None => false, // dpkg-query fails for packages it has never heard of
    }
}

/// What to put in front of apt-get: nothing as root, `sudo -n` when that works without a
/// password, or None when we cannot get root.
fn privilege_prefix() -> Option<Vec<&'static str>> {
    if output_of("id", &["-u"]).is_some_and(|uid| uid.trim() == "0") {
        return Some(Vec::new());
    }
    let sudo_works = on_path("sudo")
        && Command::new("sudo")
            .args(["-n", "true"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    // sudo resets the environment, so DEBIAN_FRONTEND goes through `env`.
    sudo_works.then(|| vec!["sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive"])
}

fn apt_get(prefix: &[&str], args: &[&str]) -> bool {
    let mut argv: Vec<&str> = prefix.to_vec();
    argv.push("apt-get");
    argv.extend(args);
    println!("xtask: running: {}", argv.join(" "));
    Command::new(argv[0])
        .args(&argv[1..])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn print_manual_command(missing: &[&str], why: &str) {
    let root = output_of("id", &["-u"]).is_some_and(|uid| uid.trim() == "0");
    let sudo = if root { "" } else { "sudo " };
    eprintln!(
        "xtask: warning: cannot install system packages ({why}). Please run:\n\n    \
         {sudo}apt-get update && {sudo}apt-get install -y --no-install-recommends {}\n\n\
         xtask: carrying on without them; what needs them will fail.",
        missing.join(" ")
    );
}
