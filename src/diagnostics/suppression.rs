//! Which warnings a file suppresses, with the conventions ruff users already have: a `# noqa`
//! comment on the reported line (`# noqa: W0502`, or every warning with a bare `# noqa`), a
//! file-wide `# onnxsc: noqa: W0502` comment, and the `[tool.onnxsc]` table of the closest
//! `pyproject.toml` (`ignore`, `per-file-ignores`, and `extend-select` for the codes reported
//! only on request, [`OPT_IN`]).
//!
//! Only warnings are suppressed: an error means the file does not compile, or would compile to
//! something other than what it says. The rules here are plain data; `syntax::noqa` reads the
//! comments and `driver::config` the configuration files.

use super::{codes, Diagnostic, Severity};
use crate::source::Span;
use std::collections::BTreeMap;

/// Codes reported only when a configuration selects them (`extend-select`): findings about
/// how a translation reads that never change what it computes.
pub const OPT_IN: [&str; 1] = [codes::POSITIONAL_NAME_MISMATCH];

/// A selector that stands for every warning: what a bare `# noqa` suppresses.
pub const EVERY_WARNING: &str = "W";

/// A `# noqa` comment: the warnings it suppresses on its line.
#[derive(Clone, Debug, PartialEq)]
pub struct Noqa {
    /// The directive itself (`noqa: W0502`), for diagnostics about it.
    pub span: Span,
    /// The codes it names, each with its span; empty for a bare `# noqa` (every warning).
    pub codes: Vec<(String, Span)>,
}

impl Noqa {
    /// The selectors it stands for: its codes, or every warning.
    pub fn selectors(&self) -> impl Iterator<Item = &str> {
        let all = self.codes.is_empty().then_some(EVERY_WARNING);
        self.codes.iter().map(|(c, _)| c.as_str()).chain(all)
    }
}

/// The `noqa` comments of one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Directives {
    /// `# noqa` comments by line (0-based).
    pub lines: BTreeMap<u32, Noqa>,
    /// `# onnxsc: noqa` comments, which apply to the whole file.
    pub file: Vec<Noqa>,
}

/// What one file suppresses and selects.
#[derive(Clone, Debug, Default)]
pub struct FileRules {
    /// Selectors (codes, or prefixes such as `W05`) ignored in the whole file: the
    /// configuration's `ignore` and matching `per-file-ignores`, and `# onnxsc: noqa` comments.
    pub ignored: Vec<String>,
    /// The opt-in codes selected (`extend-select`).
    pub selected: Vec<String>,
    /// The file's comments.
    pub directives: Directives,
}

/// Whether `selector` (a code or a prefix of codes) names `code`.
pub fn selects(selector: &str, code: &str) -> bool {
    !selector.is_empty() && code.starts_with(selector)
}

impl FileRules {
    /// Whether a diagnostic whose primary label starts on `line` (0-based) is suppressed.
    pub fn suppresses(&self, d: &Diagnostic, line: Option<u32>) -> bool {
        if d.severity == Severity::Error {
            return false;
        }
        let code = d.code;
        if OPT_IN.contains(&code) && !self.selected.iter().any(|s| selects(s, code)) {
            return true;
        }
        let noqa = line.and_then(|l| self.directives.lines.get(&l));
        self.ignored
            .iter()
            .map(String::as_str)
            .chain(self.directives.file.iter().flat_map(Noqa::selectors))
            .chain(noqa.into_iter().flat_map(Noqa::selectors))
            .any(|s| selects(s, code))
    }

    /// The selectors that hold for a whole translation whose header (decorators and `def`)
    /// spans `lines`: what the Python package checks the warnings it raises itself against
    /// (recorded in the library, docs/signature-format.md). Sorted, each once.
    pub fn translation_selectors(&self, lines: std::ops::RangeInclusive<u32>) -> Vec<String> {
        let header = self.directives.lines.range(lines).flat_map(|(_, n)| n.selectors());
        let mut out: Vec<String> = self
            .ignored
            .iter()
            .map(String::as_str)
            .chain(self.directives.file.iter().flat_map(Noqa::selectors))
            .chain(header)
            .map(str::to_string)
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn warning(code: &'static str) -> Diagnostic {
        Diagnostic::warning(code, FileId::default(), "w")
    }

    fn noqa(codes: &[&str]) -> Noqa {
        Noqa { span: Span::new(0, 0), codes: codes.iter().map(|c| (c.to_string(), Span::new(0, 0))).collect() }
    }

    #[test]
    fn a_noqa_comment_suppresses_the_warnings_it_names_on_its_line_only() {
        let mut rules = FileRules::default();
        rules.directives.lines.insert(3, noqa(&["W0502"]));
        assert!(rules.suppresses(&warning("W0502"), Some(3)));
        assert!(!rules.suppresses(&warning("W0502"), Some(4)));
        assert!(!rules.suppresses(&warning("W0503"), Some(3)));
        rules.directives.lines.insert(4, noqa(&[]));
        assert!(rules.suppresses(&warning("W0601"), Some(4)));
    }

    #[test]
    fn errors_are_never_suppressed() {
        let mut rules = FileRules { ignored: vec!["E".into(), "E0503".into()], ..FileRules::default() };
        rules.directives.lines.insert(0, noqa(&[]));
        let error = Diagnostic::error("E0503", FileId::default(), "e");
        assert!(!rules.suppresses(&error, Some(0)));
    }

    #[test]
    fn opt_in_codes_are_reported_only_when_selected_and_prefixes_select() {
        let mut rules = FileRules::default();
        assert!(rules.suppresses(&warning("W0501"), None));
        rules.selected.push("W05".into());
        assert!(!rules.suppresses(&warning("W0501"), None));
        rules.ignored.push("W050".into());
        assert!(rules.suppresses(&warning("W0502"), None) && !rules.suppresses(&warning("W0601"), None));
    }

    #[test]
    fn a_translation_records_its_header_comments_and_the_file_s_ignores() {
        let mut rules = FileRules { ignored: vec!["W0601".into()], ..FileRules::default() };
        rules.directives.lines.insert(2, noqa(&["W0508"]));
        rules.directives.lines.insert(9, noqa(&[]));
        rules.directives.file.push(noqa(&["W0502"]));
        assert_eq!(rules.translation_selectors(1..=3), ["W0502", "W0508", "W0601"]);
        assert_eq!(rules.translation_selectors(8..=9), ["W", "W0502", "W0601"]);
    }
}
