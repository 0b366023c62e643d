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

/// The nearest of `available` names of a `kind` to `name`, and the list.
pub(crate) fn name_advice(kind: &str, name: &str, available: &[String]) -> String {
    if available.is_empty() {
        return format!("no {kind} is available from this directory");
    }
    let names: Vec<&str> = available.iter().map(String::as_str).collect();
    let best = closest(name, &names);
    // The names come from folders and frontmatter a repository controls:
    // shown terminal-safe, so none can move the cursor or set a title.
    let safe = |n: &str| crate::vocab::unicode::terminal_safe(n).into_owned();
    let listed = available
        .iter()
        .map(|n| safe(n))
        .collect::<Vec<_>>()
        .join(", ");
    match best {
        Some(best) => format!("did you mean `{}`? Available here: {listed}", safe(best)),
        None => format!("available here: {listed}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{closest, name_advice};

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

    #[test]
    fn name_advice_suggests_the_nearest_name() {
        let names = vec!["changelog".to_string(), "release".to_string()];
        let advice = name_advice("skill", "releas", &names);
        assert!(advice.starts_with("did you mean `release`?"), "{advice}");
        assert!(advice.ends_with("changelog, release"), "{advice}");
        let none = name_advice("skill", "zzzzzzzz", &names);
        assert_eq!(none, "available here: changelog, release");
        let empty = name_advice("rule", "x", &[]);
        assert_eq!(empty, "no rule is available from this directory");
    }
}
