//! The function's value names and what lowering knows of each, in one table.
//!
//! Names are unique across the function and its nested graphs ([`Lowerer::fresh`]), so one
//! entry per name holds whether the name is taken, the value's type as far as it is known, and
//! whether it is a literal that autocast may wrap in `CastLike`. One table instead of a set and
//! two maps keyed by the same names spares a copy of the name and a hash per fact: a value is
//! named, typed and often marked castable, so every name entered all three.
//!
//! [`Lowerer::fresh`]: super::Lowerer

use crate::sema::infer::Ty;
use foldhash::{HashMap, HashMapExt};

#[derive(Default)]
pub(super) struct Values {
    by_name: HashMap<String, Value>,
}

#[derive(Default)]
struct Value {
    /// The name is a value's (or a parameter's): a fresh name must differ from it.
    taken: bool,
    ty: Option<Ty>,
    /// A literal constant (or an attribute used as one), which autocast may cast.
    castable: bool,
}

impl Values {
    pub(super) fn with_capacity(values: usize) -> Self {
        Values { by_name: HashMap::with_capacity(values) }
    }

    pub(super) fn is_taken(&self, name: &str) -> bool {
        self.by_name.get(name).is_some_and(|v| v.taken)
    }

    pub(super) fn take(&mut self, name: String) {
        self.by_name.entry(name).or_default().taken = true;
    }

    /// What is known of the value's type.
    pub(super) fn ty(&self, name: &str) -> Option<&Ty> {
        self.by_name.get(name)?.ty.as_ref()
    }

    pub(super) fn set_ty(&mut self, name: &str, ty: Ty) {
        self.update(name, |v| v.ty = Some(ty));
    }

    pub(super) fn is_castable(&self, name: &str) -> bool {
        self.by_name.get(name).is_some_and(|v| v.castable)
    }

    pub(super) fn mark_castable(&mut self, name: &str) {
        self.update(name, |v| v.castable = true);
    }

    /// Changes the entry of `name`: nearly every name has one already (it was taken when
    /// made), so the name is copied only for the rest.
    fn update(&mut self, name: &str, change: impl FnOnce(&mut Value)) {
        match self.by_name.get_mut(name) {
            Some(v) => change(v),
            None => change(self.by_name.entry(name.to_owned()).or_default()),
        }
    }
}
