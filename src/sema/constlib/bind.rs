//! Binding a library call's arguments to its parameters, as Python does.

use super::{display, Args, LibError, LibResult, Member};
use crate::sema::value::PyValue;

pub(super) struct Bound<'a> {
    function: &'a str,
    values: Vec<Option<&'a Member>>,
}

impl<'a> Bound<'a> {
    pub(super) fn get(&self, i: usize) -> Option<&'a Member> {
        self.values.get(i).copied().flatten()
    }

    pub(super) fn value(&self, i: usize) -> LibResult<Option<&'a PyValue>> {
        match self.get(i) {
            None => Ok(None),
            Some(Member::Value(v)) => Ok(Some(v)),
            Some(Member::Object(o)) => {
                Err(LibError::Unsupported(format!("`{}` as an argument of `{}`", display(o), display(self.function))))
            }
        }
    }

    pub(super) fn required(&self, i: usize) -> LibResult<&'a PyValue> {
        self.value(i)?.ok_or_else(|| LibError::Python(format!("{}() is missing an argument", display(self.function))))
    }
}

/// Binds arguments to parameters as Python does: positions first, then keywords.
pub(super) fn bind<'a>(function: &'a str, args: &'a Args, params: &[&str], required: usize) -> LibResult<Bound<'a>> {
    let name = display(function);
    if args.positional.len() > params.len() {
        return Err(LibError::Python(format!(
            "TypeError: {name}() takes at most {} positional arguments ({} given)",
            params.len(),
            args.positional.len()
        )));
    }
    let mut values: Vec<Option<&Member>> = vec![None; params.len()];
    for (i, a) in args.positional.iter().enumerate() {
        values[i] = Some(a);
    }
    for (k, v) in &args.keywords {
        let Some(i) = params.iter().position(|p| p == k) else {
            return Err(LibError::Python(format!("TypeError: {name}() got an unexpected keyword argument '{k}'")));
        };
        if values[i].is_some() {
            return Err(LibError::Python(format!("TypeError: {name}() got multiple values for argument '{k}'")));
        }
        values[i] = Some(v);
    }
    if let Some(missing) = (0..required).find(|i| values[*i].is_none()) {
        return Err(LibError::Python(format!("TypeError: {name}() missing required argument '{}'", params[missing])));
    }
    Ok(Bound { function, values })
}

/// The positional arguments as values, for the functions that take any number of them
/// (`min(a, b, c)`, `a.reshape(2, 3)`); `role` says what an object was given as (`in min()`).
pub(super) fn positional_values(args: &Args, role: &str) -> LibResult<Vec<PyValue>> {
    args.positional
        .iter()
        .map(|m| match m {
            Member::Value(v) => Ok(v.clone()),
            Member::Object(o) => Err(LibError::Unsupported(format!("`{}` {role}", display(o)))),
        })
        .collect()
}
