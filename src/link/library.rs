//! The functions a link can call: the model's own and the libraries', keyed by
//! (domain, name, overload), with duplicates and shadowing reported.
//!
//! The libraries' functions are indexed once ([`Libraries`]: each one's signature, whether an
//! operator shadows it, where every name is defined); a link's [`Table`] puts the model's
//! functions and the variants it makes over them, so that a link against large libraries costs
//! what the model calls, not what the libraries hold (`onnxsc serve` links many models against
//! the same libraries). The table reports what one table of them all would: a model function
//! shadows the libraries' (W0801) unless `--override`, and a name the libraries define twice is
//! ambiguous (E0804).

use super::interface::CallSignature;
use crate::diagnostics::{codes, Diagnostic};
use crate::onnx::metadata::TraceRecord;
use crate::proto::onnx::{FunctionProto, NodeProto};
use crate::schema::{self, normalize_domain};
use std::collections::HashMap;

/// Functions to link against, and where they come from (for diagnostics).
pub struct Library {
    pub name: String,
    pub functions: Vec<FunctionProto>,
    /// Its trace-only translations, which a call is specialised to before linking (the driver
    /// runs them: `driver::trace`).
    pub traced: Option<TraceRecord>,
}

#[derive(Clone)]
pub struct LinkableFunction {
    pub proto: FunctionProto,
    pub signature: CallSignature,
    /// Where the definition comes from: `None` for the model itself, else the library's name.
    pub library: Option<String>,
    /// An operator of the same domain and name exists; ONNX Runtime runs it instead.
    pub shadowed: bool,
}

impl LinkableFunction {
    pub fn new(proto: FunctionProto, library: Option<String>) -> LinkableFunction {
        let shadowed = schema::registry().knows_operator(proto.domain(), proto.name());
        LinkableFunction { signature: CallSignature::of(&proto), proto, library, shadowed }
    }

    /// `domain::name` (and `:overload` when there is one), as diagnostics print it.
    pub fn qualname(&self) -> String {
        qualname(self.proto.domain(), self.proto.name(), self.proto.overload())
    }
}

pub fn qualname(domain: &str, name: &str, overload: &str) -> String {
    let domain = if domain.is_empty() { "ai.onnx" } else { domain };
    if overload.is_empty() {
        format!("{domain}::{name}")
    } else {
        format!("{domain}::{name}:{overload}")
    }
}

/// domain -> name -> [(overload, id)]; nested so lookups need no allocation.
#[derive(Default)]
struct Index(HashMap<String, HashMap<String, Vec<(String, usize)>>>);

impl Index {
    fn insert(&mut self, p: &FunctionProto, id: usize) {
        self.0
            .entry(normalize_domain(p.domain()).to_string())
            .or_default()
            .entry(p.name().to_string())
            .or_default()
            .push((p.overload().to_string(), id));
    }

    fn get(&self, domain: &str, name: &str, overload: &str) -> Option<usize> {
        let overloads = self.0.get(normalize_domain(domain))?.get(name)?;
        overloads.iter().find(|(o, _)| o == overload).map(|(_, id)| *id)
    }
}

/// The libraries' functions, indexed once: what every link against them shares.
#[derive(Default)]
pub struct Libraries {
    /// The first definition of each (domain, name, overload), in the libraries' order.
    defs: Vec<LinkableFunction>,
    index: Index,
    /// The libraries' names, in order.
    names: Vec<String>,
    /// Per definition in `defs`, every library function of its name: (its position among all
    /// the libraries' functions, its library in `names`). The first is the definition itself.
    places: Vec<Vec<(usize, usize)>>,
    /// The definitions whose name the libraries define more than once, in the order of their
    /// second definitions.
    duplicated: Vec<usize>,
}

impl Libraries {
    pub fn new(libraries: Vec<Library>) -> Libraries {
        let mut l = Libraries::default();
        let mut position = 0;
        for lib in libraries {
            let library = l.names.len();
            for f in lib.functions {
                match l.index.get(f.domain(), f.name(), f.overload()) {
                    Some(id) => {
                        if l.places[id].len() == 1 {
                            l.duplicated.push(id);
                        }
                        l.places[id].push((position, library));
                    }
                    None => {
                        let id = l.defs.len();
                        l.index.insert(&f, id);
                        l.defs.push(LinkableFunction::new(f, Some(lib.name.clone())));
                        l.places.push(vec![(position, library)]);
                    }
                }
                position += 1;
            }
            l.names.push(lib.name);
        }
        l
    }

    /// The definition of `domain::name` (of `overload`), the first of the libraries'.
    pub fn find(&self, domain: &str, name: &str, overload: &str) -> Option<&LinkableFunction> {
        self.index.get(domain, name, overload).map(|id| &self.defs[id])
    }

    /// How many functions (one per name) the libraries define.
    pub fn len(&self) -> usize {
        self.defs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }
}

/// The functions one link calls: the libraries', and over them the model's and the variants
/// made for it. Ids below `libraries.len()` are the libraries' definitions.
pub struct Table<'l> {
    libraries: &'l Libraries,
    /// The model's functions, then the variants made (ids from `libraries.len()` on).
    local: Vec<LinkableFunction>,
    local_index: Index,
    /// Library functions whose body this link rewrote (reference mode), by id.
    rewritten: HashMap<usize, LinkableFunction>,
    /// The model's functions in their order (some replaced by `--override`).
    pub model_functions: Vec<usize>,
}

/// E0804s as they are collected: per name, where it is defined and how many times, in the
/// order the second definitions come.
#[derive(Default)]
struct Duplicates {
    list: Vec<(String, Vec<String>, usize)>,
    index: HashMap<String, usize>,
}

impl Duplicates {
    /// Counts one more definition of `name` (first defined by `first`) by `again`.
    fn add(&mut self, name: String, first: &str, again: &str) {
        let next = self.list.len();
        let slot = *self.index.entry(name.clone()).or_insert(next);
        if slot == next {
            self.list.push((name, vec![first.to_string()], 1));
        }
        let (_, places, count) = &mut self.list[slot];
        *count += 1;
        if !places.iter().any(|p| p == again) {
            places.push(again.to_string());
        }
    }
}

impl<'l> Table<'l> {
    /// The table of the model's functions over the libraries'. A library function the model
    /// also defines replaces it with `override_model`, and is otherwise ignored (a warning).
    pub fn build(
        model_functions: Vec<FunctionProto>,
        libraries: &'l Libraries,
        override_model: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Table<'l> {
        let mut t = Table {
            libraries,
            local: Vec::new(),
            local_index: Index::default(),
            rewritten: HashMap::new(),
            model_functions: Vec::new(),
        };
        // E0804 once per name however many times it is defined, in the order the second
        // definitions come: the model's first, then the libraries'.
        let mut dups = Duplicates::default();
        for f in model_functions {
            match t.local_index.get(f.domain(), f.name(), f.overload()) {
                Some(_) => dups.add(qualname(f.domain(), f.name(), f.overload()), "the model", "the model"),
                None => {
                    let id = t.insert(LinkableFunction::new(f, None));
                    t.model_functions.push(id);
                }
            }
        }
        // The libraries' definitions of the model's names, in the libraries' order.
        let mut shadowed: Vec<(usize, Diagnostic)> = Vec::new();
        for local in 0..t.local.len() {
            let p = &t.local[local].proto;
            let Some(id) = libraries.index.get(p.domain(), p.name(), p.overload()) else { continue };
            let def = &libraries.defs[id];
            if override_model {
                t.local[local] = def.clone();
                continue;
            }
            for &(position, library) in &libraries.places[id] {
                shadowed.push((position, kept_warning(def, &libraries.names[library])));
            }
        }
        shadowed.sort_by_key(|(position, _)| *position);
        diags.extend(shadowed.into_iter().map(|(_, d)| d));
        for &id in &libraries.duplicated {
            let def = &libraries.defs[id];
            let p = &def.proto;
            if !override_model && t.local_index.get(p.domain(), p.name(), p.overload()).is_some() {
                // The model's own definition is kept: each library's is a warning, not a second one.
                continue;
            }
            let mut places = libraries.places[id].iter().map(|(_, library)| libraries.names[*library].as_str());
            let first = places.next().unwrap_or_default();
            for again in places {
                dups.add(def.qualname(), first, again);
            }
        }
        diags.extend(dups.list.into_iter().map(|(name, places, count)| duplicate_error(&name, &places, count)));
        t
    }

    /// Adds a function made for this link (a variant).
    pub fn insert(&mut self, def: LinkableFunction) -> usize {
        let id = self.libraries.len() + self.local.len();
        self.local_index.insert(&def.proto, id);
        self.local.push(def);
        id
    }

    /// The model's functions and the variants shadow the libraries'.
    pub fn lookup(&self, domain: &str, name: &str, overload: &str) -> Option<usize> {
        self.local_index.get(domain, name, overload).or_else(|| self.libraries.index.get(domain, name, overload))
    }

    pub fn def(&self, id: usize) -> &LinkableFunction {
        match id.checked_sub(self.libraries.len()) {
            Some(local) => &self.local[local],
            None if self.rewritten.is_empty() => &self.libraries.defs[id],
            None => self.rewritten.get(&id).unwrap_or(&self.libraries.defs[id]),
        }
    }

    /// Every function of the table, the libraries' first.
    pub fn defs(&self) -> impl Iterator<Item = &LinkableFunction> {
        (0..self.libraries.len() + self.local.len()).map(|id| self.def(id))
    }

    /// Gives function `id` a new body, for this link only.
    pub fn set_body(&mut self, id: usize, body: Vec<NodeProto>) {
        match id.checked_sub(self.libraries.len()) {
            Some(local) => self.local[local].proto.node = body,
            None => {
                let libraries = self.libraries;
                let def = self.rewritten.entry(id).or_insert_with(|| libraries.defs[id].clone());
                def.proto.node = body;
            }
        }
    }

    /// The protos of the functions `ids`, each once, for the output: the link's own are moved
    /// out, the libraries' copied.
    pub fn into_protos(mut self, ids: &[usize]) -> Vec<FunctionProto> {
        let base = self.libraries.len();
        let mut seen = std::collections::HashSet::new();
        ids.iter()
            .filter(|id| seen.insert(**id))
            .map(|&id| match id.checked_sub(base) {
                Some(local) => std::mem::take(&mut self.local[local].proto),
                None => match self.rewritten.remove(&id) {
                    Some(def) => def.proto,
                    None => self.libraries.defs[id].proto.clone(),
                },
            })
            .collect()
    }
}

/// W0801: the model's definition of a function `library` defines too is kept.
fn kept_warning(def: &LinkableFunction, library: &str) -> Diagnostic {
    Diagnostic::warning(
        codes::MODEL_FUNCTION_KEPT,
        0,
        format!("the model already defines `{}`: its own definition is kept", def.qualname()),
    )
    .note(format!("{library} defines it too"))
    .help("pass `--override` to replace the model's definition with the library's")
}

/// E0804 for one name defined `count` times, in `places`.
fn duplicate_error(name: &str, places: &[String], count: usize) -> Diagnostic {
    let times = if count == 2 { "twice".to_string() } else { format!("{count} times") };
    let place = match places {
        [one] => format!("{one} defines it {times}"),
        [a, b] => format!("{a} and {b} both define it ({times} in all)"),
        _ => format!("{} define it ({times} in all)", places.join(", ")),
    };
    Diagnostic::error(codes::DUPLICATE_FUNCTION_DEFINITION, 0, format!("`{name}` is defined more than once"))
        .note(place)
        .help("a call must resolve to exactly one function: remove one definition, or link only one of the libraries")
}
