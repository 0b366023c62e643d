//! The ground floor: the project's vocabulary, shared by every layer above
//! and importing none of them. Pure values and string work, no disk access:
//! what a reader sees of text ([`unicode`]), how paths are shown and
//! expanded ([`paths`], [`home`]), decoding file bytes into text
//! ([`text`]), when two names are one ([`alike`]), and the words every
//! record carries ([`reason`], [`origin`], [`warning`]), and the work
//! counters the tests read ([`counters`]).

pub(crate) mod alike;
pub(crate) mod collate;
pub(crate) mod counters;
pub(crate) mod hash;
pub(crate) mod home;
pub(crate) mod origin;
pub(crate) mod paths;
pub(crate) mod reason;
pub(crate) mod suggest;
pub(crate) mod text;
pub(crate) mod unicode;
pub(crate) mod warning;
