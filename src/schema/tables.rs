//! The operator schemas as static tables, written at build time by `build/schema_tables.rs` from
//! `generated/onnx_schemas.json`, and their conversion into [`OpSchema`]s: formal types and
//! attribute defaults are read here, one operator at a time, when the registry first hands it out.
//!
//! The tables hold no pointers (which the loader would relocate at every start): a string is a
//! range of [`STRINGS`], a list a range of the table of its items.

use super::{
    AttrDefault, AttrSchema, AttrType, FormalOption, FormalParam, FormalType, GeneratedFrom, OpSchema, TypeConstraint,
};
use crate::onnx::elems_by_container;
use crate::onnx::ValueType;

include!(concat!(env!("OUT_DIR"), "/onnx_schema_tables.rs"));

/// The number of operators (distinct domain and name).
pub(super) const COUNT: usize = OP_COUNT;

/// The number of operator versions, over all operators.
pub(super) const VERSIONS_COUNT: usize = VERSION_COUNT;

/// A string: where it starts in [`STRINGS`], and its length.
#[derive(Clone, Copy)]
struct Str(u32, u32);

impl Str {
    fn get(self) -> &'static str {
        &STRINGS[self.0 as usize..(self.0 + self.1) as usize]
    }
}

/// A list: where it starts in its table, and its length.
#[derive(Clone, Copy)]
struct Items(u32, u32);

impl Items {
    fn of<T>(self, table: &'static [T]) -> &'static [T] {
        &table[self.0 as usize..(self.0 + self.1) as usize]
    }
}

/// An operator; [`OPS`] is sorted by (domain, name).
struct Op {
    domain: Str,
    name: Str,
    /// Into [`VERSIONS`], by `since_version`.
    versions: Items,
}

/// One version of an operator, as [`OpSchema`] but unread.
struct Version {
    since_version: i64,
    deprecated: bool,
    has_function: bool,
    runtime_only: bool,
    min_input: u32,
    max_input: u32,
    min_output: u32,
    max_output: u32,
    /// Into [`PARAMS`].
    inputs: Items,
    /// Into [`PARAMS`].
    outputs: Items,
    /// Into [`ATTRS`], sorted by name.
    attributes: Items,
    /// Into [`CONSTRAINTS`].
    type_constraints: Items,
}

struct Param {
    name: Str,
    type_str: Str,
    option: FormalOption,
    is_homogeneous: bool,
    min_arity: u32,
}

struct Attr {
    name: Str,
    ty: AttrType,
    required: bool,
    default: Option<Value>,
}

/// An attribute's default value, as [`AttrDefault`].
#[derive(Clone, Copy)]
#[allow(dead_code, reason = "no attribute of the pinned data has a FLOATS or a null default")]
enum Value {
    Float(f64),
    Int(i64),
    String(Str),
    /// Into [`FLOATS`].
    Floats(Items),
    /// Into [`INTS`].
    Ints(Items),
    /// Into [`STRS`].
    Strings(Items),
    Other,
}

struct Constraint {
    type_param: Str,
    /// Into [`TYPES`].
    allowed: Items,
}

/// The index of the operator `name` of `domain` (normalised), from the hash index the build
/// wrote ([`OP_SLOTS`]): every op call is looked up several times, and a binary search compared
/// strings a dozen times a lookup.
pub(super) fn find(domain: &str, name: &str) -> Option<usize> {
    for slot in super::op_hash::probe(domain, name, OP_SLOTS.len()) {
        // A free slot ends the probe: the operator would have been put there.
        let index = usize::from(OP_SLOTS[slot]).checked_sub(1)?;
        let op = &OPS[index];
        if op.name.get() == name && op.domain.get() == domain {
            return Some(index);
        }
    }
    None
}

/// The operator names of `domain` (normalised), sorted.
pub(super) fn op_names(domain: &str) -> impl Iterator<Item = &'static str> + '_ {
    let start = OPS.partition_point(|op| op.domain.get() < domain);
    OPS[start..].iter().take_while(move |op| op.domain.get() == domain).map(|op| op.name.get())
}

/// The domains, sorted, with their greatest opset versions.
pub(super) fn domains() -> impl Iterator<Item = (&'static str, i64)> {
    DOMAINS.iter().map(|(d, v)| (d.get(), *v))
}

/// The greatest opset version of `domain` (normalised).
pub(super) fn max_version(domain: &str) -> Option<i64> {
    DOMAINS.binary_search_by(|(d, _)| d.get().cmp(domain)).ok().map(|i| DOMAINS[i].1)
}

pub(super) fn generated_from() -> &'static GeneratedFrom {
    &GENERATED_FROM
}

/// The versions of operator `index`, oldest first, as indices of all versions (for
/// [`since_version`] and [`decode`]).
pub(super) fn versions(index: usize) -> std::ops::Range<usize> {
    let Items(start, len) = OPS[index].versions;
    start as usize..(start + len) as usize
}

/// The opset version that version `v` (an index of all versions) was introduced in.
pub(super) fn since_version(v: usize) -> i64 {
    VERSIONS[v].since_version
}

/// Version `v` of operator `op` (indices from [`find`] and [`versions`]) as an [`OpSchema`].
pub(super) fn decode(op: usize, v: usize) -> OpSchema {
    schema(&OPS[op], &VERSIONS[v])
}

fn schema(op: &Op, v: &Version) -> OpSchema {
    let type_constraints: Vec<TypeConstraint> = v
        .type_constraints
        .of(&CONSTRAINTS)
        .iter()
        .map(|c| {
            let allowed: Vec<String> = c.allowed.of(&TYPES).iter().map(|t| t.get().to_string()).collect();
            let types: Vec<ValueType> = allowed.iter().filter_map(|a| ValueType::parse(a)).collect();
            TypeConstraint {
                type_param: c.type_param.get().to_string(),
                by_container: elems_by_container(&types),
                types,
                allowed,
            }
        })
        .collect();
    let formal_type = |type_str: &str| match type_constraints.iter().position(|c| c.type_param == type_str) {
        Some(i) => FormalType::Param(i),
        None => ValueType::parse(type_str).map_or(FormalType::Unknown, FormalType::Concrete),
    };
    let params = |list: Items| -> Vec<FormalParam> {
        list.of(&PARAMS)
            .iter()
            .map(|p| FormalParam {
                name: p.name.get().to_string(),
                type_str: p.type_str.get().to_string(),
                ty: formal_type(p.type_str.get()),
                option: p.option,
                is_homogeneous: p.is_homogeneous,
                min_arity: p.min_arity,
            })
            .collect()
    };
    let inputs = params(v.inputs);
    let outputs = params(v.outputs);
    let attributes = v
        .attributes
        .of(&ATTRS)
        .iter()
        .map(|a| AttrSchema {
            name: a.name.get().to_string(),
            ty: a.ty,
            required: a.required,
            default: a.default.map(default),
        })
        .collect();
    OpSchema {
        domain: op.domain.get().to_string(),
        name: op.name.get().to_string(),
        since_version: v.since_version,
        deprecated: v.deprecated,
        has_function: v.has_function,
        runtime_only: v.runtime_only,
        min_input: v.min_input,
        max_input: v.max_input,
        min_output: v.min_output,
        max_output: v.max_output,
        inputs,
        outputs,
        attributes,
        type_constraints,
    }
}

fn default(value: Value) -> AttrDefault {
    match value {
        Value::Float(f) => AttrDefault::Float(f),
        Value::Int(i) => AttrDefault::Int(i),
        Value::String(s) => AttrDefault::String(s.get().to_string()),
        Value::Floats(list) => AttrDefault::Floats(list.of(&FLOATS).to_vec()),
        Value::Ints(list) => AttrDefault::Ints(list.of(&INTS).to_vec()),
        Value::Strings(list) => AttrDefault::Strings(list.of(&STRS).iter().map(|s| s.get().to_string()).collect()),
        Value::Other => AttrDefault::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_index_finds_every_operator_and_only_them() {
        for (index, op) in OPS.iter().enumerate() {
            assert_eq!(find(op.domain.get(), op.name.get()), Some(index), "{}::{}", op.domain.get(), op.name.get());
            // The same name in another domain, or another case, is another operator.
            let other = if op.domain.get().is_empty() { "com.example" } else { "" };
            let found = find(other, op.name.get()).map(|i| (OPS[i].domain.get(), OPS[i].name.get()));
            assert!(found.is_none_or(|(d, n)| d == other && n == op.name.get()));
            assert_eq!(find(op.domain.get(), &op.name.get().to_uppercase()).is_some(), {
                let upper = op.name.get().to_uppercase();
                OPS.iter().any(|o| o.domain.get() == op.domain.get() && o.name.get() == upper)
            });
        }
        assert_eq!(find("", ""), None);
        assert_eq!(find("", "NoSuchOp"), None);
    }
}
