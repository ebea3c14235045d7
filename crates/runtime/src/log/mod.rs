//! The session log: JSONL writer and reader, hash chain, replay.
