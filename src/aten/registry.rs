//! The operator registry: schemas by namespace, name and overload.
//!
//! The embedded schemas need no index built at run time: `build.rs` writes one
//! (`build/aten_index.rs`: where each line's name and overload are, and the lines in name order)
//! that lookups search. A schema is parsed the first time it is looked up, so `onnxsc check` pays
//! for the few operators a file mentions, not for all 2,590. A registry holds the schemas added to
//! it (custom operators, schema files) over the embedded ones or on their own; cloning it copies
//! only what was added.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use super::model::{FunctionSchema, DEFAULT_NAMESPACE};

/// The schemas of the pinned torch wheel, one per line after a `#` header
/// (`scripts/gen_native_functions.py`).
pub(super) static NATIVE_FUNCTIONS: &str = include_str!("generated/native_functions.txt");

/// The embedded schemas: the build-time index of [`NATIVE_FUNCTIONS`], and each schema parsed
/// on first use.
mod embedded {
    use std::sync::OnceLock;

    use super::NATIVE_FUNCTIONS;
    use crate::aten::model::FunctionSchema;
    use crate::aten::parse::parse_schema;

    /// One schema's line of [`NATIVE_FUNCTIONS`]: where it starts, its length, and the lengths
    /// of its name and of its head (`name.overload`).
    struct Line {
        start: u32,
        len: u32,
        name: u16,
        head: u16,
    }

    // `LINES` in file order, `BY_NAME` (indices of `LINES` sorted by name, one name's overloads
    // in file order) and their length `COUNT`.
    include!(concat!(env!("OUT_DIR"), "/aten_index.rs"));

    /// `None` inside if the line does not parse (a bug in the generated data, caught by the
    /// tests; lookups then find nothing rather than panic). Boxed to keep the table small.
    static PARSED: [OnceLock<Option<Box<FunctionSchema>>>; COUNT] = [const { OnceLock::new() }; COUNT];

    pub(super) fn len() -> usize {
        COUNT
    }

    fn text(i: usize) -> &'static str {
        let line = &LINES[i];
        &NATIVE_FUNCTIONS[line.start as usize..(line.start + line.len) as usize]
    }

    pub(super) fn name(i: usize) -> &'static str {
        &text(i)[..usize::from(LINES[i].name)]
    }

    pub(super) fn overload(i: usize) -> &'static str {
        let line = &LINES[i];
        if line.head > line.name {
            &text(i)[usize::from(line.name) + 1..usize::from(line.head)]
        } else {
            ""
        }
    }

    /// The lines of `name`'s overloads, in file order.
    pub(super) fn overloads(name: &str) -> impl Iterator<Item = usize> + '_ {
        let first = BY_NAME.partition_point(|&i| self::name(usize::from(i)) < name);
        BY_NAME[first..].iter().map(|&i| usize::from(i)).take_while(move |&i| self::name(i) == name)
    }

    pub(super) fn find(name: &str, overload: &str) -> Option<usize> {
        overloads(name).find(|&i| self::overload(i) == overload)
    }

    /// The names, sorted, each once.
    pub(super) fn names() -> impl Iterator<Item = &'static str> {
        let mut last = None;
        BY_NAME.iter().map(|&i| name(usize::from(i))).filter(move |&n| last.replace(n) != Some(n))
    }

    pub(super) fn schema(i: usize) -> Option<&'static FunctionSchema> {
        PARSED[i].get_or_init(|| parse_schema(text(i)).ok().map(Box::new)).as_deref()
    }
}

/// Overloads of one operator name: (overload name, index of the added schema) in the order they
/// were added, and the position of each name in that list (a schema file may declare any number
/// of overloads).
#[derive(Debug, Clone, Default)]
struct Overloads {
    order: Vec<(String, usize)>,
    positions: HashMap<String, usize, BuildHasherDefault<FxHasher>>,
}

impl Overloads {
    /// The index of an overload's schema.
    fn get(&self, overload: &str) -> Option<usize> {
        self.positions.get(overload).map(|&p| self.order[p].1)
    }

    fn push(&mut self, overload: String, entry: usize) {
        self.positions.insert(overload.clone(), self.order.len());
        self.order.push((overload, entry));
    }
}

/// Operator schemas by qualified name (`aten::add.Tensor`).
#[derive(Debug, Clone, Default)]
pub struct AtenRegistry {
    /// Whether the embedded schemas are under the added ones.
    embedded: bool,
    /// The schemas added, in order; one with the name of an embedded schema replaces it.
    added: Vec<FunctionSchema>,
    /// namespace -> name -> overloads of `added`.
    index: BTreeMap<String, NameMap>,
}

/// Where a schema is.
#[derive(Clone, Copy)]
enum At {
    Added(usize),
    Embedded(usize),
}

/// Operator names to their overloads.
type NameMap = HashMap<String, Overloads, BuildHasherDefault<FxHasher>>;

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
/// one pass over the bytes.
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

    /// The schemas of the torch version recorded in `generated/native_functions.txt`.
    pub fn embedded() -> &'static AtenRegistry {
        static EMBEDDED: AtenRegistry = AtenRegistry { embedded: true, added: Vec::new(), index: BTreeMap::new() };
        &EMBEDDED
    }

    /// The header line of the embedded data (which torch version it came from).
    pub fn embedded_source() -> &'static str {
        NATIVE_FUNCTIONS.lines().next().unwrap_or("").trim_start_matches('#').trim()
    }

    /// The index of the added schema `ns::name.overload`.
    fn added(&self, ns: &str, name: &str, overload: &str) -> Option<usize> {
        self.index.get(ns).and_then(|names| names.get(name)).and_then(|o| o.get(overload))
    }

    /// Where the schema `ns::name.overload` is: among the added ones, else the embedded ones.
    fn locate(&self, ns: &str, name: &str, overload: &str) -> Option<At> {
        match self.added(ns, name, overload) {
            Some(i) => Some(At::Added(i)),
            None if self.embedded && ns == DEFAULT_NAMESPACE => embedded::find(name, overload).map(At::Embedded),
            None => None,
        }
    }

    fn schema(&self, at: At) -> Option<&FunctionSchema> {
        match at {
            At::Added(i) => Some(&self.added[i]),
            At::Embedded(i) => embedded::schema(i),
        }
    }

    /// Whether an added schema replaces an embedded one.
    fn replaces_embedded(&self, schema: &FunctionSchema) -> bool {
        self.embedded
            && schema.namespace == DEFAULT_NAMESPACE
            && embedded::find(&schema.name, &schema.overload).is_some()
    }

    /// The schema for `ns::name.overload`, or `ns::name` for the default overload (also
    /// spelled `ns::name.default`, as `torch.ops` does). Without `ns::` the namespace is `aten`.
    pub fn lookup(&self, qualname: &str) -> Option<&FunctionSchema> {
        let (ns, name, overload) = split_qualified(qualname.trim());
        // `default` is torch's name for the empty overload, unless one is really called so.
        let found = self
            .locate(ns, name, overload)
            .or_else(|| (overload == "default").then(|| self.locate(ns, name, "")).flatten());
        self.schema(found?)
    }

    /// The overload names of `ns::name` in declaration order (`""` is the default
    /// overload); empty if the name is unknown. An overload part in `ns_name` is ignored.
    pub fn overloads(&self, ns_name: &str) -> Vec<&str> {
        let (ns, name, _) = split_qualified(ns_name.trim());
        let mut overloads: Vec<&str> = Vec::new();
        if self.embedded && ns == DEFAULT_NAMESPACE {
            for i in embedded::overloads(name) {
                overloads.push(embedded::overload(i));
            }
        }
        let embedded_count = overloads.len();
        if let Some(added) = self.index.get(ns).and_then(|names| names.get(name)) {
            for (o, _) in &added.order {
                if !overloads[..embedded_count].contains(&o.as_str()) {
                    overloads.push(o);
                }
            }
        }
        overloads
    }

    /// Every operator as `(namespace, name)`, sorted (so suggestions built from it are
    /// deterministic), for "did you mean" messages.
    pub fn names(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let mut names: Vec<(&str, &str)> =
            self.index.iter().flat_map(|(ns, names)| names.keys().map(move |n| (ns.as_str(), n.as_str()))).collect();
        if self.embedded {
            names.extend(embedded::names().map(|n| (DEFAULT_NAMESPACE, n)));
        }
        names.sort_unstable();
        names.dedup();
        names.into_iter()
    }

    /// Whether any operator is registered in namespace `ns`.
    pub fn has_namespace(&self, ns: &str) -> bool {
        (self.embedded && ns == DEFAULT_NAMESPACE && embedded::len() > 0) || self.index.contains_key(ns)
    }

    /// The namespaces, sorted.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> + '_ {
        let embedded = (self.embedded && embedded::len() > 0).then_some(DEFAULT_NAMESPACE);
        let namespaces: BTreeSet<&str> = self.index.keys().map(String::as_str).chain(embedded).collect();
        namespaces.into_iter()
    }

    /// The number of schemas.
    pub fn len(&self) -> usize {
        let embedded = if self.embedded { embedded::len() } else { 0 };
        embedded + self.added.iter().filter(|s| !self.replaces_embedded(s)).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every schema in registration order: the embedded ones (or what replaced them) in file
    /// order, then those added, parsing those not parsed yet.
    pub fn schemas(&self) -> impl Iterator<Item = &FunctionSchema> + '_ {
        let embedded = if self.embedded { embedded::len() } else { 0 };
        let embedded = (0..embedded).filter_map(|i| {
            let replaced = self.added(DEFAULT_NAMESPACE, embedded::name(i), embedded::overload(i));
            self.schema(replaced.map_or(At::Embedded(i), At::Added))
        });
        embedded.chain(self.added.iter().filter(|s| !self.replaces_embedded(s)))
    }

    /// Adds `schema` (e.g. a custom op from `torch.library.define`), replacing one with
    /// the same qualified name, which is returned.
    pub fn add(&mut self, schema: FunctionSchema) -> Option<FunctionSchema> {
        let replaced = match self.locate(&schema.namespace, &schema.name, &schema.overload) {
            Some(At::Added(i)) => return Some(std::mem::replace(&mut self.added[i], schema)),
            Some(At::Embedded(i)) => embedded::schema(i).cloned(),
            None => None,
        };
        let names = self.index.entry(schema.namespace.clone()).or_default();
        let overloads = names.entry(schema.name.clone()).or_default();
        overloads.push(schema.overload.clone(), self.added.len());
        self.added.push(schema);
        replaced
    }

    /// Adds every schema of `other`, replacing those with the same qualified names.
    pub fn extend(&mut self, other: &AtenRegistry) {
        for schema in other.schemas() {
            self.add(schema.clone());
        }
    }
}
