//! Tests of the embedded schema data. Expected values were measured with the pinned
//! packages (onnx 1.23.2, onnxruntime 1.32.0) in Python.

use super::*;

/// The build-time reader of the data: the tests check the tables against the file with it.
#[allow(dead_code, reason = "writing the tables is for build.rs")]
#[path = "../../build/schema_tables.rs"]
mod generator;

fn found(domain: &str, name: &str, version: i64) -> &'static OpSchema {
    match registry().resolve(domain, name, version) {
        Resolution::Found(s) => s,
        other => panic!("{domain}::{name}@{version}: expected a schema, got {other:?}"),
    }
}

fn names(params: &[FormalParam]) -> Vec<&str> {
    params.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn generated_from_pinned_packages() {
    let g = registry().generated_from();
    assert_eq!(g.onnx, "1.23.2");
    assert_eq!(g.onnxruntime, "1.32.0");
    assert!(g.python.starts_with("3."), "{}", g.python);
    assert!(g.ort_onnx_domain_extras.contains(&"SimplifiedLayerNormalization@1"));
}

#[test]
fn counts_per_domain() {
    let r = registry();
    let count = |d: &str| {
        let ops = r.op_names(d).len();
        let versions = r.schemas().filter(|s| s.domain == normalize_domain(d)).count();
        (ops, versions)
    };
    // onnx's 203 operators, and ONNX Runtime's 10 extras that its CPU provider runs.
    assert_eq!(count(""), (213, 649));
    assert_eq!(count("ai.onnx"), (213, 649));
    assert_eq!(count("ai.onnx.ml"), (19, 25));
    assert_eq!(count("ai.onnx.preview.training"), (4, 4));
    assert_eq!(count("ai.onnx.preview"), (1, 1));
    assert_eq!(count("com.microsoft"), (150, 150));
    assert_eq!(count("com.microsoft.nchwc"), (8, 8));
    assert_eq!(count("com.ms.internal.nhwc"), (19, 43));
    assert_eq!(r.schemas().count(), 880);
}

#[test]
fn max_versions_and_domains() {
    let r = registry();
    assert_eq!(r.max_version(""), Some(28));
    assert_eq!(r.max_version("ai.onnx"), Some(28));
    assert_eq!(r.max_version("ai.onnx.ml"), Some(5));
    assert_eq!(r.max_version("com.microsoft"), Some(1));
    assert_eq!(r.max_version("ai.onnx.training"), Some(1));
    assert_eq!(r.max_version("this"), None);
    assert!(r.known_domain("ai.onnx"));
    assert!(r.known_domain("com.microsoft.nchwc"));
    assert!(!r.known_domain("com.example"));
    assert_eq!(r.domains().first(), Some(&""));
    assert!(r.op_names("com.example").is_empty());
}

#[test]
fn add_at_18_is_version_14() {
    let add = found("", "Add", 18);
    assert_eq!(add.since_version, 14);
    assert_eq!(names(&add.inputs), ["A", "B"]);
    for p in &add.inputs {
        assert_eq!(p.type_str, "T");
        assert_eq!(p.option, FormalOption::Single);
        assert_eq!(p.min_arity, 1);
    }
    assert_eq!(names(&add.outputs), ["C"]);
    let t = add.type_constraint("T").unwrap();
    assert!(t.allowed.iter().any(|s| s == "tensor(uint8)"));
    assert!(!t.allowed.iter().any(|s| s == "tensor(bool)"));
    assert!(add.type_constraint("tensor(float)").is_none());
    assert!(add.attributes.is_empty());
    // Version boundaries: 13 is in force for 13 only, 14 from 14 on.
    assert_eq!(found("ai.onnx", "Add", 13).since_version, 13);
    assert_eq!(found("", "Add", 14).since_version, 14);
    assert_eq!(found("", "Add", 28).since_version, 14);
    assert_eq!(found("", "Add", 1).since_version, 1);
    let versions: Vec<i64> = registry().versions("", "Add").iter().map(|s| s.since_version).collect();
    assert_eq!(versions, [1, 6, 7, 13, 14]);
}

#[test]
fn gelu_in_default_domain_starts_at_20() {
    let r = registry();
    assert_eq!(r.resolve("", "Gelu", 19), Resolution::NotYet { first_version: 20 });
    assert_eq!(r.resolve("ai.onnx", "Gelu", 1), Resolution::NotYet { first_version: 20 });
    let gelu = found("", "Gelu", 20);
    assert!(gelu.has_function);
    let approx = gelu.attribute("approximate").unwrap();
    assert_eq!(approx.ty, AttrType::String);
    assert_eq!(approx.default, Some(AttrDefault::String("none".into())));
}

#[test]
fn microsoft_gelu() {
    let gelu = found("com.microsoft", "Gelu", 1);
    assert_eq!(gelu.domain, "com.microsoft");
    assert_eq!(gelu.qualified_name(), "com.microsoft::Gelu");
    assert_eq!(names(&gelu.inputs), ["X"]);
    assert_eq!(names(&gelu.outputs), ["Y"]);
    assert!(gelu.attributes.is_empty());
    let t = gelu.type_constraint("T").unwrap();
    assert_eq!(t.allowed, ["tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"]);
    let read: Vec<String> = t.types.iter().map(ToString::to_string).collect();
    assert_eq!(read, t.allowed);
    // Contrib ops only have version 1; a later opset still resolves to it.
    assert_eq!(found("com.microsoft", "Gelu", 5).since_version, 1);
}

#[test]
fn leaky_relu_alpha_default() {
    let op = found("", "LeakyRelu", 18);
    assert_eq!(op.since_version, 16);
    let alpha = op.attribute("alpha").unwrap();
    assert_eq!(alpha.ty, AttrType::Float);
    assert!(!alpha.required);
    match alpha.default {
        Some(AttrDefault::Float(v)) => assert_eq!(v as f32, 0.01f32),
        ref other => panic!("unexpected default {other:?}"),
    }
    assert!(op.attribute("beta").is_none());
}

#[test]
fn float_defaults_are_exact_as_f32() {
    // Clip-6 has float attributes min/max defaulting to -FLT_MAX/FLT_MAX.
    let clip6 = found("", "Clip", 6);
    assert_eq!(clip6.since_version, 6);
    let max = clip6.attribute("max").unwrap();
    match max.default {
        Some(AttrDefault::Float(v)) => assert_eq!(v as f32, f32::MAX),
        ref other => panic!("unexpected default {other:?}"),
    }
    match clip6.attribute("min").unwrap().default {
        Some(AttrDefault::Float(v)) => assert_eq!(v as f32, f32::MIN),
        ref other => panic!("unexpected default {other:?}"),
    }
}

#[test]
fn clip_at_18_has_optional_inputs() {
    let clip = found("", "Clip", 18);
    assert_eq!(clip.since_version, 13);
    assert_eq!(names(&clip.inputs), ["input", "min", "max"]);
    let options: Vec<_> = clip.inputs.iter().map(|p| p.option).collect();
    assert_eq!(options, [FormalOption::Single, FormalOption::Optional, FormalOption::Optional]);
    assert_eq!(clip.inputs[1].min_arity, 0);
    assert_eq!((clip.min_input, clip.max_input), (1, 3));
    assert!(clip.attributes.is_empty());
}

#[test]
fn concat_input_is_variadic() {
    let concat = found("", "Concat", 18);
    assert_eq!(concat.since_version, 13);
    assert_eq!(concat.inputs.len(), 1);
    let p = &concat.inputs[0];
    assert_eq!(p.name, "inputs");
    assert_eq!(p.option, FormalOption::Variadic);
    assert_eq!(p.min_arity, 1);
    assert!(p.is_homogeneous);
    assert_eq!(concat.max_input, i32::MAX as u32);
    let axis = concat.attribute("axis").unwrap();
    assert_eq!(axis.ty, AttrType::Int);
    assert!(axis.required);
    assert_eq!(axis.default, None);
}

#[test]
fn split_at_18_has_variadic_output() {
    let split = found("", "Split", 18);
    assert_eq!(split.since_version, 18);
    assert_eq!(names(&split.inputs), ["input", "split"]);
    assert_eq!(split.inputs[1].option, FormalOption::Optional);
    assert_eq!(split.outputs.len(), 1);
    assert_eq!(split.outputs[0].option, FormalOption::Variadic);
    assert_eq!(split.outputs[0].min_arity, 1);
    assert_eq!(split.attribute("axis").unwrap().default, Some(AttrDefault::Int(0)));
    let num_outputs = split.attribute("num_outputs").unwrap();
    assert!(!num_outputs.required);
    assert_eq!(num_outputs.default, None);
}

#[test]
fn loop_state_may_be_empty() {
    let lp = found("", "Loop", 18);
    assert_eq!(lp.since_version, 16);
    let v = &lp.inputs[2];
    assert_eq!((v.name.as_str(), v.option, v.min_arity), ("v_initial", FormalOption::Variadic, 0));
    assert!(!v.is_homogeneous);
    assert_eq!(lp.attribute("body").unwrap().ty, AttrType::Graph);
}

#[test]
fn list_and_other_attribute_types() {
    let rnn = found("", "RNN", 22);
    assert_eq!(
        rnn.attribute("activations").unwrap().default,
        Some(AttrDefault::Strings(vec!["Tanh".into(), "Tanh".into()]))
    );
    let mvn = found("", "MeanVarianceNormalization", 18);
    assert_eq!(mvn.attribute("axes").unwrap().default, Some(AttrDefault::Ints(vec![0, 2, 3])));
    let constant = found("", "Constant", 18);
    let ty = |n: &str| constant.attribute(n).unwrap().ty;
    assert_eq!(ty("value"), AttrType::Tensor);
    assert_eq!(ty("sparse_value"), AttrType::SparseTensor);
    assert_eq!(ty("value_floats"), AttrType::Floats);
    assert_eq!(ty("value_strings"), AttrType::Strings);
    assert_eq!((constant.min_input, constant.max_input), (0, 0));
}

#[test]
fn deprecated_schemas() {
    let up = found("", "Upsample", 18);
    assert_eq!(up.since_version, 10);
    assert!(up.deprecated);
    assert!(!found("", "Upsample", 9).deprecated);
    let deprecated = registry().schemas().filter(|s| s.deprecated && !s.runtime_only).count();
    assert_eq!(deprecated, 5);
}

#[test]
fn onnx_runtime_registrations_in_the_onnx_domain() {
    // ONNX Runtime registers SimplifiedLayerNormalization in the ONNX domain, and the
    // LayerNormalization of opsets 1 to 16, before onnx's (opset 17).
    let s = found("", "SimplifiedLayerNormalization", 18);
    assert!(s.runtime_only);
    assert_eq!(s.since_version, 1);
    assert_eq!(names(&s.inputs), ["X", "scale"]);
    assert!(found("", "LayerNormalization", 13).runtime_only);
    assert!(!found("", "LayerNormalization", 17).runtime_only);
    assert!(!found("", "Add", 18).runtime_only);
}

#[test]
fn unknown_ops() {
    let r = registry();
    assert_eq!(r.resolve("", "NoSuchOp", 18), Resolution::Unknown);
    assert_eq!(r.resolve("com.example", "Add", 1), Resolution::Unknown);
    // ORT's schemas in the ONNX domain that its CPU provider does not run are absent.
    assert_eq!(r.resolve("", "DisentangledAttention_TRT", 18), Resolution::Unknown);
    // Names are case-sensitive.
    assert_eq!(r.resolve("", "add", 18), Resolution::Unknown);
    assert!(r.versions("", "NoSuchOp").is_empty());
}

#[test]
fn op_names_are_sorted_and_complete() {
    let names = registry().op_names("");
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    for n in ["Add", "Concat", "Gelu", "If", "Loop", "Split"] {
        assert!(names.contains(&n), "{n}");
    }
}

#[test]
fn ort_variadic_min_arity() {
    // QLinearConcat(Y_scale, Y_zero_point, inputs...): min_input 3 => arity >= 1.
    let qc = found("com.microsoft", "QLinearConcat", 1);
    assert_eq!(qc.min_input, 3);
    let last = qc.inputs.last().unwrap();
    assert_eq!((last.option, last.min_arity), (FormalOption::Variadic, 1));
    let ep = found("com.microsoft", "EPContext", 1);
    assert_eq!(ep.inputs[0].min_arity, 0);
}

#[test]
fn every_schema_is_consistent() {
    for s in registry().schemas() {
        let q = format!("{}@{}", s.qualified_name(), s.since_version);
        // Attribute lookup by binary search relies on name order.
        assert!(s.attributes.windows(2).all(|w| w[0].name < w[1].name), "{q}");
        for p in s.inputs.iter().chain(&s.outputs) {
            assert!(!p.type_str.is_empty(), "{q}");
            // A type_str is a type parameter or a concrete type, and onnxsc reads every one.
            match &p.ty {
                FormalType::Param(i) => assert_eq!(s.type_constraints[*i].type_param, p.type_str, "{q}"),
                FormalType::Concrete(t) => assert_eq!(t.to_string(), p.type_str, "{q}"),
                FormalType::Unknown => panic!("{q}: {} is not read", p.type_str),
            }
        }
        for c in &s.type_constraints {
            assert_eq!(c.types.len(), c.allowed.len(), "{q}: {:?} are not all read", c.allowed);
        }
        for (params, min, max) in [(&s.inputs, s.min_input, s.max_input), (&s.outputs, s.min_output, s.max_output)] {
            if let Some(i) = params.iter().position(|p| p.option == FormalOption::Variadic) {
                assert_eq!(i, params.len() - 1, "{q}: variadic not last");
                assert_eq!(max, i32::MAX as u32, "{q}");
            } else {
                assert_eq!(max as usize, params.len(), "{q}");
            }
            assert!(min <= max, "{q}");
        }
        for a in &s.attributes {
            if let Some(d) = &a.default {
                let ok = matches!(
                    (a.ty, d),
                    (AttrType::Float, AttrDefault::Float(_))
                        | (AttrType::Int, AttrDefault::Int(_))
                        | (AttrType::String, AttrDefault::String(_))
                        | (AttrType::Floats, AttrDefault::Floats(_))
                        | (AttrType::Ints, AttrDefault::Ints(_))
                        | (AttrType::Strings, AttrDefault::Strings(_))
                        | (_, AttrDefault::Other)
                );
                assert!(ok, "{q}: {} {:?}", a.name, d);
                assert!(!a.required, "{q}: required attribute {} has a default", a.name);
            }
        }
    }
}

/// Whether a default read from the tables is the file's.
fn same_default(json: &serde_json::Value, default: &AttrDefault) -> bool {
    use serde_json::Value;
    let list = |items: &mut dyn Iterator<Item = Value>| json.as_array().is_some_and(|a| a.iter().cloned().eq(items));
    match default {
        AttrDefault::Float(f) => json.as_f64() == Some(*f),
        AttrDefault::Int(i) => json.as_i64() == Some(*i),
        AttrDefault::String(s) => json.as_str() == Some(s),
        AttrDefault::Floats(v) => {
            json.as_array().is_some_and(|a| a.iter().map(Value::as_f64).eq(v.iter().map(|f| Some(*f))))
        }
        AttrDefault::Ints(v) => list(&mut v.iter().map(|&i| Value::from(i))),
        AttrDefault::Strings(v) => list(&mut v.iter().map(|s| Value::from(s.as_str()))),
        AttrDefault::Other => json.is_null(),
    }
}

#[test]
fn tables_match_the_json() {
    let raw = generator::parse(include_str!("generated/onnx_schemas.json")).unwrap();
    let r = registry();
    assert_eq!(r.schemas().count(), raw.schemas.len());

    let g = r.generated_from();
    let h = &raw.header;
    assert_eq!((g.onnx, g.onnxruntime, g.python), (h.onnx.as_str(), h.onnxruntime.as_str(), h.python.as_str()));
    assert_eq!(g.ort_onnx_domain_extras, h.ort_onnx_domain_extras.as_slice());
    let mut max_versions = h.max_versions.clone();
    for s in &raw.schemas {
        let v = max_versions.entry(s.domain.clone()).or_insert(s.since_version);
        *v = (*v).max(s.since_version);
    }
    assert_eq!(r.domains(), max_versions.keys().map(String::as_str).collect::<Vec<_>>());
    for (d, v) in &max_versions {
        assert_eq!(r.max_version(d), Some(*v), "{d}");
    }

    for s in &raw.schemas {
        let q = format!("{}::{}@{}", s.domain, s.name, s.since_version);
        let versions = r.versions(&s.domain, &s.name);
        let found = versions.iter().find(|f| f.since_version == s.since_version);
        let found = found.unwrap_or_else(|| panic!("{q} is not in the tables"));
        assert_eq!((found.domain.as_str(), found.name.as_str()), (s.domain.as_str(), s.name.as_str()));
        assert_eq!(
            (found.deprecated, found.has_function, found.runtime_only),
            (s.deprecated, s.has_function, s.runtime_only),
            "{q}"
        );
        assert_eq!(
            (found.min_input, found.max_input, found.min_output, found.max_output),
            (s.min_input, s.max_input, s.min_output, s.max_output),
            "{q}"
        );
        for (params, raw_params) in [(&found.inputs, &s.inputs), (&found.outputs, &s.outputs)] {
            assert_eq!(params.len(), raw_params.len(), "{q}");
            for (p, rp) in params.iter().zip(raw_params) {
                assert_eq!(
                    (p.name.as_str(), p.type_str.as_str(), p.is_homogeneous),
                    (rp.name.as_str(), rp.type_str.as_str(), rp.is_homogeneous),
                    "{q}"
                );
                assert_eq!(format!("{:?}", p.option).to_lowercase(), rp.option, "{q}: {}", rp.name);
                if let Some(min_arity) = rp.min_arity {
                    assert_eq!(p.min_arity, min_arity, "{q}: {}", rp.name);
                }
            }
        }
        assert_eq!(found.attributes.len(), s.attributes.len(), "{q}");
        for ra in &s.attributes {
            let a = found.attribute(&ra.name).unwrap_or_else(|| panic!("{q}: no attribute {}", ra.name));
            assert_eq!((a.ty.proto_name(), a.required), (ra.ty.as_str(), ra.required), "{q}: {}", ra.name);
            match (&ra.default, &a.default) {
                (None, None) => {}
                (Some(json), Some(d)) => assert!(same_default(json, d), "{q}: {}: {json} read as {d:?}", ra.name),
                (json, d) => panic!("{q}: {}: {json:?} read as {d:?}", ra.name),
            }
        }
        let constraints: Vec<(&str, &[String])> =
            found.type_constraints.iter().map(|c| (c.type_param.as_str(), c.allowed.as_slice())).collect();
        let raw_constraints: Vec<(&str, &[String])> =
            s.type_constraints.iter().map(|c| (c.type_param.as_str(), c.allowed.as_slice())).collect();
        assert_eq!(constraints, raw_constraints, "{q}");
    }
}

#[test]
fn lookups_read_only_what_they_ask_for() {
    // A registry of its own, so that other tests do not read operators into it.
    let r = Registry { decoded: [const { OnceLock::new() }; tables::VERSIONS_COUNT] };
    assert!(r.knows_operator("", "Add"));
    assert_eq!(r.max_version(""), Some(28));
    assert!(!r.op_names("").is_empty());
    assert!(r.decoded.iter().all(|d| d.get().is_none()), "no operator is read without being asked for");
    let Resolution::Found(add_14) = r.resolve("", "Add", 18) else { panic!("Add is in opset 18") };
    assert_eq!(add_14.since_version, 14);
    // Only the version in force is read, not Add's older ones.
    let add = tables::find("", "Add").unwrap();
    assert!(tables::versions(add).len() > 1);
    let read: Vec<i64> =
        (0..tables::VERSIONS_COUNT).filter_map(|v| r.decoded[v].get()).map(|s| s.since_version).collect();
    assert_eq!(read, [14]);
    assert!(matches!(r.resolve("", "Add", 0), Resolution::NotYet { first_version: 1 }));
}

#[test]
fn normalize() {
    assert_eq!(normalize_domain("ai.onnx"), "");
    assert_eq!(normalize_domain(""), "");
    assert_eq!(normalize_domain("ai.onnx.ml"), "ai.onnx.ml");
}
