//! Each module's suppression rules (`diagnostics::suppression`): its `# noqa` comments and its
//! configuration (`config`), read once per compilation, applied to the diagnostics at its end and
//! recorded in the library for the warnings the Python package raises itself.

use super::config::{self, Configs};
use super::inputs::InputError;
use super::modules::Modules;
use crate::diagnostics::suppression::{FileRules, Noqa};
use crate::diagnostics::{codes, explain, Diagnostic, Diagnostics};
use crate::source::{FileId, SourceMap};
use crate::syntax::noqa;
use std::collections::HashMap;
use std::path::Path;

/// Every module's rules, by file.
#[derive(Default)]
pub struct Rules {
    by_file: HashMap<FileId, FileRules>,
}

impl Rules {
    /// The rules of the modules of `mods`: their comments, and unless `isolated` their
    /// configuration files.
    pub fn read(mods: &Modules, sources: &SourceMap, isolated: bool) -> Result<Rules, InputError> {
        let mut configs = Configs::default();
        let mut by_file = HashMap::new();
        for unit in &mods.units {
            let mut rules = if isolated { FileRules::default() } else { configs.rules_for(Path::new(&unit.name))? };
            rules.directives = noqa::directives(sources.text(unit.file));
            by_file.insert(unit.file, rules);
        }
        Ok(Rules { by_file })
    }

    /// The rules of `file` (a module's; other files, such as schema files, suppress nothing).
    pub fn of(&self, file: FileId) -> Option<&FileRules> {
        self.by_file.get(&file)
    }

    /// A warning (W0001) for each code of a `noqa` comment that names an error or a code onnxsc
    /// does not have.
    pub fn report_misused_comments(&self, diags: &mut Diagnostics) {
        let mut files: Vec<(&FileId, &FileRules)> = self.by_file.iter().collect();
        files.sort_by_key(|(file, _)| **file);
        for (&file, rules) in files {
            let comments = rules.directives.lines.values().chain(&rules.directives.file);
            for d in comments.flat_map(|n| misused(file, n)) {
                diags.push(d);
            }
        }
    }

    /// `diagnostics` without the warnings the rules suppress.
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>, sources: &SourceMap) {
        diagnostics.retain(|d| {
            let Some(rules) = self.by_file.get(&d.file) else { return true };
            let line = d.primary_span().map(|s| sources.line_index(d.file, s.start as usize) as u32);
            !rules.suppresses(d, line)
        });
    }
}

/// W0001 for each code of a `noqa` comment that cannot be suppressed.
fn misused(file: FileId, noqa: &Noqa) -> Vec<Diagnostic> {
    noqa.codes
        .iter()
        .filter_map(|(code, span)| {
            let (message, label, help) = if config::selector(code).is_ok() {
                return None;
            } else if explain::explanation(code).is_some() {
                (
                    format!("`# noqa` cannot suppress `{code}`: only warnings can be suppressed"),
                    "an error",
                    format!("fix what `{code}` reports (`onnxsc explain {code}`), or leave the translation out of a library with `build --skip-invalid`"),
                )
            } else {
                (
                    format!("`{code}` is not a code of onnxsc"),
                    "no such code",
                    "name a warning's code, as the diagnostic shows it (`onnxsc explain CODE` lists what each means)".to_string(),
                )
            };
            Some(
                Diagnostic::warning(codes::BAD_NOQA, file, message)
                    .primary(*span, label)
                    .secondary(noqa.span, "in this comment")
                    .help(help),
            )
        })
        .collect()
}
