//! `JSON.stringify`-compatible serialisation and the reference's frame and request digests.
