//! Dev containers (`devcontainer.json`) as the dev container specification
//! defines them.

pub mod dev001_devcontainer_value_refused;
