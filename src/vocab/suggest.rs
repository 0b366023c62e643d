//! "Did you mean": the one rule every suggestion follows (policy keys and
//! words, shipped policy names, skill names).
//!
//! A candidate the written word begins (`pin` for `pinned`, `claude` for
//! `claude-code`) is the likeliest intent, the shortest such first; failing
//! that, the nearest by edit distance, when near enough to be a typo (at
//! most 3 edits, and fewer than the candidate's length). The word written
//! is never suggested: it is what just failed.

/// The candidate `written` most likely meant, if any.
pub(crate) fn closest<'a>(written: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if written.is_empty() {
        return None;
    }
    let prefixed = candidates
        .iter()
        .copied()
        .filter(|c| c.len() > written.len() && c.starts_with(written))
        .min_by_key(|c| (c.len(), *c));
    if prefixed.is_some() {
        return prefixed;
    }
    candidates
        .iter()
        .filter(|&&c| c != written)
        .map(|&c| (strsim::levenshtein(written, c), c))
        .filter(|(d, c)| *d <= 3 && *d < c.len())
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_prefix_wins_over_a_nearer_edit() {
        assert_eq!(closest("pin", &["open", "pinned"]), Some("pinned"));
        assert_eq!(
            closest("claude", &["lisa", "codex", "gemini", "claude-code"]),
            Some("claude-code")
        );
        assert_eq!(closest("relase", &["release", "deploy"]), Some("release"));
        assert_eq!(closest("zzzzzz", &["release", "deploy"]), None);
        assert_eq!(closest("", &["release"]), None);
        // The word written is what failed: never suggested back.
        assert_eq!(closest("open", &["open", "pinned"]), None);
        assert_eq!(closest("Deploy", &["Deploy", "deploy"]), Some("deploy"));
    }
}
