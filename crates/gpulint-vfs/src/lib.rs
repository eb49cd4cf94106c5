//! File access, below everything else: what a file holds ([`System`]: the
//! [`Disk`], an editor's [`Overlay`] of open buffers, an in-memory
//! [`MemoryFs`] for tests), what it was when read ([`Stamp`]), how its path
//! is compared ([`normalize`]), and a per-run [`Files`] cache so that every
//! file is read once, however many projects and rules ask for it.
//!
//! Nothing here knows what a file means: parsing belongs to the layers
//! above, which cache their parses by the [`Text`] this layer hands out.

// The layers below, by the names this crate's paths use (`crate::text`).
use gpulint_base::text;

mod cache;
mod memory;
mod path;
mod read;
mod stamp;
mod system;

pub use cache::{Files, Forgotten, Text};
pub use memory::MemoryFs;
pub use path::{file_name_text, glob_set, normalize, normalized, relative_to};
pub use read::{MAX_FILE_SIZE, ReadError, ReadErrorKind, decode, read_source, read_source_stamped};
pub use stamp::Stamp;
pub use system::{Disk, FileRead, Overlay, System, buffer_stamp};
