//! Build-time code generation:
//! - the parser, from the lalrpop grammar in `grammar/`;
//! - the prost types, from the project's own `proto/onnx.proto`, compiled by protox so that no
//!   system `protoc` is needed;
//! - the operator-schema tables, from `src/schema/generated/onnx_schemas.json`
//!   (`build/schema_tables.rs`);
//! - the index of the PyTorch schemas in `src/aten/generated/native_functions.txt`
//!   (`build/aten_index.rs`).

#![allow(clippy::expect_used, reason = "a build script fails the build by panicking; it reads no user input")]

use std::path::PathBuf;

#[path = "build/aten_index.rs"]
mod aten_index;
#[path = "src/schema/op_hash.rs"]
mod op_hash;
#[path = "build/schema_tables.rs"]
mod schema_tables;

fn main() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    println!("cargo:rerun-if-changed=grammar/onnxs.lalrpop");
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .set_out_dir(&out_dir)
        .emit_rerun_directives(false)
        .process()
        .expect("lalrpop failed to generate the parser");

    println!("cargo:rerun-if-changed=proto/onnx.proto");
    let fds = protox::compile(["onnx.proto"], ["proto"]).expect("protox failed to compile proto/onnx.proto");
    prost_build::Config::new()
        .out_dir(&out_dir)
        .compile_fds(fds)
        .expect("prost-build failed to generate the ONNX types");

    let schemas = "src/schema/generated/onnx_schemas.json";
    println!("cargo:rerun-if-changed={schemas}");
    let text = std::fs::read_to_string(schemas).unwrap_or_else(|e| panic!("{schemas}: {e}"));
    let tables = schema_tables::parse(&text)
        .and_then(|raw| schema_tables::tables(&raw))
        .unwrap_or_else(|e| panic!("{schemas}: {e}"));
    std::fs::write(out_dir.join("onnx_schema_tables.rs"), tables).expect("cannot write the schema tables");

    let native_functions = "src/aten/generated/native_functions.txt";
    println!("cargo:rerun-if-changed={native_functions}");
    let text = std::fs::read_to_string(native_functions).unwrap_or_else(|e| panic!("{native_functions}: {e}"));
    let index = aten_index::index(&text).unwrap_or_else(|e| panic!("{native_functions}: {e}"));
    std::fs::write(out_dir.join("aten_index.rs"), index).expect("cannot write the aten index");
}
