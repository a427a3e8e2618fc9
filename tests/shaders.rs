//! Every WGSL file in shaders/ parses and validates with naga, and the shader registry lists
//! exactly the files on disk.

use std::path::{Path, PathBuf};

fn wgsl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("shaders/ is readable") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            wgsl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl") {
            out.push(path);
        }
    }
}

fn shader_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
}

#[test]
fn every_shader_parses_and_validates() {
    let mut files = Vec::new();
    wgsl_files(&shader_dir(), &mut files);
    assert!(files.len() >= 5, "expected the WGSL files, found {files:?}");
    let mut failures = Vec::new();
    for path in &files {
        let src = std::fs::read_to_string(path).expect("read shader");
        let module = match naga::front::wgsl::parse_str(&src) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}: {}", path.display(), e.emit_to_string(&src)));
                continue;
            }
        };
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        );
        if let Err(e) = validator.validate(&module) {
            failures.push(format!("{}: {}", path.display(), e.emit_to_string(&src)));
        }
        assert!(
            !module.entry_points.is_empty(),
            "{} has no entry point",
            path.display()
        );
    }
    assert!(
        failures.is_empty(),
        "invalid shaders:\n{}",
        failures.join("\n")
    );
}

#[test]
fn registry_lists_every_file_on_disk() {
    let mut files = Vec::new();
    wgsl_files(&shader_dir(), &mut files);
    let mut on_disk: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(shader_dir())
                .expect("under shaders/")
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = vizdeck::gpu::shaders::ALL
        .iter()
        .map(|s| s.path.to_string())
        .collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    for s in vizdeck::gpu::shaders::ALL {
        let disk = std::fs::read_to_string(shader_dir().join(s.path)).expect("read");
        assert_eq!(
            disk, s.source,
            "{} differs from the compiled-in copy",
            s.path
        );
    }
}
