//! Reading input files: regular files only, and no more than a limit.
//!
//! A device (`/dev/zero`), a FIFO or a socket is not an input file, whether named on the command
//! line or found in a directory through a symbolic link: `/dev/zero` would be read until memory
//! runs out, and a FIFO with no writer blocks forever. The file is opened without blocking and
//! checked after opening, so what is read is what was checked. The limits are in
//! docs/robustness.md.

use super::{io_message, InputError};
use std::io::Read;
use std::path::Path;

/// The most `.onnxs` source one compilation reads, imported modules included (and so the
/// largest source file): several times all of torchlib's translations (1.2 MB), room for a
/// generated library of 10,000 translations, and small enough that compiling the worst input
/// found (4 MiB of `if`s) stays under 2 GB of memory and 10 seconds (docs/robustness.md).
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;
/// The largest operator schema file (`--schema`, `--native-functions`); PyTorch's own
/// native_functions.yaml is about 650 KB.
pub const MAX_SCHEMA_BYTES: u64 = 64 << 20;
/// The largest model or library file: protobuf's own limit on a message.
pub const MAX_MODEL_BYTES: u64 = (2 << 30) - 1;

/// What kind of input a file is, for the limit and the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Source,
    Schema,
    Model,
}

impl Kind {
    pub fn limit(self) -> u64 {
        match self {
            Kind::Source => MAX_SOURCE_BYTES,
            Kind::Schema => MAX_SCHEMA_BYTES,
            Kind::Model => MAX_MODEL_BYTES,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kind::Source => "a source file",
            Kind::Schema => "a schema file",
            Kind::Model => "an ONNX model or library",
        }
    }

    fn advice(self) -> &'static str {
        match self {
            Kind::Source => "compile the modules in several runs",
            Kind::Schema => "split the schemas into several files",
            Kind::Model => "store the large tensors as external data",
        }
    }
}

/// The bytes of a regular file of at most `kind.limit()` bytes.
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, InputError> {
    let fail = |message: String| InputError { path: path.to_path_buf(), message };
    let mut file = open(path).map_err(|e| fail(io_message(&e)))?;
    let meta = file.metadata().map_err(|e| fail(io_message(&e)))?;
    if !meta.is_file() {
        return Err(fail(format!("{}, not a regular file", describe(&meta))));
    }
    let limit = kind.limit();
    if meta.len() > limit {
        return Err(too_large(path, kind, meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read is still cut at the limit.
    (&mut file).take(limit + 1).read_to_end(&mut bytes).map_err(|e| fail(io_message(&e)))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, kind, bytes.len() as u64));
    }
    Ok(bytes)
}

fn too_large(path: &Path, kind: Kind, size: u64) -> InputError {
    InputError {
        path: path.to_path_buf(),
        message: format!(
            "too large: {} bytes, and {} may have at most {} bytes ({})",
            size,
            kind.what(),
            kind.limit(),
            kind.advice()
        ),
    }
}

#[cfg(target_os = "linux")]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one.
    // Reads from a regular file never block, so the flag changes nothing for them.
    const O_NONBLOCK: i32 = 0o4000;
    std::fs::OpenOptions::new().read(true).custom_flags(O_NONBLOCK).open(path)
}

#[cfg(not(target_os = "linux"))]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(std::io::Error::other(format!("{}, not a regular file", describe(&meta))));
    }
    std::fs::File::open(path)
}

/// "a directory", "a FIFO", "a device".
pub fn describe(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_reading_them() {
        let e = read(Path::new("/dev/zero"), Kind::Source).expect_err("a device");
        assert!(e.message.contains("a device, not a regular file"), "{}", e.message);
        let e = read(Path::new("/"), Kind::Model).expect_err("a directory");
        assert!(e.message.contains("a directory"), "{}", e.message);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_without_a_writer_does_not_block() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let fifo = dir.path().join("f.onnxs");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(status.success());
        let e = read(&fifo, Kind::Source).expect_err("a FIFO");
        assert!(e.message.contains("a FIFO"), "{}", e.message);
    }

    #[test]
    fn files_over_the_limit_are_refused() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let big = dir.path().join("big.onnxs");
        let f = std::fs::File::create(&big).expect("created");
        f.set_len(MAX_SOURCE_BYTES + 1).expect("a sparse file");
        let e = read(&big, Kind::Source).expect_err("too large");
        assert!(e.message.contains("too large") && e.message.contains("several runs"), "{}", e.message);
        f.set_len(MAX_SOURCE_BYTES).expect("truncated");
        assert_eq!(read(&big, Kind::Source).expect("at the limit").len() as u64, MAX_SOURCE_BYTES);
    }
}
