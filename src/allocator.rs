//! The process's allocator: mimalloc, entered through `libmimalloc-sys` itself.
//!
//! A compilation makes many small allocations on a thread of its own; glibc's per-thread arenas
//! grow those in small mprotect steps, which cost as much as the compiling. mimalloc's v2 line
//! (Cargo.toml) keeps a 1,000-function build in about 46 MB where v3 took 70: every fresh page
//! is a kernel fault and a zeroing, a sixth of the build's time on a 2-core VM.
//!
//! It lives in the library, not in `main.rs`, so that a measurement of one phase
//! (`examples/parse_time.rs`) runs on the allocator the command line runs on. This is the
//! project's only unsafe code (`tests/architecture.rs` holds it so).

/// mimalloc, entered by its plain `mi_malloc` for what needs no more than word alignment (nearly
/// every allocation): the `mimalloc` crate passes every layout to `mi_malloc_aligned`, whose
/// alignment checks were a twentieth of a build's instructions. Every mimalloc block is
/// word-aligned, so the plain entry keeps `GlobalAlloc`'s promise; larger alignments still go
/// the aligned way.
pub struct MiMalloc;

/// The alignment every mimalloc block has (its size classes are multiples of a word).
const WORD: usize = size_of::<usize>();

#[allow(unsafe_code, reason = "`GlobalAlloc` is an unsafe trait, and mimalloc's entries are C")]
unsafe impl std::alloc::GlobalAlloc for MiMalloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_malloc(layout.size()).cast()
        } else {
            libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_zalloc(layout.size()).cast()
        } else {
            libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        libmimalloc_sys::mi_free(ptr.cast());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            libmimalloc_sys::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}
