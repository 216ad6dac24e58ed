#![no_main]
//! See `onnxsc::contract::aten` for the input format and the contracts asserted.

libfuzzer_sys::fuzz_target!(|data: &[u8]| onnxsc::contract::aten(data));
