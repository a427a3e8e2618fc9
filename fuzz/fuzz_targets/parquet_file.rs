//! Fuzz target: `vizdeck::fuzzing::parquet_file` (the loader and its invariant checks).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vizdeck::fuzzing::parquet_file(data);
});
