//! Work split over the machine's cores, with results in input order, so that output stays
//! deterministic whatever the number of threads.

use std::num::NonZeroUsize;
use std::ops::Range;
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

/// Work is cut into up to this many pieces per core, taken by whichever thread is free: a
/// thread that starts late (a core of a virtual machine can take milliseconds to wake) or is
/// slowed then takes fewer pieces, where with one piece per core the other would wait for it.
const PIECES_PER_CORE: usize = 4;

/// How many pieces `units` of work (bytes, functions) make, each at least `min_per_piece`: 1
/// when the work is too small to share, else up to [`PIECES_PER_CORE`] per core.
pub fn pieces(units: usize, min_per_piece: usize) -> usize {
    let most = units / min_per_piece.max(1);
    // The size first: asking for the cores reads cgroup files, a cost a small check should not pay.
    if most < 2 {
        return 1;
    }
    let cores = cores();
    if cores < 2 {
        1
    } else {
        most.min(cores * PIECES_PER_CORE)
    }
}

/// `0..len` cut into [`pieces`] consecutive ranges of `min_per_piece` or more, all of one
/// length but the last: how a list of work items is shared out.
pub fn piece_ranges(len: usize, min_per_piece: usize) -> Vec<Range<usize>> {
    let per_piece = len.div_ceil(pieces(len, min_per_piece)).max(1);
    (0..len).step_by(per_piece).map(|start| start..(start + per_piece).min(len)).collect()
}

/// `work(0)` to `work(count - 1)` on the pool's threads, each piece taken by whichever thread is
/// free, with the results in order; `None` when no thread can be had (nothing has run then). A
/// panic in a piece is carried on to this thread.
pub fn each_piece<R: Send>(count: usize, work: impl Fn(usize) -> R + Sync) -> Option<Vec<R>> {
    use rayon::prelude::*;
    let p = pool()?;
    Some(p.install(|| (0..count).into_par_iter().with_max_len(1).map(&work).collect()))
}

/// Below this many items in a piece, sharing the work costs more than it saves.
const MIN_ITEMS_PER_PIECE: usize = 64;

/// `work` applied to consecutive chunks of `items` ([`pieces`] of them: only one, on this
/// thread, when `items` is small); the results in the order of the chunks.
pub fn map_chunks<T: Sync, R: Send>(items: &[T], work: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    let ranges = piece_ranges(items.len(), MIN_ITEMS_PER_PIECE);
    if ranges.len() > 1 {
        if let Some(results) = each_piece(ranges.len(), |i| work(&items[ranges[i].clone()])) {
            return results;
        }
    }
    vec![work(items)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_come_back_in_order_and_cover_every_item() {
        for n in [0, 1, MIN_ITEMS_PER_PIECE, 2 * MIN_ITEMS_PER_PIECE + 1, 10_000] {
            let items: Vec<usize> = (0..n).collect();
            let joined: Vec<usize> = map_chunks(&items, <[usize]>::to_vec).concat();
            assert_eq!(joined, items);
        }
    }

    #[test]
    fn small_work_is_one_piece_and_large_work_at_most_four_a_core() {
        assert_eq!(pieces(0, 64), 1);
        assert_eq!(pieces(127, 64), 1);
        let most = if cores() < 2 { 1 } else { cores() * PIECES_PER_CORE };
        assert_eq!(pieces(128, 64), most.min(2));
        assert_eq!(pieces(1 << 20, 64), most);
    }

    #[test]
    fn piece_ranges_cover_the_items_in_order() {
        for len in [0, 1, 63, 128, 1000, 10_000] {
            let ranges = piece_ranges(len, 64);
            let expected = if len == 0 { 0 } else { pieces(len, 64) };
            assert_eq!(ranges.len(), expected, "{len}");
            let covered: Vec<usize> = ranges.iter().flat_map(Range::clone).collect();
            assert_eq!(covered, (0..len).collect::<Vec<_>>(), "{len}");
        }
    }

    #[test]
    fn pieces_come_back_in_order() {
        let squares = each_piece(50, |i| i * i).expect("the pool starts");
        assert_eq!(squares, (0..50).map(|i| i * i).collect::<Vec<_>>());
    }
}
