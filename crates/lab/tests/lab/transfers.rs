//! `vizdeck-lab --upload all` (the binary): every upload strategy, host-import's owned and pinned
//! sources and the direct writes into mapped GPU memory each deliver the payload's bytes (read
//! back and compared), and the tables are written as JSON and markdown. And `vizdeck bench`
//! names the lab when given the flags that moved.

use std::process::Command;

#[test]
fn upload_tables_verify_every_strategy() {
    let d = std::env::temp_dir().join(format!("vizdeck-lab-transfers-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_vizdeck-lab"))
        .args([
            "--backend",
            "vulkan",
            "--upload",
            "all",
            "--upload-sizes",
            "64KiB",
        ])
        .args(["--upload-frames", "2", "--out"])
        .arg(&d)
        .output()
        .expect("vizdeck-lab runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("bench-transfers.json")).unwrap())
            .unwrap();
    let rows = t["upload"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().filter_map(|r| r["strategy"].as_str()).collect();
    assert_eq!(
        names,
        [
            "write-buffer",
            "staging-belt",
            "map-ring",
            "mapped-at-creation",
            "threaded-map",
            "host-import",
            "host-import:owned",
            "host-import:pinned",
            "device-staging",
            "direct",
            "direct:pool"
        ]
    );
    assert!(
        rows.iter()
            .all(|r| r["verified"] == true && r["bytes"] == 65536)
    );
    assert_eq!(t["readback"].as_array().unwrap().len(), 1);
    assert!(stdout.contains("| map-ring | 64 KiB |"), "{stdout}");
    assert!(d.join("bench-transfers.md").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn nothing_to_run_is_one_line_and_a_failure() {
    let out = Command::new(env!("CARGO_BIN_EXE_vizdeck-lab"))
        .output()
        .expect("vizdeck-lab runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--upload") && stderr.contains("--kernels"),
        "{stderr}"
    );
}
