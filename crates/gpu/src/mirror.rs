//! The Rust side of the WGSL/Rust layout contract: one [`Mirror`] per `#[repr(C)]` type whose
//! bytes are uploaded into (or read back from) a WGSL struct, giving its size, alignment and field
//! offsets. `tests/app/shader_layout.rs` reflects every shader with naga and checks each mirror
//! against the WGSL struct of the same name: equal size, equal offset for every field of the same
//! name, no field on one side only (WGSL members named `_…` are padding, covered by the size), and
//! Rust's alignment no larger than WGSL's.
//!
//! Adding a mirrored type: list it with [`wgsl_mirror!`] in the `wgsl_mirrors()` of the module
//! that defines it (its fields need not be public), naming the WGSL struct; that function is
//! collected by the app's `scene::wgsl_mirrors`. The macro lists every field of the type: it does
//! not compile when a field is left out. WGSL struct names that are mirrored are unique across
//! the shaders.

/// The memory layout of one Rust type that mirrors a WGSL struct.
#[derive(Clone, Debug)]
pub struct Mirror {
    /// Rust type path (`std::any::type_name`), e.g. `vizdeck::scene::particles::cpu::SimConsts`.
    pub rust: &'static str,
    /// Name of the WGSL struct it mirrors.
    pub wgsl: &'static str,
    /// `size_of` the Rust type, bytes.
    pub size: usize,
    /// `align_of` the Rust type, bytes (may be smaller than WGSL's).
    pub align: usize,
    /// Every field as (name, byte offset), in declaration order.
    pub fields: Vec<(&'static str, usize)>,
}

/// `wgsl_mirror!(Type => "WgslName" { field, field, ... })`: the [`Mirror`] of `Type`, which must
/// list every field of `Type` (a missing field is a compile error).
#[macro_export]
macro_rules! wgsl_mirror {
    ($ty:ident => $wgsl:literal { $($field:ident),* $(,)? }) => {{
        // A field of the type missing from the list fails to compile here.
        let _exhaustive = |v: &$ty| {
            let $ty { $($field: _),* } = v;
        };
        $crate::mirror::Mirror {
            rust: ::std::any::type_name::<$ty>(),
            wgsl: $wgsl,
            size: ::std::mem::size_of::<$ty>(),
            align: ::std::mem::align_of::<$ty>(),
            fields: vec![$((stringify!($field), ::std::mem::offset_of!($ty, $field))),*],
        }
    }};
}
pub use crate::wgsl_mirror;
