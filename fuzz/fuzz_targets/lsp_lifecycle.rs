//! The language server's lifecycle: random orders of messages (each input
//! byte picks one), checked against the LSP 3.17 lifecycle by
//! `lifecycle::run` (see lifecycle.rs).
#![no_main]

#[path = "lifecycle.rs"]
mod lifecycle;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lifecycle::run(data);
});
