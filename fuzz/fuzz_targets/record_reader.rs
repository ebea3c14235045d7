//! The record reader never panics: arbitrary bytes as one event, as one log line, and as a
//! whole session log (sequential and parallel replay must agree).
#![no_main]

use decision::record::{EventRead, read_event, verify_record};
use decision::log::envelope::parse_line;
use decision::log::{ReplayOptions, replay_reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(EventRead::Decision(Ok(record))) = read_event(data) {
        let _ = verify_record(&record);
    }
    let _ = parse_line(data);
    let small = ReplayOptions { max_line: 64, ..ReplayOptions::default() };
    let mut sequential = Vec::new();
    let a = replay_reader(data, &small, &mut |r| sequential.push(r.clone()));
    let mut parallel = Vec::new();
    let b = replay_reader(data, &ReplayOptions { threads: 2, ..small }, &mut |r| parallel.push(r.clone()));
    if let (Ok(a), Ok(b)) = (a, b) {
        assert_eq!(a, b);
        assert_eq!(sequential, parallel);
    }
});
