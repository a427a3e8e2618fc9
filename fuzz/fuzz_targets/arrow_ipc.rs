//! Fuzz target: `vizdeck::fuzzing::arrow_ipc` (the loader and its invariant checks).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vizdeck::fuzzing::arrow_ipc(data);
});
