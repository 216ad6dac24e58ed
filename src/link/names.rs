//! Fresh names that collide with nothing in a model.
//!
//! A counter per base name (`x`, `x_1`, `x_2`, ...) checked against the set of every name
//! already taken, so renaming stays linear in the size of the output however many call sites
//! share a base name. The set holds 64-bit hashes, not strings: a hash collision can only make a
//! free name look taken (costing a suffix), never hand out a name twice, and it saves an
//! allocation and a second hash per name.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};

#[derive(Default)]
pub struct Namer {
    taken: HashSet<u64, BuildHasherDefault<Prehashed>>,
    next: HashMap<String, usize>,
}

/// The keys are hashes already.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys are hashed")
    }
    fn write_u64(&mut self, h: u64) {
        self.0 = h;
    }
}

/// Deterministic (fixed keys), so outputs are identical from run to run.
fn hash(name: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
}

impl Namer {
    pub fn new<'a>(taken: impl IntoIterator<Item = &'a str>) -> Namer {
        Namer { taken: taken.into_iter().map(hash).collect(), next: HashMap::new() }
    }

    /// `base` itself if it is free, else `base_K` for the first free K; taken from now on.
    pub fn fresh(&mut self, base: String) -> String {
        if self.taken.insert(hash(&base)) {
            return base;
        }
        let k = self.next.entry(base.clone()).or_insert(1);
        loop {
            let candidate = format!("{base}_{k}");
            *k += 1;
            if self.taken.insert(hash(&candidate)) {
                return candidate;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_names_skip_taken_ones() {
        let mut n = Namer::new(["x", "x_1"]);
        assert_eq!(n.fresh("y".into()), "y");
        assert_eq!(n.fresh("x".into()), "x_2");
        assert_eq!(n.fresh("x".into()), "x_3");
        assert_eq!(n.fresh("y".into()), "y_1");
    }

    #[test]
    fn many_instances_of_one_base_stay_linear() {
        let mut n = Namer::default();
        let names: HashSet<String> = (0..10_000).map(|_| n.fresh("call".into())).collect();
        assert_eq!(names.len(), 10_000);
    }
}
