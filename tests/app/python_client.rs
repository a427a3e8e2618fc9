//! The Python client of `--share` (clients/python/vizdeck_share.py) against this build: its own
//! protocol test (`clients/python/test_protocol.py`: the description, the fd it receives, frames
//! released, a second producer, clear errors) run with the system Python on lavapipe, where the
//! CUDA import itself cannot run (it ran on the H200: BENCHMARKS.md).

use std::process::Command;

#[test]
fn the_python_client_speaks_the_share_protocol() {
    let python = ["/usr/bin/python3", "python3"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .expect("python3 (Debian's python3 package)");
    let out = Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/clients/python/test_protocol.py"
        ))
        .arg(env!("CARGO_BIN_EXE_vizdeck"))
        .output()
        .expect("run the protocol test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("PASS") && !text.contains("FAIL"), "{text}");
}
