//! Bad point-cloud input, through the app as a user runs it (`--headless --scene pointcloud`):
//! what cannot be shown gives one line naming the file and the problem and a non-zero exit;
//! what can be shown in part (a LAS whose data breaks part-way) is shown, with a warning in the
//! report naming the file and the count; nothing panics or hangs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pointcloud")
        .join(name)
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-pcbad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs the app on `args` (after `--headless --scene pointcloud --frames 3`).
fn vizdeck(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_vizdeck"))
        .args(["--headless", "--scene", "pointcloud", "--frames", "3"])
        .arg("--pointcloud-cache")
        .arg(temp("cache"))
        .args(args)
        .output()
        .expect("run vizdeck")
}

/// The run failed with one `vizdeck: error:` line naming `path` and containing `what`.
fn refused(path: &Path, what: &str) {
    let out = vizdeck(&["--pointcloud-file", path.to_str().unwrap()]);
    let text = common::text(&out);
    assert!(!out.status.success(), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("vizdeck: error:"))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].contains(&path.display().to_string()), "{text}");
    assert!(lines[0].contains(what), "want '{what}': {text}");
}

#[test]
fn files_that_cannot_be_shown_are_refused_with_one_line() {
    // A text file named .las.
    let text = temp("notes.las");
    std::fs::write(&text, "x,y,z\n1,2,3\n").unwrap();
    refused(&text, "not a LAS/LAZ file");
    // A missing file.
    refused(&temp("missing.laz"), "No such file");
    // A LAZ cut inside its header.
    let laz = std::fs::read(data("autzen_trim.laz")).unwrap();
    let cut = temp("cut_header.laz");
    std::fs::write(&cut, &laz[..100]).unwrap();
    refused(&cut, "ends early");
    // A LAZ cut before its chunk table (LAZ needs it to decode anything).
    let cut = temp("cut_data.laz");
    std::fs::write(&cut, &laz[..laz.len() / 3]).unwrap();
    refused(&cut, "ends early");
    // An unknown point format (byte 104 of the header: the point data record format).
    let mut las = std::fs::read(data("simple.las")).unwrap();
    las[104] = 77;
    let unknown = temp("format77.las");
    std::fs::write(&unknown, &las).unwrap();
    refused(&unknown, "not a LAS/LAZ file");
    // A LAS with no points.
    let empty = temp("none.las");
    {
        let header = las::Builder::default().into_header().unwrap();
        drop(las::Writer::from_path(&empty, header).unwrap());
    }
    refused(&empty, "holds no points");
}

/// The first entry of a COPC file's root hierarchy page overwritten with garbage: refused,
/// naming the hierarchy.
#[test]
fn a_copc_with_a_broken_hierarchy_page_is_refused() {
    let mut bytes = std::fs::read(data("simple.copc.laz")).unwrap();
    // LAS 1.4 header: start of the first EVLR (u64 at 235), their count (u32 at 243).
    let evlr = u64::from_le_bytes(bytes[235..243].try_into().unwrap()) as usize;
    let count = u32::from_le_bytes(bytes[243..247].try_into().unwrap());
    let mut at = evlr;
    let mut broken = false;
    for _ in 0..count {
        let user = &bytes[at + 2..at + 18];
        let record = u16::from_le_bytes(bytes[at + 18..at + 20].try_into().unwrap());
        let len = u64::from_le_bytes(bytes[at + 20..at + 28].try_into().unwrap()) as usize;
        if user.starts_with(b"copc") && record == 1000 {
            bytes[at + 60..at + 60 + 32].fill(0xAB);
            broken = true;
        }
        at += 60 + len;
    }
    assert!(broken, "the file has a COPC hierarchy record");
    let path = temp("broken.copc.laz");
    std::fs::write(&path, &bytes).unwrap();
    refused(&path, "broken COPC hierarchy");
}

/// A LAS whose data stops at 60 % of the file: the points before the break are shown, the
/// report's warning names the file and how many points were read of how many.
#[test]
fn a_truncated_las_shows_what_it_holds_with_a_warning() {
    let las = std::fs::read(data("simple.las")).unwrap();
    let path = temp("cut.las");
    std::fs::write(&path, &las[..las.len() * 6 / 10]).unwrap();
    // Points that fit before the cut: (bytes − offset to point data) / record length.
    let offset = u32::from_le_bytes(las[96..100].try_into().unwrap()) as usize;
    let record = u16::from_le_bytes(las[105..107].try_into().unwrap()) as usize;
    let whole = (las.len() * 6 / 10 - offset) / record;
    let report = temp("cut.json");
    let out = vizdeck(&[
        "--pointcloud-file",
        path.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", common::text(&out));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let pc = &r["scenes"]["pointcloud"];
    assert_eq!(pc["points_total"].as_u64(), Some(whole as u64), "{pc}");
    let warning = pc["warning"].as_str().unwrap_or_default();
    assert!(warning.contains(&path.display().to_string()), "{warning}");
    assert!(
        warning.contains(&format!("after {whole} of 1065 points")),
        "{warning}"
    );
}

/// A LAS whose x scale factor is 0 (every point would land on the offset) or NaN is refused
/// with one line naming the file and the field, and no octree cache is written for it.
#[test]
fn a_las_with_scale_zero_or_nan_is_refused_naming_the_field() {
    for (name, v) in [("scale0.las", 0.0), ("scalenan.las", f64::NAN)] {
        let mut las = std::fs::read(data("simple.las")).unwrap();
        // LAS header: the x scale factor, f64 at byte 131.
        las[131..139].copy_from_slice(&v.to_le_bytes());
        let path = temp(name);
        std::fs::write(&path, &las).unwrap();
        refused(
            &path,
            &format!(
                "the header's x scale factor is {v:?} (a scale factor must be a finite number above 0)"
            ),
        );
        let caches: Vec<String> = std::fs::read_dir(temp("cache"))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with(name))
                    .collect()
            })
            .unwrap_or_default();
        assert!(caches.is_empty(), "{caches:?}");
    }
}

/// `autzen_trim.laz` (110,000 points) with its header claiming 120,000: the app shows the
/// 110,000 points (no phantom points at the origin: the bounds are the true file's, read here
/// with the `las` crate) and the report's warning names the file and both counts.
#[test]
fn a_laz_claiming_more_points_than_it_holds_shows_what_it_holds() {
    let mut laz = std::fs::read(data("autzen_trim.laz")).unwrap();
    // LAS 1.2: the point count, u32 at header byte 107.
    laz[107..111].copy_from_slice(&120_000u32.to_le_bytes());
    let path = temp("more.laz");
    std::fs::write(&path, &laz).unwrap();
    let report = temp("more.json");
    let out = vizdeck(&[
        "--pointcloud-file",
        path.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", common::text(&out));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let pc = &r["scenes"]["pointcloud"];
    assert_eq!(pc["points_total"].as_u64(), Some(110_000), "{pc}");
    let warning = pc["warning"].as_str().unwrap_or_default();
    assert!(warning.contains(&path.display().to_string()), "{warning}");
    assert!(
        warning.contains("after 110000 of 120000 points"),
        "{warning}"
    );
    let d = las::Reader::from_path(data("autzen_trim.laz"))
        .unwrap()
        .read_all()
        .unwrap();
    let min_x = d.x().fold(f64::INFINITY, f64::min);
    assert!(min_x > 600_000.0, "{min_x}");
    assert_eq!(pc["bounds_min"][0].as_f64(), Some(min_x), "{pc}");
}

#[test]
fn bad_flags_are_refused_naming_the_flag() {
    for (args, what) in [
        (&["--pointcloud", "synthetic:0"][..], "synthetic:0"),
        (&["--pointcloud", "synthetic:lots"][..], "synthetic:lots"),
        (&["--pointcloud-budget", "0"][..], "'0'"),
        (&["--point-radius", "9"][..], "--point-radius"),
        (&["--edl", "-1"][..], "--edl"),
        (&["--pointcloud-probe", "12"][..], "'12'"),
        (&["--view", "under"][..], "--view"),
    ] {
        let out = vizdeck(args);
        let text = common::text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains(what), "{args:?}: want '{what}': {text}");
    }
}

/// PLY: a face list only, a header that does not parse, binary data cut short.
#[test]
fn ply_files_that_cannot_be_shown_are_refused() {
    let faces = temp("faces.ply");
    std::fs::write(
        &faces,
        "ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\n\
         property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n\
         3 0 1 2\n",
    )
    .unwrap();
    refused(&faces, "holds no points");
    let garbage = temp("garbage.ply");
    std::fs::write(&garbage, "ply\nformat sideways 9\nend_header\n").unwrap();
    refused(&garbage, "not a PLY file");
    let cut = temp("cut.ply");
    let mut bytes = b"ply\nformat binary_little_endian 1.0\nelement vertex 100\nproperty float x\n\
property float y\nproperty float z\nend_header\n"
        .to_vec();
    bytes.extend(std::iter::repeat_n(0u8, 12 * 40));
    std::fs::write(&cut, &bytes).unwrap();
    refused(&cut, "not a PLY file");
}

/// COPC over HTTP from servers that cannot serve it: no range support, a missing file, a
/// LAZ that is not COPC, nothing listening.
#[test]
fn http_sources_that_cannot_stream_are_refused() {
    use common::http_server::{RangeSupport, serve};
    let dir = data("");
    let plain = serve(dir.clone(), RangeSupport::Ignore);
    let ranged = serve(dir, RangeSupport::Honour);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    for (url, what) in [
        (
            format!("{}/simple.copc.laz", plain.base),
            "does not support range requests",
        ),
        (format!("{}/missing.copc.laz", ranged.base), "HTTP 404"),
        (format!("{}/simple.laz", ranged.base), "only COPC files"),
        (format!("{closed}/simple.copc.laz"), "simple.copc.laz"),
    ] {
        refused(Path::new(&url), what);
    }
}
