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
/// ones, though nearly every Rust allocation asks for an alignment of 8 or
/// less; their extra checks made a run over the bench tree 1.7% more
/// instructions (callgrind, 300 files).
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

#[cfg(test)]
mod tests {
    use super::Mimalloc;
    use std::alloc::{GlobalAlloc, Layout};

    /// Every alignment a layout may ask for, at sizes around mimalloc's
    /// small size classes: each block is aligned, holds what was written
    /// and keeps it through a realloc that grows and one that shrinks.
    #[test]
    fn blocks_are_aligned_and_keep_their_bytes() {
        let alloc = Mimalloc;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 9, 16, 24, 40, 100, 1000, 70_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; each block is freed with its layout.
                unsafe {
                    for zeroed in [false, true] {
                        let p = if zeroed {
                            alloc.alloc_zeroed(layout)
                        } else {
                            alloc.alloc(layout)
                        };
                        assert!(!p.is_null());
                        assert_eq!(p as usize % align, 0, "size {size} align {align}");
                        if zeroed {
                            assert!(std::slice::from_raw_parts(p, size).iter().all(|&b| b == 0));
                        }
                        for i in 0..size {
                            *p.add(i) = i as u8;
                        }
                        let grown = alloc.realloc(p, layout, size * 3);
                        assert_eq!(grown as usize % align, 0);
                        assert!((0..size).all(|i| *grown.add(i) == i as u8));
                        let grown_layout = Layout::from_size_align(size * 3, align).unwrap();
                        let shrunk = alloc.realloc(grown, grown_layout, size.div_ceil(2));
                        assert_eq!(shrunk as usize % align, 0);
                        assert!((0..size.div_ceil(2)).all(|i| *shrunk.add(i) == i as u8));
                        let shrunk_layout =
                            Layout::from_size_align(size.div_ceil(2), align).unwrap();
                        alloc.dealloc(shrunk, shrunk_layout);
                    }
                }
            }
        }
    }
}
