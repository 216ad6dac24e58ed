//! Type inference for one op call: element types, and whether a value is a tensor, a sequence
//! of tensors or an optional value.
//!
//! The lowerer tracks what it knows about each value ([`Ty`]) and asks [`check_call`] whether an
//! op's inputs fit its schema: each type variable of the schema (`T` in `Add(A: T, B: T)`) must
//! take one type within its allowed set, a tensor cannot stand where the schema wants a sequence
//! (`SequenceAt`'s `input_sequence`) and a sequence cannot stand where it wants a tensor. Element
//! types flow through the sequence ops (`SequenceConstruct`, `SequenceAt`, `SequenceInsert`,
//! `ConcatFromSequence`, `SplitToSequence`, ...) and the optional ones (`Optional`,
//! `OptionalGetElement`). What nobody can know statically (a TypeVar of the signature, an
//! unannotated input) is never an error: only contradictions between facts are reported, so real
//! translations check without false errors.

use crate::onnx::{elem_bit, elems_by_container, DeclaredType, ElemType, ValueType};
use crate::schema::{FormalOption, FormalParam, FormalType, OpSchema};

/// What is known about a value's type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// A tensor of exactly this element type.
    Elem(ElemType),
    /// A tensor whose element type is a type variable of the function's signature: fixed but
    /// unknown, within `allowed` (empty: any type).
    Var { name: String, allowed: Vec<ElemType> },
    /// A sequence of tensors (`Sequence[FLOAT]`), with what is known of its tensors (`None`:
    /// nothing).
    Seq(Option<Box<Ty>>),
    /// An optional value (made by `op.Optional`), with what is known of its content.
    Opt(Option<Box<Ty>>),
    /// An input annotated `Optional[X]`: an `X` that callers may omit, or an optional value
    /// holding an `X` (`op.Optional`); which of the two, only the callers know.
    MaybeOpt(Box<Ty>),
}

/// The shape of a type, without its element type: ONNX's `tensor(..)`, `seq(tensor(..))`,
/// `optional(tensor(..))` and `optional(seq(tensor(..)))`.
use crate::onnx::Container as Kind;

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Tensor => "a tensor",
            Kind::Seq => "a sequence of tensors",
            Kind::OptTensor | Kind::OptSeq => "an optional value",
        }
    }
}

impl Ty {
    /// What a declared type says of a value's element type.
    pub fn declared(t: &DeclaredType) -> Option<Ty> {
        match t {
            DeclaredType::Tensor(t) => Some(Ty::Elem(*t)),
            DeclaredType::Var { name, allowed } => Some(Ty::Var { name: name.clone(), allowed: allowed.clone() }),
            DeclaredType::Union(_) => None,
            DeclaredType::Sequence(item) => Some(Ty::seq(item.as_deref().and_then(Ty::declared).filter(Ty::is_tensor))),
        }
    }

    /// A sequence of tensors of type `t`, if known.
    pub fn seq(t: Option<Ty>) -> Ty {
        Ty::Seq(t.map(Box::new))
    }

    /// An optional value holding a `t`, if known.
    pub fn opt(t: Option<Ty>) -> Ty {
        Ty::Opt(t.map(Box::new))
    }

    pub fn describe(&self) -> String {
        match self {
            Ty::Elem(t) => t.script_name().to_string(),
            Ty::Var { name, .. } => format!("`{name}`"),
            Ty::Seq(Some(t)) => format!("Sequence[{}]", t.bare()),
            Ty::Seq(None) => "a sequence".to_string(),
            Ty::Opt(Some(t)) => format!("Optional[{}]", t.bare()),
            Ty::Opt(None) => "an optional value".to_string(),
            Ty::MaybeOpt(t) => format!("Optional[{}]", t.bare()),
        }
    }

    /// The type as an annotation would spell it (`FLOAT`, `T`, `Sequence[FLOAT]`).
    fn bare(&self) -> String {
        match self {
            Ty::Var { name, .. } => name.clone(),
            Ty::Seq(None) => "?".to_string(),
            other => other.describe().replace('`', ""),
        }
    }

    /// Whether this is (known to be) a tensor, not a sequence or an optional value.
    pub fn is_tensor(&self) -> bool {
        matches!(self, Ty::Elem(_) | Ty::Var { .. })
    }

    /// Whether this is known not to be a tensor (a sequence, an optional value).
    pub fn is_not_tensor(&self) -> bool {
        let kinds = self.kinds();
        !kinds.is_empty() && !kinds.contains(&Kind::Tensor)
    }

    /// Whether a tensor of this type could have element type `t` (false for sequences and
    /// optional values).
    pub fn could_be(&self, t: ElemType) -> bool {
        self.admits(t)
    }

    /// Whether a value of this type could have element type `t`.
    fn admits(&self, t: ElemType) -> bool {
        match self {
            Ty::Elem(e) => *e == t,
            Ty::Var { allowed, .. } => allowed.is_empty() || allowed.contains(&t),
            Ty::MaybeOpt(inner) => inner.admits(t),
            Ty::Seq(_) | Ty::Opt(_) => false,
        }
    }

    /// Whether some element type of the set `elems` ([`elem_bit`]) could be this one's.
    fn admits_any(&self, elems: u32) -> bool {
        match self {
            Ty::Elem(e) => elems & elem_bit(*e) != 0,
            Ty::Var { allowed, .. } => allowed.is_empty() || allowed.iter().any(|a| elems & elem_bit(*a) != 0),
            Ty::MaybeOpt(inner) => inner.admits_any(elems),
            Ty::Seq(_) | Ty::Opt(_) => false,
        }
    }

    /// The kinds of value this could be (empty: we cannot tell).
    fn kinds(&self) -> &'static [Kind] {
        match self {
            Ty::Elem(_) | Ty::Var { .. } => &[Kind::Tensor],
            Ty::Seq(_) => &[Kind::Seq],
            Ty::Opt(Some(inner)) => match inner.as_ref() {
                Ty::Elem(_) | Ty::Var { .. } => &[Kind::OptTensor],
                Ty::Seq(_) => &[Kind::OptSeq],
                Ty::Opt(_) | Ty::MaybeOpt(_) => &[],
            },
            Ty::Opt(None) => &[Kind::OptTensor, Kind::OptSeq],
            Ty::MaybeOpt(inner) => match inner.as_ref() {
                Ty::Elem(_) | Ty::Var { .. } => &[Kind::Tensor, Kind::OptTensor],
                Ty::Seq(_) => &[Kind::Seq, Kind::OptSeq],
                Ty::Opt(_) | Ty::MaybeOpt(_) => &[],
            },
        }
    }

    /// The tensor type at the bottom of a sequence or optional value, when known.
    fn tensor_ty(&self) -> Option<&Ty> {
        match self {
            Ty::Elem(_) | Ty::Var { .. } => Some(self),
            Ty::Seq(Some(t)) | Ty::Opt(Some(t)) | Ty::MaybeOpt(t) => t.tensor_ty(),
            Ty::Seq(None) | Ty::Opt(None) => None,
        }
    }

    /// The type of a sequence's tensors, when this is a sequence and they are known.
    pub fn seq_elem(&self) -> Option<&Ty> {
        match self {
            Ty::Seq(Some(t)) => Some(t),
            _ => None,
        }
    }
}

/// One type a formal parameter allows, e.g. `seq(tensor(float))`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Alt {
    kind: Kind,
    elem: ElemType,
}

impl Alt {
    fn ty(self) -> Ty {
        let t = Ty::Elem(self.elem);
        match self.kind {
            Kind::Tensor => t,
            Kind::Seq => Ty::seq(Some(t)),
            Kind::OptTensor => Ty::opt(Some(t)),
            Kind::OptSeq => Ty::opt(Some(Ty::seq(Some(t)))),
        }
    }
}

/// A schema type as this checker models it; `None` for the shapes it does not reason about
/// (maps, sparse tensors).
fn alt(t: &ValueType) -> Option<Alt> {
    t.container().map(|(kind, elem)| Alt { kind, elem })
}

/// A formal parameter's alternatives as sets of element types (bit `code`), one per kind: what a
/// call checks against, in one pass over the schema's types.
#[derive(Clone, Copy, Default)]
struct AltSet([u32; 4]);

impl AltSet {
    /// What `formal` of `schema` allows; `None` when one of its types is of a shape this checker
    /// does not reason about. A type constraint's is computed once, when the schema is loaded.
    fn of(schema: &OpSchema, formal: &FormalParam) -> Option<AltSet> {
        match &formal.ty {
            FormalType::Param(i) => schema.type_constraints.get(*i)?.by_container.map(AltSet),
            FormalType::Concrete(t) => elems_by_container(std::slice::from_ref(t)).map(AltSet),
            FormalType::Unknown => None,
        }
    }

    /// The element types allowed for values of any of `kinds`.
    fn elems_for(self, kinds: &[Kind]) -> u32 {
        kinds.iter().fold(0, |elems, k| elems | self.0[*k as usize])
    }
}

/// The types a formal parameter allows, or `None` when one of them is a type this checker does
/// not reason about (maps, sparse tensors) or its type cannot be read.
fn alternatives<'s>(schema: &'s OpSchema, formal: &'s FormalParam) -> Option<&'s [ValueType]> {
    schema.allowed_types(formal).filter(|types| types.iter().all(|t| alt(t).is_some()))
}

/// An argument that contradicts the schema or another argument.
#[derive(Debug, PartialEq)]
pub struct Conflict {
    /// Index of the offending input.
    pub arg: usize,
    /// The earlier input it contradicts, if any.
    pub other: Option<usize>,
    pub message: String,
    pub label: String,
    /// Advice for this kind of conflict, when the usual one ([`CAST_HELP`]) does not apply.
    pub help: Option<String>,
}

/// The usual advice for an element type that contradicts another.
pub const CAST_HELP: &str = "cast one side with `op.Cast(x, to=FLOAT.dtype)` or `op.CastLike(x, y)`";

impl Conflict {
    /// The advice for this conflict: its own, or the usual one.
    pub fn help_text(&self) -> String {
        self.help.clone().unwrap_or_else(|| CAST_HELP.to_string())
    }
}

/// The formal parameter that input `i` binds to, if any.
fn formal_of(schema: &OpSchema, i: usize) -> Option<&FormalParam> {
    match schema.inputs.get(i) {
        Some(f) => Some(f),
        None => schema.inputs.last().filter(|l| l.option == FormalOption::Variadic),
    }
}

fn list(types: &[ElemType]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for t in types {
        if !names.contains(&t.script_name()) {
            names.push(t.script_name());
        }
    }
    if names.len() > 6 {
        format!("{}, ... ({} types)", names[..6].join(", "), names.len())
    } else {
        names.join(", ")
    }
}

/// How to turn a value of kind `have` into one of the kinds a parameter wants.
fn kind_help(have: Kind, want: &[Kind]) -> String {
    match (have, want.first()) {
        (Kind::Seq, Some(Kind::Tensor)) => {
            "take one tensor with `op.SequenceAt(seq, i)`, or join them with `op.ConcatFromSequence(seq, axis=0)`"
                .to_string()
        }
        (Kind::Tensor, Some(Kind::Seq)) => {
            "make a sequence with `op.SequenceConstruct(x)` or `op.SplitToSequence(x)`".to_string()
        }
        (Kind::OptTensor | Kind::OptSeq, _) => "take the value out with `op.OptionalGetElement(o)`".to_string(),
        (_, Some(Kind::OptTensor | Kind::OptSeq)) => "wrap the value with `op.Optional(x)`".to_string(),
        _ => "pass a value of the kind the operator expects".to_string(),
    }
}

/// Whether two facts about values bound to one type variable contradict each other.
fn clash(a: &Ty, b: &Ty) -> bool {
    let (ka, kb) = (a.kinds(), b.kinds());
    if !ka.is_empty() && !kb.is_empty() && !ka.iter().any(|k| kb.contains(k)) {
        return true;
    }
    match (a.tensor_ty(), b.tensor_ty()) {
        (Some(Ty::Elem(x)), Some(Ty::Elem(y))) => x != y,
        (Some(Ty::Elem(x)), Some(v @ Ty::Var { .. })) | (Some(v @ Ty::Var { .. }), Some(Ty::Elem(x))) => !v.admits(*x),
        (Some(Ty::Var { allowed: x, .. }), Some(Ty::Var { allowed: y, .. })) => {
            !x.is_empty() && !y.is_empty() && !x.iter().any(|t| y.contains(t))
        }
        _ => false,
    }
}

/// Whether `new` says more than `old` (a concrete type is the better fact to carry on).
fn more_specific(new: &Ty, old: &Ty) -> bool {
    matches!((old.tensor_ty(), new.tensor_ty()), (None, Some(_)) | (Some(Ty::Var { .. }), Some(Ty::Elem(_))))
}

/// Whether a value known to be `actual` cannot have the type an annotation declares (`want`).
pub fn contradicts(actual: &Ty, want: &Ty) -> bool {
    let (ka, kw) = (actual.kinds(), want.kinds());
    if !ka.is_empty() && !kw.is_empty() && !ka.iter().any(|k| kw.contains(k)) {
        return true;
    }
    match (actual.tensor_ty(), want.tensor_ty()) {
        (Some(Ty::Elem(a)), Some(w)) => !w.admits(*a),
        _ => false,
    }
}

/// The known element type of another input than `i` of a call (`args`) bound to the type
/// variable that input `i` binds: the type `i` must have.
pub fn peer_type<'t>(schema: &OpSchema, args: &[Option<&'t Ty>], i: usize) -> Option<&'t Ty> {
    let formal = formal_of(schema, i).filter(|f| matches!(f.ty, FormalType::Param(_)))?;
    args.iter().enumerate().find_map(|(j, a)| {
        let same = j != i && formal_of(schema, j).is_some_and(|f| f.type_str == formal.type_str);
        a.filter(|t| same && matches!(t, Ty::Elem(_)))
    })
}

/// Checks the inputs of one call and infers its outputs' types.
///
/// `args[i]` is what is known of input `i` (`None`: unknown or omitted).
pub fn check_call(schema: &OpSchema, args: &[Option<&Ty>], n_outputs: usize) -> Result<Vec<Option<Ty>>, Conflict> {
    // The first argument that fixed each type variable.
    let mut bound: Vec<(&str, &Ty, usize)> = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        let (Some(formal), Some(ty)) = (formal_of(schema, i), *arg) else { continue };
        let Some(types) = schema.allowed_types(formal) else { continue };
        let Some(alts) = AltSet::of(schema, formal).filter(|_| !types.is_empty()) else { continue };
        let fitting = alts.elems_for(ty.kinds());
        let input = CallInput { schema, index: i, formal, types, ty, fitting };
        kind_conflict(&input)?;
        elem_conflict(&input)?;
        agree_on_type_variable(&input, &mut bound)?;
    }
    let onnx = schema.domain.is_empty();
    if onnx && schema.name == "SequenceInsert" {
        sequence_insert_conflict(args)?;
    }
    let mut outputs: Vec<Option<Ty>> = (0..n_outputs).map(|k| output_type(schema, k, &bound)).collect();
    // Types that flow through the sequence and optional ops.
    if onnx && n_outputs > 0 {
        if let Some(t) = flowed_type(&schema.name, args, &bound) {
            outputs[0] = Some(t);
        }
    }
    Ok(outputs)
}

/// One input of a call that [`check_call`] checks: what is known of it and what its formal
/// parameter allows.
struct CallInput<'a> {
    schema: &'a OpSchema,
    /// Its position among the call's inputs.
    index: usize,
    formal: &'a FormalParam,
    /// The types the formal parameter allows (not empty).
    types: &'a [ValueType],
    ty: &'a Ty,
    /// The element types the formal parameter allows for values of the kinds `ty` may be.
    fitting: u32,
}

/// What is known of input `i` of a call (`None`: unknown or omitted).
fn arg_ty<'t>(args: &[Option<&'t Ty>], i: usize) -> Option<&'t Ty> {
    args.get(i).copied().flatten()
}

/// A tensor where the schema wants a sequence, or the other way round.
fn kind_conflict(input: &CallInput) -> Result<(), Conflict> {
    let CallInput { schema, formal, types, ty, .. } = input;
    let kinds = ty.kinds();
    if input.fitting != 0 || kinds.is_empty() {
        return Ok(());
    }
    let mut wanted: Vec<Kind> = Vec::new();
    let mut want: Vec<&str> = Vec::new();
    for a in types.iter().filter_map(alt) {
        if !wanted.contains(&a.kind) {
            wanted.push(a.kind);
            if !want.contains(&a.kind.describe()) {
                want.push(a.kind.describe());
            }
        }
    }
    let want = want.join(" or ");
    Err(Conflict {
        arg: input.index,
        other: None,
        message: format!(
            "`{}` expects {want} for its input `{}`, but this is {}",
            schema.name,
            formal.name,
            if kinds.len() == 1 { kinds[0].describe().to_string() } else { ty.describe() }
        ),
        label: format!("{} here", ty.describe()),
        help: Some(kind_help(kinds[0], &wanted)),
    })
}

/// The element type must be one of those allowed for values of this kind.
fn elem_conflict(input: &CallInput) -> Result<(), Conflict> {
    let CallInput { schema, formal, types, ty, fitting, .. } = input;
    let op = &schema.name;
    if !ty.tensor_ty().is_some_and(|t| *fitting != 0 && !t.admits_any(*fitting)) {
        return Ok(());
    }
    let kinds = ty.kinds();
    let fits = types.iter().filter_map(alt).filter(|a| kinds.contains(&a.kind));
    let allowed: Vec<ElemType> = fits.map(|a| a.elem).collect();
    let what = match ty {
        Ty::Seq(_) => "sequences of ",
        Ty::Opt(_) => "optional ",
        _ => "",
    };
    let (message, label) = match ty {
        Ty::Var { name, allowed: own } => (
            format!("`{op}` accepts none of the types of `{name}` for its input `{}`", formal.name),
            format!("`{name}` is one of {}; `{}` allows {}", list(own), formal.name, list(&allowed)),
        ),
        _ => (
            format!("`{op}` does not accept {} for its input `{}`", ty.describe(), formal.name),
            format!("{} here; `{}` allows {what}{}", ty.describe(), formal.name, list(&allowed)),
        ),
    };
    Err(Conflict { arg: input.index, other: None, message, label, help: None })
}

/// Homogeneous uses of one type variable must agree. `bound` holds, for each type variable, the
/// first input that fixed it (with the most specific fact about it so far): the input fixes its
/// variable, or must agree with it.
fn agree_on_type_variable<'a>(
    input: &CallInput<'a>,
    bound: &mut Vec<(&'a str, &'a Ty, usize)>,
) -> Result<(), Conflict> {
    let CallInput { schema, formal, ty, .. } = *input;
    let is_var = matches!(formal.ty, FormalType::Param(_));
    if !is_var || (formal.option == FormalOption::Variadic && !formal.is_homogeneous) {
        return Ok(());
    }
    let Some(k) = bound.iter().position(|(v, _, _)| *v == formal.type_str) else {
        bound.push((&formal.type_str, ty, input.index));
        return Ok(());
    };
    let (first, j) = (bound[k].1, bound[k].2);
    if clash(first, ty) {
        let first_formal = formal_of(schema, j).map(|f| f.name.as_str()).unwrap_or("?");
        let which = if first_formal == formal.name {
            format!("all its `{first_formal}`")
        } else {
            format!("`{first_formal}` and `{}`", formal.name)
        };
        let what = if first.is_tensor() && ty.is_tensor() { "element type" } else { "type" };
        return Err(Conflict {
            arg: input.index,
            other: Some(j),
            message: format!(
                "`{}` needs {which} to have the same {what}, but they are {} and {}",
                schema.name,
                first.describe(),
                ty.describe()
            ),
            label: format!("{} here", ty.describe()),
            help: None,
        });
    }
    if more_specific(ty, first) {
        bound[k].1 = ty;
    }
    Ok(())
}

/// Two inputs of one call that share a type parameter of the schema where one is a fixed
/// element type and the other an annotation's type variable that calls may bind to another
/// type: `op.Add(self, op.Constant(value_float=0.0))` with `self: TReal` is right for a FLOAT
/// call and refused for every other. `(fixed, variable, message)`, the first such pair.
/// The warning (W0602) for a call where [`type_variable_meets_fixed`] found `fixed` (at
/// `fixed_span`) meeting `variable`: compiled and trace-only code say it alike.
pub fn fixed_meets_variable_warning(
    file: usize,
    message: String,
    (fixed_span, fixed): (crate::source::Span, &Ty),
    (variable_span, variable): (crate::source::Span, &Ty),
) -> crate::diagnostics::Diagnostic {
    crate::diagnostics::Diagnostic::warning(crate::diagnostics::codes::TYPE_MAY_MISMATCH, file, message)
        .primary(fixed_span, format!("always {}", fixed.describe()))
        .secondary(variable_span, format!("{} here", variable.describe()))
        .help("make the fixed side follow the other: `op.CastLike(x, y)`, or a constant made with `dtype=y.dtype` in trace-only code")
}

pub fn type_variable_meets_fixed(schema: &OpSchema, args: &[Option<&Ty>]) -> Option<(usize, usize, String)> {
    let mut seen: Vec<(&str, usize, &Ty)> = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let (Some(formal), Some(ty)) = (formal_of(schema, i), *arg) else { continue };
        if !matches!(formal.ty, FormalType::Param(_))
            || (formal.option == FormalOption::Variadic && !formal.is_homogeneous)
        {
            continue;
        }
        for (param, j, other) in &seen {
            if *param != formal.type_str {
                continue;
            }
            let pair = match (*other, ty) {
                (Ty::Elem(e), Ty::Var { name, allowed }) => Some((*j, i, *e, name, allowed)),
                (Ty::Var { name, allowed }, Ty::Elem(e)) => Some((i, *j, *e, name, allowed)),
                _ => None,
            };
            let Some((fixed, variable, e, name, allowed)) = pair else { continue };
            let others: Vec<&str> = allowed.iter().filter(|t| **t != e).map(|t| t.script_name()).take(3).collect();
            if allowed.is_empty() || !others.is_empty() {
                let example = if others.is_empty() { "another type".to_string() } else { others.join(", ") };
                let message = format!(
                    "`{}` needs one element type for these inputs: {} here, but `{name}` is whatever a call gives ({example}...), and every call that is not {} is refused",
                    schema.name,
                    e.script_name(),
                    e.script_name()
                );
                return Some((fixed, variable, message));
            }
        }
        seen.push((&formal.type_str, i, ty));
    }
    None
}

/// A tensor inserted into a sequence must have the sequence's element type.
fn sequence_insert_conflict(args: &[Option<&Ty>]) -> Result<(), Conflict> {
    if let (Some(seq), Some(t)) = (arg_ty(args, 0).and_then(Ty::seq_elem), arg_ty(args, 1)) {
        if t.is_tensor() && clash(seq, t) {
            return Err(Conflict {
                arg: 1,
                other: Some(0),
                message: format!("`SequenceInsert` needs the tensor to have the type of the sequence's tensors, but they are {} and {}", seq.describe(), t.describe()),
                label: format!("{} here", t.describe()),
                help: None,
            });
        }
    }
    Ok(())
}

/// The type of output `k` as the schema gives it: its concrete type, the type of the inputs
/// that fixed its type variable (`bound`), or what all its alternatives share.
fn output_type(schema: &OpSchema, k: usize, bound: &[(&str, &Ty, usize)]) -> Option<Ty> {
    let formal = match schema.outputs.get(k) {
        Some(f) => f,
        None => schema.outputs.last().filter(|l| l.option == FormalOption::Variadic)?,
    };
    let concrete = match &formal.ty {
        FormalType::Concrete(t) => alt(t),
        _ => None,
    };
    if let Some(alt) = concrete {
        Some(alt.ty())
    } else if let Some((_, t, _)) = bound.iter().find(|(v, _, _)| *v == formal.type_str) {
        Some((*t).clone())
    } else {
        let all = |types: &[ValueType], kind: fn(Kind) -> bool| types.iter().filter_map(alt).all(|a| kind(a.kind));
        match alternatives(schema, formal) {
            Some([one]) => alt(one).map(Alt::ty),
            // Every alternative a sequence (or an optional value): that much is known.
            Some(types) if !types.is_empty() && all(types, |k| k == Kind::Seq) => Some(Ty::Seq(None)),
            Some(types) if !types.is_empty() && all(types, |k| matches!(k, Kind::OptTensor | Kind::OptSeq)) => {
                Some(Ty::Opt(None))
            }
            _ => None,
        }
    }
}

/// The type of the first output of ONNX's sequence and optional op `op`, from its inputs' types
/// (`args`) or those of its type variables (`bound`), when they tell it.
fn flowed_type(op: &str, args: &[Option<&Ty>], bound: &[(&str, &Ty, usize)]) -> Option<Ty> {
    let bound_var = |v: &str| bound.iter().find(|(b, _, _)| *b == v).map(|(_, t, _)| (*t).clone());
    let arg = |i: usize| arg_ty(args, i);
    match op {
        "SequenceConstruct" => bound_var("T").filter(Ty::is_tensor).map(|t| Ty::seq(Some(t))),
        "SequenceAt" | "ConcatFromSequence" => arg(0).and_then(Ty::seq_elem).cloned(),
        "SequenceInsert" => match (arg(0), arg(1)) {
            (Some(s @ Ty::Seq(Some(_))), _) => Some(s.clone()),
            (_, Some(t)) if t.is_tensor() => Some(Ty::seq(Some(t.clone()))),
            _ => None,
        },
        "SequenceErase" => arg(0).filter(|t| matches!(t, Ty::Seq(Some(_)))).cloned(),
        "SplitToSequence" => arg(0).filter(|t| t.is_tensor()).map(|t| Ty::seq(Some(t.clone()))),
        "Optional" => arg(0).map(|t| Ty::opt(Some(t.clone()))),
        "OptionalGetElement" => match arg(0) {
            Some(Ty::Opt(Some(t)) | Ty::MaybeOpt(t)) => Some(t.as_ref().clone()),
            // Since opset 18 a tensor or a sequence passes through unchanged.
            Some(t @ (Ty::Elem(_) | Ty::Var { .. } | Ty::Seq(_))) => Some(t.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// What output typing reads of one attribute of a node.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrFacts {
    Int(i64),
    /// A tensor value of this element type.
    Tensor(ElemType),
    /// A graph, with what is known of its outputs' types.
    Graph(Vec<Option<Ty>>),
    /// Any other value, or a reference to an attribute of the function.
    Other,
}

impl AttrFacts {
    /// What an IR attribute's value says, a graph's outputs typed by `graph`.
    pub fn of(value: &crate::ir::AttrValue, graph: impl FnOnce(&crate::ir::Graph) -> Vec<Option<Ty>>) -> AttrFacts {
        use crate::ir::AttrValue;
        match value {
            AttrValue::Int(i) => AttrFacts::Int(*i),
            AttrValue::Tensor(t) => AttrFacts::Tensor(t.elem),
            AttrValue::Graph(g) => AttrFacts::Graph(graph(g)),
            _ => AttrFacts::Other,
        }
    }
}

/// What is known of a node's inputs and attributes, for typing its outputs ([`node_outputs`]),
/// asked for one fact at a time: most nodes need one fact or none, and listing all of them
/// looked up every input's type and every attribute for each node.
pub trait NodeFacts {
    /// What is known of the type of input `i`.
    fn input(&self, i: usize) -> Option<&Ty>;
    /// How many inputs the node has.
    fn input_count(&self) -> usize;
    /// What is known of the node's attribute `name`, if it has one.
    fn attr(&self, name: &str) -> Option<AttrFacts>;
    /// The name of the node's first attribute.
    fn first_attr(&self) -> Option<&str>;
}

/// The types of a node's outputs, as far as they follow from what is known of its inputs and
/// attributes (`None`: unknown). The ops whose outputs the schemas cannot type are typed here:
/// `Constant` (its value), `Cast` (`to`), `CastLike` (its second input), `SequenceEmpty`
/// (`dtype`, float by default), `Identity`, `Loop` (the body's outputs after the condition:
/// carried values and scan outputs) and `If` (what both branches agree on); every other op of a
/// known schema through [`check_call`], whose answer for these inputs the caller may already
/// have (`checked`, from checking them against the same schema): it is not computed twice.
/// `facts` is asked for only when they are read (gathering them looks up every input's type):
/// for an op typed here, or one typed by its schema without a `checked` answer.
pub fn node_outputs(
    domain: &str,
    op_type: &str,
    version: i64,
    facts: &impl NodeFacts,
    outputs: usize,
    checked: Option<Vec<Option<Ty>>>,
) -> Vec<Option<Ty>> {
    let elem = |code: i64| ElemType::ALL.iter().copied().find(|t| t.code() as i64 == code);
    let by_schema = move || {
        checked.unwrap_or_else(|| {
            let inputs: Vec<Option<&Ty>> = (0..facts.input_count()).map(|i| facts.input(i)).collect();
            schema_outputs(domain, op_type, version, &inputs, outputs)
        })
    };
    if !domain.is_empty() {
        return by_schema();
    }
    match op_type {
        "Constant" => {
            vec![match facts.attr("value") {
                Some(AttrFacts::Tensor(t)) => Some(Ty::Elem(t)),
                _ => match facts.first_attr() {
                    Some("value_float" | "value_floats") => Some(Ty::Elem(ElemType::Float)),
                    Some("value_int" | "value_ints") => Some(Ty::Elem(ElemType::Int64)),
                    Some("value_string" | "value_strings") => Some(Ty::Elem(ElemType::String)),
                    _ => None,
                },
            }]
        }
        "Cast" => vec![match facts.attr("to") {
            Some(AttrFacts::Int(code)) => elem(code).map(Ty::Elem),
            _ => None,
        }],
        "CastLike" => vec![facts.input(1).cloned()],
        "SequenceEmpty" => vec![match facts.attr("dtype") {
            Some(AttrFacts::Int(code)) => elem(code).map(|t| Ty::seq(Some(Ty::Elem(t)))),
            None => Some(Ty::seq(Some(Ty::Elem(ElemType::Float)))),
            _ => Some(Ty::Seq(None)),
        }],
        "Loop" => match facts.attr("body") {
            Some(AttrFacts::Graph(body)) => body.into_iter().skip(1).collect(),
            _ => Vec::new(),
        },
        "Identity" => vec![facts.input(0).cloned()],
        "If" => {
            let branch = |name: &str| match facts.attr(name) {
                Some(AttrFacts::Graph(g)) => g,
                _ => vec![None; outputs],
            };
            let (then, els) = (branch("then_branch"), branch("else_branch"));
            then.into_iter().zip(els).map(|(a, b)| if a == b { a } else { None }).collect()
        }
        _ => by_schema(),
    }
}

/// The outputs' types that an op's schema gives, from its inputs'.
fn schema_outputs(
    domain: &str,
    op_type: &str,
    version: i64,
    inputs: &[Option<&Ty>],
    outputs: usize,
) -> Vec<Option<Ty>> {
    match crate::schema::registry().resolve(domain, op_type, version) {
        crate::schema::Resolution::Found(schema) => check_call(schema, inputs, outputs).unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{registry, Resolution};

    fn schema(op: &str, version: i64) -> &'static OpSchema {
        match registry().resolve("", op, version) {
            Resolution::Found(s) => s,
            _ => panic!("no schema for {op}"),
        }
    }

    const FLOAT: Ty = Ty::Elem(ElemType::Float);
    const INT64: Ty = Ty::Elem(ElemType::Int64);

    fn seq(t: Ty) -> Ty {
        Ty::seq(Some(t))
    }

    #[test]
    fn element_types_flow_through_sequences() {
        let out = check_call(schema("SequenceConstruct", 18), &[Some(&FLOAT), Some(&FLOAT)], 1).unwrap();
        assert_eq!(out, vec![Some(seq(FLOAT))]);
        let out = check_call(schema("SequenceAt", 18), &[Some(&seq(FLOAT)), Some(&INT64)], 1).unwrap();
        assert_eq!(out, vec![Some(FLOAT)]);
        let out = check_call(schema("ConcatFromSequence", 18), &[Some(&seq(INT64))], 1).unwrap();
        assert_eq!(out, vec![Some(INT64)]);
        let out = check_call(schema("SplitToSequence", 18), &[Some(&FLOAT)], 1).unwrap();
        assert_eq!(out, vec![Some(seq(FLOAT))]);
        let out = check_call(schema("SequenceLength", 18), &[Some(&seq(FLOAT))], 1).unwrap();
        assert_eq!(out, vec![Some(INT64)]);
        let out = check_call(schema("SequenceInsert", 18), &[None, Some(&FLOAT)], 1).unwrap();
        assert_eq!(out, vec![Some(seq(FLOAT))]);
        // Unknown stays unknown, but a sequence is still a sequence.
        let out = check_call(schema("SequenceConstruct", 18), &[None], 1).unwrap();
        assert_eq!(out, vec![Some(Ty::Seq(None))]);
        let out = check_call(schema("SequenceAt", 18), &[None, None], 1).unwrap();
        assert_eq!(out, vec![None]);
    }

    #[test]
    fn optional_values() {
        let out = check_call(schema("Optional", 18), &[Some(&FLOAT)], 1).unwrap();
        assert_eq!(out, vec![Some(Ty::opt(Some(FLOAT)))]);
        let out = check_call(schema("OptionalGetElement", 18), &[Some(&Ty::opt(Some(FLOAT)))], 1).unwrap();
        assert_eq!(out, vec![Some(FLOAT)]);
        // Since opset 18 a tensor is an acceptable "optional" input.
        let out = check_call(schema("OptionalHasElement", 18), &[Some(&FLOAT)], 1).unwrap();
        assert_eq!(out, vec![Some(Ty::Elem(ElemType::Bool))]);
        let out = check_call(schema("OptionalGetElement", 18), &[Some(&FLOAT)], 1).unwrap();
        assert_eq!(out, vec![Some(FLOAT)]);
        // Before, only optional values are.
        assert!(check_call(schema("OptionalHasElement", 15), &[Some(&FLOAT)], 1).is_err());
        // An `Optional[FLOAT]` input may be either.
        let maybe = Ty::MaybeOpt(Box::new(FLOAT));
        assert!(check_call(schema("OptionalHasElement", 15), &[Some(&maybe)], 1).is_ok());
        assert!(check_call(schema("Add", 18), &[Some(&maybe), Some(&FLOAT)], 1).is_ok());
        assert!(check_call(schema("Add", 18), &[Some(&maybe), Some(&INT64)], 1).is_err());
        assert!(check_call(schema("SequenceAt", 18), &[Some(&maybe), Some(&INT64)], 1).is_err());
        let out = check_call(schema("OptionalGetElement", 15), &[Some(&maybe)], 1).unwrap();
        assert_eq!(out, vec![Some(FLOAT)]);
    }

    #[test]
    fn tensors_and_sequences_do_not_mix() {
        let c = check_call(schema("SequenceAt", 18), &[Some(&FLOAT), Some(&INT64)], 1).unwrap_err();
        assert_eq!(c.arg, 0);
        assert!(c.message.contains("expects a sequence of tensors"), "{}", c.message);
        let c = check_call(schema("Add", 18), &[Some(&seq(FLOAT)), Some(&FLOAT)], 1).unwrap_err();
        assert_eq!(c.arg, 0);
        assert!(c.message.contains("expects a tensor"), "{}", c.message);
        let c = check_call(schema("Add", 18), &[Some(&Ty::Seq(None)), None], 1).unwrap_err();
        assert_eq!(c.arg, 0);
        // Identity takes anything since opset 14.
        let out = check_call(schema("Identity", 18), &[Some(&seq(FLOAT))], 1).unwrap();
        assert_eq!(out, vec![Some(seq(FLOAT))]);
    }

    #[test]
    fn sequence_element_types_are_checked() {
        let c = check_call(schema("SequenceInsert", 18), &[Some(&seq(FLOAT)), Some(&INT64)], 1).unwrap_err();
        assert_eq!((c.arg, c.other), (1, Some(0)));
        let c = check_call(schema("SequenceConstruct", 18), &[Some(&FLOAT), Some(&INT64)], 1).unwrap_err();
        assert_eq!((c.arg, c.other), (1, Some(0)));
        let var = Ty::Var { name: "T".into(), allowed: vec![] };
        assert!(check_call(schema("SequenceInsert", 18), &[Some(&seq(FLOAT)), Some(&var)], 1).is_ok());
    }

    #[test]
    fn tensor_messages_are_unchanged() {
        let c = check_call(schema("Add", 18), &[Some(&FLOAT), Some(&INT64)], 1).unwrap_err();
        assert_eq!(c.message, "`Add` needs `A` and `B` to have the same element type, but they are FLOAT and INT64");
        let c = check_call(schema("Sin", 18), &[Some(&INT64)], 1).unwrap_err();
        assert_eq!(c.message, "`Sin` does not accept INT64 for its input `input`");
    }

    #[test]
    fn ops_without_typing_schemas_are_typed_from_their_attributes() {
        let out = |op: &str, inputs: &[Option<Ty>], attrs: &[(&str, AttrFacts)], n: usize| {
            let facts = Listed { inputs: inputs.iter().map(Option::as_ref).collect(), attrs: attrs.to_vec() };
            node_outputs("", op, 18, &facts, n, None)
        };
        assert_eq!(out("Constant", &[], &[("value_ints", AttrFacts::Other)], 1), vec![Some(INT64)]);
        assert_eq!(out("Cast", &[Some(FLOAT)], &[("to", AttrFacts::Int(7))], 1), vec![Some(INT64)]);
        assert_eq!(out("CastLike", &[Some(FLOAT), Some(INT64)], &[], 1), vec![Some(INT64)]);
        assert_eq!(out("SequenceEmpty", &[], &[], 1), vec![Some(seq(FLOAT))]);
        let body = AttrFacts::Graph(vec![None, Some(FLOAT), Some(INT64)]);
        assert_eq!(out("Loop", &[], &[("body", body)], 2), vec![Some(FLOAT), Some(INT64)]);
        let then = AttrFacts::Graph(vec![Some(FLOAT), Some(FLOAT)]);
        let els = AttrFacts::Graph(vec![Some(FLOAT), Some(INT64)]);
        assert_eq!(out("If", &[], &[("then_branch", then), ("else_branch", els)], 2), vec![Some(FLOAT), None]);
        // Another domain's `Cast` is not ONNX's; ONNX ops with schemas are typed by them.
        let cast_to_int = Listed { inputs: Vec::new(), attrs: vec![("to", AttrFacts::Int(7))] };
        assert_eq!(node_outputs("my.domain", "Cast", 1, &cast_to_int, 1, None), Vec::new());
        assert_eq!(out("Add", &[Some(FLOAT), None], &[], 1), vec![Some(FLOAT)]);
    }

    #[test]
    fn a_checked_answer_spares_gathering_the_facts_only_where_the_schema_types_the_op() {
        assert_eq!(node_outputs("", "Add", 18, &Unread, 1, Some(vec![Some(INT64)])), vec![Some(INT64)]);
        assert_eq!(node_outputs("my.domain", "Cast", 1, &Unread, 1, Some(vec![None])), vec![None]);
        // `Identity` is typed here, from its input, whatever a check answered.
        let float_input = Listed { inputs: vec![Some(&FLOAT)], attrs: Vec::new() };
        assert_eq!(node_outputs("", "Identity", 18, &float_input, 1, Some(vec![None])), vec![Some(FLOAT)]);
    }

    /// A node's facts, listed.
    struct Listed<'t> {
        inputs: Vec<Option<&'t Ty>>,
        attrs: Vec<(&'t str, AttrFacts)>,
    }

    impl NodeFacts for Listed<'_> {
        fn input(&self, i: usize) -> Option<&Ty> {
            self.inputs.get(i).copied().flatten()
        }
        fn input_count(&self) -> usize {
            self.inputs.len()
        }
        fn attr(&self, name: &str) -> Option<AttrFacts> {
            self.attrs.iter().find(|(n, _)| *n == name).map(|(_, a)| a.clone())
        }
        fn first_attr(&self) -> Option<&str> {
            self.attrs.first().map(|(n, _)| *n)
        }
    }

    /// A node whose facts must not be read.
    struct Unread;

    impl NodeFacts for Unread {
        fn input(&self, _: usize) -> Option<&Ty> {
            panic!("the facts of a node typed by its checked answer are read")
        }
        fn input_count(&self) -> usize {
            panic!("the facts of a node typed by its checked answer are read")
        }
        fn attr(&self, _: &str) -> Option<AttrFacts> {
            panic!("the facts of a node typed by its checked answer are read")
        }
        fn first_attr(&self) -> Option<&str> {
            panic!("the facts of a node typed by its checked answer are read")
        }
    }
}
