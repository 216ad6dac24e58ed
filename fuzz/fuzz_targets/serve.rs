#![no_main]
//! See `onnxsc::contract::serve` for the input format and the contracts asserted.

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxsc::contract::serve(data));
