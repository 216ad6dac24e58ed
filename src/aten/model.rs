//! The schema data model and its canonical printing.
//!
//! `Display` prints torchgen's canonical form, the form every `func:` of
//! native_functions.yaml is written in, so `parse_schema(s)?.to_string() == s` for those.

use std::fmt;

/// The namespace of schemas written without a `ns::` prefix.
pub const DEFAULT_NAMESPACE: &str = "aten";

/// One operator overload, e.g. `add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSchema {
    /// `aten` unless the text starts with `ns::`.
    pub namespace: String,
    /// The operator name, e.g. `add`, `add_`, `__and__`.
    pub name: String,
    /// The overload name, `""` for the default overload (`torch.ops.aten.gelu.default`).
    pub overload: String,
    /// Positional arguments first, then keyword-only ones (those after `*`).
    pub arguments: Vec<Argument>,
    /// `()` is an empty list.
    pub returns: Vec<Return>,
}

/// A formal argument: `Type[(alias)] name[=default]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Argument {
    pub ty: Type,
    pub name: String,
    /// The default exactly as written (`None`, `1e-05`, `[0,1]`, `'linear'`); see
    /// [`Argument::default_value`] for its meaning.
    pub default: Option<String>,
    /// Declared after the lone `*`.
    pub kwarg_only: bool,
    /// The alias annotation, written right after the base type: `Tensor(a!)[]`.
    pub annotation: Option<Annotation>,
}

/// A returned value: `Type[(alias)] [name]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Return {
    pub ty: Type,
    pub name: Option<String>,
    pub annotation: Option<Annotation>,
}

/// A type. Suffixes apply left to right, so `int[1]?` is `Optional(List(int, 1))` and
/// `Tensor?[]` is `List(Optional(Tensor))`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Base(BaseType),
    /// `T?`
    Optional(Box<Type>),
    /// `T[]` (size `None`) or `T[N]`.
    List(Box<Type>, Option<u32>),
}

/// The base types of torchgen's `BaseTy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BaseType {
    Generator,
    ScalarType,
    Tensor,
    /// `int`
    Int,
    Dimname,
    DimVector,
    /// `float`
    Float,
    /// `str`
    Str,
    /// `bool`
    Bool,
    Layout,
    Device,
    DeviceIndex,
    Scalar,
    MemoryFormat,
    QScheme,
    Storage,
    Stream,
    SymInt,
    SymBool,
    GraphModule,
    ConstQuantizerPtr,
}

impl BaseType {
    /// Every base type, in declaration order.
    pub const ALL: [BaseType; 21] = [
        BaseType::Generator,
        BaseType::ScalarType,
        BaseType::Tensor,
        BaseType::Int,
        BaseType::Dimname,
        BaseType::DimVector,
        BaseType::Float,
        BaseType::Str,
        BaseType::Bool,
        BaseType::Layout,
        BaseType::Device,
        BaseType::DeviceIndex,
        BaseType::Scalar,
        BaseType::MemoryFormat,
        BaseType::QScheme,
        BaseType::Storage,
        BaseType::Stream,
        BaseType::SymInt,
        BaseType::SymBool,
        BaseType::GraphModule,
        BaseType::ConstQuantizerPtr,
    ];

    /// The spelling in schemas.
    pub fn as_str(self) -> &'static str {
        match self {
            BaseType::Generator => "Generator",
            BaseType::ScalarType => "ScalarType",
            BaseType::Tensor => "Tensor",
            BaseType::Int => "int",
            BaseType::Dimname => "Dimname",
            BaseType::DimVector => "DimVector",
            BaseType::Float => "float",
            BaseType::Str => "str",
            BaseType::Bool => "bool",
            BaseType::Layout => "Layout",
            BaseType::Device => "Device",
            BaseType::DeviceIndex => "DeviceIndex",
            BaseType::Scalar => "Scalar",
            BaseType::MemoryFormat => "MemoryFormat",
            BaseType::QScheme => "QScheme",
            BaseType::Storage => "Storage",
            BaseType::Stream => "Stream",
            BaseType::SymInt => "SymInt",
            BaseType::SymBool => "SymBool",
            BaseType::GraphModule => "GraphModule",
            BaseType::ConstQuantizerPtr => "ConstQuantizerPtr",
        }
    }

    /// The base type spelled `name`, if any (case-sensitive, as in schemas).
    pub fn from_name(name: &str) -> Option<BaseType> {
        BaseType::ALL.into_iter().find(|b| b.as_str() == name)
    }
}

impl fmt::Display for BaseType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Type {
    /// The innermost base type: `Tensor` for `Tensor?[]`.
    pub fn base_type(&self) -> BaseType {
        match self {
            Type::Base(b) => *b,
            Type::Optional(t) | Type::List(t, _) => t.base_type(),
        }
    }

    /// `T?` at the outermost level (the argument may be `None`).
    pub fn is_optional(&self) -> bool {
        matches!(self, Type::Optional(_))
    }

    /// The type without an outermost `?`.
    pub fn strip_optional(&self) -> &Type {
        match self {
            Type::Optional(t) => t,
            t => t,
        }
    }

    /// A list, possibly optional (`int[]`, `int[1]?`).
    pub fn is_list(&self) -> bool {
        matches!(self.strip_optional(), Type::List(..))
    }

    /// The element type of a list, possibly optional (`int` for `int[1]?`).
    pub fn list_element(&self) -> Option<&Type> {
        match self.strip_optional() {
            Type::List(t, _) => Some(t),
            _ => None,
        }
    }

    /// Torchgen's `is_tensor_like`: `Tensor`, `Tensor?`, `Tensor[]`, `Tensor?[]`, ...
    /// These become ONNX inputs; everything else may be an attribute.
    pub fn is_tensor_like(&self) -> bool {
        self.base_type() == BaseType::Tensor
    }

    /// `Tensor` or `Tensor?`: one tensor, not a list.
    pub fn is_single_tensor(&self) -> bool {
        *self.strip_optional() == Type::Base(BaseType::Tensor)
    }

    /// Writes the type with `annotation` right after the base type name, the place
    /// torchgen puts it (`Tensor(a!)[]`, `Tensor(a)?`).
    pub(crate) fn fmt_annotated(&self, annotation: Option<&Annotation>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Base(b) => {
                f.write_str(b.as_str())?;
                if let Some(a) = annotation {
                    write!(f, "({a})")?;
                }
                Ok(())
            }
            Type::Optional(t) => {
                t.fmt_annotated(annotation, f)?;
                f.write_str("?")
            }
            Type::List(t, size) => {
                t.fmt_annotated(annotation, f)?;
                match size {
                    Some(n) => write!(f, "[{n}]"),
                    None => f.write_str("[]"),
                }
            }
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_annotated(None, f)
    }
}

/// An alias annotation: `(a)`, `(a!)`, `(a|b)`, `(a -> *)`, `(*)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Annotation {
    /// The alias sets before any `->`: `["a"]`, `["a", "b"]`, `["*"]`.
    pub alias_set: Vec<String>,
    /// `!`: the value is written to.
    pub is_write: bool,
    /// The alias sets after `->` (`["*"]` for `a -> *`), empty without an arrow.
    pub alias_set_after: Vec<String>,
}

impl fmt::Display for Annotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.alias_set.join("|"))?;
        if self.is_write {
            f.write_str("!")?;
        }
        if !self.alias_set_after.is_empty() {
            write!(f, " -> {}", self.alias_set_after.join("|"))?;
        }
        Ok(())
    }
}

impl Argument {
    /// An out argument of an `.out` overload: keyword-only and written to (`Tensor(a!) out`).
    pub fn is_out(&self) -> bool {
        self.kwarg_only && self.is_write()
    }

    /// The argument is mutated in place (`Tensor(a!) self`).
    pub fn is_write(&self) -> bool {
        self.annotation.as_ref().is_some_and(|a| a.is_write)
    }

    /// The meaning of [`Argument::default`], or `None` when there is no default or its
    /// text is not one of the literal forms schemas use.
    pub fn default_value(&self) -> Option<DefaultValue> {
        DefaultValue::parse(self.default.as_deref()?)
    }
}

impl fmt::Display for Argument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.ty.fmt_annotated(self.annotation.as_ref(), f)?;
        write!(f, " {}", self.name)?;
        if let Some(d) = &self.default {
            write!(f, "={d}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Return {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.ty.fmt_annotated(self.annotation.as_ref(), f)?;
        if let Some(n) = &self.name {
            write!(f, " {n}")?;
        }
        Ok(())
    }
}

impl FunctionSchema {
    /// `aten::add.Tensor`, or `aten::gelu` for the default overload.
    pub fn qualified_name(&self) -> String {
        let mut s = format!("{}::{}", self.namespace, self.name);
        if !self.overload.is_empty() {
            s.push('.');
            s.push_str(&self.overload);
        }
        s
    }

    /// The arguments before `*`.
    pub fn positional_arguments(&self) -> impl Iterator<Item = &Argument> {
        self.arguments.iter().filter(|a| !a.kwarg_only)
    }

    /// The arguments after `*`, out arguments included.
    pub fn kwarg_only_arguments(&self) -> impl Iterator<Item = &Argument> {
        self.arguments.iter().filter(|a| a.kwarg_only)
    }

    /// The out arguments (`*, Tensor(a!) out`); non-empty for `.out` overloads.
    pub fn out_arguments(&self) -> impl Iterator<Item = &Argument> {
        self.arguments.iter().filter(|a| a.is_out())
    }

    /// The argument called `name`.
    pub fn argument(&self, name: &str) -> Option<&Argument> {
        self.arguments.iter().find(|a| a.name == name)
    }

    /// Torchgen's inplace convention: `add_`, but not dunders like `__and__`
    /// (`__iand__` is inplace by its own naming, and is not detected here).
    pub fn is_inplace(&self) -> bool {
        self.name.ends_with('_') && !self.name.ends_with("__")
    }

    /// Some argument is written to (inplace, out, or another mutation).
    pub fn is_mutable(&self) -> bool {
        self.arguments.iter().any(Argument::is_write)
    }
}

impl fmt::Display for FunctionSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace != DEFAULT_NAMESPACE {
            write!(f, "{}::", self.namespace)?;
        }
        f.write_str(&self.name)?;
        if !self.overload.is_empty() {
            write!(f, ".{}", self.overload)?;
        }
        f.write_str("(")?;
        let mut star_written = false;
        for (i, arg) in self.arguments.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            if arg.kwarg_only && !star_written {
                f.write_str("*, ")?;
                star_written = true;
            }
            write!(f, "{arg}")?;
        }
        f.write_str(") -> ")?;
        // Torchgen's form: a single return goes without parentheses, even a named one.
        match self.returns.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                f.write_str("(")?;
                for (i, r) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{r}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// The meaning of a default as written in a schema.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// `None`
    None,
    /// `True`, `False`
    Bool(bool),
    /// `0`, `-100`
    Int(i64),
    /// `1e-05`, `0.5`
    Float(f64),
    /// `'linear'`, `"L"`, with escapes resolved.
    Str(String),
    /// `[]`, `[0,1]`, `[-2,-1]`
    List(Vec<DefaultValue>),
    /// An enum-like name: `Mean` (reduction), `long` (ScalarType), `contiguous_format`.
    Name(String),
}

impl DefaultValue {
    /// Reads a default's text; `None` for text that is not a literal.
    pub fn parse(text: &str) -> Option<DefaultValue> {
        let t = text.trim();
        match t {
            "None" => return Some(DefaultValue::None),
            "True" => return Some(DefaultValue::Bool(true)),
            "False" => return Some(DefaultValue::Bool(false)),
            _ => {}
        }
        let first = t.chars().next()?;
        if first == '[' {
            let inner = t.strip_prefix('[')?.strip_suffix(']')?.trim();
            if inner.is_empty() {
                return Some(DefaultValue::List(Vec::new()));
            }
            // Lists in defaults hold numbers or names only, so splitting on `,` is exact.
            return inner.split(',').map(DefaultValue::parse).collect::<Option<Vec<_>>>().map(DefaultValue::List);
        }
        if first == '\'' || first == '"' {
            return unquote(t).map(DefaultValue::Str);
        }
        if first.is_ascii_digit() || first == '-' || first == '+' || first == '.' {
            if let Ok(i) = t.parse::<i64>() {
                return Some(DefaultValue::Int(i));
            }
            return t.parse::<f64>().ok().map(DefaultValue::Float);
        }
        if t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Some(DefaultValue::Name(t.to_string()));
        }
        None
    }
}

/// Resolves a Python-style quoted string (`'a\'b'`), or `None` if it is not one.
fn unquote(t: &str) -> Option<String> {
    if t.len() < 2 {
        return None;
    }
    let quote = t.chars().next()?;
    let body = t.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return None; // an unescaped quote ends the string early
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            other => out.push(other),
        }
    }
    Some(out)
}
