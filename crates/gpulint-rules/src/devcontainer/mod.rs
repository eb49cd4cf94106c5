//! Dev containers (`devcontainer.json`) as the dev container specification
//! defines them.

pub(crate) mod dev001_devcontainer_value_refused;
