//! What the loaders of one server share (`LoaderBuilder::share`): one
//! snapshot cache under one bound of entries and bytes, the instruction
//! texts, skill records and trace entries held once however many cached
//! builds show them, and one inotify watch. A loader alone is a group of
//! one.
//!
//! Every cached build is keyed by its loader's number in the group as well
//! as by (cwd, root), so two homes never answer from each other's builds;
//! what they share is memory, never an answer.

use std::collections::HashMap;
use std::collections::hash_map::Entry as Slot;
use std::hash::Hash;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use lru::LruCache;

use super::key::Key;
use super::size;
#[cfg(target_os = "linux")]
use super::watch::Watch;
use crate::skills::Skill;
use crate::snapshot::Built;
use crate::trace::TraceEntry;
use xxhash_rust::xxh3::xxh3_128;

/// What a group of loaders shares.
pub(super) struct Group {
    cache: Mutex<Cache>,
    /// The next loader's number.
    next_owner: AtomicU64,
    /// The group's watch, made by the first loader asked to watch (`None`
    /// inside: no inotify instance could be had).
    #[cfg(target_os = "linux")]
    watch: OnceLock<Option<Arc<Watch>>>,
}

impl Group {
    /// A group whose cache keeps at most `entries` builds and `max_bytes`.
    pub(super) fn new(entries: usize, max_bytes: usize) -> Self {
        let entries = NonZeroUsize::new(entries).unwrap_or(NonZeroUsize::MIN);
        Self {
            cache: Mutex::new(Cache {
                map: LruCache::new(entries),
                generations: HashMap::new(),
                bytes: 0,
                max_bytes,
                texts: Held::default(),
                skills: Held::default(),
                paths: Held::default(),
            }),
            next_owner: AtomicU64::new(0),
            #[cfg(target_os = "linux")]
            watch: OnceLock::new(),
        }
    }

    /// A number for a new loader of the group, never given before.
    pub(super) fn join(&self) -> u64 {
        self.next_owner.fetch_add(1, Ordering::Relaxed)
    }

    /// The cache, locked. A panic while holding the lock cannot leave it
    /// inconsistent beyond a weight counted too high (every map update is
    /// one insert or remove), so a poisoned lock is still usable.
    pub(super) fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The group's watch, made at the first call.
    #[cfg(target_os = "linux")]
    pub(super) fn watch(&self) -> Option<Arc<Watch>> {
        self.watch
            .get_or_init(|| Watch::new().map(Arc::new))
            .clone()
    }
}

/// A cached build and its weight.
struct Entry {
    built: Arc<Built>,
    /// What `size::estimate_bytes` weighed, the shared parts left out.
    weight: usize,
}

/// The snapshot cache of a group.
pub(super) struct Cache {
    map: LruCache<Key, Entry>,
    /// Each loader's policy generation: a newer one drops that loader's
    /// builds, and a build made under an older one is not kept.
    generations: HashMap<u64, u64>,
    /// What the entries weigh, their shared parts left out.
    bytes: usize,
    /// The most bytes kept (entries and shared parts): past it, the least
    /// recently used entries go (the newest one always stays).
    max_bytes: usize,
    /// Instruction texts, each held once.
    texts: Held<str>,
    /// Skill records, each held once (the same skill listed by every cwd
    /// of a repository, and by every home).
    skills: Held<Skill>,
    /// Trace entries, each held once (the levels above a repository's
    /// cwds and its skills, examined by every build of the repository).
    paths: Held<TraceEntry>,
}

impl Cache {
    /// Sets the bound on bytes.
    pub(super) fn set_max_bytes(&mut self, bytes: usize) {
        self.max_bytes = bytes;
    }

    /// Moves `owner`'s builds to `generation` when that is newer (dropping
    /// the builds of its older policy); whether `owner` is now at that
    /// generation (false for a call still working under an older one).
    pub(super) fn enter(&mut self, owner: u64, generation: u64) -> bool {
        let current = *self.generations.entry(owner).or_insert(generation);
        if generation > current {
            self.generations.insert(owner, generation);
            self.drop_owner(owner);
        }
        generation >= current
    }

    /// The cached build for `key`, if its loader is at `generation`.
    pub(super) fn get(&mut self, generation: u64, key: &Key) -> Option<Arc<Built>> {
        if self.enter(key.0, generation) {
            self.map.get(key).map(|e| Arc::clone(&e.built))
        } else {
            None
        }
    }

    /// Keeps `built` for `key` (its texts, skills and trace entries shared
    /// with the builds already kept), evicting the least recently used
    /// entries past the entry count or the bytes; the build as kept.
    pub(super) fn insert(&mut self, key: Key, mut built: Built) -> Arc<Built> {
        // A fresh build's snapshot has no other holder yet.
        if let Some(snapshot) = Arc::get_mut(&mut built.snapshot) {
            for block in &mut snapshot.instruction_files {
                self.texts.share(&mut block.text, text_hash, text_weight);
            }
            for skill in &mut snapshot.skills {
                self.skills.share(skill, skill_hash, skill_weight);
            }
        }
        for e in &mut built.trace.entries {
            self.paths.share(e, path_hash, path_weight);
        }
        let weight = size::estimate_bytes(&built);
        let built = Arc::new(built);
        let entry = Entry {
            built: Arc::clone(&built),
            weight,
        };
        self.bytes += weight;
        if let Some((_, old)) = self.map.push(key, entry) {
            self.release(old);
        }
        while self.bytes() > self.max_bytes && self.map.len() > 1 {
            match self.map.pop_lru() {
                Some((_, old)) => self.release(old),
                None => break,
            }
        }
        built
    }

    /// Forgets an entry: its weight, and its holds on the shared parts (the
    /// hashes computed again: a cached build is evicted once, and keeping
    /// them would cost every entry more than computing them costs once).
    fn release(&mut self, entry: Entry) {
        self.bytes = self.bytes.saturating_sub(entry.weight);
        let built = &entry.built;
        for block in &built.snapshot.instruction_files {
            self.texts.release(&block.text, text_hash, text_weight);
        }
        for skill in &built.snapshot.skills {
            self.skills.release(skill, skill_hash, skill_weight);
        }
        for e in &built.trace.entries {
            self.paths.release(e, path_hash, path_weight);
        }
    }

    /// Drops every build of `owner` (its policy changed, or it is gone).
    fn drop_owner(&mut self, owner: u64) {
        let keys: Vec<Key> = self
            .map
            .iter()
            .filter(|(k, _)| k.0 == owner)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            if let Some(old) = self.map.pop(&key) {
                self.release(old);
            }
        }
    }

    /// Drops everything of a loader leaving the group.
    pub(super) fn leave(&mut self, owner: u64) {
        self.drop_owner(owner);
        self.generations.remove(&owner);
    }

    /// How many builds of `owner` are kept.
    pub(super) fn entries_of(&self, owner: u64) -> usize {
        self.map.iter().filter(|(k, _)| k.0 == owner).count()
    }

    /// How many builds the group keeps.
    pub(super) fn entries(&self) -> usize {
        self.map.len()
    }

    /// What the group's cache weighs: its entries, and each shared part
    /// once.
    pub(super) fn bytes(&self) -> usize {
        self.bytes + self.texts.bytes + self.skills.bytes + self.paths.bytes
    }
}

/// What a shared trace entry weighs.
fn path_weight(e: &TraceEntry) -> usize {
    size_of::<TraceEntry>() + e.rel.capacity()
}

/// What a shared text weighs.
fn text_weight(text: &str) -> usize {
    text.len()
}

/// A text's hash.
fn text_hash(text: &str) -> u128 {
    xxh3_128(text.as_bytes())
}

/// A trace entry's hash.
fn path_hash(e: &TraceEntry) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    e.hash(&mut h);
    h.digest128()
}

/// What a shared skill weighs.
fn skill_weight(skill: &Skill) -> usize {
    size::skill_bytes(skill)
}

/// A hash of what tells skills apart; two skills with one hash are still
/// compared whole before they are shared.
fn skill_hash(skill: &Skill) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for part in [
        skill.path.as_os_str().as_encoded_bytes(),
        skill.name.as_bytes(),
        skill.description.as_bytes(),
        skill.source.as_bytes(),
        skill.root.as_bytes(),
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.update(&skill.rank.to_le_bytes());
    h.update(&[u8::from(skill.listed), u8::from(skill.executable)]);
    h.digest128()
}

/// Values held once, however many kept builds show them: by a hash of
/// what tells them apart, with the number of holds the cache's entries
/// have on each.
struct Held<T: ?Sized> {
    map: HashMap<u128, (Arc<T>, usize)>,
    /// What the values held weigh.
    bytes: usize,
}

impl<T: ?Sized> Default for Held<T> {
    fn default() -> Self {
        Self {
            map: HashMap::new(),
            bytes: 0,
        }
    }
}

/// What one shared value costs beyond its own bytes: the table's slot and
/// the `Arc`'s counts, roughly.
const HELD_OVERHEAD: usize = 64;

impl<T: ?Sized + PartialEq> Held<T> {
    /// Replaces `value` with the shared copy of an equal value (kept now
    /// when there is none), `hash` telling values apart and `weight`
    /// weighing one. Two values with one hash that differ are simply not
    /// shared (the later one stays its own).
    fn share(&mut self, value: &mut Arc<T>, hash: fn(&T) -> u128, weight: fn(&T) -> usize) {
        match self.map.entry(hash(value)) {
            Slot::Occupied(mut slot) => {
                let (shared, holds) = slot.get_mut();
                if **shared == **value {
                    *value = Arc::clone(shared);
                    *holds += 1;
                }
            }
            Slot::Vacant(slot) => {
                self.bytes += weight(value) + HELD_OVERHEAD;
                slot.insert((Arc::clone(value), 1));
            }
        }
    }

    /// Gives up a kept build's hold on `value` (nothing when it is not the
    /// copy held: it was never shared); the last hold drops it.
    fn release(&mut self, value: &Arc<T>, hash: fn(&T) -> u128, weight: fn(&T) -> usize) {
        if let Slot::Occupied(mut slot) = self.map.entry(hash(value)) {
            let (shared, holds) = slot.get_mut();
            if !Arc::ptr_eq(shared, value) {
                return;
            }
            *holds -= 1;
            if *holds == 0 {
                self.bytes = self.bytes.saturating_sub(weight(value) + HELD_OVERHEAD);
                slot.remove();
            }
        }
    }
}
