//! The functions a link can call: the model's own and the libraries', keyed by
//! (domain, name, overload), with duplicates and shadowing reported.

use super::signature::CallSignature;
use crate::diagnostics::{codes, Diagnostic};
use crate::proto::onnx::FunctionProto;
use crate::schema::{self, normalize_domain};
use std::collections::HashMap;

/// Functions to link against, and where they come from (for diagnostics).
pub struct Library {
    pub name: String,
    pub functions: Vec<FunctionProto>,
}

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

#[derive(Default)]
pub struct Table {
    pub defs: Vec<LinkableFunction>,
    /// The model's functions in their order (some replaced by `--override`).
    pub model_functions: Vec<usize>,
    /// domain -> name -> [(overload, index in `defs`)]; nested so lookups need no allocation.
    index: HashMap<String, HashMap<String, Vec<(String, usize)>>>,
}

impl Table {
    /// The table of the model's functions, then the libraries'. A library function the model
    /// also defines replaces it with `override_model`, and is otherwise ignored (a warning).
    pub fn build(
        model_functions: Vec<FunctionProto>,
        libraries: Vec<Library>,
        override_model: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Table {
        let mut t = Table::default();
        // E0804 once per name however many times it is defined: (name, places, definitions).
        let mut dups: Vec<(String, Vec<String>, usize)> = Vec::new();
        let mut dup_index: HashMap<String, usize> = HashMap::new();
        let mut duplicate = |qualname: String, first: &str, again: &str| {
            let slot = *dup_index.entry(qualname.clone()).or_insert_with(|| {
                dups.push((qualname, vec![first.to_string()], 1));
                dups.len() - 1
            });
            let (_, places, count) = &mut dups[slot];
            *count += 1;
            if !places.iter().any(|p| p == again) {
                places.push(again.to_string());
            }
        };
        for f in model_functions {
            match t.lookup(f.domain(), f.name(), f.overload()) {
                Some(_) => duplicate(qualname(f.domain(), f.name(), f.overload()), "the model", "the model"),
                None => {
                    let id = t.insert(LinkableFunction::new(f, None));
                    t.model_functions.push(id);
                }
            }
        }
        for lib in libraries {
            for f in lib.functions {
                let def = LinkableFunction::new(f, Some(lib.name.clone()));
                match t.lookup(def.proto.domain(), def.proto.name(), def.proto.overload()) {
                    None => {
                        t.insert(def);
                    }
                    Some(id) => match &t.defs[id].library {
                        Some(first) => duplicate(def.qualname(), first, &lib.name),
                        None if override_model => t.defs[id] = def,
                        None => diags.push(
                            Diagnostic::warning(
                                codes::MODEL_FUNCTION_KEPT,
                                0,
                                format!("the model already defines `{}`: its own definition is kept", def.qualname()),
                            )
                            .note(format!("{} defines it too", lib.name))
                            .help("pass `--override` to replace the model's definition with the library's"),
                        ),
                    },
                }
            }
        }
        diags.extend(dups.into_iter().map(|(name, places, count)| duplicate_error(&name, &places, count)));
        t
    }

    pub fn insert(&mut self, def: LinkableFunction) -> usize {
        let id = self.defs.len();
        let p = &def.proto;
        self.index
            .entry(normalize_domain(p.domain()).to_string())
            .or_default()
            .entry(p.name().to_string())
            .or_default()
            .push((p.overload().to_string(), id));
        self.defs.push(def);
        id
    }

    pub fn lookup(&self, domain: &str, name: &str, overload: &str) -> Option<usize> {
        let overloads = self.index.get(normalize_domain(domain))?.get(name)?;
        overloads.iter().find(|(o, _)| o == overload).map(|(_, id)| *id)
    }
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
