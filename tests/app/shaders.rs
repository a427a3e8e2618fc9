//! Every shader of the registry, composed with its `shaders/common/` preludes, parses and
//! validates with naga; the registry (entries and preludes) lists exactly the WGSL files on disk;
//! and the compiled-in copies equal the files.

use std::path::{Path, PathBuf};

use vizdeck::scene::shaders::{ALL, COMMON};

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

fn read(rel: &str) -> String {
    std::fs::read_to_string(shader_dir().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

#[test]
fn every_shader_parses_and_validates() {
    assert!(ALL.len() >= 5, "expected the registry, found {ALL:?}");
    let mut failures = Vec::new();
    for s in ALL {
        // Composed from the files on disk, so an edit is checked before the next build.
        let src: String = s
            .prelude
            .iter()
            .map(|p| read(p))
            .chain([read(s.path)])
            .collect();
        let module = match naga::front::wgsl::parse_str(&src) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!(
                    "{} (+ {:?}): {}",
                    s.path,
                    s.prelude,
                    e.emit_to_string(&src)
                ));
                continue;
            }
        };
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        );
        if let Err(e) = validator.validate(&module) {
            failures.push(format!(
                "{} (+ {:?}): {}",
                s.path,
                s.prelude,
                e.emit_to_string(&src)
            ));
        }
        assert!(
            !module.entry_points.is_empty(),
            "{} has no entry point",
            s.path
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
    let mut listed: Vec<String> = ALL
        .iter()
        .map(|s| s.path.to_string())
        .chain(COMMON.iter().map(|(p, _)| p.to_string()))
        .collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    for (path, text) in COMMON {
        assert!(
            path.starts_with("common/"),
            "prelude {path} outside shaders/common/"
        );
        assert_eq!(
            read(path),
            *text,
            "{path} differs from the compiled-in copy"
        );
    }
    for s in ALL {
        assert!(
            !s.path.starts_with("common/"),
            "{} is a prelude, not a pass",
            s.path
        );
        assert_eq!(
            read(s.path),
            s.body,
            "{} differs from the compiled-in copy",
            s.path
        );
        let mut composed = String::new();
        for p in s.prelude {
            let text = COMMON
                .iter()
                .find(|(c, _)| c == p)
                .unwrap_or_else(|| panic!("{} uses {p}, which COMMON does not list", s.path));
            composed.push_str(text.1);
        }
        composed.push_str(s.body);
        assert_eq!(
            composed, s.source,
            "{}: source is not its preludes + body",
            s.path
        );
    }
    // Every prelude is used by some shader.
    for (path, _) in COMMON {
        assert!(
            ALL.iter().any(|s| s.prelude.contains(path)),
            "prelude {path} is used by no shader"
        );
    }
}
