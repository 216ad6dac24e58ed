//! The operator registry: schemas by namespace, name and overload.
//!
//! The embedded registry only indexes the generated lines by qualified name when it is
//! built; a schema is parsed the first time it is looked up, so `onnxsc check` pays for
//! the few operators a file mentions, not for all 2,590.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use super::model::{FunctionSchema, DEFAULT_NAMESPACE};
use super::parse::parse_schema;

/// The schemas of the pinned torch wheel, one per line after a `#` header
/// (`scripts/gen_native_functions.py`).
pub(super) static NATIVE_FUNCTIONS: &str = include_str!("generated/native_functions.txt");

/// Overloads of one operator name: (overload name, entry index) in declaration order, and the
/// position of each name in that list (a schema file may declare any number of overloads).
#[derive(Debug, Clone, Default)]
struct Overloads {
    order: Vec<(Cow<'static, str>, usize)>,
    positions: HashMap<Cow<'static, str>, usize, BuildHasherDefault<FxHasher>>,
}

impl Overloads {
    /// The entry index of an overload.
    fn get(&self, overload: &str) -> Option<usize> {
        self.positions.get(overload).map(|&p| self.order[p].1)
    }

    fn push(&mut self, overload: Cow<'static, str>, entry: usize) {
        self.positions.insert(overload.clone(), self.order.len());
        self.order.push((overload, entry));
    }
}

/// Operator schemas by qualified name (`aten::add.Tensor`).
#[derive(Debug, Clone, Default)]
pub struct AtenRegistry {
    entries: Vec<Entry>,
    /// namespace -> name -> overloads. Hashing the names is what keeps building the
    /// embedded index well under a millisecond; [`AtenRegistry::names`] sorts them.
    index: BTreeMap<Cow<'static, str>, NameMap>,
}

#[derive(Debug, Clone)]
struct Entry {
    /// The schema text, parsed on first use; empty for schemas added already parsed.
    text: Cow<'static, str>,
    /// `None` inside if `text` does not parse (a bug in the generated data, caught by
    /// the tests; lookups then find nothing rather than panic). Boxed to keep the
    /// 2,590 unparsed entries small.
    schema: OnceLock<Option<Box<FunctionSchema>>>,
}

impl Entry {
    fn parsed(schema: FunctionSchema) -> Entry {
        Entry { text: Cow::Borrowed(""), schema: OnceLock::from(Some(Box::new(schema))) }
    }

    fn schema(&self) -> Option<&FunctionSchema> {
        self.schema.get_or_init(|| parse_schema(&self.text).ok().map(Box::new)).as_deref()
    }
}

/// Operator names to their overloads.
type NameMap = HashMap<Cow<'static, str>, Overloads, BuildHasherDefault<FxHasher>>;

/// The multiply-rotate hash of rustc's `FxHasher`: several times faster than SipHash on
/// short names, and the keys (operator names) are not chosen by an attacker.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, b: u8) {
        self.write_u64(u64::from(b));
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Splits `ns::name.overload` (or `name.overload`, in `aten`) into its three parts, in
/// one pass over the bytes (this runs for every embedded line).
pub(super) fn split_qualified(qualname: &str) -> (&str, &str, &str) {
    let bytes = qualname.as_bytes();
    let mut name_start = 0;
    let mut dot = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b':' && bytes.get(i + 1) == Some(&b':') && name_start == 0 {
            name_start = i + 2;
            dot = None; // a `.` in the namespace is part of it
        } else if b == b'.' && dot.is_none() && i >= name_start {
            dot = Some(i);
        }
    }
    let ns = if name_start == 0 { DEFAULT_NAMESPACE } else { &qualname[..name_start - 2] };
    match dot {
        Some(d) => (ns, &qualname[name_start..d], &qualname[d + 1..]),
        None => (ns, &qualname[name_start..], ""),
    }
}

impl AtenRegistry {
    /// An empty registry.
    pub fn new() -> AtenRegistry {
        AtenRegistry::default()
    }

    /// The schemas of the torch version recorded in `generated/native_functions.txt`,
    /// indexed on first use.
    pub fn embedded() -> &'static AtenRegistry {
        static EMBEDDED: OnceLock<AtenRegistry> = OnceLock::new();
        EMBEDDED.get_or_init(|| AtenRegistry::from_lines(NATIVE_FUNCTIONS))
    }

    /// The header line of the embedded data (which torch version it came from).
    pub fn embedded_source() -> &'static str {
        NATIVE_FUNCTIONS.lines().next().unwrap_or("").trim_start_matches('#').trim()
    }

    /// Indexes one schema per line, skipping blank lines and `#` comments, without
    /// parsing them. Later lines with an already-indexed name are ignored.
    pub(super) fn from_lines(text: &'static str) -> AtenRegistry {
        let mut registry = AtenRegistry::new();
        registry.entries.reserve(text.len() / 80);
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let head = line.split_once('(').map_or(line, |(h, _)| h);
            let (ns, name, overload) = split_qualified(head);
            let names = registry.index.entry(Cow::Borrowed(ns)).or_default();
            let overloads = names.entry(Cow::Borrowed(name)).or_default();
            if overloads.get(overload).is_some() {
                continue;
            }
            overloads.push(Cow::Borrowed(overload), registry.entries.len());
            registry.entries.push(Entry { text: Cow::Borrowed(line), schema: OnceLock::new() });
        }
        registry
    }

    /// The schema for `ns::name.overload`, or `ns::name` for the default overload (also
    /// spelled `ns::name.default`, as `torch.ops` does). Without `ns::` the namespace is `aten`.
    pub fn lookup(&self, qualname: &str) -> Option<&FunctionSchema> {
        let (ns, name, overload) = split_qualified(qualname.trim());
        let overloads = self.index.get(ns)?.get(name)?;
        // `default` is torch's name for the empty overload, unless one is really called so.
        let found = overloads.get(overload).or_else(|| (overload == "default").then(|| overloads.get("")).flatten());
        self.entries[found?].schema()
    }

    /// The overload names of `ns::name` in declaration order (`""` is the default
    /// overload); empty if the name is unknown. An overload part in `ns_name` is ignored.
    pub fn overloads(&self, ns_name: &str) -> Vec<&str> {
        let (ns, name, _) = split_qualified(ns_name.trim());
        self.index
            .get(ns)
            .and_then(|names| names.get(name))
            .map(|o| o.order.iter().map(|(o, _)| o.as_ref()).collect())
            .unwrap_or_default()
    }

    /// Every operator as `(namespace, name)`, sorted (so suggestions built from it are
    /// deterministic), for "did you mean" messages.
    pub fn names(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let mut names: Vec<(&str, &str)> =
            self.index.iter().flat_map(|(ns, names)| names.keys().map(move |n| (ns.as_ref(), n.as_ref()))).collect();
        names.sort_unstable();
        names.into_iter()
    }

    /// Whether any operator is registered in namespace `ns`.
    pub fn has_namespace(&self, ns: &str) -> bool {
        self.index.contains_key(ns)
    }

    /// The namespaces, sorted.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> + '_ {
        self.index.keys().map(|k| k.as_ref())
    }

    /// The number of schemas.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every schema in registration order (parsing those not parsed yet).
    pub fn schemas(&self) -> impl Iterator<Item = &FunctionSchema> + '_ {
        self.entries.iter().filter_map(Entry::schema)
    }

    /// Adds `schema` (e.g. a custom op from `torch.library.define`), replacing one with
    /// the same qualified name, which is returned.
    pub fn add(&mut self, schema: FunctionSchema) -> Option<FunctionSchema> {
        let names = self.index.entry(Cow::Owned(schema.namespace.clone())).or_default();
        let overloads = names.entry(Cow::Owned(schema.name.clone())).or_default();
        if let Some(i) = overloads.get(&schema.overload) {
            let old = std::mem::replace(&mut self.entries[i], Entry::parsed(schema));
            return old.schema().cloned();
        }
        overloads.push(Cow::Owned(schema.overload.clone()), self.entries.len());
        self.entries.push(Entry::parsed(schema));
        None
    }

    /// Adds every schema of `other`, replacing those with the same qualified names.
    pub fn extend(&mut self, other: &AtenRegistry) {
        for schema in other.schemas() {
            self.add(schema.clone());
        }
    }
}
