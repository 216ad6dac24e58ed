//! `onnxsc::link`: specialisation, inlining and the link diagnostics, as insta snapshots of ONNX
//! text and rendered diagnostics; and no panic on any truncation or corruption of a model or
//! library. (tests/python/test_link.py runs linked models in ONNX Runtime.)
//!
//! Update the snapshots with `INSTA_UPDATE=always cargo test --test link`, then review the diff.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::diagnostics::{render_plain, Diagnostic};
use onnxsc::emit;
use onnxsc::link::specialize::{specialize, specialize_call, Actual};
use onnxsc::link::{self, Library, LinkOptions, Mode};
use onnxsc::proto::onnx::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
};
use onnxsc::source::SourceMap;
use prost::Message;

const LIB: &str = r#"
import onnxscript
from onnxscript import FLOAT, opset20 as op, script

lk = onnxscript.values.Opset("test.link", 1)
ms = onnxscript.values.Opset("com.microsoft", 1)


@script(lk)
def scaled(x: FLOAT, alpha: float = 1.0) -> FLOAT:
    if alpha != 1.0:
        x = op.Mul(x, op.CastLike(alpha, x))
    return op.Add(x, x)


@script(lk)
def shift(x: FLOAT, by: float) -> FLOAT:
    return op.Add(x, op.CastLike(by, x))


@script(lk)
def gelu(x: FLOAT) -> FLOAT:
    return ms.Gelu(x)


@script(lk)
def nested(x: FLOAT, alpha: float = 3.0) -> FLOAT:
    return scaled(shift(x, by=alpha), alpha=alpha)


@script(lk, default_opset=op)
def pick(x: FLOAT, mode: str = "relu", flag: bool = False) -> FLOAT:
    if mode == "relu":
        y = op.Relu(x)
    elif mode == "neg":
        y = op.Neg(x)
    else:
        y = op.Identity(x)
    if flag:
        y = op.Abs(y)
    return y
"#;

const D: &str = "test.link";

fn library() -> Vec<FunctionProto> {
    let c = onnxsc::driver::compile_sources(vec![("lib.onnxs".into(), LIB.into())]);
    assert!(!c.has_errors(), "{:?}", c.diagnostics);
    c.functions.iter().map(emit::proto::function).collect()
}

fn function(name: &str) -> FunctionProto {
    library().into_iter().find(|f| f.name() == name).expect("the library defines it")
}

fn float_attr(name: &str, f: f32) -> AttributeProto {
    AttributeProto { name: Some(name.into()), f: Some(f), r#type: Some(1), ..Default::default() }
}

fn int_attr(name: &str, i: i64) -> AttributeProto {
    AttributeProto { name: Some(name.into()), i: Some(i), r#type: Some(2), ..Default::default() }
}

fn str_attr(name: &str, s: &str) -> AttributeProto {
    AttributeProto { name: Some(name.into()), s: Some(s.as_bytes().to_vec()), r#type: Some(3), ..Default::default() }
}

fn node(
    domain: &str,
    op: &str,
    name: &str,
    inputs: &[&str],
    outputs: &[&str],
    attrs: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto {
        name: Some(name.into()),
        domain: Some(domain.into()),
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

fn call(op: &str, name: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    node(D, op, name, inputs, outputs, attrs)
}

/// A float tensor of unknown shape, typed as onnx.checker requires of graph inputs and outputs.
fn info(name: &str) -> ValueInfoProto {
    use onnxsc::proto::onnx::{type_proto, TensorShapeProto, TypeProto};
    let tensor = type_proto::Tensor { elem_type: Some(1), shape: Some(TensorShapeProto::default()) };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto { value: Some(type_proto::Value::TensorType(tensor)), ..Default::default() }),
        ..Default::default()
    }
}

fn opset(domain: &str, version: i64) -> OperatorSetIdProto {
    OperatorSetIdProto { domain: Some(domain.into()), version: Some(version) }
}

fn graph(nodes: Vec<NodeProto>, inputs: &[&str], outputs: &[&str]) -> GraphProto {
    GraphProto {
        name: Some("main".into()),
        node: nodes,
        input: inputs.iter().map(|s| info(s)).collect(),
        output: outputs.iter().map(|s| info(s)).collect(),
        ..Default::default()
    }
}

fn model(g: GraphProto, functions: Vec<FunctionProto>) -> ModelProto {
    ModelProto {
        ir_version: Some(10),
        graph: Some(g),
        opset_import: vec![opset("", 20), opset(D, 1)],
        functions,
        ..Default::default()
    }
}

/// The linked model's graph and functions as ONNX text (the graph printed as a function).
fn text(m: &ModelProto) -> String {
    let g = m.graph.as_ref().expect("a graph");
    let as_function = FunctionProto {
        name: Some("main_graph".into()),
        domain: Some(String::new()),
        input: g.input.iter().map(|v| v.name().to_string()).collect(),
        output: g.output.iter().map(|v| v.name().to_string()).collect(),
        node: g.node.clone(),
        opset_import: m.opset_import.clone(),
        ..Default::default()
    };
    let mut all = vec![as_function];
    all.extend(m.functions.iter().cloned());
    format!("ir_version: {}\n{}", m.ir_version(), emit::text::functions_to_text(&all))
}

fn errors(m: ModelProto, libs: Vec<Library>, mode: Mode) -> String {
    match link::link(m, libs, &LinkOptions { mode, override_model: false, max_nodes: link::DEFAULT_MAX_NODES }) {
        Ok(_) => panic!("linking should fail"),
        Err(diags) => render(&diags),
    }
}

fn render(diags: &[Diagnostic]) -> String {
    let sources = SourceMap::new();
    diags.iter().map(|d| render_plain(&sources, d)).collect()
}

fn lib(functions: Vec<FunctionProto>) -> Vec<Library> {
    vec![Library { name: "lib.onnx".into(), functions, traced: None }]
}

// ------------------------------------------------------------------------------------------
// Specialisation
// ------------------------------------------------------------------------------------------

#[test]
fn specialise_folds_attribute_only_conditions() {
    let pick = function("pick");
    let cases = [
        ("defaults", vec![]),
        ("neg_flag", vec![str_attr("mode", "neg"), int_attr("flag", 1)]),
        ("other", vec![str_attr("mode", "other")]),
    ];
    for (name, attrs) in cases {
        insta::assert_snapshot!(
            format!("specialise_pick_{name}"),
            emit::text::function_to_text(&specialize(&pick, &attrs))
        );
    }
    let scaled = function("scaled");
    insta::assert_snapshot!(
        "specialise_scaled_2",
        emit::text::function_to_text(&specialize(&scaled, &[float_attr("alpha", 2.0)]))
    );
}

const OPTIONAL: &str = r#"
from typing import Optional

from onnxscript import FLOAT, opset18 as op, script


@script()
def affine(x: FLOAT, weight: Optional[FLOAT] = None, bias: Optional[FLOAT] = None, low: Optional[float] = None, mode: str = "clip") -> FLOAT:
    y = op.Identity(x)
    if weight is not None:
        y = y * weight
    if mode == "clip" and low is not None:
        y = op.Clip(y, low)
    return op.Clip(y, None, bias)
"#;

#[test]
fn specialise_a_call_folds_its_none_tests() {
    let c = onnxsc::driver::compile_sources(vec![("optional.onnxs".into(), OPTIONAL.into())]);
    assert!(!c.has_errors(), "{:?}", c.diagnostics);
    let affine = emit::proto::function(&c.functions[0]);
    let cases: [(&str, Vec<AttributeProto>, &[Actual]); 4] = [
        // Nothing given: no weight, no clip, `bias` left out of the last Clip.
        ("nothing", vec![], &[Actual::Tensor, Actual::Absent, Actual::Absent]),
        // Weight and low given: both branches taken, the bias input is still omitted.
        ("weight_low", vec![float_attr("low", -1.0)], &[Actual::Tensor, Actual::Tensor, Actual::Absent]),
        // Another mode: the string comparison folds, `low` is ignored.
        (
            "other_mode",
            vec![float_attr("low", -1.0), str_attr("mode", "none")],
            &[Actual::Tensor, Actual::Absent, Actual::Tensor],
        ),
        // A given input of unknown kind keeps its test (it might be an empty optional value).
        ("unknown_weight", vec![], &[Actual::Tensor, Actual::Unknown, Actual::Tensor]),
    ];
    for (name, attrs, inputs) in cases {
        let s = specialize_call(&affine, &attrs, inputs);
        let text = emit::text::function_to_text(&s);
        assert!(!text.contains("CategoryMapper") && !text.contains("@low"), "{text}");
        assert_eq!(text.contains("If ("), name == "unknown_weight", "{text}");
        insta::assert_snapshot!(format!("specialise_call_{name}"), text);
    }
}

#[test]
fn specialise_keeps_unbound_references() {
    // `by` has no default and no value here: it stays an attribute and a reference.
    let shift = function("shift");
    let s = specialize(&shift, &[]);
    assert_eq!(s.attribute, vec!["by".to_string()]);
    let text = emit::text::function_to_text(&s);
    assert!(text.contains("@by"), "{text}");
}

#[test]
fn specialise_copies_outer_values_taken_by_a_branch() {
    // if_out = If(true) then (x) else (...): the branch returns an outer value, so an Identity
    // copies it; a branch output it computes is renamed instead.
    let then_g = GraphProto {
        name: Some("then".into()),
        node: vec![node("", "Neg", "", &["x"], &["n"], vec![])],
        output: vec![info("x"), info("n")],
        ..Default::default()
    };
    let else_g = GraphProto { name: Some("else".into()), output: vec![info("x"), info("x")], ..Default::default() };
    let branches = vec![
        AttributeProto { name: Some("then_branch".into()), g: Some(then_g), r#type: Some(5), ..Default::default() },
        AttributeProto { name: Some("else_branch".into()), g: Some(else_g), r#type: Some(5), ..Default::default() },
    ];
    let f = FunctionProto {
        name: Some("f".into()),
        domain: Some(D.into()),
        input: vec!["x".into()],
        output: vec!["a".into(), "b".into()],
        attribute: vec!["on".into()],
        node: vec![
            node(
                "",
                "Constant",
                "",
                &[],
                &["c"],
                vec![AttributeProto {
                    name: Some("value_int".into()),
                    ref_attr_name: Some("on".into()),
                    r#type: Some(2),
                    ..Default::default()
                }],
            ),
            node("", "Cast", "", &["c"], &["cb"], vec![int_attr("to", 9)]),
            node("", "If", "", &["cb"], &["a", "b"], branches),
        ],
        opset_import: vec![opset("", 20)],
        ..Default::default()
    };
    insta::assert_snapshot!(
        "specialise_then_branch",
        emit::text::function_to_text(&specialize(&f, &[int_attr("on", 1)]))
    );
    insta::assert_snapshot!(
        "specialise_else_branch",
        emit::text::function_to_text(&specialize(&f, &[int_attr("on", 0)]))
    );
}

// ------------------------------------------------------------------------------------------
// Linking
// ------------------------------------------------------------------------------------------

fn exported() -> ModelProto {
    let then_g = GraphProto {
        name: Some("then".into()),
        node: vec![call("scaled", "in_branch", &["b"], &["t"], vec![float_attr("alpha", 3.0)])],
        output: vec![info("t")],
        ..Default::default()
    };
    let nodes = vec![
        call("scaled", "s0", &["x"], &["a"], vec![]),
        call("nested", "n0", &["a"], &["b"], vec![]),
        call("pick", "p0", &["b"], &["c"], vec![str_attr("mode", "neg")]),
        call("gelu", "g0", &["c"], &["d"], vec![]),
        node(
            "",
            "If",
            "branch",
            &["cond"],
            &["y"],
            vec![
                AttributeProto {
                    name: Some("then_branch".into()),
                    g: Some(then_g),
                    r#type: Some(5),
                    ..Default::default()
                },
                AttributeProto {
                    name: Some("else_branch".into()),
                    g: Some(GraphProto { name: Some("else".into()), output: vec![info("d")], ..Default::default() }),
                    r#type: Some(5),
                    ..Default::default()
                },
            ],
        ),
    ];
    model(graph(nodes, &["x", "cond"], &["y"]), vec![])
}

#[test]
fn inline_mode_text() {
    let linked = link::link(
        exported(),
        lib(library()),
        &LinkOptions { mode: Mode::Inline, override_model: false, max_nodes: link::DEFAULT_MAX_NODES },
    )
    .expect("links");
    assert_eq!(linked.inlined_calls, 5);
    insta::assert_snapshot!("inline_exported", text(&linked.model));
}

#[test]
fn reference_mode_adds_called_functions_only() {
    let linked = link::link(
        exported(),
        lib(library()),
        &LinkOptions { mode: Mode::Reference, override_model: false, max_nodes: link::DEFAULT_MAX_NODES },
    )
    .expect("links");
    let names: Vec<&str> = linked.model.functions.iter().map(|f| f.name()).collect();
    // Callees first; `nested` brings `shift` and `scaled`.
    assert_eq!(names, ["scaled", "shift", "nested", "pick", "gelu"]);
    let domains: Vec<&str> = linked.model.opset_import.iter().map(|o| o.domain()).collect();
    assert_eq!(domains, ["", D, "com.microsoft"]);
    assert_eq!(linked.model.ir_version(), 10);
}

#[test]
fn inline_names_do_not_collide_with_existing_ones() {
    // The model already uses the names an instance would get first.
    let nodes = vec![
        node("", "Identity", "s0/Add", &["x"], &["s0/return_val"], vec![]),
        call("scaled", "s0", &["s0/return_val"], &["y"], vec![]),
        call("scaled", "s0", &["y"], &["z"], vec![]),
    ];
    let m = model(graph(nodes, &["x"], &["z"]), vec![]);
    let linked = link::link(
        m,
        lib(library()),
        &LinkOptions { mode: Mode::Inline, override_model: false, max_nodes: link::DEFAULT_MAX_NODES },
    )
    .expect("links");
    insta::assert_snapshot!("inline_fresh_names", text(&linked.model));
}

#[test]
fn functions_still_called_are_kept() {
    // A call passing a graph attribute is not expanded (the graph is the caller's, not the
    // body's): its function stays, with the functions it calls; the others go.
    let takes_graph = FunctionProto {
        name: Some("takes_graph".into()),
        domain: Some(D.into()),
        input: vec!["x".into()],
        output: vec!["y".into()],
        attribute: vec!["body".into()],
        node: vec![call("shift", "", &["x"], &["y"], vec![float_attr("by", 1.0)])],
        opset_import: vec![opset(D, 1)],
        ..Default::default()
    };
    let graph_attr = AttributeProto {
        name: Some("body".into()),
        g: Some(GraphProto { name: Some("g".into()), ..Default::default() }),
        r#type: Some(5),
        ..Default::default()
    };
    let nodes =
        vec![call("scaled", "s", &["x"], &["a"], vec![]), call("takes_graph", "t", &["a"], &["y"], vec![graph_attr])];
    let m = model(graph(nodes, &["x"], &["y"]), vec![takes_graph]);
    let linked = link::link(
        m,
        lib(library()),
        &LinkOptions { mode: Mode::Inline, override_model: false, max_nodes: link::DEFAULT_MAX_NODES },
    )
    .expect("links");
    let names: Vec<&str> = linked.model.functions.iter().map(|f| f.name()).collect();
    assert_eq!(names, ["shift", "takes_graph"]);
    assert_eq!(linked.inlined_calls, 1);
    let ops: Vec<&str> = linked.model.graph.as_ref().unwrap().node.iter().map(|n| n.op_type()).collect();
    assert_eq!(ops, ["Identity", "Add", "takes_graph"]);
}

// ------------------------------------------------------------------------------------------
// Diagnostics
// ------------------------------------------------------------------------------------------

#[test]
fn diagnostics() {
    let unresolved = model(
        graph(
            vec![call("nope", "n1", &["x"], &["a"], vec![]), call("nope", "", &["a"], &["y"], vec![])],
            &["x"],
            &["y"],
        ),
        vec![],
    );
    insta::assert_snapshot!("unresolved", errors(unresolved, lib(library()), Mode::Reference));

    let bad_call = model(
        graph(
            vec![
                call("scaled", "bad", &["x", "x"], &["y", "z"], vec![int_attr("alpha", 2), float_attr("beta", 1.0)]),
                call("shift", "no_input", &[], &["w"], vec![]),
            ],
            &["x"],
            &["y"],
        ),
        vec![],
    );
    insta::assert_snapshot!("signature", errors(bad_call, lib(library()), Mode::Inline));

    let twice = lib(vec![function("scaled"), function("scaled")]);
    let m = model(graph(vec![call("scaled", "s", &["x"], &["y"], vec![])], &["x"], &["y"]), vec![]);
    insta::assert_snapshot!("duplicate", errors(m, twice, Mode::Reference));

    let mut old = function("scaled");
    old.opset_import = vec![opset("", 12)];
    old.node.push(node("", "Split", "", &["x"], &["p", "q"], vec![]));
    let m = model(graph(vec![call("scaled", "s", &["x"], &["y"], vec![])], &["x"], &["y"]), vec![]);
    insta::assert_snapshot!("opset_conflict", errors(m, lib(vec![old]), Mode::Inline));

    let ping = FunctionProto {
        name: Some("ping".into()),
        domain: Some(D.into()),
        input: vec!["x".into()],
        output: vec!["y".into()],
        node: vec![call("pong", "", &["x"], &["y"], vec![])],
        ..Default::default()
    };
    let pong = FunctionProto {
        name: Some("pong".into()),
        node: vec![call("ping", "", &["x"], &["y"], vec![])],
        ..ping.clone()
    };
    let m = model(graph(vec![call("ping", "p", &["x"], &["y"], vec![])], &["x"], &["y"]), vec![ping, pong]);
    insta::assert_snapshot!("recursion", errors(m, vec![], Mode::Inline));

    let bytes = exported().encode_to_vec();
    let d = link::load::model(&bytes[..bytes.len() / 2], "cut.onnx").expect_err("a truncated model is refused");
    insta::assert_snapshot!("truncated", render(&[*d]));
}

#[test]
fn model_function_kept_without_override() {
    let own = FunctionProto {
        node: vec![node("", "Neg", "", &["x"], &["return_val"], vec![])],
        attribute_proto: vec![],
        metadata_props: vec![],
        ..function("scaled")
    };
    let m = model(graph(vec![call("scaled", "s", &["x"], &["y"], vec![])], &["x"], &["y"]), vec![own]);
    let kept = link::link(
        m.clone(),
        lib(library()),
        &LinkOptions { mode: Mode::Reference, override_model: false, max_nodes: link::DEFAULT_MAX_NODES },
    )
    .expect("links");
    insta::assert_snapshot!("model_function_kept", render(&kept.diagnostics));
    assert_eq!(kept.model.functions[0].node.len(), 1, "the model's own definition");
    let replaced = link::link(
        m,
        lib(library()),
        &LinkOptions { mode: Mode::Reference, override_model: true, max_nodes: link::DEFAULT_MAX_NODES },
    )
    .expect("links");
    assert!(replaced.diagnostics.is_empty());
    assert!(replaced.model.functions[0].node.len() > 1, "the library's definition");
}

#[test]
fn each_reason_to_refuse_a_model_has_its_own_help() {
    // The graph's output has no type: onnx.checker refuses it, but the file is not corrupt.
    let mut untyped = model(graph(vec![node("", "Neg", "n", &["x"], &["y"], vec![])], &["x"], &["y"]), vec![]);
    untyped.graph.as_mut().unwrap().output[0].r#type = None;
    let bytes = untyped.encode_to_vec();
    let d = link::load::model(&bytes, "untyped.onnx").expect_err("an untyped output is refused");
    insta::assert_snapshot!("untyped_output", render(&[*d]));
    // A library given as the model has no graph.
    let library = ModelProto { ir_version: Some(10), functions: library(), ..Default::default() }.encode_to_vec();
    let d = link::load::model(&library, "lib.onnx").expect_err("a library is not a model");
    insta::assert_snapshot!("library_as_model", render(&[*d]));
}

// ------------------------------------------------------------------------------------------
// Reference mode: variants for calls that leave values out, and the depth of call chains
// ------------------------------------------------------------------------------------------

/// `OPTIONAL`'s `affine`, and a function passing its optional input on to it.
const VARIANTS: &str = r#"


@script()
def layer(x: FLOAT, bias: Optional[FLOAT] = None) -> FLOAT:
    return affine(x, x, bias, low=0.0)
"#;

/// A model at the library's opset (`OPTIONAL` imports 18).
fn model18(g: GraphProto) -> ModelProto {
    ModelProto { opset_import: vec![opset("", 18), opset("this", 1)], ..model(g, vec![]) }
}

fn reference(m: ModelProto, functions: Vec<FunctionProto>) -> Result<link::Linked, Vec<Diagnostic>> {
    let options = LinkOptions { mode: Mode::Reference, override_model: false, max_nodes: link::DEFAULT_MAX_NODES };
    link::link(m, lib(functions), &options)
}

fn variants_library() -> Vec<FunctionProto> {
    let c = onnxsc::driver::compile_sources(vec![("variants.onnxs".into(), format!("{OPTIONAL}{VARIANTS}"))]);
    assert!(!c.has_errors(), "{:?}", c.diagnostics);
    c.functions.iter().map(emit::proto::function).collect()
}

/// A call of `OPTIONAL`'s or `VARIANTS`' functions (domain `this`).
fn call_this(op: &str, name: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    node("this", op, name, inputs, outputs, attrs)
}

#[test]
fn reference_mode_calls_variants_for_omitted_inputs() {
    // Each call that leaves something out (an input, or `low`, which a `Constant` refers to)
    // calls a variant without it; nested calls too (`layer` without `bias` calls `affine`
    // without `bias`). Calls that give everything stay.
    let low = || vec![float_attr("low", -1.0)];
    let nodes = vec![
        call_this("affine", "no_weight", &["x", "", "b"], &["a1"], low()),
        call_this("affine", "x_only", &["x"], &["a2"], vec![]),
        call_this("affine", "everything", &["x", "w", "b"], &["a3"], low()),
        call_this("affine", "no_weight_again", &["x", "", "a3"], &["a4"], low()),
        call_this("layer", "layer_x", &["x"], &["l1"], vec![]),
        call_this("layer", "layer_b", &["x", "b"], &["l2"], vec![]),
    ];
    let m = model18(graph(nodes, &["x", "w", "b"], &["a1", "a2", "a4", "l1", "l2"]));
    let linked = reference(m, variants_library()).expect("links");
    let names: Vec<&str> = linked.model.functions.iter().map(|f| f.name()).collect();
    assert_eq!(
        names,
        [
            "affine__without_weight",
            "affine__without_weight_bias_low",
            "affine",
            "affine__without_bias",
            "layer__without_bias",
            "layer"
        ]
    );
    insta::assert_snapshot!("reference_variants", text(&linked.model));
    // Linked again, the output needs no variant more: its calls give everything they take.
    let again = reference(linked.model.clone(), vec![]).expect("links again");
    assert_eq!(again.model, linked.model);
}

#[test]
fn variant_names_collide_with_nothing() {
    // The library already defines the name a variant would take.
    let mut lib = variants_library();
    let taken = FunctionProto { name: Some("affine__without_weight".into()), ..lib[0].clone() };
    lib.push(taken);
    let nodes = vec![call_this("affine", "c", &["x", "", "b"], &["y"], vec![float_attr("low", -1.0)])];
    let linked = reference(model18(graph(nodes, &["x", "b"], &["y"])), lib).expect("links");
    let names: Vec<&str> = linked.model.functions.iter().map(|f| f.name()).collect();
    assert_eq!(names, ["affine__without_weight_1"]);
    assert_eq!(linked.model.graph.unwrap().node[0].op_type(), "affine__without_weight_1");
}

/// `gated(x, w) <use_w>`: `Mul(x, w)` in an `If` on the attribute, which reference mode keeps.
fn gated() -> FunctionProto {
    let branch = |name: &str, n: NodeProto| GraphProto {
        name: Some(name.into()),
        node: vec![n],
        output: vec![info(if name == "then" { "m" } else { "i" })],
        ..Default::default()
    };
    let graph_attr = |name: &str, g: GraphProto| AttributeProto {
        name: Some(name.into()),
        g: Some(g),
        r#type: Some(5),
        ..Default::default()
    };
    let reference = AttributeProto {
        name: Some("value_int".into()),
        ref_attr_name: Some("use_w".into()),
        r#type: Some(2),
        ..Default::default()
    };
    FunctionProto {
        name: Some("gated".into()),
        domain: Some(D.into()),
        input: vec!["x".into(), "w".into()],
        output: vec!["y".into()],
        attribute: vec!["use_w".into()],
        node: vec![
            node("", "Constant", "flag", &[], &["c"], vec![reference]),
            node("", "Cast", "flag_bool", &["c"], &["cb"], vec![int_attr("to", 9)]),
            node(
                "",
                "If",
                "choose",
                &["cb"],
                &["y"],
                vec![
                    graph_attr("then_branch", branch("then", node("", "Mul", "scale", &["x", "w"], &["m"], vec![]))),
                    graph_attr("else_branch", branch("else", node("", "Identity", "keep", &["x"], &["i"], vec![]))),
                ],
            ),
        ],
        opset_import: vec![opset("", 20)],
        ..Default::default()
    }
}

#[test]
fn reference_mode_refuses_a_variant_that_needs_the_omitted_input() {
    // The If on `use_w` stays in reference mode, and its branch multiplies by `w`; inline mode
    // folds it for the call's `use_w = 0`. A function calling `gated` so is refused too, at
    // its call; the error names the calls outside variants.
    let outer = FunctionProto {
        name: Some("outer".into()),
        domain: Some(D.into()),
        input: vec!["x".into(), "w".into()],
        output: vec!["y".into()],
        node: vec![call("gated", "inner_call", &["x", "w"], &["y"], vec![int_attr("use_w", 0)])],
        opset_import: vec![opset(D, 1)],
        ..Default::default()
    };
    let nodes = vec![
        call("gated", "g1", &["x", ""], &["a"], vec![int_attr("use_w", 0)]),
        call("gated", "g2", &["a"], &["b"], vec![int_attr("use_w", 0)]),
        call("outer", "o1", &["b"], &["y"], vec![]),
    ];
    let m = model(graph(nodes, &["x"], &["y"]), vec![]);
    let err = match reference(m.clone(), vec![gated(), outer.clone()]) {
        Ok(_) => panic!("reference mode cannot make the variant"),
        Err(d) => render(&d),
    };
    insta::assert_snapshot!("variant_impossible", err);
    let inline = LinkOptions { mode: Mode::Inline, override_model: false, max_nodes: link::DEFAULT_MAX_NODES };
    assert!(link::link(m, lib(vec![gated(), outer]), &inline).is_ok(), "inline mode folds the If");
}

/// A model calling `level0`, which calls `level1`, ... down to `level{n-1}` (a `Neg`).
fn chain(n: usize) -> (ModelProto, Vec<FunctionProto>) {
    let functions = (0..n)
        .map(|i| {
            let body = if i + 1 == n {
                node("", "Neg", "", &["x"], &["y"], vec![])
            } else {
                call(&format!("level{}", i + 1), "", &["x"], &["y"], vec![])
            };
            FunctionProto {
                name: Some(format!("level{i}")),
                domain: Some(D.into()),
                input: vec!["x".into()],
                output: vec!["y".into()],
                node: vec![body],
                opset_import: vec![opset("", 20), opset(D, 1)],
                ..Default::default()
            }
        })
        .collect();
    let m = model(graph(vec![call("level0", "start", &["x"], &["y"], vec![])], &["x"], &["y"]), vec![]);
    (m, functions)
}

#[test]
fn call_chains_deeper_than_onnx_accepts_are_refused_in_reference_mode() {
    // onnx.checker and ONNX Runtime accept 100 functions on a chain, not 101.
    let (m, functions) = chain(100);
    assert_eq!(reference(m, functions).expect("100 deep links").model.functions.len(), 100);
    let (m, functions) = chain(101);
    insta::assert_snapshot!("call_chain_too_deep", errors(m.clone(), lib(functions.clone()), Mode::Reference));
    // Inline mode expands the chain.
    let inline = LinkOptions { mode: Mode::Inline, override_model: false, max_nodes: link::DEFAULT_MAX_NODES };
    let linked = link::link(m, lib(functions), &inline).expect("inline mode links it");
    assert!(linked.model.functions.is_empty());
}

// ------------------------------------------------------------------------------------------
// Robustness: no panic on any input
// ------------------------------------------------------------------------------------------

fn link_bytes(model_bytes: &[u8], lib_bytes: &[u8]) {
    let Ok(m) = link::load::model(model_bytes, "m.onnx") else { return };
    let libs: Vec<Library> = link::load::library(lib_bytes, "lib.onnx").into_iter().collect();
    for mode in [Mode::Reference, Mode::Inline] {
        let _ = link::link(
            m.clone(),
            libs.iter()
                .map(|l| Library { name: l.name.clone(), functions: l.functions.clone(), traced: None })
                .collect(),
            &LinkOptions { mode, override_model: true, max_nodes: link::DEFAULT_MAX_NODES },
        );
    }
}

#[test]
fn no_panic_on_truncated_models_or_libraries() {
    let model_bytes = exported().encode_to_vec();
    let lib_bytes = ModelProto { ir_version: Some(10), functions: library(), ..Default::default() }.encode_to_vec();
    for i in 0..model_bytes.len() {
        link_bytes(&model_bytes[..i], &lib_bytes);
    }
    for i in (0..lib_bytes.len()).step_by(3) {
        link_bytes(&model_bytes, &lib_bytes[..i]);
    }
}

#[test]
fn no_panic_on_corrupted_bytes() {
    let model_bytes = exported().encode_to_vec();
    let lib_bytes = ModelProto { ir_version: Some(10), functions: library(), ..Default::default() }.encode_to_vec();
    // A fixed pseudo-random sequence of single-byte changes in each file.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..2000 {
        let (mut m, mut l) = (model_bytes.clone(), lib_bytes.clone());
        let target = if next() % 2 == 0 { &mut m } else { &mut l };
        let at = (next() as usize) % target.len();
        target[at] = next() as u8;
        link_bytes(&m, &l);
    }
}

// ------------------------------------------------------------------------------------------
// The libraries indexed once, the model's functions over them
// ------------------------------------------------------------------------------------------

/// A function of `LIB` with another body (a `Neg`), as another library or the model may hold.
fn other(name: &str) -> FunctionProto {
    FunctionProto {
        node: vec![node("", "Neg", "", &["x"], &["return_val"], vec![])],
        attribute_proto: vec![],
        metadata_props: vec![],
        ..function(name)
    }
}

/// The model defines `scaled`, `shift` twice and `gelu`; `a.onnx` defines `scaled`, `shift`
/// and `pick`, `b.onnx` `scaled`, `pick`, `gelu`, `shift` and `pick` again: warnings and
/// duplicates come in the order of the definitions, as one table of them all would find them.
#[test]
fn model_functions_over_libraries_report_shadowing_and_duplicates_in_order() {
    let calls = vec![
        call("scaled", "s", &["x"], &["a"], vec![]),
        call("shift", "t", &["a"], &["b"], vec![float_attr("by", 2.0)]),
        call("gelu", "g", &["b"], &["y"], vec![]),
    ];
    let m = model(graph(calls, &["x"], &["y"]), vec![other("scaled"), other("shift"), other("shift"), other("gelu")]);
    let libs = || {
        vec![
            Library {
                name: "a.onnx".into(),
                functions: vec![function("scaled"), function("shift"), function("pick")],
                traced: None,
            },
            Library {
                name: "b.onnx".into(),
                functions: vec![other("scaled"), other("pick"), function("gelu"), other("shift"), function("pick")],
                traced: None,
            },
        ]
    };
    let mut report = String::new();
    for override_model in [false, true] {
        let options = LinkOptions { mode: Mode::Reference, override_model, max_nodes: link::DEFAULT_MAX_NODES };
        let diags = match link::link(m.clone(), libs(), &options) {
            Ok(linked) => linked.diagnostics,
            Err(diags) => diags,
        };
        report += &format!("--- override: {override_model}\n{}", render(&diags));
        // Indexed once and linked twice: the same diagnostics each time.
        let indexed = link::Libraries::new(libs());
        for _ in 0..2 {
            let again = match link::link_against(m.clone(), &indexed, &options) {
                Ok(linked) => linked.diagnostics,
                Err(diags) => diags,
            };
            assert_eq!(render(&again), render(&diags));
        }
    }
    insta::assert_snapshot!("model_functions_over_libraries", report);
}

/// Linking against libraries indexed once gives what linking against them afresh gives, for
/// several models in turn, in both modes; and a model's functions do not stay in the index.
#[test]
fn libraries_indexed_once_link_each_model_as_afresh() {
    let indexed = link::Libraries::new(lib(library()));
    let models = [
        model(graph(vec![call("nested", "n", &["x"], &["y"], vec![float_attr("alpha", 2.0)])], &["x"], &["y"]), vec![]),
        model(graph(vec![call("scaled", "s", &["x"], &["y"], vec![])], &["x"], &["y"]), vec![other("scaled")]),
        model(graph(vec![call("pick", "p", &["x"], &["y"], vec![str_attr("mode", "neg")])], &["x"], &["y"]), vec![]),
        model(graph(vec![call("scaled", "s", &["x"], &["y"], vec![])], &["x"], &["y"]), vec![]),
    ];
    for mode in [Mode::Inline, Mode::Reference] {
        for override_model in [false, true] {
            let options = LinkOptions { mode, override_model, max_nodes: link::DEFAULT_MAX_NODES };
            for m in &models {
                let afresh = link::link(m.clone(), lib(library()), &options).map(|l| l.model.encode_to_vec());
                let shared = link::link_against(m.clone(), &indexed, &options).map(|l| l.model.encode_to_vec());
                match (afresh, shared) {
                    (Ok(a), Ok(b)) => assert!(a == b, "{mode:?}, override {override_model}: the outputs differ"),
                    (Err(a), Err(b)) => assert_eq!(render(&a), render(&b)),
                    _ => panic!("{mode:?}, override {override_model}: one links, the other does not"),
                }
            }
        }
    }
}
