//! Writing an output file: never over an input, never a partial file, and never replacing a
//! FIFO, a device or a symbolic link by a regular file.
//!
//! - An output that is one of the inputs (the same file by any path: a symbolic or hard link to
//!   it too) is refused before anything is written.
//! - A symbolic link is followed: the file it points to is written, and the link stays.
//! - A regular file (or a new one) is written through a temporary file in the same directory,
//!   renamed into place: a reader never sees a partial file, and a failure leaves the previous
//!   output untouched.
//! - A FIFO or a device (`-o /dev/stdout`, `-o /dev/null`) is a stream: it is written in place,
//!   and a FIFO that nobody reads is an error rather than a wait.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct OutputError {
    pub message: String,
    pub help: Option<String>,
}

/// Symbolic links followed this many times at most (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Writes the concatenation of `parts` to `path`, which must not be any of `inputs`.
pub fn write(path: &Path, parts: &[&[u8]], inputs: &[PathBuf]) -> Result<(), OutputError> {
    refuse_inputs(path, inputs)?;
    let target = resolve(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => Err(OutputError {
            message: format!("cannot write {}: it is a directory", path.display()),
            help: Some("name a file, e.g. `-o out.onnx`".into()),
        }),
        Ok(m) if !m.is_file() => write_stream(path, &target, parts, super::files::describe(&m)),
        _ => write_atomically(path, &target, parts),
    }
}

/// Replaces the regular file at `path` (a source `check --fix` rewrites) with `bytes`, through
/// a temporary file renamed into place; a symbolic link is followed and stays a link.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let target = resolve(path)?;
    write_atomically(path, &target, &[bytes])
}

/// The error when `path` is the same file as one of `inputs`.
pub fn refuse_inputs(path: &Path, inputs: &[PathBuf]) -> Result<(), OutputError> {
    let Ok(out) = std::fs::metadata(path) else { return Ok(()) };
    for input in inputs {
        if let Ok(meta) = std::fs::metadata(input) {
            if same_file(&out, &meta) {
                let how = if path == input { String::new() } else { format!(" ({})", input.display()) };
                return Err(OutputError {
                    message: format!("the output {} is one of the inputs{how}", path.display()),
                    help: Some("write the output to another file: onnxsc never replaces its inputs".into()),
                });
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// `path` with every symbolic link along the final component followed (the target may not
/// exist yet: a dangling link names the file to create).
pub fn resolve(path: &Path) -> Result<PathBuf, OutputError> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&p).map_err(|e| OutputError {
                    message: format!("cannot write {}: {}", path.display(), super::io_message(&e)),
                    help: None,
                })?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(OutputError {
        message: format!("cannot write {}: too many levels of symbolic links", path.display()),
        help: Some("the link may point to itself".into()),
    })
}

/// The directory a file is written in (`.` for a bare file name).
pub fn dir_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Checks that the directory of `path` exists, so that nothing is computed for nothing.
pub fn check_dir(path: &Path) -> Result<(), OutputError> {
    let dir = dir_of(path);
    if dir.is_dir() {
        return Ok(());
    }
    Err(OutputError {
        message: format!("cannot write {}: directory {} does not exist", path.display(), dir.display()),
        help: Some("create the directory first".into()),
    })
}

/// A FIFO or a device, written in place. A FIFO without a reader would block the open: it is
/// first opened without blocking, which fails at once when nobody reads it.
fn write_stream(shown: &Path, target: &Path, parts: &[&[u8]], what: &str) -> Result<(), OutputError> {
    let fail = |e: std::io::Error| OutputError {
        message: format!("cannot write {} ({what}): {}", shown.display(), super::io_message(&e)),
        help: None,
    };
    // The probe stays open until the real handle is: closing it first would give the reader
    // end-of-file, and the blocking open would then wait for a reader forever.
    #[cfg(target_os = "linux")]
    let _probe = {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0o4000;
        const ENXIO: i32 = 6;
        match std::fs::OpenOptions::new().write(true).custom_flags(O_NONBLOCK).open(target) {
            Ok(probe) => probe,
            Err(e) if e.raw_os_error() == Some(ENXIO) => {
                return Err(OutputError {
                    message: format!("cannot write {}: it is a FIFO that nobody reads", shown.display()),
                    help: Some("start the reader first, or write to a regular file".into()),
                })
            }
            Err(e) => return Err(fail(e)),
        }
    };
    let mut f = std::fs::OpenOptions::new().write(true).open(target).map_err(fail)?;
    write_parts(&mut f, parts).and_then(|()| f.flush()).map_err(fail)
}

/// A temporary file beside `path` with the permissions the output should have: those of the
/// file it replaces, else an ordinary file's (0666 less the umask), not tempfile's private 0600.
fn temp_file_like(path: &Path, dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o666);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    builder.tempfile_in(dir)
}

/// Writes through a temporary file in the target's directory, renamed into place.
fn write_atomically(shown: &Path, target: &Path, parts: &[&[u8]]) -> Result<(), OutputError> {
    let fail = |e: &dyn std::fmt::Display| OutputError {
        message: format!("cannot write {}: {e}", shown.display()),
        help: None,
    };
    check_dir(target).map_err(|e| OutputError {
        message: e.message.replace(&target.display().to_string(), &shown.display().to_string()),
        ..e
    })?;
    let mut tmp = temp_file_like(target, &dir_of(target)).map_err(|e| fail(&e))?;
    write_parts(&mut tmp, parts).map_err(|e| fail(&e))?;
    tmp.as_file().sync_all().map_err(|e| fail(&e))?;
    tmp.persist(target).map_err(|e| fail(&e.error))?;
    Ok(())
}

fn write_parts(to: &mut impl Write, parts: &[&[u8]]) -> std::io::Result<()> {
    parts.iter().try_for_each(|part| to.write_all(part))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn an_input_is_never_an_output() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let input = dir.path().join("a.onnxs");
        std::fs::write(&input, "x = 1\n").expect("written");
        let link = dir.path().join("alias.onnx");
        std::os::unix::fs::symlink(&input, &link).expect("linked");
        for out in [&input, &link] {
            let e = write(out, &[b"replaced"], std::slice::from_ref(&input)).expect_err("refused");
            assert!(e.message.contains("is one of the inputs"), "{}", e.message);
        }
        assert_eq!(std::fs::read_to_string(&input).expect("read"), "x = 1\n");
    }

    #[test]
    fn a_symbolic_link_stays_a_link_to_the_new_contents() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let real = dir.path().join("real.onnx");
        std::fs::write(&real, "old").expect("written");
        let link = dir.path().join("out.onnx");
        std::os::unix::fs::symlink("real.onnx", &link).expect("linked");
        write(&link, &[b"new"], &[]).expect("written through the link");
        assert!(std::fs::symlink_metadata(&link).expect("exists").file_type().is_symlink());
        assert_eq!(std::fs::read(&real).expect("read"), b"new");
    }

    #[test]
    fn the_parts_are_written_one_after_the_other() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let out = dir.path().join("out.onnx");
        std::fs::write(&out, "an older and longer output").expect("written");
        write(&out, &[b"head", b"", b"er", b"s"], &[]).expect("written");
        assert_eq!(std::fs::read(&out).expect("read"), b"headers");
        write(&out, &[], &[]).expect("written");
        assert_eq!(std::fs::read(&out).expect("read"), b"");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_nobody_reads_is_an_error_and_stays_a_fifo() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let fifo = dir.path().join("out.onnx");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs").success());
        let e = write(&fifo, &[b"bytes"], &[]).expect_err("nobody reads it");
        assert!(e.message.contains("FIFO that nobody reads"), "{}", e.message);
        assert!(std::fs::symlink_metadata(&fifo).expect("exists").file_type().is_fifo());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_with_a_reader_gets_the_bytes() {
        use std::io::Read;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let fifo = dir.path().join("out.onnx");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs").success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut s = String::new();
                std::fs::File::open(fifo).and_then(|mut f| f.read_to_string(&mut s)).map(|_| s)
            })
        };
        // The reader may not have opened it yet: then the write is refused, and is tried again.
        let mut tries = 0;
        while let Err(e) = write(&fifo, &[b"bytes"], &[]) {
            assert!(e.message.contains("nobody reads") && tries < 500, "{}", e.message);
            tries += 1;
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(reader.join().expect("the reader ends").expect("read"), "bytes");
    }
}
