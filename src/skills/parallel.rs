//! Examining the folders of a big skill source on a few threads.
//!
//! Each folder's examination (open its `SKILL.md`, read the frontmatter,
//! parse it) is independent of the others, and YAML parsing is the dearest
//! step of a cold snapshot. Above [`threshold`] folders, the folders are cut
//! into contiguous chunks that a bounded pool of scoped threads takes in
//! turn; each folder is examined into a trace and warnings of its own, and
//! the results are merged in the listing's order, so the snapshot (trace
//! order, warnings, rejections, found skills) is byte for byte what the
//! sequential loop gives. Below the threshold, the same code runs on the
//! calling thread.
//!
//! A survey builds its policies on the same kind of pool, one policy at a
//! time per thread ([`each_in_order`]).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The default number of folders from which a source is examined in
/// parallel: below it, starting threads costs more than it saves.
pub(crate) const DEFAULT_THRESHOLD: usize = 256;

/// The most threads one source is examined on.
const MAX_WORKERS: usize = 8;

/// Folders per chunk a worker takes at a time.
const CHUNK: usize = 32;

static THRESHOLD: AtomicUsize = AtomicUsize::new(DEFAULT_THRESHOLD);

/// The number of folders from which sources are examined in parallel.
pub(crate) fn threshold() -> usize {
    THRESHOLD.load(Ordering::Relaxed)
}

/// Sets [`threshold`] (for the tests and benchmarks that compare both paths).
pub(crate) fn set_threshold(n: usize) {
    THRESHOLD.store(n, Ordering::Relaxed);
}

/// The threads a big source is examined on: what the OS grants this process
/// (cgroup quota and affinity included), at most [`MAX_WORKERS`]; asked once
/// per process.
pub(crate) fn workers() -> usize {
    static WORKERS: OnceLock<usize> = OnceLock::new();
    *WORKERS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(MAX_WORKERS)
    })
}

/// `f` over `jobs` on `workers` scoped threads, each taking the next job
/// in turn (for a few jobs of uneven size, as a survey's policies are) and
/// owning it; the results in the order of `jobs`.
pub(crate) fn each_in_order<J: Send, T: Send>(
    jobs: Vec<J>,
    workers: usize,
    f: &(dyn Fn(J) -> T + Sync),
) -> Vec<T> {
    let count = jobs.len();
    let queue = std::sync::Mutex::new(jobs.into_iter().enumerate());
    let take = || {
        let mut mine = Vec::new();
        loop {
            // Every step of the queue is one `next`: a poisoned one is sound.
            let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
            let Some((i, job)) = next else {
                break;
            };
            mine.push((i, f(job)));
        }
        mine
    };
    let mut done = on_threads(workers.min(count), &take);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

/// Runs `take` on the calling thread and on up to `workers - 1` scoped
/// threads, and gathers what each took. The calling thread takes work
/// too, so a thread the system refuses (a process or memory limit) only
/// means fewer hands: the results are the same.
fn on_threads<T: Send>(workers: usize, take: &(dyn Fn() -> Vec<T> + Sync)) -> Vec<T> {
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..workers)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(scope, take).ok())
            .collect();
        let mut all = take();
        for h in helpers {
            all.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        all
    })
}

/// `f` over `jobs` on `workers` scoped threads, taking contiguous chunks in
/// turn; the results in the order of `jobs`, a list per chunk.
pub(super) fn in_order<J: Sync, T: Send>(
    jobs: &[J],
    workers: usize,
    f: &(dyn Fn(&J) -> T + Sync),
) -> Vec<Vec<T>> {
    let chunks: Vec<&[J]> = jobs.chunks(CHUNK).collect();
    let next = AtomicUsize::new(0);
    let take = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(chunk) = chunks.get(i) else {
                break;
            };
            mine.push((i, chunk.iter().map(f).collect::<Vec<T>>()));
        }
        mine
    };
    let mut done = on_threads(workers.min(chunks.len()), &take);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, v)| v).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_order_of_the_jobs() {
        let jobs: Vec<usize> = (0..1000).collect();
        for workers in [1, 2, 3, 8] {
            let out: Vec<usize> = in_order(&jobs, workers, &|j| j * 2)
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(out, jobs.iter().map(|j| j * 2).collect::<Vec<_>>());
        }
        assert!(in_order::<usize, usize>(&[], 4, &|j| *j).is_empty());
        for workers in [1, 2, 5] {
            let jobs: Vec<usize> = (0..13).collect();
            let out = each_in_order(jobs.clone(), workers, &|j| j + 1);
            assert_eq!(out, (1..14).collect::<Vec<_>>());
        }
    }
}
