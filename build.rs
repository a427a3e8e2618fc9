//! Compiles `src/logging/native.c` on Linux: the C half of routing ALSA's and libwayland's own
//! messages into vizdeck's log (ALSA's error handler is C-variadic, which stable Rust cannot
//! define). See `src/logging.rs`.

fn main() {
    println!("cargo:rerun-if-changed=src/logging/native.c");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        cc::Build::new()
            .file("src/logging/native.c")
            .warnings(true)
            .compile("vizdeck_native_log");
    }
}
