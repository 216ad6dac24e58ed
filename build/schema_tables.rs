//! The build-time half of `schema`: reads `src/schema/generated/onnx_schemas.json` (what
//! `scripts/gen_schemas.py` writes) and writes the static tables that `src/schema/tables.rs`
//! includes, so that no JSON is parsed when onnxsc starts.
//!
//! This is the one reader of the file's layout (the `Raw*` structs); the schema tests read the
//! file with it too, to check the tables against it. Everything the data may get wrong (an
//! unknown option, a default of the wrong type, a schema version given twice) fails the build.
//!
//! The tables hold no pointers: a string is a range of one string of all the names and types
//! (each stored once), a list is a range of a table of its items. A pointer in a static would
//! be a relocation that the loader applies at every start of the position-independent binary.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use serde::Deserialize;

use super::op_hash;

#[derive(Deserialize)]
pub struct RawFile {
    pub header: RawHeader,
    pub schemas: Vec<RawSchema>,
}

#[derive(Deserialize)]
pub struct RawHeader {
    pub onnx: String,
    pub onnxruntime: String,
    pub python: String,
    pub max_versions: BTreeMap<String, i64>,
    #[serde(default)]
    pub ort_onnx_domain_extras: Vec<String>,
}

#[derive(Deserialize)]
pub struct RawSchema {
    pub domain: String,
    pub name: String,
    pub since_version: i64,
    pub deprecated: bool,
    pub has_function: bool,
    #[serde(default)]
    pub runtime_only: bool,
    pub min_input: u32,
    pub max_input: u32,
    pub min_output: u32,
    pub max_output: u32,
    pub inputs: Vec<RawParam>,
    pub outputs: Vec<RawParam>,
    pub attributes: Vec<RawAttr>,
    pub type_constraints: Vec<RawConstraint>,
}

#[derive(Deserialize)]
pub struct RawParam {
    pub name: String,
    pub type_str: String,
    /// `single`, `optional` or `variadic`.
    pub option: String,
    pub is_homogeneous: bool,
    /// Written for variadic parameters only.
    #[serde(default)]
    pub min_arity: Option<u32>,
}

#[derive(Deserialize)]
pub struct RawAttr {
    pub name: String,
    /// The `AttributeProto.AttributeType` name, e.g. `INTS`.
    #[serde(rename = "type")]
    pub ty: String,
    pub required: bool,
    /// Absent: no default. Present (even as `null`): `Some`.
    #[serde(default, deserialize_with = "present")]
    pub default: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub struct RawConstraint {
    pub type_param: String,
    pub allowed: Vec<String>,
}

/// Deserialises a present field (including `null`) as `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

/// Reads the file.
pub fn parse(text: &str) -> Result<RawFile, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// The formal parameter's option as a `FormalOption` variant, and the least number of actuals
/// it takes.
pub fn option(p: &RawParam) -> Result<(&'static str, u32), String> {
    Ok(match p.option.as_str() {
        "single" => ("Single", 1),
        "optional" => ("Optional", 0),
        "variadic" => ("Variadic", p.min_arity.unwrap_or(1)),
        other => return Err(format!("bad option {other:?} of {}", p.name)),
    })
}

/// The `AttrType` variant of an `AttributeProto.AttributeType` name: `SPARSE_TENSOR` is
/// `SparseTensor` (a name that is no variant fails to compile).
fn attr_type_variant(proto_name: &str) -> String {
    proto_name
        .split('_')
        .map(|word| {
            let lower = word.to_ascii_lowercase();
            let mut chars = lower.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

/// The Rust text of the tables of `raw` (see `src/schema/tables.rs` for the types).
pub fn tables(raw: &RawFile) -> Result<String, String> {
    let mut t = Tables::default();
    let mut schemas: Vec<&RawSchema> = raw.schemas.iter().collect();
    for s in &schemas {
        if s.domain == "ai.onnx" {
            return Err(format!("{}: ai.onnx is written \"\" in the data", s.name));
        }
    }
    schemas.sort_by(|a, b| (&a.domain, &a.name, a.since_version).cmp(&(&b.domain, &b.name, b.since_version)));

    // Each domain's greatest version: the header's, or a later schema's.
    let mut max_versions = raw.header.max_versions.clone();
    if max_versions.contains_key("ai.onnx") {
        return Err("max_versions: ai.onnx is written \"\" in the data".into());
    }
    for s in &schemas {
        let v = max_versions.entry(s.domain.clone()).or_insert(s.since_version);
        *v = (*v).max(s.since_version);
    }

    let mut start = 0;
    while start < schemas.len() {
        let (domain, name) = (&schemas[start].domain, &schemas[start].name);
        let mut end = start + 1;
        while end < schemas.len() && schemas[end].domain == *domain && schemas[end].name == *name {
            if schemas[end].since_version == schemas[end - 1].since_version {
                return Err(format!("duplicate schema {domain}::{name}@{}", schemas[end].since_version));
            }
            end += 1;
        }
        let first = t.versions.len();
        for s in &schemas[start..end] {
            let version = t.version(s).map_err(|e| format!("{}::{}@{}: {e}", s.domain, s.name, s.since_version))?;
            t.versions.push(version);
        }
        let (d, n) = (t.str(domain), t.str(name));
        t.ops.push(format!("Op {{ domain: {d}, name: {n}, versions: Items({first}, {}) }}", end - start));
        start = end;
    }
    let slots = op_slots(&schemas);
    let domains: Vec<String> = max_versions.iter().map(|(d, v)| format!("({}, {v})", t.str(d))).collect();

    let h = &raw.header;
    let mut out = String::new();
    out.push_str("// Generated by build/schema_tables.rs from src/schema/generated/onnx_schemas.json.\n\n");
    writeln!(out, "const OP_COUNT: usize = {};", t.ops.len()).expect("writing to a String cannot fail");
    writeln!(out, "const VERSION_COUNT: usize = {};", t.versions.len()).expect("writing to a String cannot fail");
    array(&mut out, "OPS", "Op", &t.ops);
    array(&mut out, "OP_SLOTS", "u16", &slots);
    array(&mut out, "VERSIONS", "Version", &t.versions);
    array(&mut out, "PARAMS", "Param", &t.params);
    array(&mut out, "ATTRS", "Attr", &t.attrs);
    array(&mut out, "CONSTRAINTS", "Constraint", &t.constraints);
    array(&mut out, "TYPES", "Str", &t.types);
    array(&mut out, "INTS", "i64", &t.ints);
    array(&mut out, "FLOATS", "f64", &t.floats);
    array(&mut out, "STRS", "Str", &t.strs);
    array(&mut out, "DOMAINS", "(Str, i64)", &domains);
    writeln!(
        out,
        "static GENERATED_FROM: GeneratedFrom = GeneratedFrom {{ onnx: {:?}, onnxruntime: {:?}, python: {:?}, \
         ort_onnx_domain_extras: &{:?} }};",
        h.onnx, h.onnxruntime, h.python, h.ort_onnx_domain_extras
    )
    .expect("writing to a String cannot fail");
    writeln!(out, "static STRINGS: &str = {:?};", t.strings).expect("writing to a String cannot fail");
    Ok(out)
}

/// The open-addressing index of the operators (sorted `schemas`, one entry per version): the
/// first free slot of `op_hash::probe` holds the operator's index in `OPS` plus one; 0 is a free
/// slot.
fn op_slots(schemas: &[&RawSchema]) -> Vec<String> {
    let mut ops: Vec<(&str, &str)> = schemas.iter().map(|s| (s.domain.as_str(), s.name.as_str())).collect();
    ops.dedup();
    assert!(ops.len() < usize::from(u16::MAX), "more operators than the index's u16 slots can number");
    // At most half full, so that a probe ends soon at a free slot.
    let mut slots = vec![0u16; (2 * ops.len()).next_power_of_two()];
    for (index, (domain, name)) in ops.iter().enumerate() {
        let free = op_hash::probe(domain, name, slots.len()).find(|&slot| slots[slot] == 0);
        slots[free.expect("half the slots are free")] = u16::try_from(index + 1).expect("checked above");
    }
    slots.iter().map(u16::to_string).collect()
}

fn array(out: &mut String, name: &str, ty: &str, items: &[String]) {
    writeln!(out, "static {name}: [{ty}; {}] = [", items.len()).expect("writing to a String cannot fail");
    for item in items {
        writeln!(out, "    {item},").expect("writing to a String cannot fail");
    }
    out.push_str("];\n");
}

/// The tables as Rust expressions, one per item.
#[derive(Default)]
struct Tables {
    ops: Vec<String>,
    versions: Vec<String>,
    params: Vec<String>,
    attrs: Vec<String>,
    constraints: Vec<String>,
    /// The allowed types of the constraints; equal lists are stored once.
    types: Vec<String>,
    type_lists: HashMap<Vec<String>, usize>,
    ints: Vec<String>,
    floats: Vec<String>,
    strs: Vec<String>,
    /// Every string once, and where it is in `strings`.
    strings: String,
    string_starts: HashMap<String, usize>,
}

impl Tables {
    /// `Str(start, len)` of `s` in the string of all strings.
    fn str(&mut self, s: &str) -> String {
        let start = match self.string_starts.get(s) {
            Some(&start) => start,
            None => {
                let start = self.strings.len();
                self.strings.push_str(s);
                self.string_starts.insert(s.to_string(), start);
                start
            }
        };
        format!("Str({start}, {})", s.len())
    }

    fn version(&mut self, s: &RawSchema) -> Result<String, String> {
        let inputs = self.params(&s.inputs)?;
        let outputs = self.params(&s.outputs)?;
        let mut attributes: Vec<&RawAttr> = s.attributes.iter().collect();
        attributes.sort_by(|a, b| a.name.cmp(&b.name));
        let first_attr = self.attrs.len();
        for a in &attributes {
            let attr = self.attr(a)?;
            self.attrs.push(attr);
        }
        let first_constraint = self.constraints.len();
        for c in &s.type_constraints {
            let types = match self.type_lists.get(&c.allowed) {
                Some(&first) => first,
                None => {
                    let first = self.types.len();
                    for a in &c.allowed {
                        let a = self.str(a);
                        self.types.push(a);
                    }
                    self.type_lists.insert(c.allowed.clone(), first);
                    first
                }
            };
            let constraint = format!(
                "Constraint {{ type_param: {}, allowed: Items({types}, {}) }}",
                self.str(&c.type_param),
                c.allowed.len()
            );
            self.constraints.push(constraint);
        }
        Ok(format!(
            "Version {{ since_version: {}, deprecated: {}, has_function: {}, runtime_only: {}, min_input: {}, \
             max_input: {}, min_output: {}, max_output: {}, inputs: {inputs}, outputs: {outputs}, \
             attributes: Items({first_attr}, {}), type_constraints: Items({first_constraint}, {}) }}",
            s.since_version,
            s.deprecated,
            s.has_function,
            s.runtime_only,
            s.min_input,
            s.max_input,
            s.min_output,
            s.max_output,
            attributes.len(),
            s.type_constraints.len(),
        ))
    }

    fn params(&mut self, params: &[RawParam]) -> Result<String, String> {
        let first = self.params.len();
        for p in params {
            let (option, min_arity) = option(p)?;
            let param = format!(
                "Param {{ name: {}, type_str: {}, option: FormalOption::{option}, is_homogeneous: {}, min_arity: {min_arity} }}",
                self.str(&p.name),
                self.str(&p.type_str),
                p.is_homogeneous,
            );
            self.params.push(param);
        }
        Ok(format!("Items({first}, {})", params.len()))
    }

    fn attr(&mut self, a: &RawAttr) -> Result<String, String> {
        let default = match &a.default {
            None => "None".to_string(),
            Some(v) => {
                let value = self.default_value(&a.ty, v).ok_or_else(|| format!("bad default for {}: {v}", a.name))?;
                format!("Some({value})")
            }
        };
        Ok(format!(
            "Attr {{ name: {}, ty: AttrType::{}, required: {}, default: {default} }}",
            self.str(&a.name),
            attr_type_variant(&a.ty),
            a.required
        ))
    }

    /// The `Value` of a default of an attribute of type `ty` (a proto name).
    fn default_value(&mut self, ty: &str, v: &serde_json::Value) -> Option<String> {
        if v.is_null() {
            return Some("Value::Other".into());
        }
        let list = v.as_array();
        Some(match ty {
            // `{:?}` writes the shortest text that reads back as the same f64.
            "FLOAT" => format!("Value::Float({:?})", v.as_f64()?),
            "INT" => format!("Value::Int({})", v.as_i64()?),
            "STRING" => format!("Value::String({})", self.str(v.as_str()?)),
            "FLOATS" => {
                let items = list?.iter().map(|x| x.as_f64().map(|f| format!("{f:?}"))).collect::<Option<Vec<_>>>()?;
                format!("Value::Floats(Items({}, {}))", push_all(&mut self.floats, items), list?.len())
            }
            "INTS" => {
                let items = list?.iter().map(|x| x.as_i64().map(|i| i.to_string())).collect::<Option<Vec<_>>>()?;
                format!("Value::Ints(Items({}, {}))", push_all(&mut self.ints, items), list?.len())
            }
            "STRINGS" => {
                let items = list?.iter().map(|x| x.as_str().map(|s| self.str(s))).collect::<Option<Vec<_>>>()?;
                format!("Value::Strings(Items({}, {}))", push_all(&mut self.strs, items), list?.len())
            }
            _ => return None,
        })
    }
}

/// Appends `items` to `table`; where the first is.
fn push_all(table: &mut Vec<String>, items: Vec<String>) -> usize {
    let first = table.len();
    table.extend(items);
    first
}
