//! `# noqa` comments, read as ruff reads them: `# noqa` (every warning on the line),
//! `# noqa: W0502` and `# noqa: W0502, W0601` (those codes), anywhere in a comment, `noqa` in any
//! case; `# onnxsc: noqa` and `# onnxsc: noqa: W0502` for the whole file.
//!
//! A comment is found between tokens, so `"# noqa"` inside a string is not one.

use super::lexer;
use crate::diagnostics::suppression::{Directives, Noqa};
use crate::source::Span;

/// The `noqa` comments of `text`.
pub fn directives(text: &str) -> Directives {
    let mut out = Directives::default();
    // Most files have none: one scan for the word before the tokens are read.
    if !contains_noqa(text.as_bytes()) {
        return out;
    }
    let mut line = 0u32;
    let mut counted = 0usize;
    let mut gap_start = 0usize;
    let mut tokens = lexer::tokens(text).map(|(_, range)| range).chain(std::iter::once(text.len()..text.len()));
    for range in tokens.by_ref() {
        let gap = &text[gap_start.min(range.start)..range.start];
        if let Some(hash) = gap.find('#') {
            let start = gap_start + hash;
            let end = text[start..].find(['\r', '\n']).map_or(text.len(), |k| start + k);
            line += newlines(&text[counted..start]);
            counted = start;
            read_comment(&text[start..end], start, line, &mut out);
        }
        gap_start = range.end;
    }
    out
}

fn contains_noqa(bytes: &[u8]) -> bool {
    bytes.windows(4).any(|w| w.eq_ignore_ascii_case(b"noqa"))
}

fn newlines(text: &str) -> u32 {
    let crlf = text.matches("\r\n").count();
    u32::try_from(text.matches(['\n', '\r']).count() - crlf).unwrap_or(u32::MAX)
}

/// Reads the directive in one comment (`text` starts with `#`, at byte `at` of the file, on
/// `line`).
fn read_comment(text: &str, at: usize, line: u32, out: &mut Directives) {
    let lower = text.to_ascii_lowercase();
    let Some(k) = lower.find("noqa") else { return };
    // `noqa` must follow a `#` (and spaces): `# see noqa docs` is no directive.
    let before = lower[..k].trim_end();
    let (file_wide, prefix_ok) = match before.strip_suffix("onnxsc:") {
        Some(rest) => (true, rest.trim_end().ends_with('#')),
        None => (false, before.ends_with('#')),
    };
    if !prefix_ok {
        return;
    }
    let end_of_word = k + "noqa".len();
    if text[end_of_word..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        return;
    }
    let codes = match text[end_of_word..].strip_prefix(':') {
        Some(rest) => codes(rest, at + end_of_word + 1),
        None => Vec::new(),
    };
    let span =
        Span::new(at + k, at + end_of_word + codes.last().map_or(0, |(_, s)| s.end as usize - (at + end_of_word)));
    let noqa = Noqa { span, codes };
    if file_wide {
        out.file.push(noqa);
    } else {
        out.lines.insert(line, noqa);
    }
}

/// The codes after `noqa:`: letters then digits, separated by commas or spaces; the list ends
/// at the first word that is not a code.
fn codes(text: &str, at: usize) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    let mut i = 0;
    let bytes = text.as_bytes();
    loop {
        while i < bytes.len() && (bytes[i] == b',' || bytes[i] == b' ' || bytes[i] == b'\t') {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let letters = i - start;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if letters == 0 || i == start + letters {
            break;
        }
        out.push((text[start..i].to_ascii_uppercase(), Span::new(at + start, at + i)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<(u32, Vec<String>)> {
        directives(text).lines.into_iter().map(|(l, n)| (l, n.codes.into_iter().map(|(c, _)| c).collect())).collect()
    }

    #[test]
    fn reads_bare_and_coded_directives_by_line() {
        let text = "x = 1  # noqa\ny = 2\nz = f(y)  # keep # NOQA: W0502,W0601 because\n";
        assert_eq!(lines(text), [(0, vec![]), (2, vec!["W0502".to_string(), "W0601".to_string()])]);
    }

    #[test]
    fn strings_are_not_comments_and_words_are_not_directives() {
        let text = "s = \"# noqa\"\nt = '''\n# noqa\n'''\n# see the noqa docs\n# noqaxyz\nu = 1 # noqa: W0502\n";
        assert_eq!(lines(text), [(6, vec!["W0502".to_string()])]);
    }

    #[test]
    fn file_wide_directives() {
        let d = directives("# onnxsc: noqa: W0504\nx = 1\n#onnxsc:noqa\n");
        let codes: Vec<Vec<String>> = d.file.iter().map(|n| n.codes.iter().map(|(c, _)| c.clone()).collect()).collect();
        assert_eq!(codes, [vec!["W0504".to_string()], vec![]]);
        assert!(d.lines.is_empty());
    }

    #[test]
    fn spans_cover_the_codes() {
        let text = "x = 1  # noqa: W0502, W0601\n";
        let n = &directives(text).lines[&0];
        assert_eq!(&text[n.span.start as usize..n.span.end as usize], "noqa: W0502, W0601");
        assert_eq!(&text[n.codes[1].1.start as usize..n.codes[1].1.end as usize], "W0601");
    }
}
