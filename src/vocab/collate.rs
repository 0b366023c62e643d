//! Text compared as people read it: the Unicode collation of CLDR's root
//! locale (ICU4X's compiled data), which is what JavaScript's
//! `localeCompare` gives in English. Harnesses written in JavaScript sort
//! file and rule names that way: `B.md` after `a.md`, `é` beside `e`,
//! punctuation before letters.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed};

/// `a` against `b` under the root collation. Should the collator not load
/// (it is compiled in, so it does), UTF-8 byte order stands in.
pub(crate) fn locale_cmp(a: &str, b: &str) -> Ordering {
    static COLLATOR: OnceLock<Option<CollatorBorrowed<'static>>> = OnceLock::new();
    let collator = COLLATOR
        .get_or_init(|| Collator::try_new(Default::default(), CollatorOptions::default()).ok());
    match collator {
        Some(c) => c.compare(a, b),
        None => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_javascript_does_in_english() {
        // What `node -e` printed for the same list with
        // `v.sort((a, b) => a.localeCompare(b))` (Node 20, en-US).
        let mut v = [
            "b.md", "a.md", "B.md", "_x.md", "10-a.md", "2-b.md", "é.md", "e.md", "Z.md", "z.md",
        ];
        v.sort_by(|a, b| locale_cmp(a, b));
        assert_eq!(
            v,
            [
                "_x.md", "10-a.md", "2-b.md", "a.md", "b.md", "B.md", "e.md", "é.md", "z.md",
                "Z.md"
            ]
        );
    }
}
