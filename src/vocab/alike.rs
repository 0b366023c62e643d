//! Names that look alike: one name, as far as claiming it goes.
//!
//! A reader (the agent, the user reading a list) tells two names apart by
//! how they look, so a name whose letters are a Cyrillic or Greek
//! look-alike, full-width forms or a decomposed accent of another name's is
//! that other name. Two names look alike when they have one *confusable
//! skeleton* (Unicode Technical Standard #39, section 4: the maintained
//! `unicode-security` crate's tables, after NFC normalization); where a
//! policy compares names without regard to case, a name is also its
//! lower-cased self, so `Dеploy` (a Cyrillic `е`) is one name with
//! `deploy` there.

use unicode_normalization::UnicodeNormalization;

/// The confusable skeleton of `name` (UTS #39), after NFC: two names with
/// one skeleton look alike.
pub(crate) fn skeleton(name: &str) -> String {
    // ASCII is its own NFC (not its own skeleton: `rn` looks like `m`).
    if name.is_ascii() {
        return unicode_security::skeleton(name).collect();
    }
    let nfc: String = name.nfc().collect();
    unicode_security::skeleton(&nfc).collect()
}

/// The keys two names share when they are one name: the skeleton, and
/// when case is not compared, the skeleton of the lower-cased name too.
fn keys(name: &str, fold_case: bool) -> impl Iterator<Item = String> {
    let lower = fold_case.then(|| skeleton(&name.to_lowercase()));
    std::iter::once(skeleton(name)).chain(lower)
}

/// Groups `names` into the sets of names that are one name: two names are
/// in one set when they share a [key](keys), or are linked by names that
/// do (so a set never depends on the order the names came in). For each
/// name, the index of the first name of its set.
pub(crate) fn groups<'a>(names: impl IntoIterator<Item = &'a str>, fold_case: bool) -> Vec<usize> {
    let mut parent: Vec<usize> = Vec::new();
    let mut by_key: crate::vocab::hash::FastMap<String, usize> = Default::default();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (i, name) in names.into_iter().enumerate() {
        parent.push(i);
        for key in keys(name, fold_case) {
            match by_key.get(&key) {
                Some(&j) => {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    // The smaller index is the set's name: the first seen.
                    parent[a.max(b)] = a.min(b);
                }
                None => {
                    by_key.insert(key, i);
                }
            }
        }
    }
    (0..parent.len()).map(|i| root(&mut parent, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::{groups, skeleton};

    #[test]
    fn look_alikes_share_a_skeleton() {
        let home = skeleton("deploy");
        for alike in [
            "d\u{435}ploy",                                     // Cyrillic е
            "\u{ff44}\u{ff45}\u{ff50}\u{ff4c}\u{ff4f}\u{ff59}", // full-width
            "depl\u{3bf}y",                                     // Greek omicron
            "dep\u{217c}oy",                                    // small roman numeral fifty
        ] {
            assert_eq!(skeleton(alike), home, "{alike:?}");
        }
        assert_eq!(skeleton("cafe\u{301}"), skeleton("caf\u{e9}"));
        assert_ne!(skeleton("deploy"), skeleton("Deploy"));
        assert_ne!(skeleton("deploy"), skeleton("release"));
    }

    #[test]
    fn sets_join_through_case_only_where_case_is_not_compared() {
        // `Dеploy` (Cyrillic е) is `dеploy` without case, which looks like
        // `deploy`.
        let names = ["deploy", "D\u{435}ploy", "Deploy", "release"];
        assert_eq!(groups(names, true), vec![0, 0, 0, 3]);
        assert_eq!(groups(names, false), vec![0, 1, 1, 3]);
        // Linked through a third name, whatever the order.
        let names = ["Is", "release", "ls", "IS"];
        assert_eq!(groups(names, true), vec![0, 1, 0, 0]);
    }
}
