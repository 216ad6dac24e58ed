//! Python identifiers for ONNX names: a name is kept when it is a valid identifier that means
//! nothing else in the module (not a keyword, not a builtin the output uses, not a module-level
//! name the output declares); otherwise its invalid characters become `_`, and a
//! suffix makes it unique. Every identifier of a function is unique in the whole function,
//! subgraphs included: Python's `if` branches and nested `@graph()` functions share or capture
//! the function's scope, where ONNX lets sibling subgraphs reuse a name.

use std::collections::{HashMap, HashSet};

/// Python's keywords: never a name.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The builtins the output itself uses (`range` in loops, `float("inf")`, annotations): never
/// a variable, which would shadow them. Other builtins (`min`, `max`, `len`, ...) are names
/// like any other, as attributes of ONNX operators and functions often are.
const USED_BUILTINS: &[&str] = &["range", "float", "int", "str", "list", "bool"];

fn reserved(s: &str) -> bool {
    KEYWORDS.contains(&s) || USED_BUILTINS.contains(&s)
}

/// Whether `s` is an ASCII Python identifier (the output stays ASCII: Python normalises other
/// identifiers, onnxsc compares them as written).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `s` may name a keyword argument (an attribute at a call).
pub fn is_plain(s: &str) -> bool {
    is_identifier(s) && !KEYWORDS.contains(&s)
}

/// `s` made an identifier: invalid characters become `_`, a leading digit gets a `v_` prefix.
fn sanitize(s: &str, fallback: &str) -> String {
    let mut out: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    let trimmed = out.trim_matches('_');
    if trimmed.is_empty() {
        return fallback.to_string();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "v_");
    }
    out
}

/// The identifiers in use in one module or function, and new ones made unique among them.
#[derive(Clone, Default)]
pub struct Idents {
    used: HashSet<String>,
    /// The next suffix to try for each base, so that a name taken many times costs no more
    /// each time.
    suffixes: HashMap<String, usize>,
}

impl Idents {
    /// Marks `name` as taken (a module-level name), whether or not it is an identifier.
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// A fresh identifier for `name`: `name` itself when it is a plain identifier not yet
    /// taken, else its sanitized form with the first free suffix.
    pub fn fresh(&mut self, name: &str, fallback: &str) -> String {
        let base = if is_identifier(name) { name.to_string() } else { sanitize(name, fallback) };
        let mut candidate = base.clone();
        let mut n = self.suffixes.get(&base).copied().unwrap_or(1);
        while self.used.contains(&candidate) || reserved(&candidate) {
            candidate = format!("{base}_{n}");
            n += 1;
        }
        self.suffixes.insert(base, n);
        self.used.insert(candidate.clone());
        candidate
    }
}

/// ONNX value names in scope (a function's, then each subgraph's over it) and the identifiers
/// they are written as.
#[derive(Default)]
pub struct Scopes {
    stack: Vec<HashMap<String, String>>,
}

impl Scopes {
    pub fn push(&mut self) {
        self.stack.push(HashMap::new());
    }

    pub fn pop(&mut self) {
        self.stack.pop();
    }

    /// Binds the ONNX name `name` in the innermost scope to a fresh identifier.
    pub fn define(&mut self, idents: &mut Idents, name: &str) -> String {
        let ident = idents.fresh(name, "value");
        if let Some(top) = self.stack.last_mut() {
            top.insert(name.to_string(), ident.clone());
        }
        ident
    }

    /// Binds the ONNX name `name` in the innermost scope to an identifier made elsewhere.
    pub fn bind(&mut self, name: &str, ident: String) {
        if let Some(top) = self.stack.last_mut() {
            top.insert(name.to_string(), ident);
        }
    }

    /// Whether `name` is bound in the innermost scope (not only in an enclosing one).
    pub fn defined_here(&self, name: &str) -> bool {
        self.stack.last().is_some_and(|s| s.contains_key(name))
    }

    /// The identifier of a name in scope, innermost first.
    pub fn lookup(&self, name: &str) -> Option<&str> {
        self.stack.iter().rev().find_map(|s| s.get(name)).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_valid_names_and_fixes_the_rest() {
        let mut ids = Idents::default();
        assert_eq!(ids.fresh("x", "v"), "x");
        assert_eq!(ids.fresh("x", "v"), "x_1");
        assert_eq!(ids.fresh("/layer1/Conv_output_0", "v"), "_layer1_Conv_output_0");
        assert_eq!(ids.fresh("0", "v"), "v_0");
        assert_eq!(ids.fresh("lambda", "v"), "lambda_1");
        assert_eq!(ids.fresh("", "value"), "value");
        assert_eq!(ids.fresh("é", "value"), "value_1");
    }
}
