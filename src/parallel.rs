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

/// `here()` on this thread while `there()` runs on another, with [`COMPILER_STACK`]; `there`'s
/// result is `None` when no thread can be had (it has not run then). A panic in either is
/// carried on to this thread.
pub fn in_two<H, T: Send>(here: impl FnOnce() -> H, there: impl FnOnce() -> T + Send) -> (H, Option<T>) {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new().stack_size(COMPILER_STACK).spawn_scoped(scope, there);
        let mine = here();
        (mine, worker.ok().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))))
    })
}

/// Below this many items per thread, starting a thread costs more than it saves.
const MIN_ITEMS_PER_THREAD: usize = 64;

/// `work` applied to consecutive chunks of `items`, one chunk per core (only one, on this thread,
/// when `items` is small); the results in the order of the chunks.
pub fn map_chunks<T: Sync, R: Send>(items: &[T], work: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    let most = items.len() / MIN_ITEMS_PER_THREAD;
    let threads = if most < 2 { 1 } else { cores().min(most) };
    if threads == 1 {
        return vec![work(items)];
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let work = &work;
        let mut chunks = items.chunks(chunk);
        // This thread takes the first chunk while the others run.
        let first = chunks.next().unwrap_or_default();
        let others: Vec<_> = chunks.map(|c| scope.spawn(move || work(c))).collect();
        let mut results = vec![work(first)];
        for handle in others {
            match handle.join() {
                Ok(r) => results.push(r),
                // A panic in `work` is a bug; carry it on to this thread as it would have been.
                Err(payload) => std::panic::resume_unwind(payload),
            }
        }
        results
    })
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
