//! A bounded memo of parsed frontmatter, keyed by the hash of the bytes
//! parsed. YAML parsing is the dearest step of skill discovery; a long-lived
//! loader rebuilding a snapshot after one skill changed re-parses only that
//! skill.

use std::num::NonZeroUsize;
use std::sync::{Mutex, MutexGuard};

use lru::LruCache;

use super::frontmatter::{self, Frontmatter, FrontmatterError};

/// A parse result: the frontmatter, and the strict parser's error when it
/// was read by the lenient fallback.
type Parsed = Result<(Frontmatter, Option<String>), FrontmatterError>;

/// Parsed frontmatter by content hash, the least recently used going first
/// once `capacity` results are held.
#[derive(Debug)]
pub(crate) struct ParseCache {
    map: Mutex<LruCache<(u128, bool), Parsed>>,
}

impl ParseCache {
    /// An empty cache of at most `capacity` entries (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Self {
            map: Mutex::new(LruCache::new(capacity)),
        }
    }

    /// Parses `bytes` (lossily decoded), with the lenient fallback when
    /// `lenient`, or returns the remembered result.
    pub(crate) fn parse(&self, bytes: &[u8], lenient: bool) -> Parsed {
        let key = (xxhash_rust::xxh3::xxh3_128(bytes), lenient);
        if let Some(hit) = self.lock().get(&key) {
            return hit.clone();
        }
        // A nameless frontmatter is kept as such: whether the folder's name
        // stands in is the policy's call, made by the caller.
        let parsed = frontmatter::parse_or_lenient_fields(&String::from_utf8_lossy(bytes), lenient);
        self.lock().put(key, parsed.clone());
        parsed
    }

    /// How many results are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, LruCache<(u128, bool), Parsed>> {
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
            cache.parse(a, false).map(|f| f.0.description),
            Ok("first".to_string())
        );
        assert_eq!(cache.parse(a, false).map(|f| f.0.name), Ok("a".to_string()));
        assert_eq!(cache.len(), 1);
        assert!(cache.parse(b, false).is_ok());
        assert_eq!(
            cache.parse(c, false),
            Err(FrontmatterError::MissingDescription)
        );
        assert_eq!(cache.len(), 2);
        // `a` was used least recently and went; `c` stays.
        assert!(
            !cache
                .lock()
                .contains(&(xxhash_rust::xxh3::xxh3_128(a), false))
        );
        assert!(
            cache
                .lock()
                .contains(&(xxhash_rust::xxh3::xxh3_128(c), false))
        );
    }
}
