//! The published JSON schemas that decide what a tool accepts, vendored
//! (`schemas/README.md` names each one's source, version and licence) and
//! compiled once per process, with every error placed at the node of the
//! file that wrote the value.
//!
//! - [`kubernetes`]: the Kubernetes API's schema (1.37, strict) for the
//!   kinds gpulint reads pods from, as `kubectl apply` applies it.
//! - [`compose`]: the compose-spec schema Compose 2.40.3 embeds
//!   (compose-go v2.9.1), applied where compose-go applies it, with
//!   Compose's own words for each error.
//! - [`devcontainer`]: the dev container specification's schema, each
//!   top-level setting of a `devcontainer.json` judged by the definition
//!   that gives it.
//!
//! The validator is `boon`, the Rust port of santhosh-tekuri/jsonschema,
//! which compose-go links: the same error tree, so the error Compose picks
//! out of it and prints is the one picked here (its `message` module).
//! boon's compile costs twenty times a one-file check, so a yes-or-no
//! checker of the same schema (`quick`, held to boon's verdict on
//! generated instances) accepts the valid files first, and boon is
//! compiled only for a file it does not accept.

use gpulint_base::text;
use gpulint_syntax as syntax;

pub mod compose;
pub mod devcontainer;
mod instance;
pub mod kubernetes;
mod message;
mod quick;

use crate::syntax::tree::Src;
use gpulint_base::codes::RuleCode;

/// What a schema refuses, in its tool's words, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The tool's message, without the file name it prefixes
    /// (`services.t.gpus must be a string`).
    pub message: String,
    /// The value (or, for a property the schema does not allow, the key)
    /// that causes it.
    pub at: Src,
    /// Where the value is in the model (`["services", "t", "gpus"]`).
    pub path: Vec<String>,
    /// What else decides whether the tool refuses it.
    pub decided_by: DecidedBy,
    /// The rule that reports this error with its own fix, as the caller's
    /// `left_to_rules` names it (such an error is chosen only when every
    /// error is one).
    pub reported_by: Option<RuleCode>,
    /// Every service the schema finds something wrong in, this one's
    /// first (the tool prints one error; fixes wait on all of them).
    pub services: Vec<String>,
    /// Every error at the end of the schema's tree of causes: what is
    /// wrong, where (the tool prints only the most specific one).
    pub leaves: Vec<Leaf>,
}

/// One error at the end of the schema's tree of causes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Where in the model (`["services", "t", "deploy"]`).
    pub path: Vec<String>,
    pub kind: LeafKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafKind {
    /// Properties the schema requires that are missing.
    Missing(Vec<String>),
    /// Properties the schema does not allow.
    Unknown(Vec<String>),
    /// Anything else (a type, an enum, a pattern).
    Other,
}

/// Whether a value the schema refuses is refused whatever runs the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecidedBy {
    /// The value as written.
    Text,
    /// A variable nothing here sets: the shell that runs the tool may.
    Shell,
    /// A value that could not be interpolated, which the tool refuses
    /// first (and gpulint reports where it is written).
    FailedInterpolation,
}
