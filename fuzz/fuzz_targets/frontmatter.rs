//! SKILL.md frontmatter: `frontmatter_end` on the raw bytes, `parse` on them
//! decoded lossily. See `harness::check_frontmatter` for the invariants.

#![no_main]

mod harness;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = harness::check_frontmatter(data);
});
