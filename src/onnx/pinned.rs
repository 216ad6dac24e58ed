//! The versions of the tools onnxsc targets, in one place: what torchlib's module-level
//! `if version_utils.torch_older_than("2.7.0"):` is decided against, and what messages that
//! name a version quote. `requirements-test.txt` pins the same versions for the tests.

/// Each Python package onnxsc models, and the version it models.
pub const PINNED: [(&str, &str); 4] =
    [("torch", "2.15.0"), ("onnxscript", "0.7.2"), ("onnx", "1.23.2"), ("onnxruntime", "1.32.0")];

/// The version of `package` onnxsc targets.
pub fn version_of(package: &str) -> Option<&'static str> {
    PINNED.iter().find(|(p, _)| *p == package).map(|(_, v)| *v)
}

/// `onnxscript._internal.version_utils.PACKAGE_older_than(version)` against the pinned version
/// of `package`: whether its release numbers come before `version`'s, compared as Python
/// compares `packaging.version.parse(v).release` tuples. `None` for a package onnxsc does not
/// pin or a version that is not dotted numbers.
pub fn older_than(package: &str, version: &str) -> Option<bool> {
    let pinned = release(version_of(package)?)?;
    Some(pinned < release(version)?)
}

/// `"2.7.0"` → `[2, 7, 0]`; a local or pre-release suffix ends the release numbers.
fn release(v: &str) -> Option<Vec<u64>> {
    let end = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    v[..end].trim_end_matches('.').split('.').map(|n| n.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_release_tuples() {
        assert_eq!(older_than("torch", "2.7.0"), Some(false));
        assert_eq!(older_than("torch", "2.16"), Some(true));
        assert_eq!(older_than("torch", "2.15.0"), Some(false));
        assert_eq!(older_than("torch", "2.15.0.1"), Some(true));
        assert_eq!(older_than("onnxscript", "0.10.0"), Some(true));
        assert_eq!(older_than("transformers", "4.0"), None);
        assert_eq!(older_than("torch", "two"), None);
        assert_eq!(older_than("torch", "2.16.0rc1"), Some(true));
        assert_eq!(older_than("torch", "2.15.0.dev2"), Some(false));
    }
}
