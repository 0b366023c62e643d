//! Hash sets and maps keyed by path bytes (or other short keys), with a fast
//! hash: a `Path`'s own hash walks its components.

use std::collections::{HashMap, HashSet};

use xxhash_rust::xxh3::Xxh3DefaultBuilder;

/// A set with the fast hash.
pub(crate) type FastSet<K> = HashSet<K, Xxh3DefaultBuilder>;
/// A map with the fast hash.
pub(crate) type FastMap<K, V> = HashMap<K, V, Xxh3DefaultBuilder>;
