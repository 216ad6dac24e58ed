//! The PyTorch operator schemas a compilation checks against: the embedded native_functions
//! (or `--native-functions`), `--schema` files, and the modules' `torch.library.define`s.

use super::{InputError, Options};
use crate::aten::{parse_schema, AtenRegistry};
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
            let file = sources.add(path.display().to_string(), text);
            for e in errors {
                diags.push(
                    Diagnostic::error(codes::BAD_SCHEMA_FILE, file, format!("invalid operator schema file: {}", e.message))
                        .primary(Span::new(e.span.start, e.span.end), "here")
                        .help("entries are `- func: name.overload(Type arg, ...) -> Type`, as in PyTorch's native_functions.yaml"),
                );
            }
            Ok(None)
        }
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
    options: &Options,
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

/// Adds the custom operators that modules declare with `torch.library.define`.
///
/// Also returns the names whose declaration is invalid, so bindings to them stay silent.
pub fn with_custom_ops<'r>(
    mut registry: Cow<'r, AtenRegistry>,
    envs: &[ModuleEnv],
    diags: &mut Diagnostics,
) -> (Cow<'r, AtenRegistry>, Vec<String>) {
    let mut declared: Vec<(String, usize, Span, crate::aten::FunctionSchema)> = Vec::new();
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
            declared.push((qualname, env.file, decl.qualname_span, schema.clone()));
            registry.to_mut().add(schema);
        }
    }
    (registry, invalid)
}
