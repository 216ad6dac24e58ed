//! The PyTorch operator schemas a compilation checks against: the embedded native_functions
//! (or `--native-functions`), `--schema` files, and the modules' `torch.library.define`s,
//! compared with the operators registered with the PyTorch that will export (`--registered`,
//! which the Python package writes from the live `torch.ops` schemas).

use super::{CompileOptions, InputError};
use crate::aten::{parse_schema, AtenRegistry, DefaultValue, FunctionSchema, Type, YamlSchemaError};
use crate::diagnostics::{codes, Diagnostic, Diagnostics};
use crate::sema::env::ModuleEnv;
use crate::source::{SourceMap, Span};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// `--native-functions auto`: the yaml of the torch installed in the active Python environment.
pub const AUTO: &str = "auto";

fn read(path: &Path) -> Result<String, InputError> {
    let bytes = super::files::read(path, super::files::Kind::Schema)?;
    String::from_utf8(bytes)
        .map_err(|_| InputError { path: path.to_path_buf(), message: "not valid UTF-8 text".into() })
}

/// Reads a native_functions.yaml-format file; its malformed entries are diagnostics (E0701).
fn load_yaml(
    path: &Path,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Result<Option<AtenRegistry>, InputError> {
    let text = read(path)?;
    match AtenRegistry::from_yaml(&text) {
        Ok(r) => Ok(Some(r)),
        Err(errors) => {
            report_schema_errors(path, text, errors, sources, diags);
            Ok(None)
        }
    }
}

/// E0701 for each error of the schema file at `path`.
fn report_schema_errors(
    path: &Path,
    text: String,
    errors: Vec<YamlSchemaError>,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) {
    let file = sources.add(path.display().to_string(), text);
    for e in errors {
        diags.push(
            Diagnostic::error(codes::BAD_SCHEMA_FILE, file, format!("invalid operator schema file: {}", e.message))
                .primary(Span::new(e.span.start, e.span.end), "here")
                .help(
                    "entries are `- func: name.overload(Type arg, ...) -> Type`, as in PyTorch's native_functions.yaml",
                ),
        );
    }
}

fn resolve_native_functions(path: &Path) -> Result<PathBuf, InputError> {
    if path.as_os_str() != AUTO {
        return Ok(path.to_path_buf());
    }
    AtenRegistry::find_active_environment_yaml().ok_or_else(|| InputError {
        path: path.to_path_buf(),
        message: "no PyTorch found in the active Python environment ($VIRTUAL_ENV or $CONDA_PREFIX); pass the path of a native_functions.yaml".into(),
    })
}

/// The registry from the command-line options. Unreadable files are input errors (exit 2);
/// malformed ones are diagnostics, and the embedded schemas stand in for them.
pub fn load(
    options: &CompileOptions,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Result<Cow<'static, AtenRegistry>, InputError> {
    let mut registry: Cow<'static, AtenRegistry> = Cow::Borrowed(AtenRegistry::embedded());
    if let Some(path) = &options.native_functions {
        let path = resolve_native_functions(path)?;
        if let Some(r) = load_yaml(&path, sources, diags)? {
            registry = Cow::Owned(r);
        }
    }
    for path in &options.schema_files {
        if let Some(extra) = load_yaml(path, sources, diags)? {
            registry.to_mut().extend(&extra);
        }
    }
    Ok(registry)
}

/// The schemas of the operators registered with PyTorch (`--registered` files), if any. A
/// registration whose types onnxsc does not read (TorchScript's `t[]`, `complex`) is passed
/// over: bindings to it stay unchecked, as without the file.
pub fn load_registered(
    options: &CompileOptions,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> Result<Option<AtenRegistry>, InputError> {
    let mut registered: Option<AtenRegistry> = None;
    for path in &options.registered_files {
        let text = read(path)?;
        let (r, errors, _unread) = AtenRegistry::from_yaml_reading_what_parses(&text);
        if !errors.is_empty() {
            report_schema_errors(path, text, errors, sources, diags);
            continue;
        }
        match &mut registered {
            Some(all) => all.extend(&r),
            None => registered = Some(r),
        }
    }
    Ok(registered)
}

/// Whether a declared schema means what the registered one does, as the exporter passes
/// arguments: same names, kinds, types (`int` and `SymInt` alike), defaults and returns.
fn same_schema(declared: &FunctionSchema, registered: &FunctionSchema) -> bool {
    fn ty(t: &Type) -> String {
        t.to_string().replace("SymInt", "int").replace("SymBool", "bool")
    }
    fn default(d: &Option<String>) -> Option<DefaultValue> {
        d.as_deref().map(|t| match DefaultValue::parse(t) {
            // `1.` and `1.0` and `1` are one number.
            Some(DefaultValue::Int(i)) => DefaultValue::Float(i as f64),
            Some(v) => v,
            None => DefaultValue::Str(t.to_string()),
        })
    }
    declared.arguments.len() == registered.arguments.len()
        && declared.returns.len() == registered.returns.len()
        && declared.arguments.iter().zip(&registered.arguments).all(|(a, b)| {
            a.name == b.name
                && a.kwarg_only == b.kwarg_only
                && ty(&a.ty) == ty(&b.ty)
                && default(&a.default) == default(&b.default)
        })
        && declared.returns.iter().zip(&registered.returns).all(|(a, b)| ty(&a.ty) == ty(&b.ty))
}

/// The registered operators that no module declares and no schema file gives: bindings to them
/// are checked against the registration.
fn add_registered(registry: &mut Cow<AtenRegistry>, registered: &AtenRegistry, declared: &[String]) {
    for s in registered.schemas() {
        let q = s.qualified_name();
        if registry.lookup(&q).is_none() && !declared.contains(&q) {
            registry.to_mut().add(s.clone());
        }
    }
}

/// Adds the custom operators that modules declare with `torch.library.define`; a declaration
/// that differs from the operator registered with PyTorch is E0515, and the registration is
/// what bindings are then checked against.
///
/// Also returns the names whose declaration is invalid, so bindings to them stay silent.
pub fn with_custom_ops<'r>(
    mut registry: Cow<'r, AtenRegistry>,
    envs: &[ModuleEnv],
    registered: Option<&AtenRegistry>,
    diags: &mut Diagnostics,
) -> (Cow<'r, AtenRegistry>, Vec<String>) {
    let mut declared: Vec<(String, usize, Span, FunctionSchema)> = Vec::new();
    let mut first_declared: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut invalid = Vec::new();
    for env in envs {
        for decl in &env.custom_ops {
            let text = format!("{}{}", decl.qualname, decl.schema);
            let schema = match parse_schema(&text) {
                Ok(s) => s,
                Err(e) => {
                    // Point into the schema literal when its text maps one to one.
                    let span = if decl.schema_is_verbatim && e.span.start >= decl.qualname.len() {
                        let base = decl.schema_span.start as usize + 1;
                        let close = decl.schema_span.end as usize - 1;
                        let start = (base + e.span.start - decl.qualname.len()).min(close);
                        let end = (base + e.span.end.max(e.span.start) - decl.qualname.len()).clamp(start, close);
                        Span::new(start, end)
                    } else if e.span.start < decl.qualname.len() {
                        decl.qualname_span
                    } else {
                        decl.schema_span
                    };
                    diags.push(
                        Diagnostic::error(codes::BAD_CUSTOM_SCHEMA, env.file, format!("invalid schema for `{}`: {}", decl.qualname, e.message))
                            .primary(span, "here")
                            .help("write the schema as `torch.library.custom_op` infers it, e.g. \"(Tensor input, float alpha=1.0) -> Tensor\""),
                    );
                    invalid.push(decl.qualname.clone());
                    continue;
                }
            };
            if schema.namespace == "aten" {
                diags.push(
                    Diagnostic::error(
                        codes::BAD_CUSTOM_SCHEMA,
                        env.file,
                        "custom operators cannot be declared in the `aten` namespace",
                    )
                    .primary(decl.qualname_span, "`aten` belongs to PyTorch")
                    .help("use a namespace of your own, e.g. `mylibrary::op`"),
                );
                continue;
            }
            let qualname = schema.qualified_name();
            if let Some((_, file, span, first)) = first_declared.get(&qualname).map(|&i| &declared[i]) {
                // Translation files are independent: each may declare the operator it
                // translates, as long as they agree on its schema.
                if *file != env.file && *first == schema {
                    continue;
                }
                let mut d = if *first == schema {
                    Diagnostic::error(codes::BAD_CUSTOM_SCHEMA, env.file, format!("`{qualname}` is declared twice"))
                        .primary(decl.qualname_span, "declared again here")
                } else {
                    Diagnostic::error(
                        codes::BAD_CUSTOM_SCHEMA,
                        env.file,
                        format!("`{qualname}` is declared with two different schemas"),
                    )
                    .primary(decl.schema_span, format!("differs from `{first}`"))
                };
                if *file == env.file {
                    d = d.secondary(*span, "first declared here");
                }
                diags.push(d);
                continue;
            }
            first_declared.insert(qualname.clone(), declared.len());
            declared.push((qualname.clone(), env.file, decl.qualname_span, schema.clone()));
            match registered.and_then(|r| r.lookup(&qualname)) {
                Some(live) if !same_schema(&schema, live) => {
                    let registered_text = live.to_string();
                    let args = registered_text.split_once('(').map_or("", |(_, r)| r);
                    diags.push(
                        Diagnostic::error(
                            codes::REGISTERED_SCHEMA_MISMATCH,
                            env.file,
                            format!("`{qualname}` is registered with PyTorch with another schema than declared here"),
                        )
                        .primary(decl.schema_span, format!("declared: {schema}"))
                        .secondary(decl.qualname_span, format!("registered: {live}"))
                        .help(format!(
                            "the exporter passes the registered operator's arguments: declare it as registered, `torch.library.define(\"{qualname}\", \"({args}\")`"
                        )),
                    );
                    registry.to_mut().add(live.clone());
                }
                _ => {
                    registry.to_mut().add(schema);
                }
            }
        }
    }
    if let Some(r) = registered {
        let names: Vec<String> = declared.into_iter().map(|(q, ..)| q).collect();
        add_registered(&mut registry, r, &names);
    }
    (registry, invalid)
}
