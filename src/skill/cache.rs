//! A bounded memo of parsed frontmatter, keyed by the hash of the bytes
//! parsed. YAML parsing is the dearest step of skill discovery; a long-lived
//! [`crate::Loader`] rebuilding a snapshot after one skill changed re-parses
//! only that skill.

use std::collections::HashMap;
use std::sync::Mutex;

use super::frontmatter::{self, Frontmatter, FrontmatterError};

type Parsed = Result<Frontmatter, FrontmatterError>;

/// Parsed frontmatter by content hash, holding at most `capacity` entries
/// (when full, it starts over: simple, bounded, and rebuilt from the files).
#[derive(Debug)]
pub struct ParseCache {
    map: Mutex<HashMap<u128, Parsed>>,
    capacity: usize,
}

impl ParseCache {
    /// An empty cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// Parses `bytes` (lossily decoded) or returns the remembered result.
    pub fn parse(&self, bytes: &[u8]) -> Parsed {
        let key = xxhash_rust::xxh3::xxh3_128(bytes);
        if let Some(hit) = self.lock().get(&key) {
            return hit.clone();
        }
        let parsed = frontmatter::parse(&String::from_utf8_lossy(bytes));
        let mut map = self.lock();
        if map.len() >= self.capacity {
            map.clear();
        }
        map.insert(key, parsed.clone());
        parsed
    }

    /// How many results are remembered.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u128, Parsed>> {
        // Every update is one insert or a clear: a poisoned map is still sound.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Parses without remembering (one-shot builds).
pub fn parse_uncached(bytes: &[u8]) -> Parsed {
    frontmatter::parse(&String::from_utf8_lossy(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_stays_bounded() {
        let cache = ParseCache::new(2);
        let a = b"---\nname: a\ndescription: first\n---\n";
        let b = b"---\nname: b\ndescription: second\n---\n";
        let c = b"---\nname: c\n---\n";
        assert_eq!(
            cache.parse(a).map(|f| f.description),
            Ok("first".to_string())
        );
        assert_eq!(cache.parse(a).map(|f| f.name), Ok("a".to_string()));
        assert_eq!(cache.len(), 1);
        assert!(cache.parse(b).is_ok());
        assert_eq!(cache.parse(c), Err(FrontmatterError::MissingDescription));
        assert!(cache.len() <= 2);
    }
}
