//! `check --fix`: the machine-applicable fixes of the diagnostics applied to the sources, round
//! after round (a fix may reveal another diagnostic with a fix of its own) until a round applies
//! none, then the files written, each atomically. A file with a syntax error is never touched:
//! its tree, and so the fixes' spans, may not be what its author meant.

use super::inputs::{read_inputs, InputError, SourceInput};
use super::output::{self, OutputError};
use super::{compile_inputs, Compilation, CompileOptions};
use crate::diagnostics::{Edit, Severity};
use crate::source::Span;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// Rounds of fixes at most: each round must apply a fix to go on, and a fix that brought back
/// the diagnostic another removed would otherwise loop.
const MAX_ROUNDS: usize = 16;

/// What fixing the sources did.
pub struct FixOutcome {
    /// The compilation of the fixed sources: the diagnostics that remain.
    pub compilation: Compilation,
    /// The errors and warnings of the sources as they were.
    pub found: (usize, usize),
    /// The fixes applied, over all rounds.
    pub fixed: usize,
    /// Each file the fixes changed: its name, its text before and after, in input order.
    pub changed: Vec<(String, String, String)>,
}

/// Applies the fixes of the diagnostics of the sources at `paths`, compiled with `options`;
/// the files are left as they are (see [`write_fixed`]).
pub fn fix_paths(paths: &[PathBuf], options: &CompileOptions) -> Result<FixOutcome, InputError> {
    let mut inputs = read_inputs(paths)?;
    let originals: Vec<Vec<u8>> = inputs.iter().map(|i| i.bytes.clone()).collect();
    let mut compilation = compile_inputs(&inputs, options)?;
    let found = counts(&compilation);
    let mut fixed = 0;
    for _ in 0..MAX_ROUNDS {
        let applied = apply_round(&compilation, &mut inputs);
        if applied == 0 {
            break;
        }
        fixed += applied;
        compilation = compile_inputs(&inputs, options)?;
    }
    let changed = inputs
        .iter()
        .zip(originals)
        .filter(|(input, before)| input.bytes != *before)
        .map(|(input, before)| {
            (
                input.name.clone(),
                String::from_utf8_lossy(&before).into_owned(),
                String::from_utf8_lossy(&input.bytes).into_owned(),
            )
        })
        .collect();
    Ok(FixOutcome { compilation, found, fixed, changed })
}

/// Writes each changed file over itself, atomically (a symbolic link stays a link).
pub fn write_fixed(outcome: &FixOutcome) -> Result<(), OutputError> {
    for (name, _, after) in &outcome.changed {
        output::replace(Path::new(name), after.as_bytes())?;
    }
    Ok(())
}

/// The number of errors and of warnings of a compilation.
pub fn counts(c: &Compilation) -> (usize, usize) {
    let errors = c.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    (errors, c.diagnostics.len() - errors)
}

/// Applies to `inputs` the first fix of each diagnostic whose edits overlap no fix taken before
/// in its file, in files without syntax errors; the number applied.
fn apply_round(c: &Compilation, inputs: &mut [SourceInput]) -> usize {
    let index: BTreeMap<&str, usize> = inputs.iter().enumerate().map(|(i, input)| (input.name.as_str(), i)).collect();
    let unparsed: HashSet<usize> =
        c.diagnostics.iter().filter(|d| d.severity == Severity::Error && is_syntax(d.code)).map(|d| d.file).collect();
    let mut edits: BTreeMap<usize, Vec<Edit>> = BTreeMap::new();
    let mut applied = 0;
    for d in &c.diagnostics {
        let Some(fix) = &d.fix else { continue };
        let Some(&i) = index.get(c.sources.name(d.file)) else { continue };
        if unparsed.contains(&d.file) || std::str::from_utf8(&inputs[i].bytes).is_err() {
            continue;
        }
        let taken = edits.entry(i).or_default();
        if fix.edits.iter().any(|e| taken.iter().any(|t| overlaps(e.span, t.span))) {
            continue;
        }
        taken.extend(fix.edits.iter().cloned());
        applied += 1;
    }
    for (i, mut file_edits) in edits {
        file_edits.sort_by_key(|e| (e.span.start, e.span.end));
        let mut text = String::from_utf8_lossy(&inputs[i].bytes).into_owned();
        for e in file_edits.iter().rev() {
            let (start, end) = (e.span.start as usize, e.span.end as usize);
            if start <= end && end <= text.len() && text.is_char_boundary(start) && text.is_char_boundary(end) {
                text.replace_range(start..end, &e.replacement);
            }
        }
        inputs[i].bytes = text.into_bytes();
    }
    applied
}

/// Whether two edits touch the same text (two insertions at one point count: their order would
/// be arbitrary).
fn overlaps(a: Span, b: Span) -> bool {
    a.start < b.end && b.start < a.end || a.start == b.start
}

/// The lexical and syntax errors (E0001–E0009).
fn is_syntax(code: &str) -> bool {
    code.strip_prefix("E000").is_some_and(|n| n.len() == 1)
}

/// The changes as one unified diff, file by file (`check --diff`).
pub fn unified_diff(outcome: &FixOutcome) -> String {
    let mut text = String::new();
    for (name, before, after) in &outcome.changed {
        let diff = similar::TextDiff::from_lines(before, after);
        text.push_str(&diff.unified_diff().header(name, name).to_string());
    }
    text
}
