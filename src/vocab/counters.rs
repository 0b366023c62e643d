//! Work counters: how many times the steps whose cost grows with hostile
//! input ran in this process (levels an access looked at, glob sets
//! compiled, frontmatters parsed, memo files written, policy text copied
//! for a report). They exist so that the tests can assert that a cost is
//! bounded by counting work instead of timing it. A count is one relaxed
//! atomic add: no user feels it, and every build counts, so the tests' build
//! and the user's are one build (no feature that compiles the library twice).

use std::sync::atomic::{AtomicU64, Ordering};

/// One kind of counted work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub(crate) enum Counter {
    /// A snapshot built (the stages run over the disk).
    Builds,
    /// A folder level an on-access load considered below the cwd.
    AccessLevels,
    /// A glob set compiled for scoped rules.
    ScopedGlobSets,
    /// Globs compiled into those sets.
    ScopedGlobs,
    /// A scoped rule's globs tested against an accessed path.
    ScopedMatches,
    /// A `SKILL.md` frontmatter given to the YAML (or lenient) parser.
    FrontmatterParses,
    /// Bytes searched for the end of a `SKILL.md`'s frontmatter while it
    /// is read.
    FrontmatterScanBytes,
    /// The frontmatter memo file written.
    MemoWrites,
    /// Bytes written to the frontmatter memo file.
    MemoBytesWritten,
    /// Bytes of policy text copied to be shown by a report.
    PolicySourceBytes,
    /// Policy problems kept in a report.
    PolicyProblemsKept,
}

const COUNT: usize = <Counter as strum::VariantArray>::VARIANTS.len();

static COUNTS: [AtomicU64; COUNT] = [const { AtomicU64::new(0) }; COUNT];

/// Adds `n` to `counter`.
#[inline]
pub(crate) fn add(counter: Counter, n: u64) {
    COUNTS[counter as usize].fetch_add(n, Ordering::Relaxed);
}

/// Adds one to `counter`.
#[inline]
pub(crate) fn bump(counter: Counter) {
    add(counter, 1);
}

/// Every counter with its kebab-case name and value, in declaration order.
pub(crate) fn all() -> Vec<(&'static str, u64)> {
    <Counter as strum::VariantArray>::VARIANTS
        .iter()
        .map(|c| {
            (
                <&'static str>::from(*c),
                COUNTS[*c as usize].load(Ordering::Relaxed),
            )
        })
        .collect()
}
