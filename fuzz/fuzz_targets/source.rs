#![no_main]
//! See `onnxsc::contract::source` for the input format and the contracts asserted.

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxsc::contract::source(data));
