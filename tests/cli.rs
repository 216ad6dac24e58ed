//! End-to-end tests of the `onnxsc` binary: exit codes, outputs, atomic writes, determinism.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn onnxsc(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_onnxsc"));
    cmd.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("onnxsc-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write case");
    p
}

const BAD: &str = "from onnxscript import opset18 as op\n\ndef f(x):\n    return op.Ad(x, x)\n";

#[test]
fn check_examples_is_clean() {
    let o = onnxsc(&["check", "examples"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("no errors"));
}

#[test]
fn errors_exit_1_with_located_diagnostic() {
    let dir = scratch("errors");
    let bad = write(&dir, "bad.onnxs", BAD);
    let o = onnxsc(&["check", bad.to_str().unwrap(), "--color", "never"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("error[E0402]"), "{err}");
    assert!(err.contains("bad.onnxs:4:15"), "{err}");
    assert!(err.contains("did you mean `Add`?"), "{err}");
    assert!(!err.contains("\u{1b}["), "no colour with --color never: {err}");
}

#[test]
fn color_always_and_no_color() {
    let dir = scratch("color");
    let bad = write(&dir, "bad.onnxs", BAD);
    let o = onnxsc(&["--color", "always", "check", bad.to_str().unwrap()], &[]);
    assert!(stderr(&o).contains("\u{1b}["), "--color always colours");
    let o = onnxsc(&["check", bad.to_str().unwrap()], &[("NO_COLOR", "1")]);
    assert!(!stderr(&o).contains("\u{1b}["), "NO_COLOR disables colour");
}

#[test]
fn usage_and_io_errors_exit_2() {
    assert_eq!(onnxsc(&["check"], &[]).status.code(), Some(2));
    assert_eq!(onnxsc(&["frobnicate"], &[]).status.code(), Some(2));
    let o = onnxsc(&["check", "no/such/file.onnxs"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no such file or directory"), "{}", stderr(&o));
    let o = onnxsc(&["build", "examples"], &[]);
    assert_eq!(o.status.code(), Some(2), "proto output needs -o");
    let o = onnxsc(&["build", "examples", "-o", "no/such/dir/out.onnx"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn failed_build_writes_nothing_and_keeps_old_output() {
    let dir = scratch("atomic");
    let bad = write(&dir, "bad.onnxs", BAD);
    let out = dir.join("lib.onnx");
    let o = onnxsc(&["build", bad.to_str().unwrap(), "-o", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists(), "a failed build must not create the output");

    std::fs::write(&out, b"previous").unwrap();
    let o = onnxsc(&["build", bad.to_str().unwrap(), "-o", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 2, "no temporary files left behind: {leftovers:?}");
}

#[test]
fn build_is_byte_identical_across_runs() {
    let dir = scratch("determinism");
    let a = dir.join("a.onnx");
    let b = dir.join("b.onnx");
    for out in [&a, &b] {
        let o = onnxsc(&["build", "examples", "-o", out.to_str().unwrap()], &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(!a.is_empty());
    assert_eq!(a, b);
    let t1 = onnxsc(&["build", "examples", "--emit", "text"], &[]).stdout;
    let t2 = onnxsc(&["build", "examples", "--emit", "text"], &[]).stdout;
    assert!(String::from_utf8_lossy(&t1).contains("custom_aten_gelu"));
    assert_eq!(t1, t2);
}

#[test]
fn help_explains_commands() {
    let o = onnxsc(&["--help"], &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("check") && out.contains("build") && out.contains("Exit status"), "{out}");
    let o = onnxsc(&["build", "--help"], &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("--emit") && out.contains("atomically"), "{out}");
}
