//! What a compilation reads: the command line's paths expanded to `.onnxs` files, read into
//! [`SourceInput`]s within the limits of `driver::files`; and the failures to read them, which
//! are not errors in the sources (exit code 2, not 1).

use super::files;
use super::modules::identity;
use std::path::{Path, PathBuf};

/// A failure to read the input, as opposed to errors in it (exit code 2, not 1).
#[derive(Debug)]
pub struct InputError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for InputError {}

/// Expands the command-line paths: files as given, directories to their `.onnxs` files
/// (recursively, sorted, so output does not depend on directory order).
pub fn collect_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| InputError { path: p.clone(), message: io_message(&e) })?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            if found.is_empty() {
                return Err(InputError { path: p.clone(), message: "directory contains no `.onnxs` files".into() });
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(identity(p)));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| InputError { path: dir.to_path_buf(), message: io_message(&e) })?;
    for entry in entries {
        let entry = entry.map_err(|e| InputError { path: dir.to_path_buf(), message: io_message(&e) })?;
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "onnxs") {
            out.push(path);
        }
    }
    Ok(())
}

pub fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// One input file: its name and bytes as read.
#[derive(Clone)]
pub struct SourceInput {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Reads the files the command-line paths name, within the sources' total limit.
pub fn read_inputs(paths: &[PathBuf]) -> Result<Vec<SourceInput>, InputError> {
    let files = collect_inputs(paths)?;
    let mut inputs = Vec::new();
    let mut total = 0u64;
    for f in &files {
        let bytes = files::read(f, files::Kind::Source)?;
        total += bytes.len() as u64;
        if total > files::MAX_SOURCE_BYTES {
            return Err(InputError {
                path: f.clone(),
                message: format!(
                    "the sources of one compilation may total at most {} bytes, and with this file they reach {total} \
                     (compile the modules in several runs)",
                    files::MAX_SOURCE_BYTES
                ),
            });
        }
        inputs.push(SourceInput { name: f.display().to_string(), bytes });
    }
    Ok(inputs)
}
