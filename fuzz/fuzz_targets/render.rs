//! The whole pipeline on a small real tree: the input is split on 0xFF into
//! home, project, nested and skill files and a policy layer, written to a
//! fresh temporary directory, and a snapshot is built for the nested
//! directory. See `harness::check_render` for the invariants.

#![no_main]

mod harness;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Tiny files only: the cost of an input is the directory it builds.
    if data.len() > 16 * 1024 {
        return;
    }
    let tree = harness::Tree::from_bytes(data);
    let _ = harness::check_render(&tree);
});
