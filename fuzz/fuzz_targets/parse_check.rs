//! Any bytes through the parser and every check layer: diagnostics, never a panic, and
//! every span inside the input.
#![no_main]

use decision::check::{self, Capabilities, CheckOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let caps = Capabilities::reference();
    let report = check::check(data, CheckOptions { capabilities: Some(&caps) });
    for d in &report.diagnostics {
        assert!(d.span.line >= 1);
        assert!(d.span.start <= d.span.end);
    }
});
