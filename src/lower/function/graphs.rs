//! Nested functions (`@graph()`, or undecorated as onnxscript also takes them): lowered where they
//! are defined into a subgraph whose inputs are the parameters, then passed as graph-valued
//! attributes (`op.Scan(..., body=f)`).
//!
//! As in onnxscript, the subgraph reads outer variables by their names (captures), with the values
//! they have at the definition; a use after one of them was reassigned is rejected.

use super::*;

impl<'a, 'm> Lowerer<'a, 'm> {
    /// `@graph() def f(...): ...` inside a function: binds `f` to its graph.
    pub(super) fn lower_nested_function(&mut self, f: &FunctionDef) -> R<()> {
        match self.nested_graph(f) {
            Ok(g) => {
                self.bind(&f.name.name, Binding::Graph(Box::new(g)));
                Ok(())
            }
            Err(e) => {
                self.bind(&f.name.name, Binding::Poison(e));
                Err(e)
            }
        }
    }

    fn nested_graph(&mut self, f: &FunctionDef) -> R<NestedGraph> {
        self.check_graph_decorator(f)?;
        self.enter_subgraph(f.header_span, Scope::default())?;
        // A `break` in the nested function does not belong to a loop around its definition.
        let loop_depth = std::mem::replace(&mut self.loop_depth, 0);
        let result = self.nested_graph_in_scope(f);
        let scope = self.leave_subgraph();
        self.loop_depth = loop_depth;
        let (inputs, doc, outputs) = result?;
        let captures = {
            let is_static = |s: &Stmt| self.is_static_if(s);
            let names = liveness::captured(f, &is_static);
            names.into_iter().filter_map(|n| self.lookup(n).cloned().map(|b| (n.to_string(), b))).collect()
        };
        let graph = Graph { name: f.name.name.clone(), doc, inputs, nodes: scope.nodes, outputs };
        Ok(NestedGraph { graph, captures, header: f.header_span })
    }

    /// The inputs, docstring and outputs of a nested function, lowered in its own scope.
    fn nested_graph_in_scope(&mut self, f: &FunctionDef) -> R<(Vec<GraphInput>, Option<String>, Vec<String>)> {
        let mut ok = Ok(());
        let mut inputs = Vec::new();
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let sig = Signature::with_names(self.names, f);
        for p in &sig.params {
            match self.graph_input(p, &mut seen) {
                Ok(i) => inputs.push(i),
                Err(r) => {
                    self.bind(p.name(), Binding::Poison(r));
                    ok = Err(r);
                }
            }
        }
        let declared = self.declared_outputs(f, &sig, &mut ok);
        let body = self.lower_body(f, declared.as_deref(), ok);
        body.ok?;
        Ok((inputs, body.doc, body.outputs))
    }

    /// One parameter of a nested function: a tensor input of the graph.
    fn graph_input<'p>(&mut self, param: &SignatureParam<'p>, seen: &mut HashMap<&'p str, Span>) -> R<GraphInput> {
        let p = param.def;
        if p.kind != ParamKind::Normal {
            return Err(self.unsupported(
                p.span,
                unsupported_parameter(p.kind),
                "list each graph input as a plain parameter",
            ));
        }
        if let Some(first) = seen.insert(&p.name.name, p.name.span) {
            let d = Diagnostic::error(
                codes::DUPLICATE_PARAMETER,
                self.file(),
                format!("parameter `{}` is declared twice", p.name.name),
            )
            .primary(p.name.span, "declared again here")
            .secondary(first, "first declared here");
            return Err(self.push(d));
        }
        if let Some(default) = &p.default {
            let d = Diagnostic::error(
                codes::BAD_DEFAULT,
                self.file(),
                format!("graph input `{}` cannot have a default", p.name.name),
            )
            .primary(default.span, "default value")
            .help("the op that runs the graph binds every input; remove the default");
            return Err(self.push(d));
        }
        let mut ty = None;
        let mut declared = None;
        if let Some(a) = &p.annotation {
            match &param.ty {
                Ok(ParamType::Input { ty: value_type, .. }) => {
                    ty = annotated_tensor(self.names, a);
                    declared = value_type.as_ref().and_then(Ty::declared);
                }
                Ok(ParamType::Attr { .. }) => {
                    let d = Diagnostic::error(
                        codes::BAD_ANNOTATION,
                        self.file(),
                        format!("graph input `{}` is a tensor, not an attribute", p.name.name),
                    )
                    .primary(a.span, "an attribute type")
                    .help("annotate graph inputs with a tensor type such as `FLOAT[...]`, or leave them unannotated");
                    return Err(self.push(d));
                }
                Err((span, why)) => {
                    if let Some(poisoned) = mentions_poison(self.names, a) {
                        return Err(poisoned);
                    }
                    let d = Diagnostic::error(
                        codes::BAD_ANNOTATION,
                        self.file(),
                        format!("invalid type annotation for `{}`: {why}", p.name.name),
                    )
                    .primary(*span, "not a tensor type");
                    return Err(self.push(d));
                }
            }
        }
        let name = self.fresh(&p.name.name);
        if let Some(t) = declared {
            self.values.set_ty(&name, t);
        }
        self.bind(&p.name.name, Binding::Value(name.clone()));
        Ok(GraphInput { name, ty })
    }

    /// A nested function takes exactly `@graph()`, which is also what lets it run in onnxscript's
    /// eager mode.
    fn check_graph_decorator(&mut self, f: &FunctionDef) -> R<()> {
        let is_graph = |e: &Expr| matches!(resolve_dotted(self.names, e), Some(Global::GraphDecorator));
        let help =
            "nested functions are graph attributes: decorate them with `@graph()` (`from onnxscript import graph`)";
        let d = match f.decorators.as_slice() {
            // onnxscript makes every nested function a graph, decorated or not.
            [] => return Ok(()),
            [_, extra, ..] => Diagnostic::error(
                codes::BAD_DECORATOR,
                self.file(),
                "a nested function takes only the `@graph()` decorator",
            )
            .primary(extra.span, "extra decorator")
            .help(help),
            [d] => match &d.kind {
                ExprKind::Call { func, args } if is_graph(func) => match args.first() {
                    None => return Ok(()),
                    Some(a) => Diagnostic::error(codes::BAD_DECORATOR, self.file(), "`@graph()` takes no arguments")
                        .primary(a.span, "unexpected argument")
                        .help("write `@graph()`"),
                },
                _ if is_graph(d) => Diagnostic::error(codes::BAD_DECORATOR, self.file(), "`@graph` must be called")
                    .primary(d.span, "missing `()`")
                    .help("write `@graph()`"),
                _ => Diagnostic::error(codes::BAD_DECORATOR, self.file(), "unknown decorator on a nested function")
                    .primary(d.span, "not `@graph()`")
                    .help(help),
            },
        };
        Err(self.push(d))
    }

    /// A nested function passed as attribute `key` of `op`.
    pub(super) fn graph_attr(
        &mut self,
        op: &str,
        key: &Ident,
        n: &str,
        g: NestedGraph,
        span: Span,
        expected: Option<AttrType>,
    ) -> R<Attr> {
        if let Some(exp) = expected.filter(|t| *t != AttrType::Graph) {
            let d = Diagnostic::error(
                codes::ATTRIBUTE_TYPE,
                self.file(),
                format!("attribute `{}` of `{op}` is {}, but `{n}` is a graph", key.name, exp.name()),
            )
            .primary(span, "a nested function");
            return Err(self.push(d));
        }
        for (var, then) in &g.captures {
            match self.lookup(var) {
                Some(now) if now == then => {}
                Some(Binding::Poison(r)) => return Err(*r),
                _ => {
                    let d = Diagnostic::error(
                        codes::UNSUPPORTED_EXPR,
                        self.file(),
                        format!(
                            "`{n}` reads `{var}`, which is reassigned between the definition of `{n}` and this use"
                        ),
                    )
                    .primary(span, format!("`{var}` has another value here"))
                    .secondary(g.header, format!("`{n}` is built here, with the earlier `{var}`"))
                    .help(format!("define `{n}` after the last assignment to `{var}`, where it is used"));
                    return Err(self.push(d));
                }
            }
        }
        // Node outputs are unique across a function and all its subgraphs: a graph used a
        // second time gets fresh names.
        let graph = if self.graphs_used.insert(g.header.start) { g.graph } else { self.renamed(g.graph) };
        Ok(Attr { name: key.name.clone(), value: AttrValue::Graph(graph) })
    }

    /// A copy of `g` with fresh names for every value it defines; captured outer names stay.
    fn renamed(&mut self, mut g: Graph) -> Graph {
        let mut defined = Vec::new();
        defined_names(&g, &mut defined);
        let mut map = HashMap::new();
        for old in defined {
            let new = self.fresh(&old);
            if let Some(t) = self.values.ty(&old).cloned() {
                self.values.set_ty(&new, t);
            }
            map.insert(old, new);
        }
        rename(&mut g, &map);
        g
    }
}

/// The type an annotation gives a graph input, as onnxscript writes it: a bare tensor type is a
/// scalar (`FLOAT`), `FLOAT[...]` has unknown rank, `FLOAT[3, "N"]` those dimensions. Other
/// annotations (TypeVars, sequences, unions) leave the input untyped.
fn annotated_tensor(names: Names, a: &Expr) -> Option<TensorType> {
    let tensor_type = |e: &Expr| match resolve_dotted(names, e) {
        Some(Global::TensorType(t)) => Some(t),
        _ => None,
    };
    if let Some(elem) = tensor_type(a) {
        return Some(TensorType::scalar(elem));
    }
    let ExprKind::Subscript { value, index } = &a.kind else { return None };
    let elem = tensor_type(value)?;
    let items: Vec<&Expr> = match &index.kind {
        ExprKind::Ellipsis => return Some(TensorType { elem, shape: None }),
        ExprKind::Tuple(items) => items.iter().collect(),
        _ => vec![index.as_ref()],
    };
    let dims = items
        .into_iter()
        .map(|d| match &d.kind {
            ExprKind::Int(v) => i64::try_from(v.get()).ok().map(Dim::Known),
            ExprKind::Str(p) => Some(Dim::Symbolic(p.as_str().into())),
            ExprKind::None => Some(Dim::Unknown),
            _ => None,
        })
        .collect::<Option<Vec<Dim>>>()?;
    Some(TensorType { elem, shape: Some(dims) })
}

/// The values a graph defines: its inputs and node outputs, those of its subgraphs included.
fn defined_names(g: &Graph, out: &mut Vec<String>) {
    out.extend(g.inputs.iter().map(|i| i.name.clone()));
    for n in &g.nodes {
        out.extend(n.outputs.iter().cloned());
        for a in &n.attrs {
            if let AttrValue::Graph(sub) = &a.value {
                defined_names(sub, out);
            }
        }
    }
}

fn rename(g: &mut Graph, map: &HashMap<String, String>) {
    let apply = |s: &mut String| {
        if let Some(new) = map.get(s.as_str()) {
            s.clone_from(new);
        }
    };
    g.inputs.iter_mut().for_each(|i| apply(&mut i.name));
    for n in &mut g.nodes {
        n.inputs.iter_mut().flatten().for_each(apply);
        n.outputs.iter_mut().for_each(apply);
        for a in &mut n.attrs {
            if let AttrValue::Graph(sub) = &mut a.value {
                rename(sub, map);
            }
        }
    }
    g.outputs.iter_mut().for_each(apply);
}
