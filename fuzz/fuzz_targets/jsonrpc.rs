//! The JSON-RPC framing of `lisa-context mcp`: bounded line reading and
//! message parsing. See `harness::check_jsonrpc` for the invariants.

#![no_main]

mod harness;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = harness::check_jsonrpc(data);
});
