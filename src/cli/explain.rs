//! `lisa-context explain`: every candidate, what happened to it, and why.

use std::fmt::Write as _;

use std::path::Path;

use lisa_context::Snapshot;
use lisa_context::policy::Policy;
use lisa_context::policy::keys::{self, Subject};
use lisa_context::snapshot::{Reason, Status, terminal_safe};

/// A path as a terminal may show it (see [`terminal_safe`]).
fn shown(path: &Path) -> String {
    terminal_safe(&path.to_string_lossy()).into_owned()
}

/// A reason word, with the policy key behind it and the layer that set
/// that key when the policy is known: `too-large
/// (instructions.skip-larger-than, set in home)`.
fn why(reason: Reason, subject: Subject, policy: Option<&Policy>) -> String {
    let word = reason.as_str();
    match keys::behind(reason, subject) {
        Some(key) => match policy.and_then(|p| p.origin(key)) {
            Some(layer) => format!("{word} ({key}, set in {})", layer.as_str()),
            None => format!("{word} ({key})"),
        },
        None => word.to_string(),
    }
}

/// Renders the explanation table; with the policy the snapshot was built
/// under, each reason names the key behind it and the layer that set it.
pub fn table(s: &Snapshot, policy: Option<&Policy>) -> String {
    let mut rows: Vec<[String; 4]> = Vec::new();
    for c in &s.considered {
        let (status, why) = match &c.status {
            Status::Absent => ("absent", String::new()),
            Status::Included => ("included", String::new()),
            Status::Truncated => {
                let b = s.instruction_files.iter().find(|b| b.path == c.path);
                let why = b.map_or(String::new(), |b| {
                    let cause = match (b.file_limit_cut, b.budget_cut) {
                        (true, true) => "file limit and budget",
                        (true, false) => "file limit",
                        _ => "budget",
                    };
                    format!("{} of {} bytes ({cause})", b.included_bytes, b.bytes)
                });
                ("truncated", why)
            }
            Status::Deduped(same) => ("deduped", format!("same text as {}", shown(same))),
            Status::SameFile(same) => ("deduped", format!("same file as {}", shown(same))),
            Status::Skipped(r) => ("skipped", why(*r, Subject::InstructionFile, policy)),
            Status::NotPicked(winner) => ("passed", format!("{} took this place", shown(winner))),
            _ => ("unknown", String::new()),
        };
        rows.push([
            status.to_string(),
            c.origin.as_str().to_string(),
            shown(&c.path),
            why,
        ]);
    }
    // Imports, each under the file that wrote it, indented by depth.
    for i in &s.imports {
        let status = match i.reason {
            None => "imported".to_string(),
            Some(_) => "not imported".to_string(),
        };
        let target = i
            .path
            .as_deref()
            .map_or_else(|| format!("@{}", terminal_safe(&i.spec)), shown);
        let why = match i.reason {
            None => format!(
                "{}@{} in {} ({} bytes)",
                "  ".repeat(i.depth),
                terminal_safe(&i.spec),
                shown(&i.from),
                i.bytes
            ),
            Some(r) => format!(
                "{}@{} in {}: {}",
                "  ".repeat(i.depth),
                terminal_safe(&i.spec),
                shown(&i.from),
                why(r, Subject::Import, policy)
            ),
        };
        rows.push([status, "import".into(), target, why]);
    }
    for r in &s.scoped_rules {
        let globs: Vec<String> = r
            .globs
            .iter()
            .map(|g| terminal_safe(g).into_owned())
            .collect();
        rows.push([
            "scoped".into(),
            r.origin.as_str().to_string(),
            shown(&r.path),
            format!("loaded on access to {}", globs.join(", ")),
        ]);
    }
    for k in &s.skills {
        let why = match (k.listed, k.executable) {
            (false, _) => "won its name; not listed (project skill cap)".to_string(),
            (true, true) => format!(
                "rank {} from {}; executable",
                k.rank,
                terminal_safe(&k.source)
            ),
            (true, false) => format!("rank {} from {}", k.rank, terminal_safe(&k.source)),
        };
        rows.push([
            format!("skill {}", terminal_safe(&k.name)),
            k.origin.as_str().to_string(),
            shown(&k.path),
            why,
        ]);
    }
    for sh in &s.shadowed_project_skills {
        rows.push([
            "shadowed".into(),
            "project".into(),
            shown(&sh.path),
            format!(
                "{} is claimed by {}",
                terminal_safe(&sh.name),
                shown(&sh.shadowed_by)
            ),
        ]);
    }
    for r in &s.rejected_skills {
        rows.push([
            "rejected".into(),
            "skill".into(),
            shown(&r.path),
            why(r.reason, Subject::Skill, policy),
        ]);
    }
    let header = ["STATUS", "ORIGIN", "PATH", "WHY"];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "repository root: {}\ncwd: {}\nbudget: {} of {} bytes used{}\nfingerprint: {}\n",
        shown(&s.repo_root),
        shown(&s.cwd),
        s.budget.used,
        s.budget.limit,
        if s.budget.exhausted {
            " (exhausted)"
        } else {
            ""
        },
        s.fingerprint
    );
    let line = |out: &mut String, cells: [&str; 4]| {
        let _ = writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:<w2$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
    };
    line(&mut out, header);
    for r in &rows {
        line(&mut out, [&r[0], &r[1], &r[2], &r[3]]);
    }
    for h in &s.hidden_text {
        let _ = writeln!(
            out,
            "hidden text in {}: {} character(s), {} HTML comment(s) ({})",
            shown(&h.path),
            h.report.characters,
            h.report.html_comments,
            h.report.kinds.join(", ")
        );
    }
    for w in &s.warnings {
        let _ = writeln!(
            out,
            "warning ({}) {}: {}",
            w.kind.as_str(),
            shown(&w.path),
            terminal_safe(&w.message)
        );
    }
    out.trim_end().to_string() + "\n"
}
