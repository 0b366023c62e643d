//! The first write the loader makes: a random key in the home root that keys
//! the prompt's nonce, so no repository can compute it.
//!
//! The key is created on first use through the home root's handle (never a
//! path outside it), with mode 0600, atomically: it is written to a fresh
//! temporary name and hard-linked into place (`home_write::write_home_file`,
//! the one write helper), so two processes starting at
//! once agree on one key and nobody ever reads a half-written one. When the
//! home is missing or read-only, or the key file is not a regular 32-byte
//! file, a random key for this process is used instead (the nonce then
//! changes from one process to the next, but stays stable within one).

use std::io;
use std::path::Path;
use std::sync::OnceLock;

use super::home_write::{Install, write_home_file};
use super::{Opened, Root, Stamp};
use crate::policy::SymlinkRule;

/// The length of a nonce key, in bytes.
pub(crate) const KEY_BYTES: usize = 32;

/// A nonce key and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NonceKey {
    /// The key.
    pub(crate) key: [u8; KEY_BYTES],
    /// The key file's stamp, when the key came from the home root.
    pub(crate) stamp: Option<Stamp>,
}

fn random_key() -> io::Result<[u8; KEY_BYTES]> {
    let mut key = [0u8; KEY_BYTES];
    let mut filled = 0;
    while filled < KEY_BYTES {
        let n = rustix::rand::getrandom(&mut key[filled..], rustix::rand::GetRandomFlags::empty())?;
        filled += n;
    }
    Ok(key)
}

/// This process's key, for when the home root cannot hold one.
pub(crate) fn process_key() -> [u8; KEY_BYTES] {
    static KEY: OnceLock<[u8; KEY_BYTES]> = OnceLock::new();
    *KEY.get_or_init(|| {
        // Without the OS's randomness, the address of a local and the time
        // are the best this can do; getrandom does not fail on the
        // supported systems.
        random_key().unwrap_or_else(|_| {
            let seed = format!("{:?}{:p}", std::time::SystemTime::now(), &KEY);
            *blake3::hash(seed.as_bytes()).as_bytes()
        })
    })
}

/// Reads an existing key file: a regular file of exactly [`KEY_BYTES`]
/// bytes, links not followed.
fn read_key(root: &Root, rel: &Path) -> Option<NonceKey> {
    let Opened::File(file) = root.open_file(rel, SymlinkRule::Never) else {
        return None;
    };
    let bytes = file.read_at_most(KEY_BYTES as u64 + 1).ok()?;
    let key: [u8; KEY_BYTES] = bytes.as_slice().try_into().ok()?;
    Some(NonceKey {
        key,
        stamp: Some(file.stamp()),
    })
}

/// Creates the key file with a new random key; `Ok(false)` when another
/// process created it first.
fn create_key(root: &Root, rel: &Path) -> io::Result<bool> {
    let key = random_key()?;
    write_home_file(root, rel, &key, true, Install::IfAbsent)
}

/// The home root's nonce key, created on first use.
pub(crate) fn home_key(root: &Root, rel: &Path) -> Option<NonceKey> {
    if let Some(key) = read_key(root, rel) {
        return Some(key);
    }
    if root.stamp(rel) != Stamp::Absent {
        // Something sits there now. Another process (or thread) may have
        // put its new key in place between the read and the stat: read
        // once more, or two builds started together would use different
        // keys. Still not a usable key: leave it alone.
        return read_key(root, rel);
    }
    match create_key(root, rel) {
        Ok(_) => read_key(root, rel),
        Err(_) => None,
    }
}
