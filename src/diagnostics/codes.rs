//! The stable diagnostic codes, and what each one means.
//!
//! E00xx: lexical and syntax errors; E01xx: module structure (imports, opsets, names);
//! E02xx: function signatures; E03xx: statements and expressions; E04xx: op calls;
//! E05xx: translations against their PyTorch operator schema; E06xx: element types;
//! E07xx: schema files given on the command line; E08xx: linking models (`onnxsc link`);
//! E09xx: trace-only translations, at check time and for a call of the exporter;
//! E10xx: limits of the ONNX format and of onnxsc (docs/robustness.md); E11xx: decompiling ONNX
//! functions into `.onnxs` (`onnxsc decompile`); W0xxx: warnings.
//!
//! `onnxsc explain CODE` prints the long explanation of each (see `explain`).

pub const INVALID_CHARACTER: &str = "E0001";
pub const UNTERMINATED_STRING: &str = "E0002";
pub const INVALID_NUMBER: &str = "E0003";
pub const MIXED_INDENT: &str = "E0004";
pub const INCONSISTENT_DEDENT: &str = "E0005";
pub const UNCLOSED_BRACKET: &str = "E0006";
pub const SYNTAX_ERROR: &str = "E0007";
pub const UNSUPPORTED_SYNTAX: &str = "E0008";
pub const INVALID_UTF8: &str = "E0009";

pub const UNSUPPORTED_IMPORT: &str = "E0101";
pub const UNSUPPORTED_MODULE_STMT: &str = "E0102";
pub const BAD_OPSET: &str = "E0103";
pub const DUPLICATE_FUNCTION: &str = "E0104";
pub const BAD_DECORATOR: &str = "E0105";
pub const UNDEFINED_NAME: &str = "E0106";
pub const NOT_A_VALUE: &str = "E0107";
pub const OPSET_CONFLICT: &str = "E0108";
pub const NO_DEFAULT_OPSET: &str = "E0109";
pub const RECURSION: &str = "E0110";
pub const MODULE_NOT_FOUND: &str = "E0111";
pub const UNSUPPORTED_CONSTANT: &str = "E0112";
pub const RUN_TIME_VALUE: &str = "E0113";
pub const CONSTANT_ERROR: &str = "E0114";
pub const CONSTANT_TOO_LARGE: &str = "E0115";
pub const INTEGER_OVERFLOW: &str = "E0116";

pub const BAD_ANNOTATION: &str = "E0201";
pub const DUPLICATE_PARAMETER: &str = "E0202";
pub const BAD_DEFAULT: &str = "E0203";
pub const RETURN_COUNT: &str = "E0204";
pub const NO_RETURN_VALUE: &str = "E0205";

pub const UNSUPPORTED_STMT: &str = "E0301";
pub const UNSUPPORTED_EXPR: &str = "E0302";
pub const UNSUPPORTED_OPERATOR: &str = "E0303";
pub const MISPLACED_RETURN: &str = "E0304";
pub const UNREACHABLE: &str = "E0305";
pub const BREAK_OUTSIDE_LOOP: &str = "E0306";
pub const UNUSED_EXPRESSION: &str = "E0307";
pub const IF_WITHOUT_OUTPUT: &str = "E0308";
pub const CONDITIONALLY_DEFINED: &str = "E0309";
pub const UNPACK_COUNT: &str = "E0310";
pub const BAD_CONSTANT: &str = "E0311";

pub const UNKNOWN_CALLEE: &str = "E0401";
pub const UNKNOWN_OP: &str = "E0402";
pub const OP_NOT_IN_OPSET: &str = "E0403";
pub const BAD_ARGUMENT: &str = "E0404";
pub const UNKNOWN_ATTRIBUTE: &str = "E0405";
pub const ATTRIBUTE_TYPE: &str = "E0406";
pub const MISSING_ATTRIBUTE: &str = "E0407";
pub const OUTPUT_COUNT: &str = "E0408";
pub const FUNCTION_CALL_ARGUMENTS: &str = "E0409";

pub const UNKNOWN_ATEN_OP: &str = "E0501";
pub const MISSING_ATEN_ARGUMENT: &str = "E0502";
pub const IGNORED_ATEN_ARGUMENT: &str = "E0503";
pub const EXTRA_PARAMETER: &str = "E0504";
pub const KEYWORD_NAME_MISMATCH: &str = "E0505";
pub const TENSOR_AS_ATTRIBUTE: &str = "E0506";
pub const ATTRIBUTE_CANNOT_HOLD: &str = "E0507";
pub const OPTIONAL_TENSOR_REQUIRED: &str = "E0508";
pub const ATEN_OUTPUT_COUNT: &str = "E0509";
pub const BAD_TORCH_OP: &str = "E0510";
pub const BAD_CUSTOM_SCHEMA: &str = "E0511";
pub const SWAPPED_PARAMETERS: &str = "E0512";
pub const EXPORTER_OPSET: &str = "E0513";
pub const OPTIONAL_ATTRIBUTE_REQUIRED: &str = "E0514";
pub const REGISTERED_SCHEMA_MISMATCH: &str = "E0515";
pub const DUPLICATE_TRANSLATION: &str = "E0516";

pub const TYPE_MISMATCH: &str = "E0601";
pub const MAYBE_NONE: &str = "E0602";
pub const NONE_TEST_OPSET: &str = "E0603";

pub const BAD_SCHEMA_FILE: &str = "E0701";

pub const UNRESOLVED_CALL: &str = "E0801";
pub const INVALID_MODEL: &str = "E0802";
pub const CALL_SIGNATURE_MISMATCH: &str = "E0803";
pub const DUPLICATE_FUNCTION_DEFINITION: &str = "E0804";
pub const OPSET_VERSION_CONFLICT: &str = "E0805";
pub const RECURSIVE_FUNCTIONS: &str = "E0806";
pub const INLINE_TOO_LARGE: &str = "E0807";
pub const MODEL_TOO_LARGE_TO_DECODE: &str = "E0808";
pub const LINKED_MODEL_INVALID: &str = "E0809";
pub const VARIANT_IMPOSSIBLE: &str = "E0810";
pub const CALL_CHAIN_TOO_DEEP: &str = "E0811";

/// A trace-only translation does what the exporter's tensors do not allow (a Python `if` on a
/// tensor, an attribute a tensor does not have, an unknown operator).
pub const TRACE_ERROR: &str = "E0901";
/// A trace-only translation raised an exception (`raise`, a failing `assert`) for a call.
pub const TRACE_RAISED: &str = "E0902";
/// A trace went over its limits (steps, calls in progress, nodes).
pub const TRACE_LIMIT: &str = "E0903";
/// A trace needs a fact the call does not know (a symbolic dimension as a number).
pub const TRACE_UNKNOWN_FACT: &str = "E0904";
/// A compiled function (a script) calls a trace-only translation.
pub const SCRIPT_CALLS_TRACE_ONLY: &str = "E0905";
/// Python code branches on a tensor's value (`if x:`), which only the model knows.
pub const TENSOR_CONDITION: &str = "E0906";
/// An operator call violates its operator's shape constraint for a call's shapes (`Gemm` given
/// a rank-3 input, a `Transpose` `perm` of the wrong length, sizes that do not broadcast).
pub const SHAPE_MISMATCH: &str = "E0907";
/// What a trace-only translation returns for a call contradicts PyTorch's own result for it
/// (the FX node's element type, rank or a known dimension).
pub const REFERENCE_MISMATCH: &str = "E0908";

pub const NESTING_TOO_DEEP: &str = "E1001";
pub const SYNTAX_TOO_DEEP: &str = "E1002";
pub const TOO_MANY_FUNCTIONS: &str = "E1003";
/// Was the warning W0401 until onnx.checker was found to refuse such models.
pub const DEPRECATED_OP: &str = "E1004";

/// A function to decompile holds something `.onnxs` cannot write (docs/decompile.md).
pub const CANNOT_DECOMPILE: &str = "E1101";

/// A `# noqa` comment names an error, which cannot be suppressed, or a code onnxsc does not have.
pub const BAD_NOQA: &str = "W0001";

/// A module of the compilation is a copy of torchlib's `common` module, which onnxsc provides
/// itself: it is not compiled.
pub const TORCHLIB_COMMON_COPY: &str = "W0101";

pub const RUNTIME_ONLY_OP: &str = "W0402";
pub const POSITIONAL_NAME_MISMATCH: &str = "W0501";
pub const DEFAULT_MISMATCH: &str = "W0502";
pub const ATEN_DEFAULT_REQUIRED: &str = "W0503";
pub const UNCHECKED_NAMESPACE: &str = "W0504";
pub const LEGACY_GETITEM_NAME: &str = "W0505";
/// A `@torch_op` name that PyTorch registers outside `native_functions.yaml` (`aten::mul`,
/// TorchScript's scalar operator; a generated functional variant): not checked.
pub const OUTSIDE_NATIVE_FUNCTIONS: &str = "W0506";
/// A trace-only translation requires an argument the schema lets be None; the exporter passes
/// None to the Python as it is.
pub const TRACED_MAY_BE_NONE: &str = "W0507";
/// A table entry the exporter never calls: `torch.export` always decomposes its operator, or the
/// export's graph calls a related operator instead (raised by the Python package).
pub const NEVER_CALLED: &str = "W0508";
/// An export passed a non-default value to an argument the translation does not read, so the
/// graph computes the default's result (raised by the Python package).
pub const IGNORED_AT_EXPORT: &str = "W0509";
/// A table entry replaces the exporter's own translation for a newer opset than the translation
/// uses, at an export to that opset (raised by the Python package).
pub const DISPLACES_NEWER: &str = "W0510";
/// The running PyTorch does not register the operator a translation is bound to (a name it
/// lacks, or a library's namespace whose module is not imported): the entry is left out of the
/// table, as the exporter skips it (raised by the Python package).
pub const NOT_REGISTERED: &str = "W0511";
/// A translation's parameter that its body never reads receives an argument that can change
/// the values: every call is translated as if the argument had one value.
pub const UNREAD_PARAMETER: &str = "W0512";
pub const RETURN_TYPE_MISMATCH: &str = "W0601";
/// An op call's inputs that must share an element type are a fixed type and a type variable
/// that calls may bind to another: every such call is refused.
pub const TYPE_MAY_MISMATCH: &str = "W0602";

pub const MODEL_FUNCTION_KEPT: &str = "W0801";
/// An op attribute of trace-time code is computed from a tensor's dimension (`x.shape[i]`):
/// a call with a dynamic dimension knows it only by name, and fails there (E0904).
pub const ATTRIBUTE_FROM_DIMENSION: &str = "W0901";

/// A decompiled function does not compile back to the same function (docs/decompile.md).
pub const DECOMPILED_DIFFERS: &str = "W1101";
