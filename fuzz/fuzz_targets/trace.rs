#![no_main]
//! See `onnxsc::contract::trace` for the input format and the contracts asserted.

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxsc::contract::trace(data));
