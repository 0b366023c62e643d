//! Waiting for a change: a long-lived front end (`lisa-context mcp`) tells
//! its client that the context changed when the kernel reports an event in
//! a folder a cached build examined, with no polling loop.

use std::time::Duration;

use super::Loader;

impl Loader {
    /// How many file-system events this [`watched`](Self::watched)
    /// loader's watch has read so far; `None` when it has no watch (not
    /// asked to watch, inotify unavailable, not Linux). Pass it to
    /// [`wait_for_change`](Self::wait_for_change).
    pub fn change_count(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            self.watch.as_ref().map(|w| w.events())
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Blocks until the watch has read an event after `seen` (a count from
    /// [`change_count`](Self::change_count) or from this call), and returns
    /// the new count. The folders watched are those of the builds checked
    /// at least once since they were built: an event says where to look,
    /// not that an answer changed (compare fingerprints for that). A build
    /// whose files changed within [`Loader::RACY_WINDOW`] of its reading is
    /// not watched until a check made after that window: give a `timeout`
    /// to look again then (the count comes back unchanged when it passed
    /// with no event). `None` at once when there is no watch to wait on.
    pub fn wait_for_change(&self, seen: u64, timeout: Option<Duration>) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            self.watch
                .as_ref()
                .and_then(|w| w.wait_after(seen, timeout))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (seen, timeout);
            None
        }
    }
}
