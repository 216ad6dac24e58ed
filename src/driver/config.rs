//! The `[tool.onnxsc]` table of `pyproject.toml`, found as ruff finds its configuration: for each
//! source file, the closest `pyproject.toml` in the file's directory or an ancestor that has the
//! table (a `pyproject.toml` without it is passed over). `--isolated` reads none.
//!
//! ```toml
//! [tool.onnxsc]
//! ignore = ["W0508"]                      # codes, or prefixes such as "W05"
//! extend-select = ["W0501"]               # codes reported only on request
//! per-file-ignores = { "torchlib/*.onnxs" = ["W0502"], "vision.onnxs" = ["W0504"] }
//! ```
//!
//! Patterns of `per-file-ignores` are globs relative to the directory of the `pyproject.toml`;
//! a pattern without a `/` also matches a file's name anywhere below it. Only warnings can be
//! ignored. A configuration that does not parse, or names a code that no warning has, is a
//! usage error (exit 2), as it is for ruff.

use super::inputs::{io_message, InputError};
use crate::diagnostics::explain::all_codes;
use crate::diagnostics::suppression::FileRules;
use globset::{Glob, GlobMatcher};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const FILE_NAME: &str = "pyproject.toml";

/// One `[tool.onnxsc]` table, read.
#[derive(Debug)]
pub struct Config {
    ignore: Vec<String>,
    extend_select: Vec<String>,
    per_file_ignores: Vec<PerFile>,
}

#[derive(Debug)]
struct PerFile {
    /// The pattern against a file's whole path, under the configuration's directory.
    path: GlobMatcher,
    /// The pattern against a file's name, for a pattern without a `/`.
    name: Option<GlobMatcher>,
    codes: Vec<String>,
}

/// The table as written.
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct Table {
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    extend_select: Vec<String>,
    #[serde(default)]
    per_file_ignores: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<Tools>,
}

#[derive(Deserialize)]
struct Tools {
    onnxsc: Option<toml::Value>,
}

/// The configurations found so far, by directory: a compilation's files mostly share one.
#[derive(Default)]
pub struct Configs {
    by_dir: HashMap<PathBuf, Option<Arc<Config>>>,
}

impl Configs {
    /// The rules the configuration of `file` (a source's path, relative to the working directory
    /// or absolute) gives it; the default rules when none is found.
    pub fn rules_for(&mut self, file: &Path) -> Result<FileRules, InputError> {
        let Ok(path) = std::path::absolute(file) else { return Ok(FileRules::default()) };
        let Some(dir) = path.parent() else { return Ok(FileRules::default()) };
        let Some(config) = self.closest(dir)? else { return Ok(FileRules::default()) };
        let mut ignored = config.ignore.clone();
        let name = path.file_name().map(Path::new);
        for p in &config.per_file_ignores {
            let by_name = p.name.as_ref().is_some_and(|m| name.is_some_and(|n| m.is_match(n)));
            if p.path.is_match(&path) || by_name {
                ignored.extend(p.codes.iter().cloned());
            }
        }
        Ok(FileRules { ignored, selected: config.extend_select.clone(), ..FileRules::default() })
    }

    /// The configuration in `dir` or its closest ancestor that has one.
    fn closest(&mut self, dir: &Path) -> Result<Option<Arc<Config>>, InputError> {
        if let Some(found) = self.by_dir.get(dir) {
            return Ok(found.clone());
        }
        let found = match read(&dir.join(FILE_NAME))? {
            Some(config) => Some(Arc::new(config)),
            None => match dir.parent() {
                Some(parent) => self.closest(parent)?,
                None => None,
            },
        };
        self.by_dir.insert(dir.to_path_buf(), found.clone());
        Ok(found)
    }
}

/// The `[tool.onnxsc]` table of the `pyproject.toml` at `path`, if there is the file and it has
/// the table.
fn read(path: &Path) -> Result<Option<Config>, InputError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            return Ok(None)
        }
        Err(e) => return Err(InputError { path: path.to_path_buf(), message: io_message(&e) }),
    };
    let fail = |message: String| InputError { path: path.to_path_buf(), message };
    // Most projects' files do not mention onnxsc: no need to read them as TOML.
    if !text.contains("onnxsc") {
        return Ok(None);
    }
    let pyproject: Pyproject = toml::from_str(&text).map_err(|e| fail(format!("not valid TOML: {e}")))?;
    let Some(value) = pyproject.tool.and_then(|t| t.onnxsc) else { return Ok(None) };
    let table: Table = value.try_into().map_err(|e| fail(format!("[tool.onnxsc]: {e}")))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let codes = |key: &str, list: Vec<String>| -> Result<Vec<String>, InputError> {
        list.into_iter().map(|s| selector(&s).map_err(|m| fail(format!("[tool.onnxsc] {key}: {m}")))).collect()
    };
    let mut per_file_ignores = Vec::new();
    for (pattern, list) in table.per_file_ignores {
        let glob = |p: &str| {
            Glob::new(p)
                .map(|g| g.compile_matcher())
                .map_err(|e| fail(format!("[tool.onnxsc] per-file-ignores: `{pattern}`: {e}")))
        };
        let whole = dir.join(&pattern);
        per_file_ignores.push(PerFile {
            path: glob(&whole.to_string_lossy())?,
            name: if pattern.contains('/') { None } else { Some(glob(&pattern)?) },
            codes: codes("per-file-ignores", list)?,
        });
    }
    Ok(Some(Config {
        ignore: codes("ignore", table.ignore)?,
        extend_select: codes("extend-select", table.extend_select)?,
        per_file_ignores,
    }))
}

/// A selector as the configuration writes it: a warning's code, or a prefix of warnings' codes.
pub fn selector(text: &str) -> Result<String, String> {
    let s = text.trim().to_ascii_uppercase();
    let matching: Vec<&str> = all_codes().filter(|c| !s.is_empty() && c.starts_with(&s)).collect();
    if matching.iter().any(|c| c.starts_with('W')) {
        Ok(s)
    } else if matching.is_empty() {
        Err(format!("`{text}` names no code of onnxsc (`onnxsc explain CODE` lists what each means)"))
    } else {
        Err(format!("`{text}` names errors, and only warnings can be ignored or selected"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) {
        std::fs::write(dir.join(FILE_NAME), text).unwrap();
    }

    #[test]
    fn the_closest_pyproject_with_the_table_wins() {
        let root = tempfile::tempdir().unwrap();
        let inner = root.path().join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        write(root.path(), "[tool.onnxsc]\nignore = [\"W0502\"]\n");
        // A pyproject.toml without the table is passed over.
        write(&root.path().join("a"), "[project]\nname = \"x\"\n");
        let mut configs = Configs::default();
        assert_eq!(configs.rules_for(&inner.join("m.onnxs")).unwrap().ignored, ["W0502"]);
        write(&inner, "[tool.onnxsc]\nextend-select = [\"w0501\"]\n");
        let rules = Configs::default().rules_for(&inner.join("m.onnxs")).unwrap();
        assert!(rules.ignored.is_empty());
        assert_eq!(rules.selected, ["W0501"]);
    }

    #[test]
    fn per_file_ignores_match_paths_under_the_configuration_and_names() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "[tool.onnxsc]\nper-file-ignores = { \"lib/*.onnxs\" = [\"W0504\"], \"vision.onnxs\" = [\"W05\"] }\n",
        );
        let mut configs = Configs::default();
        assert_eq!(configs.rules_for(&root.path().join("lib/core.onnxs")).unwrap().ignored, ["W0504"]);
        assert_eq!(configs.rules_for(&root.path().join("x/y/vision.onnxs")).unwrap().ignored, ["W05"]);
        assert!(configs.rules_for(&root.path().join("core.onnxs")).unwrap().ignored.is_empty());
    }

    #[test]
    fn mistakes_in_the_table_are_usage_errors() {
        for (text, says) in [
            ("[tool.onnxsc]\nignore = [\"E0503\"]\n", "only warnings"),
            ("[tool.onnxsc]\nignore = [\"W9999\"]\n", "names no code"),
            ("[tool.onnxsc]\nignores = [\"W0502\"]\n", "unknown field"),
            ("[tool.onnxsc\n", "not valid TOML"),
        ] {
            let root = tempfile::tempdir().unwrap();
            write(root.path(), text);
            let e = Configs::default().rules_for(&root.path().join("m.onnxs")).unwrap_err();
            assert!(e.message.contains(says), "{text}: {}", e.message);
        }
    }
}
