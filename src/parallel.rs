//! Work split over the machine's cores, with results in input order, so that output stays
//! deterministic whatever the number of threads.

use std::num::NonZeroUsize;
use std::sync::OnceLock;

/// Stack for a thread of the compiler: syntax trees are walked (and dropped) recursively, and a
/// pathological input (a sum of 100,000 terms is a tree that deep) must get diagnostics, not a
/// stack overflow.
pub const COMPILER_STACK: usize = 1 << 30;

/// The number of cores this process may run on (1 when it cannot be told). Read once: the
/// standard library asks the cgroup files every time, and a build asks several times.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}

std::thread_local! {
    /// Whether this thread is one of the pool's, and so has [`COMPILER_STACK`].
    static IN_POOL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();

/// Whether the pool has been started (a small compilation must not start it).
pub fn pool_started() -> bool {
    POOL.get().is_some()
}

/// The compiler's threads, one per core, each with [`COMPILER_STACK`]; started the first time
/// work is split or needs the large stack, and kept until the process ends: starting and
/// ending a thread costs about a millisecond here, and a thread that stays reuses its memory.
fn pool() -> Option<&'static rayon::ThreadPool> {
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores().max(2))
            .stack_size(COMPILER_STACK)
            .thread_name(|i| format!("onnxsc-{i}"))
            .start_handler(|_| IN_POOL.set(true))
            .build()
            .ok()
    })
    .as_ref()
}

/// `work` on a thread with [`COMPILER_STACK`]: this one when it is one, else one of the pool's
/// while this one waits; `None` when no such thread can be had (`work` has not run then).
pub fn on_pool<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    if IN_POOL.get() {
        return Some(work());
    }
    pool().map(|p| p.install(work))
}

/// `first()` and `second()` at once, on the pool's threads; `second`'s result is `None` when no
/// thread can be had (it has not run then, and `first` has run on this thread). A panic in
/// either is carried on to this thread.
pub fn in_two<A: Send, B: Send>(first: impl FnOnce() -> A + Send, second: impl FnOnce() -> B + Send) -> (A, Option<B>) {
    match pool() {
        Some(p) => {
            let (a, b) = p.install(|| rayon::join(first, second));
            (a, Some(b))
        }
        None => (first(), None),
    }
}

/// Below this many items per thread, starting a thread costs more than it saves.
const MIN_ITEMS_PER_THREAD: usize = 64;

/// `work` applied to consecutive chunks of `items`, one chunk per core (only one, on this thread,
/// when `items` is small); the results in the order of the chunks.
pub fn map_chunks<T: Sync, R: Send>(items: &[T], work: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    use rayon::prelude::*;
    let most = items.len() / MIN_ITEMS_PER_THREAD;
    let threads = if most < 2 { 1 } else { cores().min(most) };
    // The size first: a small input must not start the pool.
    if threads == 1 {
        return vec![work(items)];
    }
    let Some(p) = pool() else {
        return vec![work(items)];
    };
    let chunk = items.len().div_ceil(threads);
    p.install(|| items.par_chunks(chunk).map(&work).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_come_back_in_order_and_cover_every_item() {
        for n in [0, 1, MIN_ITEMS_PER_THREAD, 2 * MIN_ITEMS_PER_THREAD + 1, 10_000] {
            let items: Vec<usize> = (0..n).collect();
            let joined: Vec<usize> = map_chunks(&items, <[usize]>::to_vec).concat();
            assert_eq!(joined, items);
        }
    }
}
