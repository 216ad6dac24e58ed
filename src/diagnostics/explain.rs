//! Long explanations of the diagnostic codes, printed by `onnxsc explain CODE`.
//!
//! Each code in [`codes`](super::codes) has a Markdown file `explain/CODE.md`, embedded with
//! `include_str!`: a one-sentence summary on the first line, a paragraph on why the code is
//! reported and how to fix it, then an erroneous `.onnxs` example and, where it makes sense, the
//! corrected version. The tests below keep this table and `codes.rs` in step.

/// Builds the table from the code names, so that each entry's file is named after its code.
macro_rules! explanations {
    ($($code:literal),* $(,)?) => {
        &[$(($code, include_str!(concat!("explain/", $code, ".md")))),*]
    };
}

/// Every stable code with its explanation, in code order, one line per series.
#[rustfmt::skip]
static EXPLANATIONS: &[(&str, &str)] = explanations![
    "E0001", "E0002", "E0003", "E0004", "E0005", "E0006", "E0007", "E0008", "E0009",
    "E0101", "E0102", "E0103", "E0104", "E0105", "E0106", "E0107", "E0108", "E0109", "E0110", "E0111", "E0112",
    "E0113", "E0114", "E0115", "E0116",
    "E0201", "E0202", "E0203", "E0204", "E0205",
    "E0301", "E0302", "E0303", "E0304", "E0305", "E0306", "E0307", "E0308", "E0309", "E0310", "E0311",
    "E0401", "E0402", "E0403", "E0404", "E0405", "E0406", "E0407", "E0408", "E0409",
    "E0501", "E0502", "E0503", "E0504", "E0505", "E0506", "E0507", "E0508", "E0509", "E0510", "E0511",
    "E0512", "E0513", "E0514", "E0515", "E0516",
    "E0601", "E0602", "E0603",
    "E0701",
    "E0801", "E0802", "E0803", "E0804", "E0805", "E0806", "E0807", "E0808", "E0809", "E0810", "E0811",
    "E0901", "E0902", "E0903", "E0904", "E0905", "E0906", "E0907", "E0908",
    "E1001", "E1002", "E1003", "E1004",
    "E1101",
    "W0001",
    "W0101",
    "W0402",
    "W0501", "W0502", "W0503", "W0504", "W0505", "W0506", "W0507", "W0508", "W0509", "W0510", "W0511",
    "W0512",
    "W0601", "W0602",
    "W0801",
    "W0901",
    "W1101",
];

/// The long explanation of `code` (`"E0402"`; the letter may be lower case), or `None` if no
/// such code exists. The text is Markdown and ends with a newline.
pub fn explanation(code: &str) -> Option<&'static str> {
    EXPLANATIONS.iter().find(|(c, _)| c.eq_ignore_ascii_case(code)).map(|(_, text)| *text)
}

/// Every code that has an explanation, in order (`E0001` first, warnings last).
pub fn all_codes() -> impl Iterator<Item = &'static str> {
    EXPLANATIONS.iter().map(|(c, _)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The codes declared in `codes.rs`: the string of every `pub const NAME: &str = "...";`.
    fn declared_codes() -> Vec<&'static str> {
        include_str!("codes.rs")
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("pub const ") && l.contains(": &str"))
            .map(|l| {
                let value = l.split('=').nth(1).expect("a constant has a value").trim();
                value.trim_end_matches(';').trim().trim_matches('"')
            })
            .collect()
    }

    #[test]
    fn codes_rs_is_scanned() {
        let declared = declared_codes();
        assert!(declared.len() > 50, "found only {} codes in codes.rs", declared.len());
        for c in &declared {
            assert!(
                c.len() == 5
                    && (c.starts_with('E') || c.starts_with('W'))
                    && c[1..].bytes().all(|b| b.is_ascii_digit()),
                "unexpected code {c:?} in codes.rs"
            );
        }
        let unique: BTreeSet<_> = declared.iter().collect();
        assert_eq!(unique.len(), declared.len(), "a code is declared twice in codes.rs");
    }

    #[test]
    fn every_code_has_an_explanation_and_every_explanation_a_code() {
        let declared: BTreeSet<&str> = declared_codes().into_iter().collect();
        let explained: BTreeSet<&str> = all_codes().collect();
        let missing: Vec<_> = declared.difference(&explained).collect();
        let stale: Vec<_> = explained.difference(&declared).collect();
        assert!(missing.is_empty(), "codes without an explanation (add src/diagnostics/explain/CODE.md): {missing:?}");
        assert!(stale.is_empty(), "explanations of codes that codes.rs does not declare: {stale:?}");
        assert_eq!(explained.len(), EXPLANATIONS.len(), "a code is listed twice in the table");
    }

    #[test]
    fn table_is_in_code_order() {
        let codes: Vec<&str> = all_codes().collect();
        let mut sorted = codes.clone();
        sorted.sort();
        assert_eq!(codes, sorted);
    }

    #[test]
    fn lookup_accepts_exact_and_lower_case_codes_only() {
        let text = explanation("E0402").expect("E0402 is explained");
        assert_eq!(explanation("e0402"), Some(text));
        assert_eq!(explanation("W0501"), explanation("w0501"));
        assert!(explanation("W0501").is_some());
        for bad in ["E402", "0402", "E04020", "E9999", "", " E0402", "E0402 "] {
            assert_eq!(explanation(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn explanations_have_a_summary_an_example_and_a_bounded_length() {
        for (code, text) in EXPLANATIONS {
            let lines: Vec<&str> = text.lines().collect();
            let summary = lines[0];
            assert!(
                !summary.trim().is_empty() && !summary.starts_with(['#', '`', ' ']),
                "{code}: the first line must be the summary"
            );
            assert!(
                summary.ends_with('.') && summary.chars().count() <= 80,
                "{code}: the summary is one sentence of at most 80 characters"
            );
            assert_eq!(lines.get(1), Some(&""), "{code}: a blank line follows the summary");
            assert!(lines.len() <= 40, "{code}: {} lines; keep explanations under 40", lines.len());
            assert!(text.ends_with('\n') && !text.ends_with("\n\n"), "{code}: end with exactly one newline");

            // Fenced blocks are balanced, and at least one is an example.
            let fences: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with("```")).collect();
            assert!(
                fences.len() >= 2 && fences.len() % 2 == 0,
                "{code}: needs a fenced example block, properly closed"
            );
            let mut in_block = false;
            let mut example_lines = 0;
            for l in &lines {
                if let Some(lang) = l.strip_prefix("```") {
                    if !in_block {
                        assert!(matches!(lang, "python" | "yaml"), "{code}: unexpected block language {lang:?}");
                    }
                    in_block = !in_block;
                } else if in_block && !l.trim().is_empty() {
                    example_lines += 1;
                }
            }
            assert!(example_lines > 0, "{code}: the example block is empty");
            assert!(lines.iter().all(|l| !l.contains('\t')), "{code}: no tabs");
        }
    }

    #[test]
    fn every_code_has_a_python_example_except_schema_files() {
        for (code, text) in EXPLANATIONS {
            let expected = if *code == "E0701" { "```yaml" } else { "```python" };
            assert!(text.contains(expected), "{code}: expected a {expected} block");
        }
    }
}
