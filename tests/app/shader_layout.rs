//! The WGSL/Rust layout contract: every shader of the registries (the views', the app's scene
//! blit, the GPU core's egui painter) is reflected with naga (composed with its preludes), and each WGSL struct mirrored in Rust (`vizdeck::scene::wgsl_mirrors`)
//! must have the Rust type's size, a field offset equal to the Rust field's for every member, no
//! member on one side only (WGSL members named `_…` are padding: the equal sizes cover them), and
//! an alignment no smaller than Rust's. A struct of the same name must have the same layout in
//! every shader, and every struct bound as a uniform or storage buffer must be mirrored in Rust
//! or listed in `GPU_ONLY` with the reason.

use std::collections::BTreeMap;

use naga::{AddressSpace, TypeInner};
use vizdeck::deck::SCENE_BLIT;
use vizdeck::gpu::mirror::Mirror;
use vizdeck::gpu::shaders::{EGUI_PAINT, ShaderSource};
use vizdeck::scene::shaders::{COMMON, all as views};
use vizdeck::scene::wgsl_mirrors as mirrors;

/// Structs bound as buffers that have no `#[repr(C)]` mirror, and why.
const GPU_ONLY: &[(&str, &str)] = &[
    (
        "Sorted",
        "written and read only by the GPU (grid scatter → neighbour pass)",
    ),
    (
        "CountParams",
        "uploaded as [u32; 4] words (sim.rs small_uniform); checked as 16 bytes below",
    ),
];

/// One WGSL struct as naga lays it out.
#[derive(Clone, Debug, PartialEq)]
struct WgslStruct {
    size: u32,
    align: u32,
    /// (name, offset, size)
    members: Vec<(String, u32, u32)>,
}

/// Every named struct of every shader: name → its layouts (one per distinct layout) with the
/// files declaring each (a prelude in `shaders/common/`, or the shader's own file); plus the names of the structs bound as uniform/storage buffers
/// (directly or as array elements).
type Structs = BTreeMap<String, Vec<(WgslStruct, Vec<&'static str>)>>;

/// Every shader of the three registries.
fn all() -> Vec<ShaderSource> {
    views()
        .into_iter()
        .chain([SCENE_BLIT, EGUI_PAINT])
        .collect()
}

fn reflect() -> (Structs, Vec<String>) {
    let mut structs = Structs::new();
    let mut bound = Vec::new();
    for s in all() {
        let module = naga::front::wgsl::parse_str(s.source)
            .unwrap_or_else(|e| panic!("{}: {}", s.path, e.emit_to_string(s.source)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}: {}", s.path, e.emit_to_string(s.source)));
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).expect("layout");
        for (handle, ty) in module.types.iter() {
            let (Some(name), TypeInner::Struct { members, span }) = (&ty.name, &ty.inner) else {
                continue;
            };
            let layout = WgslStruct {
                size: *span,
                align: layouter[handle].alignment.round_up(1),
                members: members
                    .iter()
                    .map(|m| {
                        (
                            m.name.clone().unwrap_or_default(),
                            m.offset,
                            layouter[m.ty].size,
                        )
                    })
                    .collect(),
            };
            // The file that declares it: one of the entry's preludes, or its own file.
            let decl = format!("struct {name} {{");
            let file = s
                .prelude
                .iter()
                .copied()
                .find(|p| {
                    COMMON
                        .iter()
                        .any(|(c, text)| c == p && text.contains(&decl))
                })
                .unwrap_or(s.path);
            let variants = structs.entry(name.clone()).or_default();
            match variants.iter_mut().find(|(l, _)| *l == layout) {
                Some((_, files)) if files.contains(&file) => {}
                Some((_, files)) => files.push(file),
                None => variants.push((layout, vec![file])),
            }
        }
        for (_, var) in module.global_variables.iter() {
            if !matches!(
                var.space,
                AddressSpace::Uniform | AddressSpace::Storage { .. }
            ) {
                continue;
            }
            let mut ty = &module.types[var.ty];
            if let TypeInner::Array { base, .. } = ty.inner {
                ty = &module.types[base];
            }
            if let (Some(name), TypeInner::Struct { .. }) = (&ty.name, &ty.inner)
                && !bound.contains(name)
            {
                bound.push(name.clone());
            }
        }
    }
    (structs, bound)
}

/// What differs between a WGSL struct and its Rust mirror, one line each.
fn compare(w: &WgslStruct, r: &Mirror) -> Vec<String> {
    let mut out = Vec::new();
    if w.size as usize != r.size {
        out.push(format!(
            "size: WGSL {} bytes, Rust {} bytes",
            w.size, r.size
        ));
    }
    if r.align > w.align as usize {
        out.push(format!(
            "alignment: WGSL {}, Rust {} (larger than WGSL's)",
            w.align, r.align
        ));
    }
    for (name, offset, _) in &w.members {
        match r.fields.iter().find(|(f, _)| f == name) {
            Some((_, ro)) if *ro == *offset as usize => {}
            Some((_, ro)) => out.push(format!(
                "field `{name}`: WGSL offset {offset}, Rust offset {ro}"
            )),
            None if name.starts_with('_') => {}
            None => out.push(format!(
                "field `{name}` (WGSL offset {offset}) has no Rust field"
            )),
        }
    }
    for (name, offset) in &r.fields {
        if !name.starts_with('_') && !w.members.iter().any(|(m, _, _)| m == name) {
            out.push(format!(
                "field `{name}` (Rust offset {offset}) has no WGSL member"
            ));
        }
    }
    out
}

#[test]
fn rust_mirrors_match_wgsl_layouts() {
    let (structs, bound) = reflect();
    let mirrors = mirrors();
    assert!(
        mirrors.len() >= 15,
        "expected the mirrored types, got {mirrors:#?}"
    );
    let mut failures = Vec::new();
    // A struct shared with the host has one layout in every shader (stage IO structs such as
    // `VsOut` may differ).
    for (name, variants) in &structs {
        let shared = bound.contains(name) || mirrors.iter().any(|r| r.wgsl == name);
        if shared && variants.len() > 1 {
            failures.push(format!(
                "WGSL `{name}` has {} layouts (give them distinct names): {variants:?}",
                variants.len()
            ));
        }
    }
    for r in &mirrors {
        let Some((w, users)) = structs.get(r.wgsl).and_then(|v| v.first()) else {
            failures.push(format!(
                "Rust `{}` mirrors WGSL `{}`, which no shader declares",
                r.rust, r.wgsl
            ));
            continue;
        };
        let diffs = compare(w, r);
        println!(
            "{:<12} {:>4} B align {:>2} | {:<52} {:>4} B align {:>2} | {}",
            r.wgsl,
            w.size,
            w.align,
            r.rust,
            r.size,
            r.align,
            if diffs.is_empty() { "ok" } else { "MISMATCH" }
        );
        if !diffs.is_empty() {
            failures.push(format!(
                "WGSL `{}` (in {}) vs Rust `{}`:\n  {}",
                r.wgsl,
                users.join(", "),
                r.rust,
                diffs.join("\n  ")
            ));
        }
    }
    for name in &bound {
        let mirrored = mirrors.iter().any(|r| r.wgsl == name);
        let exempt = GPU_ONLY.iter().any(|(n, _)| n == name);
        if !mirrored && !exempt {
            failures.push(format!(
                "WGSL `{name}` (in {:?}) is bound as a buffer but has no Rust mirror \
                 (add one with wgsl_mirror!, or list it in GPU_ONLY with the reason)",
                structs[name][0].1
            ));
        }
        if mirrored && exempt {
            failures.push(format!(
                "WGSL `{name}` is mirrored and also listed in GPU_ONLY"
            ));
        }
    }
    for (name, _) in GPU_ONLY {
        assert!(
            structs.contains_key(*name),
            "GPU_ONLY lists `{name}`, which no shader declares"
        );
    }
    assert_eq!(
        structs["CountParams"][0].0.size as usize,
        size_of::<[u32; 4]>(),
        "CountParams is uploaded as [u32; 4]"
    );
    assert!(
        failures.is_empty(),
        "WGSL/Rust layout mismatches:\n{}",
        failures.join("\n")
    );
}
