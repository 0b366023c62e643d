//! Policy text: arbitrary bytes, decoded lossily, laid over the built-in
//! policy as the home layer. See `harness::check_policy` for the invariants.

#![no_main]

mod harness;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = harness::check_policy(&text);
});
