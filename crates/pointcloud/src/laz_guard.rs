//! The `laz` crate's decoders assert on data they cannot decode (`assert!(sym < (1 << 16))` in
//! its arithmetic decoder, reached by a corrupt LAZ chunk or chunk table): a panic on bad input.
//! [`guarded`] runs such a call and turns its panic into an error, so a corrupt file gives one
//! line naming it, never a dead loader thread.
//!
//! While a guarded call runs on a thread, the panic hook stays quiet on that thread (the hook in
//! place when the first guarded call ran, wrapped once): the decoder's failure is reported as
//! the error, not as a panic message, and a hook that aborts (libFuzzer's) lets it unwind.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a call into the `laz` decoder); its panic becomes `Err` with the panic's message
/// on one line.
///
/// # Errors
///
/// `"the LAZ decoder failed: <message>"` when `f` panics.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let outer = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                outer(info);
            }
        }));
    });
    let was = GUARDED.with(|g| g.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(was));
    result.map_err(|p| {
        let text = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        vizdeck_base::text::one_line(&format!("the LAZ decoder failed: {text}"))
    })
}
