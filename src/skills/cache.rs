//! A bounded memo of parsed frontmatter, keyed by the hash of the bytes
//! parsed. YAML parsing is the dearest step of skill discovery; a long-lived
//! loader rebuilding a snapshot after one skill changed re-parses only that
//! skill. Behind it, when the policy names one, sits the home's memo file
//! (see `skills::memo`), which carries parses from one process to the next.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use lru::LruCache;

use super::frontmatter::Reading;
use super::lenient;
use super::memo::{Key, Memo};
use crate::sandbox::{self, Root};

/// A parse result: the frontmatter, and the strict parser's error when it
/// was read by the lenient fallback.
type Parsed = super::memo::Parsed;

/// Parsed frontmatter by content hash, the least recently used going first
/// once `capacity` results are held.
#[derive(Debug)]
pub(crate) struct ParseCache {
    /// The results, shared by the caches made [`beside`](Self::beside)
    /// this one (a parse depends on the bytes and the reading alone).
    map: Arc<Mutex<LruCache<Key, Parsed>>>,
    /// At most this many results are held (0: none).
    capacity: usize,
    /// The home's memo file, once a build attached it.
    file: Mutex<MemoFile>,
}

/// The memo file behind a cache.
#[derive(Debug, Default)]
enum MemoFile {
    /// None attached.
    #[default]
    None,
    /// Attached, not read yet: it is read at the first parse the memory
    /// cannot answer (a build whose every frontmatter is in memory never
    /// reads it).
    Pending {
        /// The root it is in.
        root: Root,
        /// Its path under the root.
        rel: PathBuf,
        /// Its largest size.
        max_bytes: u64,
        /// Its absolute path.
        path: PathBuf,
    },
    /// Read, by its absolute path.
    Read(PathBuf, Memo),
}

impl MemoFile {
    fn path(&self) -> Option<&Path> {
        match self {
            Self::None => None,
            Self::Pending { path, .. } | Self::Read(path, _) => Some(path),
        }
    }

    /// The memo, read now if it was pending.
    fn memo(&mut self) -> Option<&mut Memo> {
        if let Self::Pending {
            root,
            rel,
            max_bytes,
            path,
        } = self
        {
            let bytes = sandbox::read_memo(root, rel, *max_bytes);
            let max = usize::try_from(*max_bytes).unwrap_or(usize::MAX);
            *self = Self::Read(std::mem::take(path), Memo::new(bytes, max));
        }
        match self {
            Self::Read(_, memo) => Some(memo),
            _ => None,
        }
    }
}

impl ParseCache {
    /// An empty cache of at most `capacity` entries; 0 remembers nothing
    /// in memory (the memo file, once attached, still serves and learns).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            // Grown as results come: `LruCache::new` would set out a table
            // for every entry at once, and a one-shot process would pay the
            // page faults of touching it.
            map: Arc::new(Mutex::new(LruCache::unbounded())),
            capacity,
            file: Mutex::new(MemoFile::None),
        }
    }

    /// A cache that shares `other`'s results (and bound), with no memo
    /// file of its own yet: what the loaders of many homes in one process
    /// use, so that a skill every home sees is parsed and held once.
    pub(crate) fn beside(other: &Self) -> Self {
        Self {
            map: Arc::clone(&other.map),
            capacity: other.capacity,
            file: Mutex::new(MemoFile::None),
        }
    }

    /// Puts the memo file `rel` of the home root behind this cache (read
    /// at the first parse memory cannot answer, unless the same file is
    /// attached already), kept within `max_bytes`. A memo that cannot be
    /// read starts empty.
    pub(crate) fn attach_memo(&self, home: &Root, rel: &Path, max_bytes: u64) {
        let path = home.path.join(rel);
        let mut file = lock(&self.file);
        if file.path() == Some(path.as_path()) {
            return;
        }
        *file = MemoFile::Pending {
            root: home.clone(),
            rel: rel.to_path_buf(),
            max_bytes,
            path,
        };
    }

    /// Writes the memo file back when parses were added to it since it was
    /// read or last written. A failure to write is not an error: the memo
    /// only ever saves work.
    pub(crate) fn save_memo(&self, home: &Root, rel: &Path) {
        let path = home.path.join(rel);
        let mut file = lock(&self.file);
        if matches!(*file, MemoFile::Pending { .. }) {
            // Never needed: let go of the root's handle until the next build.
            *file = MemoFile::None;
            return;
        }
        let MemoFile::Read(p, memo) = &mut *file else {
            return;
        };
        if *p != path {
            return;
        }
        if let Some(bytes) = memo.take_update() {
            use crate::vocab::counters::{Counter, add, bump};
            bump(Counter::MemoWrites);
            add(Counter::MemoBytesWritten, bytes.len() as u64);
            let _ = sandbox::replace_memo(home, rel, bytes);
        }
    }

    /// Parses `bytes` (lossily decoded) under `reading`, or returns the
    /// remembered result.
    pub(crate) fn parse(&self, bytes: &[u8], reading: Reading) -> Parsed {
        let key = (xxhash_rust::xxh3::xxh3_128(bytes), reading.code());
        if let Some(hit) = self.lock().get(&key) {
            return hit.clone();
        }
        if let Some(memo) = lock(&self.file).memo()
            && let Some(parsed) = memo.get(key)
        {
            self.remember(key, &parsed);
            return parsed;
        }
        // A nameless frontmatter is kept as such: whether the folder's name
        // stands in is the policy's call, made by the caller.
        crate::vocab::counters::bump(crate::vocab::counters::Counter::FrontmatterParses);
        let parsed = lenient::parse_or_lenient_fields(&String::from_utf8_lossy(bytes), reading);
        // A refusal is remembered as a parse is: the next process need not
        // parse the same bytes again to refuse them.
        if let Some(memo) = lock(&self.file).memo() {
            memo.add(key, &parsed);
        }
        self.remember(key, &parsed);
        parsed
    }

    /// Keeps a result, the least recently used going beyond capacity.
    fn remember(&self, key: Key, parsed: &Parsed) {
        if self.capacity == 0 {
            return;
        }
        let mut map = self.lock();
        map.put(key, parsed.clone());
        while map.len() > self.capacity {
            map.pop_lru();
        }
    }

    /// How many results are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, LruCache<Key, Parsed>> {
        lock(&self.map)
    }
}

/// Locks `m`. Every update of these maps is one step: a poisoned one is
/// still sound.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::frontmatter::FrontmatterError;

    #[test]
    fn a_cache_of_none_remembers_nothing_and_answers_the_same() {
        let none = ParseCache::new(0);
        let some = ParseCache::new(8);
        let texts: [&[u8]; 3] = [
            b"---\nname: a\ndescription: first\n---\n",
            b"---\nname: c\n---\n",
            b"no frontmatter at all",
        ];
        for text in texts {
            for lenient in [false, true] {
                let reading = Reading::lenient(lenient);
                assert_eq!(none.parse(text, reading), some.parse(text, reading));
                assert_eq!(none.parse(text, reading), some.parse(text, reading));
            }
        }
        assert_eq!(none.len(), 0);
        assert_eq!(some.len(), 6);
    }

    #[test]
    fn remembers_and_stays_bounded() {
        let cache = ParseCache::new(2);
        let a = b"---\nname: a\ndescription: first\n---\n";
        let b = b"---\nname: b\ndescription: second\n---\n";
        let c = b"---\nname: c\n---\n";
        assert_eq!(
            cache.parse(a, Reading::default()).map(|f| f.0.description),
            Ok("first".to_string())
        );
        assert_eq!(
            cache.parse(a, Reading::default()).map(|f| f.0.name),
            Ok("a".to_string())
        );
        assert_eq!(cache.len(), 1);
        assert!(cache.parse(b, Reading::default()).is_ok());
        assert_eq!(
            cache.parse(c, Reading::default()),
            Err(FrontmatterError::MissingDescription)
        );
        assert_eq!(cache.len(), 2);
        // `a` was used least recently and went; `c` stays.
        assert!(!cache.lock().contains(&(xxhash_rust::xxh3::xxh3_128(a), 0)));
        assert!(cache.lock().contains(&(xxhash_rust::xxh3::xxh3_128(c), 0)));
    }
}
