//! How long parsing alone takes: lexing, layout, lalrpop's parser and the syntax tree, with no
//! later phase. `scripts/bench_compile.py` prints it beside the whole build, as the share of a
//! build that no change to checking, lowering or emitting can win back.
//!
//!     cargo run --release --example parse_time -- FILE
//!
//! It prints the seconds that one parse of FILE took, as a build meets it: the compiler's threads
//! already started (a build starts them before it reads its sources) and every page of memory
//! fresh (the kernel zeroes each one the first time it is touched). The allocator is the command
//! line's.

use std::process::ExitCode;
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: onnxsc::allocator::MiMalloc = onnxsc::allocator::MiMalloc;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: parse_time FILE");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("parse_time: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    // Start the pool first, as a build does, so that its start is not counted.
    let _ = onnxsc::parallel::on_pool(|| ());
    let start = Instant::now();
    let parsed = onnxsc::syntax::parse(0, &text);
    let elapsed = start.elapsed();
    if parsed.module.is_none() {
        eprintln!("parse_time: {path} does not parse");
        return ExitCode::from(1);
    }
    println!("{}", elapsed.as_secs_f64());
    // The tree is left to the process's exit, as a build leaves it.
    std::mem::forget(parsed);
    ExitCode::SUCCESS
}
