//! Fuzzing a host adapter (filled in below).
