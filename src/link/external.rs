//! External data. A tensor stored outside the model names its file by a path relative to the
//! model's directory, and ONNX Runtime and onnx.checker refuse paths that leave that directory.
//! Written next to the model, the output keeps every reference as it is; written elsewhere, the
//! data files are copied to the same relative paths beside it (both validators also refuse hard
//! links and symbolic links there). The copy is the kernel's (`copy_file_range`, a reflink where
//! the file system has them): the tensor data never passes through onnxsc's memory.

use super::load::each_tensor;
use crate::proto::onnx::{GraphProto, ModelProto, TensorProto};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

#[derive(Debug)]
pub struct ExternalError {
    pub message: String,
    pub help: Option<String>,
}

/// The data files made for an output, removed again if the output cannot be written.
#[derive(Default)]
pub struct Placed {
    pub created: Vec<PathBuf>,
}

impl Placed {
    pub fn undo(self) {
        for f in self.created {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// The relative locations of all external data the model refers to.
pub fn locations(model: &ModelProto) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |t: &TensorProto| {
        if let Some(l) = t.external_data.iter().find(|e| e.key() == "location") {
            out.insert(l.value().to_string());
        }
    };
    let graphs =
        model.graph.iter().chain(model.training_info.iter().flat_map(|t| t.initialization.iter().chain(&t.algorithm)));
    for g in graphs {
        graph_tensors(g, &mut add);
    }
    for f in &model.functions {
        each_tensor(&f.node, &mut add);
    }
    out
}

fn graph_tensors<'a>(g: &'a GraphProto, f: &mut dyn FnMut(&'a TensorProto)) {
    g.initializer.iter().for_each(&mut *f);
    for s in &g.sparse_initializer {
        s.values.iter().chain(&s.indices).for_each(&mut *f);
    }
    each_tensor(&g.node, f);
}

/// Makes every external data file of `model` (relative to `model_dir`) reachable from `out_dir`
/// by the same relative path.
pub fn place(model: &ModelProto, model_dir: &Path, out_dir: &Path) -> Result<Placed, ExternalError> {
    let locations = locations(model);
    let mut placed = Placed::default();
    if locations.is_empty() || same_dir(model_dir, out_dir) {
        return Ok(placed);
    }
    for loc in locations {
        let rel = Path::new(&loc);
        // Absolute or escaping paths are invalid in ONNX; leave them for the checker to report.
        if rel.is_absolute() || rel.components().any(|c| matches!(c, Component::ParentDir | Component::Prefix(_))) {
            continue;
        }
        let (src, dst) = (model_dir.join(rel), out_dir.join(rel));
        let result = if dst.exists() {
            // A copy left by an earlier link into the same directory is as good as a new one.
            if same_file(&src, &dst) || same_contents(&src, &dst) {
                Ok(())
            } else {
                Err(ExternalError {
                    message: format!(
                        "cannot place the external data `{loc}` beside the output: {} already exists",
                        dst.display()
                    ),
                    help: Some("write the output next to the model, or into a directory without that file".into()),
                })
            }
        } else {
            copy(&src, &dst).map(|()| placed.created.push(dst.clone())).map_err(|e| ExternalError {
                message: format!("cannot place the external data `{loc}` beside the output: {}: {e}", src.display()),
                help: Some("the model's external data files must be next to it, at the locations it names".into()),
            })
        };
        if let Err(e) = result {
            placed.undo();
            return Err(e);
        }
    }
    Ok(placed)
}

fn copy(src: &Path, dst: &Path) -> std::io::Result<()> {
    if !src.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"));
    }
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(src, dst).map(|_| ())
}

/// Compared in chunks: the files may be far larger than memory.
fn same_contents(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(fa), Ok(fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else { return false };
    if !matches!((fa.metadata(), fb.metadata()), (Ok(x), Ok(y)) if x.len() == y.len()) {
        return false;
    }
    let (mut ra, mut rb) = (std::io::BufReader::new(fa), std::io::BufReader::new(fb));
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let Ok(n) = ra.read(&mut ba) else { return false };
        if n == 0 {
            return true;
        }
        if rb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    matches!((a.metadata(), b.metadata()), (Ok(a), Ok(b)) if a.dev() == b.dev() && a.ino() == b.ino())
}

#[cfg(not(unix))]
fn same_file(a: &Path, b: &Path) -> bool {
    same_dir(a, b)
}
