//! An op call's arguments bound to the op's schema, as onnxscript binds them: positional
//! arguments fill the inputs, then (past a non-variadic last input) the attributes in schema
//! order; keyword arguments name an input or an attribute. Lowering binds every call of a
//! script with it; the checks of trace-time code (`trace_check`) bind what they can see.

use super::env::Opset;
use crate::aten::EXPORTER_OPSET;
use crate::diagnostics::{codes, suggest::did_you_mean, Diagnostic, Edit};
use crate::onnx::AttrType;
use crate::schema::{self, FormalOption, OpSchema, Resolution};
use crate::source::Span;
use crate::syntax::ast::*;
use std::collections::HashMap;

/// The arguments of an op call bound to the op's schema.
#[derive(Debug)]
pub struct OpArguments<'e> {
    /// By input position; `None` where an input before a given one is omitted.
    pub inputs: Vec<Option<&'e Expr>>,
    /// In argument order, typed as the schema declares them (`None` without a schema).
    pub attributes: Vec<BoundAttribute<'e>>,
}

/// An attribute argument: its name, its value, and its type as the schema declares it.
pub type BoundAttribute<'e> = (Ident, &'e Expr, Option<AttrType>);

/// The schema of `op_name` (named at `op_span`) in `opset`; `None` for an op of a domain whose
/// schemas are not known. An op the opset does not have (yet) is the error returned, with a
/// did-you-mean for a misspelt name. `exporter_bound` says the function is a translation, which
/// the exporter builds at opset [`EXPORTER_OPSET`] whatever it imports.
pub fn op_schema(
    file: usize,
    opset: &Opset,
    op_name: &str,
    op_span: Span,
    exporter_bound: bool,
) -> Result<Option<&'static OpSchema>, Box<Diagnostic>> {
    let registry = schema::registry();
    match registry.resolve(&opset.domain, op_name, opset.version) {
        Resolution::Found(s) => Ok(Some(s)),
        Resolution::NotYet { first_version } => Err(Box::new(
            Diagnostic::error(codes::OP_NOT_IN_OPSET, file, format!("`{op_name}` is not available in opset {}", opset.version))
                .primary(op_span, format!("introduced in opset {first_version}"))
                .help(if exporter_bound && opset.domain.is_empty() {
                    format!("torch.onnx.export builds translations at opset {EXPORTER_OPSET}: write `{op_name}` with opset-{EXPORTER_OPSET} operators (`onnxsc explain E0513` shows how for `Gelu`)")
                } else {
                    format!("import `opset{first_version}` or later to use `{op_name}`")
                }),
        )),
        Resolution::Unknown if registry.known_domain(&opset.domain) => {
            let shown = if opset.domain.is_empty() { "ONNX".to_string() } else { format!("`{}`", opset.domain) };
            let mut d = Diagnostic::error(codes::UNKNOWN_OP, file, format!("{shown} has no operator `{op_name}`"))
                .primary(op_span, "unknown operator");
            if let Some(s) = did_you_mean(op_name, registry.op_names(&opset.domain)) {
                d = d.help(format!("did you mean `{s}`?")).fix(format!("Replace with `{s}`"), vec![Edit::replace(op_span, &s)]);
            } else {
                d = d.help("check the name against the operators of the domain's schemas (ONNX's Operators.md, or ONNX Runtime's ContribOperators.md)");
            }
            Err(Box::new(d))
        }
        Resolution::Unknown => Ok(None),
    }
}

/// Binds the arguments of a call to `op_name` (of `schema`, when known) as onnxscript does:
/// positional arguments fill the inputs, then (past a non-variadic last input) the attributes in
/// schema order; keyword arguments name an input or an attribute. Checks the counts, the required
/// inputs and the required attributes. Without a schema, positional arguments are inputs and
/// keyword ones attributes. The error is returned, for the caller to push.
pub fn bind_op_arguments<'e>(
    file: usize,
    op_name: &str,
    schema: Option<&OpSchema>,
    args: &'e [Arg],
    span: Span,
) -> Result<OpArguments<'e>, Box<Diagnostic>> {
    // Room for the arguments: growing the lists was a tenth of binding a call. Most calls pass
    // inputs alone, by position, and then the attributes' list stays unallocated.
    let keywords = args.iter().filter(|a| a.keyword.is_some()).count();
    let mut bound = OpArguments { inputs: Vec::with_capacity(args.len()), attributes: Vec::with_capacity(keywords) };
    if let Some(d) = argument_order_error(file, args) {
        return Err(Box::new(d));
    }
    let call = OpCall { file, op_name, span };
    bind_positional(&call, schema, args, &mut bound)?;
    for (a, k) in args.iter().filter_map(|a| a.keyword.as_ref().map(|k| (a, k))) {
        match schema {
            Some(s) => bind_keyword(&call, s, a, k, &mut bound)?,
            None => bound.attributes.push((k.clone(), &a.value, None)),
        }
    }
    if let Some(s) = schema {
        check_input_count(&call, s, args, &bound)?;
        check_variadic_count(&call, s, &bound)?;
        check_required_inputs(&call, s, &bound)?;
        check_required_attributes(&call, s, &bound)?;
    }
    Ok(bound)
}

/// The op call whose arguments [`bind_op_arguments`] binds, as its errors name it: the file, the
/// op's name and the call's span.
struct OpCall<'c> {
    file: usize,
    op_name: &'c str,
    span: Span,
}

/// Binds the positional arguments to the inputs, in order; with a `schema`, those past a
/// non-variadic last input to the attributes, in schema order, and more than both is an error.
fn bind_positional<'e>(
    call: &OpCall,
    schema: Option<&OpSchema>,
    args: &'e [Arg],
    bound: &mut OpArguments<'e>,
) -> Result<(), Box<Diagnostic>> {
    let positional: Vec<&Arg> = args.iter().filter(|a| a.keyword.is_none()).collect();
    let input_slots = match schema {
        Some(s) if s.inputs.last().is_some_and(|l| l.option != FormalOption::Variadic) => s.inputs.len(),
        _ => usize::MAX,
    };
    for a in positional.iter().take(input_slots) {
        bound.inputs.push(Some(&a.value));
    }
    let Some(s) = schema else { return Ok(()) };
    // onnxscript binds extra positional arguments to the attributes, in schema order.
    for (a, attr) in positional.iter().skip(input_slots).zip(&s.attributes) {
        bound.attributes.push((Ident { name: attr.name.clone(), span: a.span }, &a.value, Some(attr.ty)));
    }
    if positional.len() <= input_slots.saturating_add(s.attributes.len()) {
        return Ok(());
    }
    let extra = positional[input_slots + s.attributes.len()];
    let d = Diagnostic::error(
        codes::BAD_ARGUMENT,
        call.file,
        format!(
            "`{}` takes {} inputs and {} attributes, but {} positional arguments were given",
            call.op_name,
            s.inputs.len(),
            s.attributes.len(),
            positional.len()
        ),
    )
    .primary(extra.span, "unexpected argument")
    .help("pass attributes by keyword");
    Err(Box::new(d))
}

/// Binds keyword argument `a` (named `k`) to the input or the attribute of `s` of that name; an
/// input given twice, or a name that is neither, is an error.
fn bind_keyword<'e>(
    call: &OpCall,
    s: &OpSchema,
    a: &'e Arg,
    k: &Ident,
    bound: &mut OpArguments<'e>,
) -> Result<(), Box<Diagnostic>> {
    if let Some(pos) = s.inputs.iter().position(|f| f.name == k.name) {
        let inputs = &mut bound.inputs;
        if inputs.len() <= pos {
            inputs.resize(pos + 1, None);
        }
        if inputs[pos].is_some() {
            let d = Diagnostic::error(codes::BAD_ARGUMENT, call.file, format!("input `{}` is given twice", k.name))
                .primary(a.span, "given again by name");
            return Err(Box::new(d));
        }
        inputs[pos] = Some(&a.value);
    } else if let Some(attr) = s.attribute(&k.name) {
        bound.attributes.push((k.clone(), &a.value, Some(attr.ty)));
    } else {
        return Err(unknown_attribute(call, s, k));
    }
    Ok(())
}

/// A keyword `k` that names neither an input nor an attribute of `s`, with the name it may be a
/// misspelling of, or the attributes there are.
fn unknown_attribute(call: &OpCall, s: &OpSchema, k: &Ident) -> Box<Diagnostic> {
    let op_name = call.op_name;
    let names = s.attributes.iter().map(|a| a.name.as_str()).chain(s.inputs.iter().map(|i| i.name.as_str()));
    let mut d =
        Diagnostic::error(codes::UNKNOWN_ATTRIBUTE, call.file, format!("`{op_name}` has no attribute `{}`", k.name))
            .primary(k.span, "unknown attribute");
    if let Some(sug) = did_you_mean(&k.name, names) {
        d = d
            .help(format!("did you mean `{sug}`?"))
            .fix(format!("Replace with `{sug}`"), vec![Edit::replace(k.span, &sug)]);
    } else if s.attributes.is_empty() {
        d = d.help(format!("`{op_name}` takes no attributes"));
    } else {
        let all: Vec<String> = s.attributes.iter().map(|a| format!("`{}`", a.name)).collect();
        d = d.help(format!("its attributes are {}", all.join(", ")));
    }
    Box::new(d)
}

/// More inputs than `s` takes: the error points at the first positional argument too many.
fn check_input_count(call: &OpCall, s: &OpSchema, args: &[Arg], bound: &OpArguments) -> Result<(), Box<Diagnostic>> {
    let max = s.max_input as usize;
    if bound.inputs.len() <= max {
        return Ok(());
    }
    let extra = args.iter().filter(|a| a.keyword.is_none()).nth(max).map(|a| a.span).unwrap_or(call.span);
    let d = Diagnostic::error(
        codes::BAD_ARGUMENT,
        call.file,
        format!(
            "`{}` takes at most {max} input{}, but {} were given",
            call.op_name,
            if max == 1 { "" } else { "s" },
            bound.inputs.len()
        ),
    )
    .primary(extra, "unexpected input");
    Err(Box::new(d))
}

/// Fewer tensors for the variadic last input of `s` than it needs.
fn check_variadic_count(call: &OpCall, s: &OpSchema, bound: &OpArguments) -> Result<(), Box<Diagnostic>> {
    let Some(last) = s.inputs.last().filter(|l| l.option == FormalOption::Variadic) else { return Ok(()) };
    let before = s.inputs.len() - 1;
    let variadic_given = bound.inputs.len().saturating_sub(before);
    if variadic_given >= last.min_arity as usize {
        return Ok(());
    }
    let d = Diagnostic::error(
        codes::BAD_ARGUMENT,
        call.file,
        format!(
            "`{}` needs at least {} `{}` input{}, but {variadic_given} were given",
            call.op_name,
            last.min_arity,
            last.name,
            if last.min_arity == 1 { "" } else { "s" }
        ),
    )
    .primary(call.span, "too few inputs")
    .help(format!("`{}` is variadic: pass one or more tensors positionally", last.name));
    Err(Box::new(d))
}

/// A required input of `s` that is not given (or given as None): the first one.
fn check_required_inputs(call: &OpCall, s: &OpSchema, bound: &OpArguments) -> Result<(), Box<Diagnostic>> {
    let op_name = call.op_name;
    let given = bound.inputs.iter().filter(|e| e.is_some_and(|e| !matches!(e.kind, ExprKind::None))).count();
    let required: Vec<&str> =
        s.inputs.iter().filter(|f| f.option == FormalOption::Single).map(|f| f.name.as_str()).collect();
    for (i, f) in s.inputs.iter().enumerate() {
        if f.option == FormalOption::Single {
            let present = bound.inputs.get(i).copied().flatten().is_some_and(|e| !matches!(e.kind, ExprKind::None));
            if !present {
                let d = Diagnostic::error(
                    codes::BAD_ARGUMENT,
                    call.file,
                    format!("`{op_name}` is missing its required input `{}`", f.name),
                )
                .primary(call.span, format!("{given} input{} given", if given == 1 { "" } else { "s" }))
                .help(format!(
                    "`{op_name}` requires {}",
                    required.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
                ));
                return Err(Box::new(d));
            }
        }
    }
    Ok(())
}

/// A required attribute of `s` that is not given: the first one.
fn check_required_attributes(call: &OpCall, s: &OpSchema, bound: &OpArguments) -> Result<(), Box<Diagnostic>> {
    for a in &s.attributes {
        if a.required && !bound.attributes.iter().any(|(k, _, _)| k.name == a.name) {
            let d = Diagnostic::error(
                codes::MISSING_ATTRIBUTE,
                call.file,
                format!("`{}` requires the attribute `{}`", call.op_name, a.name),
            )
            .primary(call.span, "missing attribute")
            .help(format!("pass it by keyword: `{}=...`", a.name));
            return Err(Box::new(d));
        }
    }
    Ok(())
}

/// Python's own rules: no positional argument after a keyword one, no keyword given twice.
pub fn argument_order_error(file: usize, args: &[Arg]) -> Option<Diagnostic> {
    let mut seen: HashMap<&str, Span> = HashMap::new();
    let mut keyword_seen = false;
    for a in args {
        match &a.keyword {
            Some(k) => {
                keyword_seen = true;
                if let Some(first) = seen.insert(&k.name, k.span) {
                    let d = Diagnostic::error(
                        codes::BAD_ARGUMENT,
                        file,
                        format!("keyword argument `{}` is repeated", k.name),
                    )
                    .primary(k.span, "given again here")
                    .secondary(first, "first given here");
                    return Some(d);
                }
            }
            None if keyword_seen => {
                let d = Diagnostic::error(codes::BAD_ARGUMENT, file, "positional argument follows keyword argument")
                    .primary(a.span, "positional argument after a keyword argument")
                    .help("put the inputs first, then the attributes by keyword");
                return Some(d);
            }
            None => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{self, Resolution};
    use crate::syntax::parser::parse;

    /// The arguments of the call that is the only statement of `source`.
    fn call_args(source: &str) -> Vec<Arg> {
        let module = parse(0, source).module.expect("a valid call");
        match module.body.into_iter().next().map(|s| s.kind) {
            Some(StmtKind::Expr(Expr { kind: ExprKind::Call { args, .. }, .. })) => args,
            other => panic!("not a call: {other:?}"),
        }
    }

    fn onnx_op(name: &str) -> &'static OpSchema {
        match schema::registry().resolve("", name, 18) {
            Resolution::Found(s) => s,
            _ => panic!("ONNX has `{name}` at opset 18"),
        }
    }

    fn bind(op: &str, schema: Option<&OpSchema>, source: &str) -> Result<(Vec<Option<String>>, Vec<String>), String> {
        let args = call_args(source);
        let name = |e: &Expr| match &e.kind {
            ExprKind::Name(n) => n.clone(),
            other => format!("{other:?}"),
        };
        match bind_op_arguments(0, op, schema, &args, Span::new(0, 0)) {
            Ok(b) => Ok((
                b.inputs.iter().map(|e| e.map(name)).collect(),
                b.attributes.iter().map(|(k, e, ty)| format!("{}={}:{ty:?}", k.name, name(e))).collect(),
            )),
            Err(d) => Err(format!("{} {}", d.code, d.message)),
        }
    }

    fn some(names: &[&str]) -> Vec<Option<String>> {
        names.iter().map(|n| Some(n.to_string())).collect()
    }

    #[test]
    fn positional_arguments_past_the_inputs_bind_to_attributes_in_schema_order() {
        let gemm = onnx_op("Gemm");
        let first = &gemm.attributes[0];
        let (inputs, attrs) = bind("Gemm", Some(gemm), "op.Gemm(a, b, c, s)\n").unwrap();
        assert_eq!(inputs, some(&["a", "b", "c"]));
        assert_eq!(attrs, vec![format!("{}=s:Some({:?})", first.name, first.ty)]);
    }

    #[test]
    fn a_keyword_input_leaves_the_inputs_before_it_omitted() {
        let (inputs, attrs) = bind("Clip", Some(onnx_op("Clip")), "op.Clip(x, max=m)\n").unwrap();
        assert_eq!(inputs, vec![Some("x".into()), None, Some("m".into())]);
        assert!(attrs.is_empty());
    }

    #[test]
    fn without_a_schema_positional_arguments_are_inputs_and_keywords_attributes() {
        let (inputs, attrs) = bind("Custom", None, "ext.Custom(x, y, k=z)\n").unwrap();
        assert_eq!(inputs, some(&["x", "y"]));
        assert_eq!(attrs, vec!["k=z:None".to_string()]);
    }

    #[test]
    fn each_binding_error_is_returned_with_its_code() {
        let add = Some(onnx_op("Add"));
        let cases = [
            ("Add", add, "op.Add(a)\n", "E0404 `Add` is missing its required input `B`"),
            (
                "Add",
                add,
                "op.Add(a, b, c)\n",
                "E0404 `Add` takes 2 inputs and 0 attributes, but 3 positional arguments were given",
            ),
            ("Add", add, "op.Add(a, b, alpha=c)\n", "E0405 `Add` has no attribute `alpha`"),
            ("Add", add, "op.Add(a, B=b, B=c)\n", "E0404 keyword argument `B` is repeated"),
            ("Add", add, "op.Add(a, A=b)\n", "E0404 input `A` is given twice"),
            ("Add", add, "op.Add(A=a, b)\n", "E0404 positional argument follows keyword argument"),
            ("Cast", Some(onnx_op("Cast")), "op.Cast(x)\n", "E0407 `Cast` requires the attribute `to`"),
            (
                "Concat",
                Some(onnx_op("Concat")),
                "op.Concat(axis=0)\n",
                "E0404 `Concat` needs at least 1 `inputs` input, but 0 were given",
            ),
        ];
        for (op, schema, source, expected) in cases {
            assert_eq!(bind(op, schema, source), Err(expected.to_string()), "{source}");
        }
    }
}
