//! `lisa-context trust`: the user's review of project content under
//! `trust.project = "pinned"`.
//!
//! `diff` shows each pending item with the hash of its current content and
//! ends with the `approve --expect PATH=HASH` command that approves exactly
//! that content: if a file changes after `diff`, its hash no longer matches
//! and `approve` refuses it (nothing is approved). `approve PATH` without
//! `--expect` takes the content as it is when the store is locked, and
//! prints that content's diff and hash, so nothing is approved unseen. Each
//! item's diff is bounded (see `TrustItem::diff`): a change too large to
//! show line by line is one line with the line count and both hashes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lisa_context::Loader;
use lisa_context::snapshot::terminal_safe;
use lisa_context::trust::{Change, Selection, TrustItem, TrustState, TrustStatus};

/// An item's path for a person: relative to the repository root, escaped.
fn shown(status_root: &Path, item: &TrustItem) -> String {
    let rel = item.path.strip_prefix(status_root).unwrap_or(&item.path);
    terminal_safe(&rel.to_string_lossy()).into_owned()
}

fn kind_word(item: &TrustItem) -> &'static str {
    match item.kind {
        lisa_context::trust::ItemKind::Instruction => "instruction",
        _ => "skill",
    }
}

fn hash_or_dash(h: &Option<String>) -> &str {
    h.as_deref().unwrap_or("-")
}

/// The item's note, as a suffix (` (…)`), or nothing.
fn note(item: &TrustItem) -> String {
    item.note
        .as_deref()
        .map(|n| format!(" ({})", terminal_safe(n)))
        .unwrap_or_default()
}

/// What happened to one file of a skill since its approval.
fn change_word(change: Change) -> &'static str {
    match change {
        Change::New => "new",
        Change::Removed => "removed",
        _ => "changed",
    }
}

/// `trust status`: one line per item (its state, kind, hash and path), then
/// the counts; under `trust.project = "open"`, a line saying that nothing
/// is held back.
pub(super) fn status_text(status: &TrustStatus, open: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "repository {}",
        terminal_safe(&status.repo_root.to_string_lossy())
    );
    let store = status.store.as_ref().map_or_else(
        || "none (no home root)".to_string(),
        |s| terminal_safe(&s.to_string_lossy()).into_owned(),
    );
    let _ = writeln!(out, "store {store}");
    let (mut approved, mut pending, mut stale) = (0, 0, 0);
    for item in &status.items {
        let word = match item.state {
            TrustState::Approved => {
                approved += 1;
                "approved"
            }
            TrustState::Removed => {
                stale += 1;
                "stale"
            }
            TrustState::New => {
                pending += 1;
                "new"
            }
            _ => {
                pending += 1;
                "changed"
            }
        };
        let hash = match item.state {
            TrustState::Removed => hash_or_dash(&item.approved_hash),
            _ => hash_or_dash(&item.current_hash),
        };
        let _ = writeln!(
            out,
            "{word:<8} {:<11} {hash} {}{}",
            kind_word(item),
            shown(&status.repo_root, item),
            note(item)
        );
        // A changed skill names each file of its folder that changed.
        for f in &item.files {
            let _ = writeln!(
                out,
                "         file {} {}",
                change_word(f.change),
                terminal_safe(&f.path)
            );
        }
    }
    let _ = writeln!(
        out,
        "{approved} approved, {pending} pending (new or changed), {stale} stale"
    );
    if open {
        out.push_str(
            "trust.project is \"open\": nothing is held back, every item is in the prompt as it \
             is on disk; set trust.project = \"pinned\" to take only approved content\n",
        );
    }
    out
}

/// A path as a shell word (single-quoted when it needs it).
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// One pending item: a header line with both hashes, then the diff.
fn item_diff(root: &Path, item: &TrustItem) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== {} {} {} (approved {}, current {}){}",
        item.state.as_str(),
        kind_word(item),
        shown(root, item),
        hash_or_dash(&item.approved_hash),
        hash_or_dash(&item.current_hash),
        note(item)
    );
    out.push_str(&item.diff());
    out
}

/// `trust diff`: every pending item, then the command approving exactly
/// what was shown.
pub(super) fn diff_text(status: &TrustStatus) -> String {
    let pending: Vec<&TrustItem> = status
        .items
        .iter()
        .filter(|i| i.state.is_pending())
        .collect();
    if pending.is_empty() {
        return "nothing to review: every project item is approved\n".into();
    }
    let mut out = String::new();
    for item in &pending {
        out.push_str(&item_diff(&status.repo_root, item));
        out.push('\n');
    }
    out.push_str("to approve exactly what is shown above:\n  lisa-context trust approve");
    for item in &pending {
        let path = terminal_safe(&item.path.to_string_lossy()).into_owned();
        let word = shell_word(&format!("{path}={}", hash_or_dash(&item.current_hash)));
        let _ = write!(out, " \\\n    --expect {word}");
    }
    out.push('\n');
    out
}

/// Splits `PATH=HASH` at its last `=` (a hash holds none).
fn parse_expect(arg: &str) -> miette::Result<(String, String)> {
    match arg.rsplit_once('=') {
        Some((path, hash)) if !path.is_empty() && !hash.is_empty() => {
            // Checked here rather than by clap, whose usage error would
            // echo the argument (a path a repository named) unescaped.
            if hash.len() != 32 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(miette::miette!(
                    "--expect {}: `{}` is not a content hash (32 hex digits, as `lisa-context \
                     trust diff` shows them)",
                    terminal_safe(arg),
                    terminal_safe(hash)
                ));
            }
            Ok((path.to_string(), hash.to_string()))
        }
        _ => Err(miette::miette!(
            "--expect takes PATH=HASH (the hash `lisa-context trust diff` shows), got {}",
            terminal_safe(arg)
        )),
    }
}

/// `trust approve`.
pub(super) fn approve(
    loader: &Loader,
    cwd: &Path,
    root: Option<&Path>,
    all: bool,
    expect: &[String],
    paths: &[PathBuf],
) -> miette::Result<String> {
    let resolve = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        }
    };
    let selection = if all {
        Selection::All
    } else {
        let mut chosen: Vec<(PathBuf, Option<String>)> = Vec::new();
        let mut expected = std::collections::HashSet::new();
        for arg in expect {
            let (path, hash) = parse_expect(arg)?;
            let path = resolve(Path::new(&path));
            expected.insert(path.clone());
            chosen.push((path, Some(hash)));
        }
        for p in paths {
            let path = resolve(p);
            if !expected.contains(&path) {
                chosen.push((path, None));
            }
        }
        if chosen.is_empty() {
            return Err(miette::miette!(
                help = "`lisa-context trust diff` shows what is pending and the command that approves it",
                "name the items to approve (PATH or --expect PATH=HASH), or pass --all"
            ));
        }
        Selection::Paths(chosen)
    };
    let shown_in_full = !all && expect.is_empty();
    let approved = loader.trust_approve(cwd, root, &selection)?;
    let after = loader.trust_status(cwd, root)?;
    let repo_root = after.repo_root;
    let mut out = String::new();
    if approved.is_empty() {
        out.push_str("nothing to approve\n");
    }
    for item in &approved {
        let what = if item.current_hash.is_some() {
            "approved"
        } else {
            "forgot the approval of removed"
        };
        let _ = writeln!(
            out,
            "{what} {} {} {} ({})",
            kind_word(item),
            shown(&repo_root, item),
            hash_or_dash(&item.current_hash),
            item.state.as_str(),
        );
        // Without --expect the user may not have seen this content: show it.
        if (shown_in_full || all) && item.current_hash.is_some() {
            out.push_str(&item.diff());
        }
    }
    // `--all` leaves out what cannot be approved: say so, and why.
    if all {
        for item in after.items.iter().filter(|i| i.unapprovable.is_some()) {
            let _ = writeln!(
                out,
                "not approved: {} {}{}",
                kind_word(item),
                shown(&repo_root, item),
                note(item)
            );
        }
    }
    Ok(out)
}

/// `trust revoke`.
pub(super) fn revoke(
    loader: &Loader,
    cwd: &Path,
    root: Option<&Path>,
    repo: bool,
    paths: &[PathBuf],
) -> miette::Result<String> {
    if !repo && paths.is_empty() {
        return Err(miette::miette!(
            "name the items whose approval to revoke, or pass --repo for all of this repository"
        ));
    }
    let resolved: Vec<PathBuf> = paths
        .iter()
        .map(|p| {
            if p.is_absolute() {
                p.clone()
            } else {
                cwd.join(p)
            }
        })
        .collect();
    let which = if repo {
        None
    } else {
        Some(resolved.as_slice())
    };
    let removed = loader.trust_revoke(cwd, root, which)?;
    let mut out = String::new();
    if removed.is_empty() {
        out.push_str("no approval to revoke\n");
    }
    for p in removed {
        let _ = writeln!(out, "revoked {}", terminal_safe(&p.to_string_lossy()));
    }
    Ok(out)
}
