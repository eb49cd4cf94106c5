//! The command line: its arguments, and one module per command
//! (`check` with its `--add-noqa` and its report, `inspect`, `rule`).

mod check;
mod inspect;
mod noqa;
mod report;
mod rule;
mod show;
mod sinks;

mod app;
mod args;

pub use app::run;
use app::*;
use args::*;
