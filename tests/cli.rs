//! End-to-end tests of the `onnxsc` binary: exit codes, outputs, atomic writes, determinism.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

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
fn lone_carriage_returns_end_lines_in_diagnostics() {
    // Old Mac line ends: Python reads each `\r` as a line end, so the error is on line 4 and its
    // source line is shown alone (a raw `\r` would send the terminal back to the line's start).
    let dir = scratch("lone-cr");
    let bad = write(&dir, "bad.onnxs", &BAD.replace('\n', "\r"));
    let o = onnxsc(&["check", bad.to_str().unwrap(), "--color", "never"], &[]);
    let err = stderr(&o);
    assert!(err.contains("bad.onnxs:4:15"), "{err}");
    assert!(err.contains("4 │     return op.Ad(x, x)\n"), "{err}");
    assert!(!err.contains('\r'), "{err:?}");
    let o = onnxsc(&["check", bad.to_str().unwrap(), "--format", "json"], &[]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("\"line\":4"), "{out}");
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

/// Every bad-input case: exit 1, a located diagnostic, and `build` writes nothing.
#[test]
fn every_error_case_fails_cleanly_and_builds_nothing() {
    let dir = scratch("error-cases");
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/errors");
    let mut count = 0;
    for entry in std::fs::read_dir(&cases).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "onnxs") {
            continue;
        }
        count += 1;
        let out = dir.join("out.onnx");
        let o = onnxsc(&["--color", "never", "build", path.to_str().unwrap(), "-o", out.to_str().unwrap()], &[]);
        assert_eq!(o.status.code(), Some(1), "{}: {}", path.display(), stderr(&o));
        assert!(!out.exists(), "{}: a failed build wrote output", path.display());
        let err = stderr(&o);
        assert!(
            err.contains("error[E") && err.contains(&format!("{}:", path.file_name().unwrap().to_string_lossy())),
            "{}: no located error:\n{err}",
            path.display()
        );
        assert!(!err.contains("panicked"), "{}: {err}", path.display());
    }
    assert!(count >= 60, "the bad-input suite has {count} cases");
}

#[test]
fn json_format_has_one_object_per_diagnostic() {
    let dir = scratch("json");
    let bad = write(&dir, "bad.onnxs", BAD);
    let o = onnxsc(&["check", "--format", "json", bad.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).expect("valid JSON");
    assert_eq!(v["code"], "E0402");
    assert_eq!(v["severity"], "error");
    assert_eq!(v["file"], bad.to_str().unwrap());
    assert_eq!((v["line"].as_u64(), v["column"].as_u64()), (Some(4), Some(15)));
    assert_eq!((v["end_line"].as_u64(), v["end_column"].as_u64()), (Some(4), Some(17)));
    assert_eq!(v["help"], "did you mean `Add`?");
    assert_eq!(v["labels"][0]["primary"], true);
    // The help as a fix, in ruff's shape: replace columns 15..17 of line 4 with `Add`.
    let fix = &v["fix"];
    assert_eq!(fix["applicability"], "safe");
    assert_eq!(fix["message"], "Replace with `Add`");
    assert_eq!(fix["edits"][0]["content"], "Add");
    assert_eq!(fix["edits"][0]["location"], serde_json::json!({"row": 4, "column": 15}));
    assert_eq!(fix["edits"][0]["end_location"], serde_json::json!({"row": 4, "column": 17}));
}

const WARNS: &str = "from onnxscript import FLOAT, opset18 as op\n\n@torch_op(\"aten::gelu\")\ndef gelu(self: FLOAT, approximate: str = \"tanh\") -> FLOAT:\n    del approximate\n    return op.Relu(self)\n";

#[test]
fn warnings_pass_unless_denied() {
    let dir = scratch("deny");
    let f = write(&dir, "warns.onnxs", WARNS);
    let o = onnxsc(&["--color", "never", "check", f.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning[W0502]"), "{}", stderr(&o));
    let o = onnxsc(&["--color", "never", "check", "--deny-warnings", f.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("error[W0502]"), "{}", stderr(&o));
    let out = dir.join("lib.onnx");
    let o = onnxsc(&["build", "--deny-warnings", f.to_str().unwrap(), "-o", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
}

#[test]
fn build_reports_diagnostics_as_json_lines_with_their_rendered_text() {
    let dir = scratch("build-json");
    let f = write(&dir, "warns.onnxs", WARNS);
    let human = onnxsc(&["--color", "never", "check", f.to_str().unwrap()], &[]);
    let out = dir.join("lib.onnx");
    let o = onnxsc(
        &["--color", "always", "build", "--format", "json", f.to_str().unwrap(), "-o", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.exists(), "warnings do not stop the build");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    assert_eq!(lines.iter().map(|v| v["code"].as_str()).collect::<Vec<_>>(), [Some("W0502")]);
    assert_eq!((lines[0]["file"].as_str(), lines[0]["line"].as_u64()), (f.to_str(), Some(4)));
    // `rendered` is what `--color never` prints (whatever --color says), the summary aside.
    let rendered: String = lines.iter().filter_map(|v| v["rendered"].as_str()).collect();
    let summary_at = stderr(&human).rfind("onnxsc: ").expect("a summary");
    assert_eq!(rendered, stderr(&human)[..summary_at]);
    assert!(stderr(&o).starts_with("onnxsc: "), "only the summary on stderr: {}", stderr(&o));

    let bad = write(&dir, "bad.onnxs", BAD);
    let o = onnxsc(&["build", "--format", "json", bad.to_str().unwrap(), "-o", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!((v["code"].as_str(), v["severity"].as_str()), (Some("E0402"), Some("error")));

    let o = onnxsc(&["build", "--format", "json", "--emit", "text", f.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2), "stdout cannot carry both: {}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn explain_prints_every_code_and_rejects_unknown_ones() {
    let codes =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/diagnostics/codes.rs")).unwrap();
    let mut n = 0;
    for code in codes.split('"').filter(|s| {
        s.len() == 5 && (s.starts_with('E') || s.starts_with('W')) && s[1..].chars().all(|c| c.is_ascii_digit())
    }) {
        let o = onnxsc(&["explain", code], &[]);
        assert_eq!(o.status.code(), Some(0), "explain {code}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.lines().count() > 3, "explain {code} is too short:\n{text}");
        n += 1;
    }
    assert!(n > 60, "found {n} codes");
    assert_eq!(onnxsc(&["explain", "E9999"], &[]).status.code(), Some(2));
}

#[test]
fn schema_prints_the_yaml_text_and_the_onnx_mapping() {
    let o = onnxsc(&["schema", "aten::add.Tensor"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let yaml =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/pytorch/native_functions.yaml"))
            .ok();
    let first = out.lines().next().unwrap();
    assert_eq!(first, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    if let Some(yaml) = yaml {
        assert!(yaml.contains(&format!("- func: {first}\n")), "printed exactly as the yaml writes it");
    }
    assert!(out.contains("alpha") && out.contains("attribute `float` or `int`"), "{out}");
    let o = onnxsc(&["schema", "aten::gelo"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("aten::gelu"), "{}", stderr(&o));
}

#[test]
fn schema_reads_fx_spellings_and_lists_overloads() {
    // As FX graphs and Python print operators.
    for spelling in ["aten.layer_norm.default", "torch.ops.aten.layer_norm.default", "aten::layer_norm"] {
        let o = onnxsc(&["schema", spelling], &[]);
        assert_eq!(o.status.code(), Some(0), "{spelling}: {}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).starts_with("layer_norm(Tensor input, SymInt[] normalized_shape"));
    }
    let o = onnxsc(&["schema", "aten.add.Tensor"], &[]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("add.Tensor(Tensor self"), "{}", stderr(&o));
    // No default overload: every overload, each with its mapping.
    let o = onnxsc(&["schema", "aten::add"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("`aten::add` has 3 overloads:"), "{out}");
    for overload in ["add.Tensor(", "add.Scalar(", "add.out("] {
        assert_eq!(out.lines().filter(|l| l.starts_with(overload)).count(), 1, "{overload} in {out}");
    }
}

#[test]
fn schema_files_declare_custom_ops_and_replace_native_functions() {
    let dir = scratch("schemas");
    let src = write(
        &dir,
        "custom.onnxs",
        "from onnxscript import FLOAT, opset18 as op\n\n@torch_op(\"mylib::scale\")\ndef scale(x: FLOAT, factor: float = 2.0) -> FLOAT:\n    return op.Mul(x, factor)\n",
    );
    let o = onnxsc(&["--color", "never", "check", src.to_str().unwrap()], &[]);
    assert!(stderr(&o).contains("W0504"), "unknown namespace is only a warning: {}", stderr(&o));
    let schema = write(&dir, "schema.yaml", "- func: mylib::scale(Tensor x, float factor=3.0) -> Tensor\n");
    let o = onnxsc(&["--color", "never", "check", src.to_str().unwrap(), "--schema", schema.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("W0502"), "the default differs from the declared 3.0: {}", stderr(&o));

    let bad = write(&dir, "bad.yaml", "- func: mylib::scale(Tensor x, float factor=3.0 -> Tensor\n");
    let o = onnxsc(&["--color", "never", "check", src.to_str().unwrap(), "--schema", bad.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("error[E0701]") && stderr(&o).contains("bad.yaml:1:"), "{}", stderr(&o));

    // A native_functions.yaml without `mul.Tensor`, through the environment variable.
    let native = write(&dir, "native.yaml", "- func: relu(Tensor self) -> Tensor\n");
    let mul = write(
        &dir,
        "mul.onnxs",
        "from onnxscript import FLOAT, opset18 as op\n\n@torch_op(\"aten::mul.Tensor\")\ndef mul(self: FLOAT, other: FLOAT) -> FLOAT:\n    return op.Mul(self, other)\n",
    );
    let o = onnxsc(
        &["--color", "never", "check", mul.to_str().unwrap()],
        &[("ONNXSC_NATIVE_FUNCTIONS", native.to_str().unwrap())],
    );
    // `aten::mul.Tensor` is not in that YAML, and onnxsc knows no near spelling: PyTorch may
    // register it elsewhere (W0506), as it registers TorchScript's operators.
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("W0506"), "{}", stderr(&o));
    let o = onnxsc(&["check", mul.to_str().unwrap(), "--native-functions", "no/such.yaml"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

/// Every construct, built twice in separate processes: each process hashes with its own random
/// seed (Rust's `RandomState`), so any output that followed hash order would differ.
#[test]
fn output_does_not_depend_on_hash_seeds() {
    let dir = scratch("seeds");
    // Built one directory at a time: their function names overlap, which one library forbids.
    for input in ["tests/cases/ok", "tests/python/differential", "examples"] {
        let mut builds = Vec::new();
        for run in 0..3 {
            let out = dir.join(format!("run{run}.onnx"));
            let o = onnxsc(&["build", input, "-o", out.to_str().unwrap()], &[]);
            assert_eq!(o.status.code(), Some(0), "{input}: {}", stderr(&o));
            builds.push(std::fs::read(&out).unwrap());
            let text = onnxsc(&["build", "--emit", "text", input], &[]);
            assert_eq!(text.status.code(), Some(0));
            builds.push(text.stdout);
        }
        assert!(builds[0].len() > 1_000, "{input}: the build covers the cases");
        assert_eq!(builds[0], builds[2], "{input}");
        assert_eq!(builds[0], builds[4], "{input}");
        assert_eq!(builds[1], builds[3], "{input}");
        assert_eq!(builds[1], builds[5], "{input}");
    }
}

#[test]
fn custom_ops_may_be_declared_in_several_files_if_they_agree() {
    let dir = scratch("custom-ops");
    let decl = |schema: &str| format!("torch.library.define(\"mylib::twice\", \"{schema}\")\n");
    let a = write(&dir, "a.onnxs", &decl("(Tensor x) -> Tensor"));
    let b = write(&dir, "b.onnxs", &decl("(Tensor x) -> Tensor"));
    let c = write(&dir, "c.onnxs", &decl("(Tensor x, int n) -> Tensor"));
    let o = onnxsc(&["--color", "never", "check", a.to_str().unwrap(), b.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = onnxsc(&["--color", "never", "check", a.to_str().unwrap(), c.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("declared with two different schemas"), "{}", stderr(&o));
}

/// Outputs are ordinary files (0666 less the umask), not the temporary file's private 0600.
#[cfg(unix)]
#[test]
fn outputs_get_ordinary_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("perms");
    let out = dir.join("lib.onnx");
    let o = onnxsc(&["build", "examples", "-o", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_ne!(mode & 0o044, 0, "group/other can read the output (mode {mode:o})");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = onnxsc(&["build", "examples", "-o", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o640, "a replaced file keeps its mode");
}

const GOOD: &str = "from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n\n\n@script()\ndef f(x: FLOAT) -> FLOAT:\n    return op.Abs(x)\n";

/// `build a.onnxs -o a.onnxs` (any format, any path to the same file) replaced its own source.
#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = scratch("self-output");
    let src = write(&dir, "a.onnxs", GOOD);
    let link = dir.join("alias.onnx");
    std::os::unix::fs::symlink(&src, &link).expect("linked");
    let s = src.to_str().unwrap();
    for args in [
        vec!["build", s, "-o", s],
        vec!["build", s, "--emit", "text", "-o", s],
        vec!["build", s, "-o", link.to_str().unwrap()],
        vec!["build", dir.to_str().unwrap(), "-o", s],
    ] {
        let o = onnxsc(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("is one of the"), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&src).unwrap(), GOOD, "{args:?} changed the source");
    }
    // A library and a model, each given as the output of `link`.
    let lib = dir.join("lib.onnx");
    assert_eq!(onnxsc(&["build", s, "-o", lib.to_str().unwrap()], &[]).status.code(), Some(0));
    let before = std::fs::read(&lib).unwrap();
    let l = lib.to_str().unwrap();
    let o = onnxsc(&["link", l, l, "-o", l], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&lib).unwrap(), before);
}

/// The atomic rename turned a symbolic link (or a FIFO) given as the output into a file.
#[test]
fn a_symbolic_link_output_stays_a_link_and_a_fifo_stays_a_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("special-output");
    let src = write(&dir, "a.onnxs", GOOD);
    let real = write(&dir, "real.onnx", "");
    let link = dir.join("out.onnx");
    std::os::unix::fs::symlink(&real, &link).expect("linked");
    let o = onnxsc(&["build", src.to_str().unwrap(), "-o", link.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::metadata(&real).unwrap().len() > 0);
    let fifo = dir.join("fifo.onnx");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let o = onnxsc(&["build", src.to_str().unwrap(), "-o", fifo.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

/// `/dev/zero` (or a link to it in a directory) was read until memory ran out.
#[test]
fn special_files_are_not_inputs() {
    let dir = scratch("special-input");
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.onnxs")).expect("linked");
    for args in [
        vec!["check", "/dev/zero"],
        vec!["check", dir.to_str().unwrap()],
        vec!["link", "/dev/zero", "/dev/zero", "-o", "x.onnx"],
    ] {
        let o = onnxsc(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("not a regular"), "{}", stderr(&o));
    }
}

const FIXABLE: &str = "from onnxscript import opset18 as op\nfrom onnxscript import FLOAT, script\n\n\n@script()\ndef f(x: FLOAT) -> FLOAT:\n    return op.Relu(op.Ad(x, x))\n";

#[test]
fn check_fix_applies_the_fixes_and_reports_what_remains() {
    let dir = scratch("fix");
    let good = write(&dir, "fixable.onnxs", FIXABLE);
    let broken = "from onnxscript import opset18 as op\n\ndef f(x):\n    return op.Ad(x, x\n";
    let syntax = write(&dir, "syntax.onnxs", broken);
    let o = onnxsc(&["check", "--fix", "--color", "never", dir.to_str().unwrap()], &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "the syntax error remains: {err}");
    assert!(err.contains("Found 2 errors (1 fixed, 1 remaining)."), "{err}");
    assert_eq!(std::fs::read_to_string(&good).unwrap(), FIXABLE.replace("op.Ad(", "op.Add("));
    assert_eq!(std::fs::read_to_string(&syntax).unwrap(), broken, "a file with a syntax error is never fixed");
    std::fs::remove_file(&syntax).unwrap();
    let again = onnxsc(&["check", "--fix", "--color", "never", dir.to_str().unwrap()], &[]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stderr(&again).contains("Found 0 errors (0 fixed, 0 remaining)."), "{}", stderr(&again));
}

#[test]
fn check_diff_prints_the_fixes_and_writes_nothing() {
    let dir = scratch("fix-diff");
    let file = write(&dir, "fixable.onnxs", FIXABLE);
    let o = onnxsc(&["check", "--diff", "--color", "never", file.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1), "changes to make: {}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("-    return op.Relu(op.Ad(x, x))\n+    return op.Relu(op.Add(x, x))\n"), "{out}");
    assert!(out.starts_with(&format!("--- {}\n+++ {}\n", file.display(), file.display())), "{out}");
    assert!(stderr(&o).contains("Found 1 error (1 would be fixed, 0 would remain)."), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), FIXABLE);
}

#[cfg(unix)]
#[test]
fn check_fix_writes_through_a_symbolic_link() {
    let dir = scratch("fix-link");
    let target = write(&dir, "real.onnxs", FIXABLE);
    let link = dir.join("link.onnxs");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = onnxsc(&["check", "--fix", "--color", "never", link.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert!(std::fs::read_to_string(&target).unwrap().contains("op.Add(x, x)"));
}

#[test]
fn trace_of_a_function_the_sources_lack_is_a_usage_error_naming_those_they_have() {
    let call = r#"{"function": "x::y", "args": []}"#;
    let o = onnxsc(&["trace", "tests/cases/trace/shapes.onnxs", "--call", call], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("`x::y`") && err.contains("pkg.onnxscript.torch_lib::aten_flatten_last"), "{err}");
}

/// `build --skip-invalid` writes the functions without errors and still fails; without it,
/// nothing is written.
#[test]
fn skip_invalid_writes_what_compiles_and_still_fails() {
    let dir = scratch("skip-invalid");
    let good = "from onnxscript import FLOAT, opset18 as op\n\ndef ok(x: FLOAT) -> FLOAT:\n    return op.Relu(x)\n";
    let f = write(&dir, "mixed.onnxs", &format!("{good}\n\n{}", &BAD[BAD.find("def").unwrap()..]));
    let out = dir.join("lib.onnx");
    let o = onnxsc(&["--color", "never", "build", f.to_str().unwrap(), "-o", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
    let o =
        onnxsc(&["--color", "never", "build", "--skip-invalid", f.to_str().unwrap(), "-o", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("error[E0402]"), "{}", stderr(&o));
    assert!(
        stderr(&o).ends_with("onnxsc: 1 error, 0 warnings; 1 function left out, 1 function compiled\n"),
        "{}",
        stderr(&o)
    );
    let bytes = std::fs::read(&out).expect("the partial library is written");
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("onnxsc.left_out") && text.contains("\"reason\":\"it has errors\""), "{text}");
}

/// The `[tool.onnxsc]` table of the closest `pyproject.toml` applies; `--isolated` reads none,
/// and a table that does not make sense is a usage error.
#[test]
fn the_closest_configuration_applies_unless_isolated() {
    let dir = scratch("config");
    let f = write(&dir, "warns.onnxs", WARNS);
    write(&dir, "pyproject.toml", "[project]\nname = \"x\"\n\n[tool.onnxsc]\nignore = [\"W0502\"]\n");
    let o = onnxsc(&["--color", "never", "check", f.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(!stderr(&o).contains("W0502") && stderr(&o).contains("no errors"), "{}", stderr(&o));
    let o = onnxsc(&["--color", "never", "check", "--isolated", f.to_str().unwrap()], &[]);
    assert!(stderr(&o).contains("warning[W0502]"), "{}", stderr(&o));
    write(&dir, "pyproject.toml", "[tool.onnxsc]\nignore = [\"E0402\"]\n");
    let o = onnxsc(&["--color", "never", "check", f.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("only warnings can be ignored"), "{}", stderr(&o));
}
