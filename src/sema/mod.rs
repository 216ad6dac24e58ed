//! Semantic analysis: the meaning of module-level names, annotations (`annotations`) and
//! constants and trace-time code (the evaluator `eval`, its library `constlib`, numpy arithmetic
//! `ndarray`, element conversions `convert`), and each function's typed `signature`.

pub mod annotations;
pub mod binding;
pub mod calls;
pub mod constlib;
pub mod convert;
pub mod decorators;
pub mod env;
pub mod env_builder;
pub mod eval;
pub mod facts;
pub mod imports;
pub mod infer;
pub mod ir_values;
pub mod known_names;
pub mod literal_shapes;
pub mod liveness;
pub mod ndarray;
pub mod op_arguments;
pub mod resolve;
pub mod shapes;
pub mod signature;
pub mod trace_check;
pub mod value;
