//! Where the compiler's recursive phases run: on the calling thread when the sources are
//! shallow enough for its stack, else on a thread of the pool with the compiler's large stack.
//!
//! The syntax tree is walked recursively. A second thread is a third of a small `check`, and real
//! code nests 5 to 13 deep, so shallow sources stay on the caller; `tests/caller_stack.rs` holds
//! the bounds below.

use crate::parallel;

/// The stack a thread needs to compile shallow sources itself (see [`on_stack_for`]): what a
/// process's main thread and Rust's spawned threads (2 MB) have. `tests/caller_stack.rs` compiles
/// the deepest shapes that stay on the caller, in an unoptimised build, on a thread with this
/// much.
pub const CALLER_STACK: usize = 1 << 20;

/// Sources nested at most this deep ([`crate::syntax::depth::nesting`]) are compiled on the calling
/// thread. A nesting level costs the recursive phases at most about 16 KB of stack in an
/// unoptimised build (4 KB optimised; a nested call, `op.Neg(op.Neg(...))`, is the dearest),
/// and the 420 files of `tests/cases` nest 5 or 6 deep, 13 at most. Starting a thread with a
/// large stack costs about a third of a small `check`.
pub const CALLER_NESTING: usize = 32;

/// Files up to this many bytes are parsed on the calling thread. Parsing recurses only to drop
/// the syntax trees of code it rejects, under 100 bytes of stack a level in any build, and each
/// level takes at least a byte of source.
pub const CALLER_PARSE_BYTES: usize = 8 << 10;

/// Runs `work` here when sources `nesting` deep fit the caller's stack ([`CALLER_NESTING`]) or
/// this thread has the compiler's; otherwise on a thread with [`parallel::COMPILER_STACK`].
pub(super) fn on_stack_for<T: Send>(nesting: usize, work: impl FnOnce() -> T + Send) -> T {
    if nesting <= CALLER_NESTING {
        return work();
    }
    on_compiler_stack(work)
}

/// Runs `work` on a thread with [`parallel::COMPILER_STACK`]: here when this thread is one
/// already, or when no thread can be had.
pub fn on_compiler_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    // Lent to the pool, so that it is still here should no thread start.
    let mut slot = Some(work);
    let lent = &mut slot;
    let outcome = parallel::on_pool(move || lent.take().map(|work| work()));
    match (outcome.flatten(), slot) {
        (Some(done), _) => done,
        // No thread to be had: work here, with the stack we have.
        (None, Some(work)) => work(),
        (None, None) => unreachable!("the compiler thread took the work and returned its result"),
    }
}
