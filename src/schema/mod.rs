//! The embedded ONNX operator-schema database.
//!
//! The data lives in `generated/onnx_schemas.json`, produced by
//! `scripts/gen_schemas.py` (run `scripts/regenerate` from the repository root to regenerate
//! it). It holds every version of every schema of the ONNX domains (`""` for ai.onnx,
//! `ai.onnx.ml`, `ai.onnx.preview.training`, ...) as reported by the pinned `onnx` package, plus
//! ONNX Runtime's contrib schemas (`com.microsoft`, `com.microsoft.nchwc`,
//! `com.ms.internal.nhwc`, ...).
//!
//! No JSON is read at run time: `build.rs` turns the file into static tables (`tables`), sorted
//! by domain and name, that lookups search without allocating. An operator's versions become
//! [`OpSchema`]s the first time the [`registry`] hands one out, so a run pays for the operators it
//! uses.
//!
//! ```ignore
//! use crate::schema::{registry, Resolution};
//! match registry().resolve("", "Add", 18) {
//!     Resolution::Found(s) => assert_eq!(s.since_version, 14),
//!     _ => unreachable!(),
//! }
//! ```

pub mod bodies;
pub mod docs;
mod op_hash;
mod tables;

use std::sync::OnceLock;

use crate::onnx::AttrType;
use crate::onnx::ValueType;

// ---------------------------------------------------------------------------
// Public model
// ---------------------------------------------------------------------------

/// How many actual arguments a formal input/output accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FormalOption {
    /// Exactly one.
    Single,
    /// Zero or one (an absent optional is written as `""`).
    Optional,
    /// `min_arity` or more; only ever the last formal parameter.
    Variadic,
}

/// The type of a formal input or output, read once, when its operator is first looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormalType {
    /// A type parameter: `OpSchema::type_constraints[i]` says what it may stand for.
    Param(usize),
    /// A concrete type, e.g. `tensor(int64)`.
    Concrete(ValueType),
    /// A type onnxsc cannot read (an element type newer than it).
    Unknown,
}

/// A formal input or output of an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormalParam {
    /// The parameter's name in the schema (e.g. `A`, `inputs`).
    pub name: String,
    /// The type as the schema writes it: the name of a type parameter (see
    /// [`OpSchema::type_constraint`]), e.g. `T`, or a concrete type, e.g. `tensor(int64)`.
    pub type_str: String,
    /// The type, read.
    pub ty: FormalType,
    /// Single, optional or variadic.
    pub option: FormalOption,
    /// For variadic parameters: whether all actuals must have the same type.
    pub is_homogeneous: bool,
    /// The least number of actuals this formal needs: 1 for `Single`, 0 for
    /// `Optional`, the schema's minimum arity for `Variadic`.
    pub min_arity: u32,
}

/// The default value of an attribute.
///
/// `Float` values are the shortest decimal that denotes the schema's float32 default;
/// convert with `as f32` to get the exact value (e.g. `Clip`'s `max` is `f32::MAX`).
#[derive(Debug, Clone, PartialEq)]
pub enum AttrDefault {
    /// Default of a `FLOAT` attribute.
    Float(f64),
    /// Default of an `INT` attribute.
    Int(i64),
    /// Default of a `STRING` attribute.
    String(String),
    /// Default of a `FLOATS` attribute.
    Floats(Vec<f64>),
    /// Default of an `INTS` attribute.
    Ints(Vec<i64>),
    /// Default of a `STRINGS` attribute.
    Strings(Vec<String>),
    /// A default that is a tensor, graph, etc. (none exist in the current data).
    Other,
}

/// An attribute of an operator.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrSchema {
    /// The attribute's name.
    pub name: String,
    /// Its type.
    pub ty: AttrType,
    /// Whether a call must supply it.
    pub required: bool,
    /// `None` when the schema gives no default (for an optional attribute this means
    /// the operator has its own behaviour when the attribute is absent).
    pub default: Option<AttrDefault>,
}

/// A type parameter and the types it may stand for (`tensor(float)`, `seq(tensor(int64))`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeConstraint {
    /// The type parameter, e.g. `T`.
    pub type_param: String,
    /// The allowed types in declaration order, as the schema writes them, e.g. `tensor(float)`.
    pub allowed: Vec<String>,
    /// The allowed types onnxsc can read, in the same order (all of them with the pinned data).
    pub types: Vec<ValueType>,
    /// `types` as element types by container (`onnx::types::elems_by_container`), read by every
    /// call's type check.
    pub by_container: Option<[u32; 4]>,
}

/// One version of one operator.
#[derive(Debug, Clone, PartialEq)]
pub struct OpSchema {
    /// `""` for ai.onnx.
    pub domain: String,
    /// The operator name (`op_type`).
    pub name: String,
    /// The first opset version of `domain` in which this schema is in force.
    pub since_version: i64,
    /// The operator is removed as of this version (e.g. `Upsample` at 10): a model
    /// using it at an opset where this schema is in force is invalid.
    pub deprecated: bool,
    /// The schema carries a function body (plain or context-dependent). Always false
    /// for ONNX Runtime contrib schemas (their binding does not report it).
    pub has_function: bool,
    /// An operator that ONNX Runtime registers in an ONNX domain but onnx does not define
    /// (`SimplifiedLayerNormalization`, `LayerNormalization` before opset 17): ONNX Runtime runs
    /// it, onnx.checker does not know it.
    pub runtime_only: bool,
    /// The least number of inputs a call must pass.
    pub min_input: u32,
    /// `i32::MAX` when the last input is variadic.
    pub max_input: u32,
    /// The least number of outputs a call must bind.
    pub min_output: u32,
    /// `i32::MAX` when the last output is variadic.
    pub max_output: u32,
    /// The formal inputs, in order.
    pub inputs: Vec<FormalParam>,
    /// The formal outputs, in order.
    pub outputs: Vec<FormalParam>,
    /// The attributes, sorted by name.
    pub attributes: Vec<AttrSchema>,
    /// The type parameters used by `inputs` and `outputs`.
    pub type_constraints: Vec<TypeConstraint>,
}

impl OpSchema {
    /// The attribute called `name`.
    pub fn attribute(&self, name: &str) -> Option<&AttrSchema> {
        self.attributes.binary_search_by(|a| a.name.as_str().cmp(name)).ok().map(|i| &self.attributes[i])
    }

    /// The constraint of type parameter `param` (e.g. `"T"`); `None` if `param` is not a
    /// type parameter of this schema (e.g. a concrete type such as `tensor(int64)`).
    pub fn type_constraint(&self, param: &str) -> Option<&TypeConstraint> {
        self.type_constraints.iter().find(|c| c.type_param == param)
    }

    /// The types a formal input or output allows: its own, or its type parameter's. `None` when
    /// its type cannot be read.
    pub fn allowed_types<'s>(&'s self, formal: &'s FormalParam) -> Option<&'s [ValueType]> {
        match &formal.ty {
            FormalType::Param(i) => Some(&self.type_constraints[*i].types),
            FormalType::Concrete(t) => Some(std::slice::from_ref(t)),
            FormalType::Unknown => None,
        }
    }

    /// `name` for ai.onnx, `domain::name` otherwise (for messages).
    pub fn qualified_name(&self) -> String {
        if self.domain.is_empty() {
            self.name.clone()
        } else {
            format!("{}::{}", self.domain, self.name)
        }
    }
}

/// The result of looking an operator up at an opset version.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resolution<'a> {
    /// The schema in force at the requested version (check `deprecated`).
    Found(&'a OpSchema),
    /// The operator exists, but only from `first_version` on.
    NotYet {
        /// The `since_version` of the operator's first schema.
        first_version: i64,
    },
    /// No operator of that name in that domain.
    Unknown,
}

/// The package versions the data was generated from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFrom {
    /// The `onnx` package version, e.g. `1.23.2`.
    pub onnx: &'static str,
    /// The `onnxruntime` package version, e.g. `1.32.0`.
    pub onnxruntime: &'static str,
    /// The Python version that ran the generator.
    pub python: &'static str,
    /// ONNX Runtime schemas in the ONNX-owned domains that onnx does not define and ONNX
    /// Runtime's CPU provider runs (such as `SimplifiedLayerNormalization@1`); they are in the
    /// registry, marked [`OpSchema::runtime_only`].
    pub ort_onnx_domain_extras: &'static [&'static str],
}

/// All schemas, indexed by domain and name: static tables, each operator version read into an
/// [`OpSchema`] the first time it is asked for.
#[derive(Debug)]
pub struct Registry {
    /// By version index (the order of the tables: domain, name, then since_version). One
    /// version at a time, because a compilation uses one version of most operators, and reading
    /// a schema (its type lists above all) is most of what a small `check` costs.
    decoded: [OnceLock<OpSchema>; tables::VERSIONS_COUNT],
}

static REGISTRY: Registry = Registry { decoded: [const { OnceLock::new() }; tables::VERSIONS_COUNT] };

/// The registry. Nothing is read until an operator is looked up, and then only the version used.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

/// Normalise `"ai.onnx"` to `""`; other domains are returned unchanged.
pub fn normalize_domain(d: &str) -> &str {
    if d == "ai.onnx" {
        ""
    } else {
        d
    }
}

impl Registry {
    /// The schema in force for `name` in `domain` at opset `version`: the one with the
    /// greatest `since_version <= version`. `domain` may be `"ai.onnx"` or `""`.
    pub fn resolve(&self, domain: &str, name: &str, version: i64) -> Resolution<'_> {
        let Some(op) = tables::find(normalize_domain(domain), name) else {
            return Resolution::Unknown;
        };
        let versions = tables::versions(op);
        let first = versions.start;
        // Versions are sorted by since_version: the last one not after `version` is in force.
        let in_force = versions.rev().find(|&v| tables::since_version(v) <= version);
        match in_force {
            Some(v) => Resolution::Found(self.version(op, v)),
            None => Resolution::NotYet { first_version: tables::since_version(first) },
        }
    }

    /// Every version of `name` in `domain`, oldest first (empty if unknown).
    pub fn versions(&self, domain: &str, name: &str) -> Vec<&OpSchema> {
        tables::find(normalize_domain(domain), name).map_or_else(Vec::new, |op| self.operator(op).collect())
    }

    /// The versions of operator `op` of the tables, oldest first.
    fn operator(&self, op: usize) -> impl Iterator<Item = &OpSchema> + '_ {
        tables::versions(op).map(move |v| self.version(op, v))
    }

    /// Version `v` of operator `op`, read on first use.
    fn version(&self, op: usize, v: usize) -> &OpSchema {
        self.decoded[v].get_or_init(|| tables::decode(op, v))
    }

    /// Whether `domain` has an operator called `name`, at any version.
    pub fn knows_operator(&self, domain: &str, name: &str) -> bool {
        tables::find(normalize_domain(domain), name).is_some()
    }

    /// The operator names of `domain`, sorted (for did-you-mean suggestions).
    pub fn op_names(&self, domain: &str) -> Vec<&str> {
        tables::op_names(normalize_domain(domain)).collect()
    }

    /// Whether `domain` is an operator-set domain the data knows (including ONNX
    /// domains without operators, such as `ai.onnx.training`).
    pub fn known_domain(&self, domain: &str) -> bool {
        self.max_version(domain).is_some()
    }

    /// The known domains, sorted (`""` first).
    pub fn domains(&self) -> Vec<&str> {
        tables::domains().map(|(d, _)| d).collect()
    }

    /// The greatest opset version of `domain` (28 for ai.onnx with onnx 1.23).
    pub fn max_version(&self, domain: &str) -> Option<i64> {
        tables::max_version(normalize_domain(domain))
    }

    /// All schemas, sorted by (domain, name, since_version); reads every operator.
    pub fn schemas(&self) -> impl Iterator<Item = &OpSchema> + '_ {
        (0..tables::COUNT).flat_map(|i| self.operator(i))
    }

    /// The package versions the data was generated from.
    pub fn generated_from(&self) -> &GeneratedFrom {
        tables::generated_from()
    }
}

#[cfg(test)]
mod tests;
