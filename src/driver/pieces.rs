//! A large module's functions in pieces of consecutive functions, worked on by the compiler's
//! threads: their heads, then their lowering. The pieces share the module's environment, which
//! nothing changes once it is built.

use crate::parallel;
use crate::sema::env::ModuleEnv;
use std::ops::Range;

/// Below this many functions in a piece, the sharing costs more than it saves.
const MIN_FUNCTIONS_PER_PIECE: usize = 64;

/// The ranges of a module's functions its pieces take: one range (all of them) for a module too
/// small to share.
pub(super) fn function_ranges(env: &ModuleEnv) -> Vec<Range<usize>> {
    parallel::piece_ranges(env.functions.len(), MIN_FUNCTIONS_PER_PIECE)
}

/// `work(range)` for each of `ranges`, on the compiler's threads; the results in order. `None`
/// when no thread can be had or a piece gives up: the caller then works in order instead.
pub(super) fn each_range<R: Send>(
    ranges: &[Range<usize>],
    work: impl Fn(Range<usize>) -> Option<R> + Sync,
) -> Option<Vec<R>> {
    let results = parallel::each_piece(ranges.len(), |i| work(ranges[i].clone()))?;
    results.into_iter().collect()
}
