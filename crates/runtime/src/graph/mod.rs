//! The host adapter registrations, Level-2 graph execution and the capability report.
