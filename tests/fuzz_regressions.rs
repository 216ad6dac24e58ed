//! Replays every regression input and seed of the fuzz targets (`fuzz/`) through the same
//! contracts the targets assert (`onnxsc::contract`), with plain `cargo test`: no nightly
//! toolchain, no libFuzzer. A finding becomes a file in `fuzz/regressions/TARGET/`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use std::path::{Path, PathBuf};

/// A target's contracts: bytes in, a panic when one is broken.
type Contract = fn(&[u8]);

const TARGETS: [(&str, Contract); 5] = [
    ("source", onnxsc::contract::source),
    ("aten", onnxsc::contract::aten),
    ("link", onnxsc::contract::link),
    ("serve", onnxsc::contract::serve),
    ("trace", onnxsc::contract::trace),
];

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

fn replay(kind: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for (target, check) in TARGETS {
        let dir = root.join(kind).join(target);
        for f in files(&dir) {
            if kind == "corpus" && !f.file_name().is_some_and(|n| n.to_string_lossy().starts_with("seed-")) {
                continue;
            }
            let bytes = std::fs::read(&f).expect("readable");
            // Each input on a large stack, as the command line compiles.
            let name = f.display().to_string();
            let worker = std::thread::Builder::new().stack_size(1 << 28).spawn(move || check(&bytes));
            if worker.expect("a thread").join().is_err() {
                panic!("{name} breaks a contract of the `{target}` target");
            }
            count += 1;
        }
    }
    count
}

#[test]
fn every_regression_input_keeps_the_contracts() {
    let n = replay("regressions");
    assert!(n >= 20, "only {n} regression inputs found");
}

#[test]
fn every_seed_keeps_the_contracts() {
    let n = replay("corpus");
    assert!(n >= 20, "only {n} seeds found");
}

/// `ONNXSC_WRITE_LINK_SEEDS=1 cargo test --test fuzz_regressions` writes the `link` target's
/// seeds: the tutorial's library and a model calling it, as the target reads them; and the
/// `serve` target's: requests calling the tutorial's functions, framed.
#[test]
fn write_link_seeds_when_asked() {
    if std::env::var_os("ONNXSC_WRITE_LINK_SEEDS").is_none() {
        return;
    }
    use prost::Message;
    let text = include_str!("../examples/tutorial.onnxs");
    let c = onnxsc::driver::compile_sources(vec![("tutorial.onnxs".into(), text.into())]);
    let library = onnxsc::emit::proto::library_model(&c.functions, c.library_meta());
    let model = onnxsc::contract::calling_model(&library);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/link");
    std::fs::create_dir_all(&dir).expect("created");
    let mut m = vec![0u8];
    m.extend(model.encode_to_vec());
    std::fs::write(dir.join("seed-model"), m).expect("written");
    let mut l = vec![1u8];
    l.extend(library.encode_to_vec());
    std::fs::write(dir.join("seed-library"), l).expect("written");
    // The language tour's library (subgraphs, loops, attribute defaults) and a model calling it.
    let tour = include_str!("../examples/language_tour.onnxs");
    let c = onnxsc::driver::compile_sources(vec![("language_tour.onnxs".into(), tour.into())]);
    let library = onnxsc::emit::proto::library_model(&c.functions, c.library_meta());
    let mut l = vec![3u8];
    l.extend(library.encode_to_vec());
    std::fs::write(dir.join("seed-library-tour"), l).expect("written");
    let mut m = vec![2u8];
    m.extend(onnxsc::contract::calling_model(&library).encode_to_vec());
    std::fs::write(dir.join("seed-model-tour"), m).expect("written");
    write_serve_seeds();
}

/// Requests for `serve` after its handshake: a model calling each of the tutorial's functions,
/// one calling one of them, a request that is not a model, the input cut inside a request, and
/// call requests (one that does not fit its function).
fn write_serve_seeds() {
    use prost::Message;
    let text = include_str!("../examples/tutorial.onnxs");
    let c = onnxsc::driver::compile_sources(vec![("tutorial.onnxs".into(), text.into())]);
    let library = onnxsc::emit::proto::library_model(&c.functions, c.library_meta());
    // A request to link a model (the handshake is the contract's own).
    let frame = |bytes: &[u8]| {
        let mut f = u32::try_from(bytes.len() + 1).expect("small").to_le_bytes().to_vec();
        f.push(onnxsc::driver::serve::kind::LINK);
        f.extend_from_slice(bytes);
        f
    };
    let all = onnxsc::contract::calling_model(&library).encode_to_vec();
    let one = onnxsc::contract::calling_model(&onnxsc::proto::onnx::ModelProto {
        functions: library.functions[1..2].to_vec(),
        ..Default::default()
    })
    .encode_to_vec();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/serve");
    std::fs::create_dir_all(&dir).expect("created");
    std::fs::write(dir.join("seed-requests"), [frame(&all), frame(&one), frame(&all)].concat()).expect("written");
    std::fs::write(dir.join("seed-refused-then-linked"), [frame(b"not a model"), frame(&one)].concat())
        .expect("written");
    let mut cut = frame(&one);
    cut.extend(frame(&all));
    cut.truncate(cut.len() - 10);
    std::fs::write(dir.join("seed-cut"), cut).expect("written");
    let call = |json: &str| {
        let mut f = u32::try_from(json.len() + 1).expect("small").to_le_bytes().to_vec();
        f.push(onnxsc::driver::serve::kind::CALL);
        f.extend_from_slice(json.as_bytes());
        f
    };
    let add = "pkg.onnxscript.torch_lib::custom_aten_add";
    std::fs::write(
        dir.join("seed-calls"),
        [
            call(&format!(
                r#"{{"function": "{add}", "inputs": ["self", "other"], "attributes": {{"alpha": {{"float": 2.0}}}}}}"#
            )),
            call(&format!(r#"{{"function": "{add}", "inputs": ["self"], "attributes": {{"alpha": {{"str": "x"}}}}}}"#)),
            call(r#"{"function": "pkg.onnxscript.torch_lib::custom_aten_gelu", "inputs": ["self"]}"#),
        ]
        .concat(),
    )
    .expect("written");
}
