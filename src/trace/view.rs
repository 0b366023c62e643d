//! A stage's view of the door: the questions a build asks the disk under a
//! root (stamp a path, list a folder, open a file, read it), each answer
//! recorded in the build's [`Trace`] as it is given, so that no branch of a
//! stage can forget a path it looked at.
//!
//! Two views over the same door: [`View::recording`] writes every answer
//! to a trace (a build a loader hands out and checks again), [`View::off`]
//! records nothing (a build summed up and dropped, as a survey's are). Both
//! ask the sandbox exactly the same questions, so they answer the same.
//!
//! The few records that are not the answer to a question asked here are
//! made with [`View::note`] (or [`View::note_entry`]), each at its site with
//! its reason: something derived (what a fold points to, a store's
//! failure), or a probe the sandbox made before the build began.

use std::path::Path;
use std::sync::Arc;

use super::record::{Trace, TraceEntry};
use crate::policy::SymlinkRule;
use crate::sandbox::{Looked, OpenFile, Opened, Place, Read, Root, Stamp};
use crate::vocab::origin::RootId;
use crate::vocab::reason::Reason;

/// What a stage may ask the disk under the roots, each answer recorded (or,
/// for a view that is [`off`](View::off), not).
#[derive(Debug)]
pub(crate) struct View<'t> {
    /// Where answers are recorded; `None`: nowhere.
    trace: Option<&'t mut Trace>,
}

impl<'t> View<'t> {
    /// A view that records every answer in `trace`.
    pub(crate) fn recording(trace: &'t mut Trace) -> Self {
        Self { trace: Some(trace) }
    }

    /// A view that records nothing: a build whose snapshot is summed up and
    /// dropped (a survey's) is never checked again, and has no fingerprint.
    pub(crate) fn off() -> View<'static> {
        View { trace: None }
    }

    /// Whether answers are recorded.
    pub(crate) fn records(&self) -> bool {
        self.trace.is_some()
    }

    /// Makes room for `more` records (a caller about to record many spares
    /// the copies of growing one at a time).
    pub(crate) fn reserve(&mut self, more: usize) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.reserve(more);
        }
    }

    /// Stamps `rel` under `root` (links inside the root followed), and
    /// records it.
    pub(crate) fn stamp(&mut self, root: &Root, id: RootId, rel: &Path) -> Stamp {
        let stamp = root.stamp(rel);
        self.note(Place::Within(id), rel, stamp, None);
        stamp
    }

    /// Stamps `rel` under `root` without following a link at its end, and
    /// records it only when `keep` says so of the stamp.
    pub(crate) fn stamp_nofollow_if(
        &mut self,
        root: &Root,
        id: RootId,
        rel: &Path,
        keep: impl FnOnce(&Stamp) -> bool,
    ) -> Stamp {
        let stamp = root.stamp_nofollow(rel);
        if keep(&stamp) {
            self.note(Place::Within(id), rel, stamp, None);
        }
        stamp
    }

    /// Stamps `rel` under `root` and records it only when `keep` says so
    /// of the stamp (a walk records the folders it goes into, not every
    /// entry it passes over).
    pub(crate) fn stamp_if(
        &mut self,
        root: &Root,
        id: RootId,
        rel: &Path,
        keep: impl FnOnce(&Stamp) -> bool,
    ) -> Stamp {
        let stamp = root.stamp(rel);
        if keep(&stamp) {
            self.note(Place::Within(id), rel, stamp, None);
        }
        stamp
    }

    /// Lists the folder `rel` under `root` (at most `max` entries; see
    /// [`Root::look`]), and records the folder's stamp.
    pub(crate) fn list(&mut self, root: &Root, id: RootId, rel: &Path, max: usize) -> Looked {
        let looked = root.look(rel, max);
        self.note(Place::Within(id), rel, looked.stamp, None);
        looked
    }

    /// Lists the folder `rel` under `root` (see [`list`](Self::list))
    /// without recording it: a folder a walk recorded as it went into it.
    pub(crate) fn list_again(&self, root: &Root, rel: &Path, max: usize) -> Looked {
        root.look(rel, max)
    }

    /// Where the links on the way to `rel` under `root` lead now (see
    /// [`Root::resolve`]); not recorded: it only decides whether the path
    /// is refused, and the path is recorded either way (its stamp when
    /// refused, what opening it found otherwise).
    pub(crate) fn resolve(&self, root: &Root, rel: &Path) -> Option<std::path::PathBuf> {
        root.resolve(rel)
    }

    /// Whether `rel` under `root` is a link; not recorded (it only decides
    /// whether what the recorded stamp shows is refused).
    pub(crate) fn is_symlink(&self, root: &Root, rel: &Path) -> bool {
        root.is_symlink(rel)
    }

    /// Opens `rel` under `root` as a candidate file under the symlink
    /// `rule`. Nothing there is recorded as absent, a refusal with the
    /// path's stamp; an opened file is recorded when the caller is done
    /// with it (see [`FileView`]).
    pub(crate) fn open<'v>(
        &'v mut self,
        root: &Root,
        id: RootId,
        rel: &'v Path,
        rule: SymlinkRule,
    ) -> Open<'v, 't> {
        match root.open_file(rel, rule) {
            Opened::Absent => {
                self.note(Place::Within(id), rel, Stamp::Absent, None);
                Open::Absent
            }
            Opened::Refused(reason) => {
                self.stamp(root, id, rel);
                Open::Refused(reason)
            }
            Opened::File(file) => Open::File(FileView {
                view: self,
                place: Place::Within(id),
                rel,
                stamp: file.stamp(),
                file: Some(file),
                done: false,
            }),
        }
    }

    /// Opens `rel` under `root` and reads it (see [`Root::read`]); nothing
    /// is recorded: the caller records the outcome, which is more than the
    /// file (see `skills::discover`).
    pub(crate) fn read_unrecorded(
        &self,
        root: &Root,
        rel: &Path,
        rule: SymlinkRule,
        cap: u64,
        read: impl FnOnce(&OpenFile) -> Result<Vec<u8>, Reason>,
    ) -> Read {
        root.read(rel, rule, cap, read)
    }

    /// A stamp not recorded: for a question whose answer only decides
    /// which path is recorded, or another record already covers.
    pub(crate) fn glance(&self, root: &Root, rel: &Path) -> Stamp {
        root.stamp(rel)
    }

    /// Records what is not an answer to a question asked through this
    /// view: each caller says why.
    pub(crate) fn note(&mut self, place: Place, rel: &Path, stamp: Stamp, content: Option<&[u8]>) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.push(place, rel, stamp, content);
        }
    }

    /// Records an entry made already (shared with other builds).
    pub(crate) fn note_entry(&mut self, entry: Arc<TraceEntry>) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.push_entry(entry);
        }
    }

    /// Records entries made already (by a worker's view, in order).
    pub(crate) fn extend(&mut self, entries: impl IntoIterator<Item = Arc<TraceEntry>>) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.extend(entries);
        }
    }
}

/// What [`View::open`] found.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "made and matched at once, never stored: boxing the file would cost an allocation per open"
)]
pub(crate) enum Open<'v, 't> {
    /// Nothing there (recorded).
    Absent,
    /// Refused, with the reason (recorded with the path's stamp).
    Refused(Reason),
    /// A regular file, open.
    File(FileView<'v, 't>),
}

/// A file opened through a [`View`]: recorded with its stamp, and with a
/// hash of the bytes read when it was read, as soon as it is read or let
/// go; one never read is recorded when dropped.
#[derive(Debug)]
pub(crate) struct FileView<'v, 't> {
    view: &'v mut View<'t>,
    place: Place,
    rel: &'v Path,
    stamp: Stamp,
    file: Option<OpenFile>,
    done: bool,
}

impl FileView<'_, '_> {
    /// The open handle's stamp.
    pub(crate) fn stamp(&self) -> Stamp {
        self.stamp
    }

    /// The size fstat reported.
    pub(crate) fn len(&self) -> u64 {
        self.file.as_ref().map_or(0, OpenFile::len)
    }

    /// Reads at most `limit` bytes (see [`OpenFile::read_at_most`]) and
    /// records the file with them (without content when the read failed).
    /// The handle is closed.
    pub(crate) fn read_at_most(mut self, limit: u64) -> std::io::Result<Vec<u8>> {
        let read = match &self.file {
            Some(f) => f.read_at_most(limit),
            None => Err(std::io::Error::other("closed")),
        };
        self.file = None;
        self.settle(read.as_deref().ok());
        read
    }

    /// Lets the file go unread, recorded with its stamp.
    pub(crate) fn leave(mut self) {
        self.settle(None);
    }

    /// Lets the file go unread, recorded with `derived` as its content (a
    /// file folded into another records the path it was folded into, so
    /// that a fold into another file moves the fingerprint).
    pub(crate) fn leave_as(mut self, derived: &[u8]) {
        self.settle(Some(derived));
    }

    fn settle(&mut self, content: Option<&[u8]>) {
        if !self.done {
            self.done = true;
            self.file = None;
            self.view.note(self.place, self.rel, self.stamp, content);
        }
    }
}

impl Drop for FileView<'_, '_> {
    fn drop(&mut self) {
        self.settle(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_that_is_off_records_nothing_however_entries_come() {
        let shared = Arc::new(TraceEntry::new(
            Place::Marker,
            Path::new("/r/.git"),
            Stamp::Absent,
            None,
        ));
        for (on, kept) in [(true, 3), (false, 0)] {
            let mut t = Trace::default();
            let mut v = if on {
                View::recording(&mut t)
            } else {
                View::off()
            };
            v.note(Place::Marker, Path::new("/r/.git"), Stamp::Absent, None);
            v.note_entry(Arc::clone(&shared));
            v.extend([Arc::clone(&shared)]);
            assert_eq!(v.records(), kept > 0);
            assert_eq!(t.entries.len(), kept);
        }
    }
}
