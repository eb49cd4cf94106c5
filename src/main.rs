/// mimalloc rather than glibc's malloc: `check` allocates on both cores
/// and frees each chunk's texts and parses on the main thread, and glibc's
/// per-thread arenas made those frees a fifth of a large tree's run
/// (`_int_free`, `malloc_consolidate` and arena locks in the profile), and
/// its time per file grow with the tree. Built without transparent huge
/// pages (`no_thp`): with them, its arenas become resident 2 MiB at a time,
/// which doubled a run's peak RSS.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(gpulint::cli::run())
}
