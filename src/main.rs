/// mimalloc rather than glibc's malloc: `check` allocates on both cores
/// and frees each chunk's texts and parses on the main thread, and glibc's
/// per-thread arenas made those frees a fifth of a large tree's run
/// (`_int_free`, `malloc_consolidate` and arena locks in the profile), and
/// its time per file grow with the tree. Built without transparent huge
/// pages (`no_thp`): with them, its arenas become resident 2 MiB at a time,
/// which doubled a run's peak RSS.
#[global_allocator]
static ALLOCATOR: Mimalloc = Mimalloc;

/// mimalloc's plain entry points wherever a block's own alignment is
/// enough. `mimalloc::MiMalloc` asks for every block through the aligned
/// ones, whose checks cost 3% of a run's instructions, though nearly every
/// Rust allocation asks for an alignment of 8 or less.
struct Mimalloc;

/// What every mimalloc block is aligned to: its size classes are whole
/// machine words, and its pages start on one.
const BLOCK_ALIGN: usize = std::mem::size_of::<usize>();

// SAFETY: each call hands mimalloc a layout it serves: alignments up to a
// word go to the plain calls, whose blocks are all word-aligned; larger
// ones to the aligned calls; `mi_free` frees blocks from either.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_malloc, mi_malloc_aligned};
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_zalloc, mi_zalloc_aligned};
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from one of the calls above.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys::{mi_realloc, mi_realloc_aligned};
        // SAFETY: `ptr` came from one of the calls above, with `layout`.
        unsafe {
            if layout.align() <= BLOCK_ALIGN {
                mi_realloc(ptr.cast(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(gpulint::cli::run())
}
