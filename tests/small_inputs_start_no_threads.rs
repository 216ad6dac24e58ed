//! A small compilation runs on the caller's thread alone: starting the compiler's threads
//! (`onnxsc::parallel`) would be a third of a small `check`. One test in its own process, so
//! that no other test has started them.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::driver::compile_sources;
use onnxsc::emit;

#[test]
fn checking_and_building_a_small_file_starts_no_thread() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tutorial.onnxs")).unwrap();
    let c = compile_sources(vec![("tutorial.onnxs".into(), text)]);
    assert!(!c.has_errors() && !c.functions.is_empty(), "{:?}", c.diagnostics);
    let bytes = emit::proto::library_bytes(&c.functions, c.library_meta());
    assert!(!bytes.is_empty());
    assert!(!onnxsc::parallel::pool_started());
    // A deep source does need them: the test can tell.
    let deep = format!("x = {}1\n", "-".repeat(200));
    let _ = compile_sources(vec![("deep.onnxs".into(), deep)]);
    assert!(onnxsc::parallel::pool_started());
}
