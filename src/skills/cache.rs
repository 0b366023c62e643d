//! A bounded memo of parsed frontmatter, keyed by the hash of the bytes
//! parsed. YAML parsing is the dearest step of skill discovery; a long-lived
//! loader rebuilding a snapshot after one skill changed re-parses only that
//! skill.

use std::num::NonZeroUsize;
use std::sync::{Mutex, MutexGuard};

use lru::LruCache;

use super::frontmatter::{self, Frontmatter, FrontmatterError};

type Parsed = Result<Frontmatter, FrontmatterError>;

/// Parsed frontmatter by content hash, the least recently used going first
/// once `capacity` results are held.
#[derive(Debug)]
pub(crate) struct ParseCache {
    map: Mutex<LruCache<u128, Parsed>>,
}

impl ParseCache {
    /// An empty cache of at most `capacity` entries (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Self {
            map: Mutex::new(LruCache::new(capacity)),
        }
    }

    /// Parses `bytes` (lossily decoded) or returns the remembered result.
    pub(crate) fn parse(&self, bytes: &[u8]) -> Parsed {
        let key = xxhash_rust::xxh3::xxh3_128(bytes);
        if let Some(hit) = self.lock().get(&key) {
            return hit.clone();
        }
        let parsed = frontmatter::parse(&String::from_utf8_lossy(bytes));
        self.lock().put(key, parsed.clone());
        parsed
    }

    /// How many results are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, LruCache<u128, Parsed>> {
        // Every update is one insert: a poisoned map is still sound.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
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
        assert_eq!(cache.len(), 2);
        // `a` was used least recently and went; `c` stays.
        assert!(!cache.lock().contains(&xxhash_rust::xxh3::xxh3_128(a)));
        assert!(cache.lock().contains(&xxhash_rust::xxh3::xxh3_128(c)));
    }
}
