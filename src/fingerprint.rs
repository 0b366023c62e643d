//! Stage 7b — the fingerprint: a hash of everything that decides the output.
//!
//! While a snapshot is built, every path examined is written to a [`Trace`]:
//! what was there ([`Stamp`]) and, for files read, a hash of the bytes read.
//! The fingerprint hashes the policy, the roots and, per entry, the path, its
//! kind, its size and its content hash — never inode or timestamps, so undoing
//! an edit restores the old value. The stamps are kept apart: they let a
//! later check decide, with one `stat` per path, that nothing changed.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use xxhash_rust::xxh3::Xxh3;

use crate::read::Stamp;

/// Which root a traced path is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceRoot {
    /// The home root.
    Home,
    /// The repository root.
    Repo,
    /// An absolute path outside every root (repository markers), final link
    /// not followed.
    Ambient,
    /// An absolute directory path the caller named (the cwd, the home root),
    /// links followed.
    AmbientDir,
}

/// One examined path.
#[derive(Debug, Clone)]
pub struct TraceEntry {
    /// The root the path is relative to.
    pub root: TraceRoot,
    /// The path.
    pub rel: PathBuf,
    /// What was there.
    pub stamp: Stamp,
    /// A hash of the bytes read, when the file was read.
    pub content: Option<u128>,
}

/// Everything a snapshot examined.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The entries, in the order examined.
    pub entries: Vec<TraceEntry>,
    /// When the examination started (for the racily-clean rule).
    pub started: SystemTime,
}

impl Default for Trace {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            started: SystemTime::now(),
        }
    }
}

impl Trace {
    /// Records a path.
    pub fn push(&mut self, root: TraceRoot, rel: &Path, stamp: Stamp, content: Option<&[u8]>) {
        self.entries.push(TraceEntry {
            root,
            rel: rel.to_path_buf(),
            stamp,
            content: content.map(xxhash_rust::xxh3::xxh3_128),
        });
    }

    /// Whether any stamp is too fresh to vouch for its content.
    pub fn has_racy_stamp(&self) -> bool {
        self.entries.iter().any(|e| e.stamp.is_racy(self.started))
    }

    /// The fingerprint, given the parts of the context outside the trace.
    pub fn fingerprint(&self, policy_digest: u128, context: &[&str]) -> String {
        let mut h = Xxh3::new();
        field(&mut h, &policy_digest.to_le_bytes());
        for c in context {
            field(&mut h, c.as_bytes());
        }
        for e in &self.entries {
            field(&mut h, &[e.root as u8]);
            field(&mut h, e.rel.as_os_str().as_encoded_bytes());
            match e.stamp {
                Stamp::Absent => field(&mut h, b"absent"),
                Stamp::Error(code) => field(&mut h, &[b'e', code]),
                Stamp::Present { mode, size, .. } => {
                    let kind = mode & 0o170000;
                    field(&mut h, &kind.to_le_bytes());
                    // A directory's size says nothing about the output (its
                    // entries are traced one by one) and need not come back
                    // when an entry is removed again.
                    if kind != 0o040000 {
                        field(&mut h, &size.to_le_bytes());
                    }
                }
            }
            match e.content {
                Some(c) => field(&mut h, &c.to_le_bytes()),
                None => field(&mut h, b""),
            }
        }
        format!("{:032x}", h.digest128())
    }
}

/// Hashes one length-prefixed field, so that adjacent fields cannot run into
/// each other.
fn field(h: &mut Xxh3, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}
