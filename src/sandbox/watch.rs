//! Watching folders for changes: Linux inotify, read synchronously.
//!
//! The kernel queues an inotify event inside the system call that made the
//! change, so every change that completed before [`Watcher::drain`] started
//! is in what it reads: a check that drains first can rely on "no event"
//! meaning "no change" for the folders watched. (A watcher that hands events
//! over on a thread of its own, as the `notify` crate does, cannot say when
//! it has seen everything that happened before a given moment.)
//!
//! Watching only tells the loader where to look again; what it finds there
//! is stat'ed through the sandbox as in an unwatched check. Nothing is read
//! here, and a watch on a path that a link redirected can only cause a
//! needless look, never a missed one: the loader watches every folder from
//! the root down, and any folder renamed, created or removed under a watched
//! folder throws every watch away (see `loader::watch`).

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

use super::Root;

/// What one inotify event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// An entry in the watched folder (not a folder itself) was created,
    /// written, removed, renamed or had its metadata changed.
    Entry(i32),
    /// A folder in the watched folder came or went, or the watched folder
    /// itself was moved, removed or unmounted: what the watches stand for
    /// may no longer be what the paths name.
    Structure(i32),
    /// The kernel's queue overflowed: events were lost.
    Overflow,
}

thread_local! {
    /// For the tests: every watch added on this thread fails as at the
    /// per-user limit (see `internals::fail_watches`).
    pub(crate) static FAIL_ADDS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// One inotify instance.
#[derive(Debug)]
pub(crate) struct Watcher {
    fd: OwnedFd,
    buf: Vec<MaybeUninit<u8>>,
}

/// The events a watch asks for: everything that can change a stamp of an
/// entry, or the entries of a folder.
fn mask() -> WatchFlags {
    WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::DELETE_SELF
        | WatchFlags::MODIFY
        | WatchFlags::MOVE_SELF
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::DONT_FOLLOW
        | WatchFlags::ONLYDIR
}

impl Watcher {
    /// A new instance (non-blocking, closed on exec).
    pub(crate) fn new() -> io::Result<Self> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
        Ok(Self {
            fd,
            buf: vec![MaybeUninit::uninit(); 64 * 1024],
        })
    }

    /// Watches the folder at `dir` (absolute; the last component is not
    /// followed, and must be a directory). The watch descriptor.
    #[allow(
        clippy::disallowed_methods,
        reason = "a watch on a folder the build examined; it reads nothing"
    )]
    pub(crate) fn add(&self, dir: &Path) -> io::Result<i32> {
        if FAIL_ADDS.with(std::cell::Cell::get) {
            // As the kernel answers at the per-user limit.
            return Err(io::Error::from(Errno::NOSPC));
        }
        Ok(inotify::add_watch(&self.fd, dir, mask())?)
    }

    /// Stops watching (an error, for a watch the kernel already dropped,
    /// is of no interest).
    pub(crate) fn remove(&self, wd: i32) {
        let _ = inotify::remove_watch(&self.fd, wd);
    }

    /// A second descriptor of this instance: waiting on it
    /// ([`wait_readable`]) needs no lock on the watcher.
    pub(crate) fn waiter(&self) -> io::Result<OwnedFd> {
        Ok(rustix::io::dup(&self.fd)?)
    }

    /// Reads every event queued now, handing each to `f`.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(Change)) -> io::Result<()> {
        let mut reader = inotify::Reader::new(&self.fd, &mut self.buf);
        loop {
            match reader.next() {
                Ok(event) => {
                    let flags = event.events();
                    if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                        f(Change::Overflow);
                        continue;
                    }
                    let structural = flags.intersects(
                        ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF | ReadFlags::IGNORED,
                    ) || (flags.contains(ReadFlags::ISDIR)
                        && flags.intersects(
                            ReadFlags::CREATE
                                | ReadFlags::DELETE
                                | ReadFlags::MOVED_FROM
                                | ReadFlags::MOVED_TO,
                        ));
                    f(if structural {
                        Change::Structure(event.wd())
                    } else {
                        Change::Entry(event.wd())
                    });
                }
                Err(Errno::AGAIN) => return Ok(()),
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Blocks until the instance `waiter` (see [`Watcher::waiter`]) has events
/// queued: the kernel wakes it, nothing polls. It reads nothing. It waits
/// at most `timeout` (`None`: for as long as it takes).
pub(crate) fn wait_readable(waiter: &OwnedFd, timeout: Option<std::time::Duration>) {
    let mut fds = [rustix::event::PollFd::new(
        waiter,
        rustix::event::PollFlags::IN,
    )];
    let timeout = timeout.map(|t| rustix::time::Timespec {
        tv_sec: i64::try_from(t.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(t.subsec_nanos()),
    });
    // An interrupted wait returns early: the caller looks and waits again.
    let _ = rustix::event::poll(&mut fds, timeout.as_ref());
}

/// Whether inotify can be trusted to see every change under `root`: not on
/// a network or user-space file system, where changes made elsewhere raise
/// no event here.
#[allow(
    clippy::disallowed_methods,
    reason = "asks the file system type of a root the sandbox holds open, by its descriptor"
)]
pub(crate) fn trustworthy(root: &Root) -> bool {
    const UNTRUSTED: &[i64] = &[
        0x6969,      // NFS
        0x517B,      // SMB
        0xFF53_4D42, // CIFS
        0xFE53_4D42, // SMB2
        0x6573_5546, // FUSE
        0x0102_1997, // 9P
        0x00C3_6400, // Ceph
        0x5346_414F, // AFS
        0x7375_7245, // Coda
        0x0BD0_0BD0, // Lustre
        0x4750_4653, // GPFS
    ];
    match rustix::fs::fstatfs(&*root.dir) {
        #[allow(clippy::unnecessary_cast, reason = "f_type's width differs by target")]
        Ok(fs) => !UNTRUSTED.contains(&(fs.f_type as i64)),
        Err(_) => false,
    }
}
