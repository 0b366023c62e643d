//! A global allocator that counts live heap bytes while switched on, so a
//! bench can set what a loader really holds beside its estimate and beside
//! the floor (the prompt bytes themselves). Off, it only forwards to the
//! system allocator. A bench installs it with
//! `#[global_allocator] static ALLOC: Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

pub struct Counting;

pub static COUNTING: AtomicBool = AtomicBool::new(false);
pub static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        p
    }
}

/// Starts counting; the live bytes counted so far.
pub fn start() -> isize {
    COUNTING.store(true, Ordering::SeqCst);
    LIVE.load(Ordering::SeqCst)
}

/// The live bytes counted now.
pub fn live() -> isize {
    LIVE.load(Ordering::SeqCst)
}

/// Stops counting.
pub fn stop() {
    COUNTING.store(false, Ordering::SeqCst);
}

/// This process's resident set, in KiB, when /proc says.
pub fn vm_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
