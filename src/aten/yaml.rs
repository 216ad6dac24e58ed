//! Reading native_functions.yaml-format files: a list of maps whose `func:` key holds a
//! schema. Other keys (`variants`, `dispatch`, `tags`, ...) are ignored.
//!
//! saphyr-parser's event API gives each scalar's position, so a schema error points at
//! the token inside the `func:` value, not just at the file.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use saphyr_parser::{Event, Parser, ScanError, Span};

use super::model::FunctionSchema;
use super::parse::parse_schema;
use super::registry::AtenRegistry;

/// A problem in a YAML schema file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlSchemaError {
    /// Byte range in the YAML text.
    pub span: Range<usize>,
    pub message: String,
}

impl std::fmt::Display for YamlSchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for YamlSchemaError {}

/// The value of one `func:` key.
#[derive(Debug)]
struct FuncValue {
    text: String,
    /// Byte range of the scalar as written (quotes included).
    span: Range<usize>,
}

/// Converts saphyr's character indices to byte offsets.
struct Offsets<'a> {
    text: &'a str,
    /// Byte offset of each character, plus the end; empty for ASCII text, where the two agree.
    bytes_of_char: Vec<usize>,
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str) -> Offsets<'a> {
        let bytes_of_char = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().map(|(b, _)| b).chain([text.len()]).collect()
        };
        Offsets { text, bytes_of_char }
    }

    fn byte(&self, char_index: usize) -> usize {
        if self.bytes_of_char.is_empty() {
            char_index.min(self.text.len())
        } else {
            self.bytes_of_char.get(char_index).copied().unwrap_or(self.text.len())
        }
    }

    fn range(&self, span: Span) -> Range<usize> {
        self.byte(span.start.index())..self.byte(span.end.index())
    }
}

fn error(span: Range<usize>, message: impl Into<String>) -> YamlSchemaError {
    YamlSchemaError { span, message: message.into() }
}

/// Walks the YAML events and collects every entry's `func:` value.
struct FuncCollector<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    offsets: Offsets<'a>,
    /// The span of the last event, for errors at the end of the stream.
    last: Range<usize>,
}

impl<'a> FuncCollector<'a> {
    fn next(&mut self) -> Result<(Event<'a>, Range<usize>), YamlSchemaError> {
        match self.parser.next_event() {
            Some(Ok((event, span))) => {
                let range = self.offsets.range(span);
                self.last = range.clone();
                Ok((event, range))
            }
            Some(Err(e)) => Err(self.scan_error(&e)),
            None => Err(error(self.last.end..self.last.end, "unexpected end of the YAML stream")),
        }
    }

    fn scan_error(&self, e: &ScanError) -> YamlSchemaError {
        let at = self.offsets.byte(e.marker().index());
        // One character wide, so that renderers have something to underline.
        let end = self.offsets.text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
        error(at..end, format!("invalid YAML: {}", e.info()))
    }

    /// Skips the rest of a node whose first event was `first`.
    fn skip_node(&mut self, first: &Event<'a>) -> Result<(), YamlSchemaError> {
        let mut depth = usize::from(matches!(first, Event::SequenceStart(..) | Event::MappingStart(..)));
        while depth > 0 {
            match self.next()?.0 {
                Event::SequenceStart(..) | Event::MappingStart(..) => depth += 1,
                Event::SequenceEnd | Event::MappingEnd => depth -= 1,
                Event::StreamEnd => break,
                _ => {}
            }
        }
        Ok(())
    }

    /// All documents' entries; errors about the file's shape are collected, a YAML
    /// syntax error stops the walk.
    fn collect(&mut self, funcs: &mut Vec<FuncValue>, errors: &mut Vec<YamlSchemaError>) {
        if let Err(e) = self.documents(funcs, errors) {
            errors.push(e);
        }
    }

    fn documents(
        &mut self,
        funcs: &mut Vec<FuncValue>,
        errors: &mut Vec<YamlSchemaError>,
    ) -> Result<(), YamlSchemaError> {
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamEnd => return Ok(()),
                Event::SequenceStart(..) => self.entries(funcs, errors)?,
                // An empty document (`~` or nothing) declares no operators.
                Event::Scalar(ref v, ..) if v.is_empty() || v == "~" || v == "null" => {}
                Event::Scalar(..) | Event::MappingStart(..) | Event::Alias(..) => {
                    errors.push(error(span, "expected a list of entries, each a map with a `func:` key"));
                    self.skip_node(&event)?;
                }
                _ => {}
            }
        }
    }

    /// The items of the top-level list, through its end.
    fn entries(
        &mut self,
        funcs: &mut Vec<FuncValue>,
        errors: &mut Vec<YamlSchemaError>,
    ) -> Result<(), YamlSchemaError> {
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::SequenceEnd => return Ok(()),
                Event::MappingStart(..) => self.entry(span.start, funcs, errors)?,
                other => {
                    errors.push(error(span, "expected a map with a `func:` key"));
                    self.skip_node(&other)?;
                }
            }
        }
    }

    /// One map, after its start at byte `start`: records its `func:` value.
    fn entry(
        &mut self,
        start: usize,
        funcs: &mut Vec<FuncValue>,
        errors: &mut Vec<YamlSchemaError>,
    ) -> Result<(), YamlSchemaError> {
        let mut seen_func = false;
        loop {
            let (key, key_span) = self.next()?;
            let is_func = match &key {
                Event::MappingEnd => break,
                Event::Scalar(k, ..) => k == "func",
                other => {
                    self.skip_node(other)?;
                    false
                }
            };
            let (value, span) = self.next()?;
            if is_func && seen_func {
                errors.push(error(key_span, "a second `func:` key in this entry"));
            } else if is_func {
                seen_func = true;
                if let Event::Scalar(text, ..) = value {
                    funcs.push(FuncValue { text: text.into_owned(), span });
                    continue;
                }
                errors.push(error(span, "`func:` must be the schema text"));
            }
            self.skip_node(&value)?;
        }
        if !seen_func {
            errors.push(error(start..start, "this entry has no `func:` key"));
        }
        Ok(())
    }
}

/// Where a schema error inside a `func:` value lies in the YAML text: at the same offset
/// when the scalar is written verbatim (plain, or quoted without escapes), otherwise the
/// whole scalar.
fn map_span(yaml: &str, func: &FuncValue, inner: &Range<usize>) -> Range<usize> {
    let raw = yaml.get(func.span.clone()).unwrap_or("");
    let start = if raw == func.text {
        Some(func.span.start)
    } else if raw.len() >= 2 && raw.get(1..raw.len() - 1) == Some(func.text.as_str()) {
        Some(func.span.start + 1)
    } else {
        None
    };
    match start {
        Some(s) => s + inner.start..s + inner.end,
        None => func.span.clone(),
    }
}

impl AtenRegistry {
    /// Reads a native_functions.yaml-format file. `func` values may carry a `ns::`
    /// prefix (custom ops); without one they are in `aten`. Reports every bad entry.
    pub fn from_yaml(text: &str) -> Result<AtenRegistry, Vec<YamlSchemaError>> {
        let (registry, mut errors, unread) = AtenRegistry::from_yaml_reading_what_parses(text);
        errors.extend(unread);
        if errors.is_empty() {
            Ok(registry)
        } else {
            errors.sort_by_key(|e| (e.span.start, e.span.end));
            Err(errors)
        }
    }

    /// [`AtenRegistry::from_yaml`] for a file that may hold schemas onnxsc's grammar does not
    /// read: PyTorch's live registrations (`--registered`) include TorchScript's (`t[] l`,
    /// `complex a`). Returns the schemas read, the file's other errors, and an error for each
    /// schema that did not parse, apart.
    pub fn from_yaml_reading_what_parses(text: &str) -> (AtenRegistry, Vec<YamlSchemaError>, Vec<YamlSchemaError>) {
        let mut collector =
            FuncCollector { parser: Parser::new_from_str(text), offsets: Offsets::new(text), last: 0..0 };
        let mut funcs = Vec::new();
        let mut errors = Vec::new();
        let mut unread = Vec::new();
        collector.collect(&mut funcs, &mut errors);

        let mut registry = AtenRegistry::new();
        let mut first_at: HashMap<String, Range<usize>> = HashMap::new();
        for func in &funcs {
            let schema: FunctionSchema = match parse_schema(&func.text) {
                Ok(s) => s,
                Err(e) => {
                    unread.push(error(map_span(text, func, &e.span), e.message));
                    continue;
                }
            };
            let qualname = schema.qualified_name();
            if let Some(first) = first_at.get(&qualname) {
                let line = text.get(..first.start).unwrap_or("").matches('\n').count() + 1;
                errors.push(error(func.span.clone(), format!("`{qualname}` is already declared on line {line}")));
                continue;
            }
            first_at.insert(qualname, func.span.clone());
            registry.add(schema);
        }
        (registry, errors, unread)
    }

    /// The native_functions.yaml of the torch installed in the active virtual or conda
    /// environment (`$VIRTUAL_ENV`, then `$CONDA_PREFIX`), if any. Spawns no process.
    pub fn find_active_environment_yaml() -> Option<PathBuf> {
        ["VIRTUAL_ENV", "CONDA_PREFIX"]
            .into_iter()
            .filter_map(std::env::var_os)
            .filter(|p| !p.is_empty())
            .find_map(|prefix| AtenRegistry::find_environment_yaml(Path::new(&prefix)))
    }

    /// The torchgen native_functions.yaml under the environment rooted at `prefix`:
    /// `lib/python3.*/site-packages/...` (the newest Python first) or, on Windows,
    /// `Lib/site-packages/...`.
    pub fn find_environment_yaml(prefix: &Path) -> Option<PathBuf> {
        const TAIL: &str = "site-packages/torchgen/packaged/ATen/native/native_functions.yaml";
        let mut pythons: Vec<(u32, PathBuf)> = std::fs::read_dir(prefix.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let minor = name.to_str()?.strip_prefix("python3")?;
                // `python3.12` -> 12; a bare `python3` sorts first.
                let minor = minor.strip_prefix('.').map_or(Some(0), |m| m.parse().ok())?;
                Some((minor, e.path()))
            })
            .collect();
        pythons.sort_by(|a, b| b.cmp(a));
        pythons.into_iter().map(|(_, dir)| dir.join(TAIL)).chain([prefix.join("Lib").join(TAIL)]).find(|p| p.is_file())
    }
}
