//! gpulint's base layer, below every other: source text and its byte
//! ranges ([`text`]), edits and fixes ([`fix`]), findings ([`diagnostic`]),
//! rule codes and the one list of rules ([`codes`], `for_each_rule!`), and
//! what a finding's message may quote ([`redact`]).

pub mod codes;
pub mod diagnostic;
pub mod fix;
pub mod redact;
pub mod text;
