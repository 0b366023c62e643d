//! A skill source's scan, shared in a survey's pass: the policies of a
//! survey that scan the same folder the same way (every setting of theirs a
//! scan reads is equal) take the first one's findings, where each would
//! otherwise walk the folder and examine every skill in it again. Only the
//! source's own rank and path, which a scan copies into what it finds
//! without reading them, are the taker's.

use std::path::Path;
use std::sync::Arc;

use super::found::{Found, Rejected};
use crate::policy::{Policy, SkillSource};
use crate::trace::{Trace, TraceEntry};
use crate::vocab::origin::RootId;
use crate::vocab::warning::Warning;

/// The first byte of every key kept here; the pass's other keys for a
/// root (a `SKILL.md`'s reading) start with [`RootId::key_bytes`], whose
/// first byte is below it.
const TAG: u8 = b'S';

/// What one scan of a source folder added: its findings, refusals, trace
/// entries and warnings, in order.
pub(super) struct Scanned {
    found: Vec<Found>,
    rejected: Vec<Rejected>,
    entries: Vec<Arc<TraceEntry>>,
    warnings: Vec<Warning>,
}

impl Scanned {
    /// Roughly what keeping it weighs, in bytes.
    pub(super) fn weight(&self) -> usize {
        let found: usize = self
            .found
            .iter()
            .map(|f| {
                256 + f.name.len()
                    + f.path.as_os_str().len()
                    + f.rel.as_os_str().len()
                    + f.source.len()
            })
            .sum();
        let rejected: usize = self
            .rejected
            .iter()
            .map(|r| 64 + r.path.as_os_str().len())
            .sum();
        256 + found + rejected + 16 * self.entries.len() + 256 * self.warnings.len()
    }
}

/// The settings of `policy` a scan reads, hashed: every skills setting
/// but the sources (each source's own fields go in [`key`]), the trust
/// settings and the templates. Taken whole, so that a setting a scan comes
/// to read later cannot be left out of the key.
///
/// Remembered for the process by the policy's digest, which changes with
/// any of its values (a survey asks it of the same policies each time);
/// at most [`SETTINGS_REMEMBERED`] are held.
pub(crate) fn settings(policy: &Policy) -> [u8; 16] {
    type Remembered = crate::vocab::hash::FastMap<u128, [u8; 16]>;
    static REMEMBERED: std::sync::OnceLock<std::sync::Mutex<Remembered>> =
        std::sync::OnceLock::new();
    let memo = REMEMBERED.get_or_init(Default::default);
    let lock = || memo.lock().unwrap_or_else(|p| p.into_inner());
    let digest = policy.digest();
    if let Some(settings) = lock().get(&digest) {
        return *settings;
    }
    let settings = hash_settings(policy);
    let mut memo = lock();
    if memo.len() >= SETTINGS_REMEMBERED {
        memo.clear();
    }
    memo.insert(digest, settings);
    settings
}

/// The way of scanning of a policy whose [`settings`] are `settings`, as
/// a survey's pass names it: the settings, tagged as a scan's.
pub(super) fn way(settings: [u8; 16]) -> Box<[u8]> {
    let mut way = Vec::with_capacity(17);
    way.push(TAG);
    way.extend_from_slice(&settings);
    way.into_boxed_slice()
}

/// How many policies' [`settings`] the process remembers.
const SETTINGS_REMEMBERED: usize = 256;

/// [`settings`], hashed now.
fn hash_settings(policy: &Policy) -> [u8; 16] {
    #[derive(serde::Serialize)]
    struct Read<'p> {
        skills: &'p crate::policy::Skills,
        trust: &'p crate::policy::Trust,
        templates: &'p crate::policy::Templates,
    }
    let mut skills = policy.skills.clone();
    skills.sources.clear();
    let read = Read {
        skills: &skills,
        trust: &policy.trust,
        templates: &policy.templates,
    };
    // Every value has a JSON form; were one refused, the key would hold
    // only the error's words, so nothing is shared.
    match serde_json::to_vec(&read) {
        Ok(json) => xxhash_rust::xxh3::xxh3_128(&json).to_le_bytes(),
        Err(_) => [0; 16],
    }
}

/// The key of the scan of `rel_source` (at `level`) of `source` under the
/// root `id`, by a policy whose [`settings`] are `settings`, into a trace
/// that keeps its paths or not (a scan kept from a trace that forgets holds
/// no entries).
pub(super) fn key(
    settings: [u8; 16],
    traced: bool,
    id: RootId,
    source: &SkillSource,
    level: usize,
    rel_source: &Path,
) -> Box<[u8]> {
    let rel = rel_source.as_os_str().as_encoded_bytes();
    let mut key = Vec::with_capacity(64 + rel.len());
    key.push(TAG);
    key.extend_from_slice(&settings);
    key.push(u8::from(traced));
    key.extend_from_slice(&id.key_bytes());
    key.extend_from_slice(&source.depth.get_ref().to_le_bytes());
    key.push(u8::from(source.source_skill));
    key.extend_from_slice(&(level as u64).to_le_bytes());
    key.extend_from_slice(rel);
    key.into_boxed_slice()
}

/// Where a policy's lists stood before a scan.
pub(super) struct Marks {
    found: usize,
    rejected: usize,
    entries: usize,
    warnings: usize,
}

impl Marks {
    /// The lists' lengths now.
    pub(super) fn at(
        found: &[Found],
        rejected: &[Rejected],
        trace: &Trace,
        warnings: &[Warning],
    ) -> Self {
        Self {
            found: found.len(),
            rejected: rejected.len(),
            entries: trace.entries.len(),
            warnings: warnings.len(),
        }
    }

    /// What the lists gained since these marks: one scan's findings.
    pub(super) fn since(
        &self,
        found: &[Found],
        rejected: &[Rejected],
        trace: &Trace,
        warnings: &[Warning],
    ) -> Scanned {
        Scanned {
            found: found.get(self.found..).unwrap_or_default().to_vec(),
            rejected: rejected.get(self.rejected..).unwrap_or_default().to_vec(),
            entries: trace
                .entries
                .get(self.entries..)
                .unwrap_or_default()
                .to_vec(),
            warnings: warnings.get(self.warnings..).unwrap_or_default().to_vec(),
        }
    }
}

impl Scanned {
    /// Adds this scan's findings to a policy's lists, as found by a
    /// source of rank `rank` and path `source`.
    pub(super) fn take_into(
        &self,
        rank: i64,
        source: &str,
        found: &mut Vec<Found>,
        rejected: &mut Vec<Rejected>,
        trace: &mut Trace,
        warnings: &mut Vec<Warning>,
    ) {
        found.extend(self.found.iter().map(|f| Found {
            name: f.name.clone(),
            frontmatter: Arc::clone(&f.frontmatter),
            root: f.root,
            origin: f.origin,
            source: source.to_string(),
            rank,
            rel: f.rel.clone(),
            path: f.path.clone(),
            executable: f.executable,
            level: f.level,
            pinned_hash: f.pinned_hash.clone(),
        }));
        rejected.extend(self.rejected.iter().cloned());
        trace.extend(self.entries.iter().cloned());
        warnings.extend(self.warnings.iter().cloned());
    }
}
