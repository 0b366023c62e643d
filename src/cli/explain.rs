//! `lisa-context explain`: every candidate, what happened to it, and why.

use std::fmt::Write as _;

use std::path::Path;

use lisa_context::Snapshot;
use lisa_context::policy::Policy;
use lisa_context::policy::keys::{self, Subject};
use lisa_context::protocol::{ExplainRow, Explanation};
use lisa_context::snapshot::{Origin, Reason, Status, terminal_safe};

/// A path as a terminal may show it (see [`terminal_safe`]).
fn shown(path: &Path) -> String {
    terminal_safe(&path.to_string_lossy()).into_owned()
}

/// The roots a row's path is shown relative to.
struct Roots<'a> {
    home: Option<&'a Path>,
    repo: &'a Path,
}

impl Roots<'_> {
    /// `path` relative to the root `origin` names (home or repository),
    /// terminal-safe; absolute when it lies outside that root.
    fn shown(&self, path: &Path, origin: Option<Origin>) -> String {
        let root = match origin {
            Some(Origin::Home) => self.home,
            Some(Origin::Ancestor) => None,
            _ => Some(self.repo),
        };
        match root.and_then(|r| path.strip_prefix(r).ok()) {
            Some(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Some(rel) => shown(rel),
            None => shown(path),
        }
    }
}

/// The reason word and the key behind it, for the JSON row.
fn reason_of(reason: Reason, subject: Subject) -> (&'static str, Option<&'static str>) {
    (reason.as_str(), keys::behind(reason, subject))
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

/// The explanation's rows: every candidate, import, scoped rule and skill;
/// with the policy the snapshot was built under, each reason names the key
/// behind it and the layer that set it.
pub fn explanation(s: &Snapshot, policy: Option<&Policy>) -> Explanation {
    let roots = Roots {
        home: s.home.as_deref(),
        repo: &s.repo_root,
    };
    let abs = |p: &Path| p.to_string_lossy().into_owned();
    let mut rows: Vec<ExplainRow> = Vec::new();
    for c in &s.considered {
        let mut reason = None;
        let (status, why) = match &c.status {
            Status::Absent => ("absent", String::new()),
            Status::Included => ("included", String::new()),
            Status::Truncated => {
                let b = s.instruction_files.iter().find(|b| b.path == c.path);
                let why = b.map_or(String::new(), |b| {
                    let cause = match (b.file_limit_cut, b.budget_cut, b.char_limit_cut) {
                        _ if b.share_cut => "the repository's share of the prompt",
                        (true, true, _) => "file limit and budget",
                        (true, false, _) => "file limit",
                        (false, false, true) => "character limit",
                        (false, true, true) => "character limit and budget",
                        _ => "budget",
                    };
                    format!("{} of {} bytes ({cause})", b.included_bytes, b.bytes)
                });
                ("truncated", why)
            }
            Status::Deduped(same) => (
                "deduped",
                format!("same text as {}", roots.shown(same, None)),
            ),
            Status::SameFile(same) => (
                "deduped",
                format!("same file as {}", roots.shown(same, None)),
            ),
            Status::Skipped(r) => {
                reason = Some(reason_of(*r, Subject::InstructionFile));
                ("skipped", why(*r, Subject::InstructionFile, policy))
            }
            Status::NotPicked(winner) => (
                "passed",
                format!("{} took this place", roots.shown(winner, Some(c.origin))),
            ),
            _ => ("unknown", String::new()),
        };
        let mut row = ExplainRow::new(
            status,
            c.origin.as_str(),
            abs(&c.path),
            roots.shown(&c.path, Some(c.origin)),
            why,
        );
        if let Some((word, key)) = reason {
            row = row.with_reason(word, key);
        }
        rows.push(row);
    }
    // Imports, each under the file that wrote it, indented by depth.
    for i in &s.imports {
        let status = match i.reason {
            None => "imported",
            Some(_) => "not imported",
        };
        let target = i.path.as_deref().map_or_else(
            || format!("@{}", terminal_safe(&i.spec)),
            |p| roots.shown(p, None),
        );
        let why_text = match i.reason {
            None => format!(
                "{}@{} in {} ({} bytes)",
                "  ".repeat(i.depth),
                terminal_safe(&i.spec),
                roots.shown(&i.from, None),
                i.bytes
            ),
            Some(r) => format!(
                "{}@{} in {}: {}",
                "  ".repeat(i.depth),
                terminal_safe(&i.spec),
                roots.shown(&i.from, None),
                why(r, Subject::Import, policy)
            ),
        };
        let path = i.path.as_deref().map_or_else(|| i.spec.clone(), abs);
        let mut row = ExplainRow::new(status, "import", path, target, why_text);
        if let Some(r) = i.reason {
            let (word, key) = reason_of(r, Subject::Import);
            row = row.with_reason(word, key);
        }
        rows.push(row);
    }
    for r in &s.scoped_rules {
        let globs: Vec<String> = r
            .globs
            .iter()
            .map(|g| terminal_safe(g).into_owned())
            .collect();
        rows.push(ExplainRow::new(
            "scoped",
            r.origin.as_str(),
            abs(&r.path),
            roots.shown(&r.path, Some(r.origin)),
            match &r.misread {
                Some(m) => format!("loaded on no path: {}", terminal_safe(m)),
                None => format!("loaded on access to {}", globs.join(", ")),
            },
        ));
    }
    // Each rule's mode, and which frontmatter key gave it.
    for r in &s.rules {
        rows.push(
            ExplainRow::new(
                format!("rule {}", r.mode.as_str()),
                r.origin.as_str(),
                abs(&r.path),
                roots.shown(&r.path, Some(r.origin)),
                match &r.replaced_by {
                    None => format!("{}: {}", terminal_safe(&r.name), terminal_safe(&r.why)),
                    Some(by) => format!(
                        "{}: {}; replaced by {} (one per name)",
                        terminal_safe(&r.name),
                        terminal_safe(&r.why),
                        roots.shown(by, None)
                    ),
                },
            )
            .with_key(if r.replaced_by.is_some() {
                lisa_context::policy::keys::RULES.one_per_name
            } else {
                lisa_context::policy::keys::RULES.files
            }),
        );
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
        rows.push(ExplainRow::new(
            format!("skill {}", terminal_safe(&k.name)),
            k.origin.as_str(),
            abs(&k.path),
            roots.shown(&k.path, Some(k.origin)),
            why,
        ));
    }
    for sh in &s.shadowed_project_skills {
        rows.push(ExplainRow::new(
            "shadowed",
            "project",
            abs(&sh.path),
            roots.shown(&sh.path, Some(Origin::Project)),
            format!(
                "{} is claimed by {}{}",
                terminal_safe(&sh.name),
                roots.shown(&sh.shadowed_by, None),
                looks_like(sh)
            ),
        ));
    }
    for r in &s.rejected_skills {
        let (word, key) = reason_of(r.reason, Subject::Skill);
        rows.push(
            ExplainRow::new(
                "rejected",
                "skill",
                abs(&r.path),
                roots.shown(&r.path, None),
                why(r.reason, Subject::Skill, policy),
            )
            .with_reason(word, key),
        );
    }
    Explanation::new(s, rows)
}

/// Renders the explanation table: paths relative to the root their origin
/// names (see the header for the roots), no trailing blanks.
pub fn table(s: &Snapshot, policy: Option<&Policy>) -> String {
    let explained = explanation(s, policy);
    let roots = Roots {
        home: s.home.as_deref(),
        repo: &s.repo_root,
    };
    let rows: Vec<[String; 4]> = explained
        .rows
        .iter()
        .map(|r| {
            [
                r.status.clone(),
                r.origin.clone(),
                r.shown.clone(),
                r.why.clone(),
            ]
        })
        .collect();
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
        "repository root: {}\nhome: {}\ncwd: {}\nbudget: {} of {} bytes used{}\n\
         project share of the prompt: {} of {} bytes used{}\nfingerprint: {}\n",
        shown(&s.repo_root),
        s.home
            .as_deref()
            .map_or_else(|| "(none)".to_string(), shown),
        shown(&s.cwd),
        s.budget.used,
        s.budget.limit,
        if s.budget.exhausted {
            " (exhausted)"
        } else {
            ""
        },
        s.project_share.used,
        s.project_share.limit,
        if s.project_share.exhausted {
            " (exhausted)"
        } else {
            ""
        },
        s.fingerprint
    );
    let line = |out: &mut String, cells: [&str; 4]| {
        let text = format!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(&mut out, header);
    for r in &rows {
        line(&mut out, [&r[0], &r[1], &r[2], &r[3]]);
    }
    for h in &s.hidden_text {
        let _ = writeln!(
            out,
            "hidden text in {}: {} character(s), {} HTML comment(s) ({})",
            roots.shown(&h.path, None),
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
            roots.shown(&w.path, None),
            terminal_safe(&w.message)
        );
    }
    out.trim_end().to_string() + "\n"
}

/// What a shadowed skill's row adds when its name only looks like its
/// winner's: the winner's name, escaped.
fn looks_like(sh: &lisa_context::snapshot::Shadowed) -> String {
    sh.looks_like.as_deref().map_or(String::new(), |name| {
        format!(
            "; its name looks like `{}`, and names that look alike are one",
            terminal_safe(name)
        )
    })
}

/// `skill list`: the skills that won their names, then those shadowed and
/// refused, paths relative to their root; no trailing blanks.
pub fn skill_table(s: &Snapshot, list: &lisa_context::protocol::SkillList) -> String {
    let roots = Roots {
        home: s.home.as_deref(),
        repo: &s.repo_root,
    };
    let mut rows: Vec<[String; 4]> = Vec::new();
    for k in &list.skills {
        let description = terminal_safe(&k.description)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let listed = if k.listed { "" } else { " (not listed: cap)" };
        rows.push([
            terminal_safe(&k.name).into_owned(),
            k.origin.as_str().to_string(),
            roots.shown(&k.path, Some(k.origin)),
            format!("{description}{listed}"),
        ]);
    }
    let header = ["NAME", "ORIGIN", "PATH", "DESCRIPTION"];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str("no skill for this directory\n");
    } else {
        for cells in std::iter::once(header.map(str::to_string)).chain(rows) {
            let text = format!(
                "{:<w0$}  {:<w1$}  {:<w2$}  {}",
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2]
            );
            let _ = writeln!(out, "{}", text.trim_end());
        }
    }
    for sh in &list.shadowed {
        let _ = writeln!(
            out,
            "shadowed: {} at {} (claimed by {}{})",
            terminal_safe(&sh.name),
            roots.shown(&sh.path, None),
            shown(&sh.shadowed_by),
            looks_like(sh)
        );
    }
    for r in &list.rejected {
        let _ = writeln!(
            out,
            "refused: {} ({})",
            roots.shown(&r.path, None),
            r.reason.as_str()
        );
    }
    out
}

/// `survey`: a row per policy, then the problems; paths relative to the
/// repository root the first policy found.
pub fn survey_table(s: &lisa_context::protocol::Survey) -> String {
    let root = s.policies.first().map(|p| Path::new(&p.repo_root));
    let rel = |p: &str| -> String {
        let path = Path::new(p);
        let shown_path = root.and_then(|r| path.strip_prefix(r).ok()).unwrap_or(path);
        shown(shown_path)
    };
    let header = ["POLICY", "FILES", "SKILLS", "RULES", "BUDGET", "READS"];
    let rows: Vec<[String; 6]> = s
        .policies
        .iter()
        .map(|p| {
            // The rules by mode: "2 always, 1 listed", or "-".
            let mut by_mode: Vec<(&str, usize)> = Vec::new();
            for r in &p.rules {
                match by_mode.iter_mut().find(|(m, _)| *m == r.mode) {
                    Some((_, n)) => *n += 1,
                    None => by_mode.push((&r.mode, 1)),
                }
            }
            let rules = if by_mode.is_empty() {
                "-".to_string()
            } else {
                by_mode
                    .iter()
                    .map(|(m, n)| format!("{n} {m}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            [
                p.name.clone(),
                p.instruction_files.len().to_string(),
                p.skills.len().to_string(),
                rules,
                format!("{}/{}", p.budget_used, p.budget_limit),
                p.instruction_files
                    .iter()
                    .map(|f| rel(f))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "cwd: {}", shown(Path::new(&s.cwd)));
    // The other folders `--scope repo` surveyed (their problems are below;
    // the table is the cwd's).
    if let Some(others) = s.folders.get(1..).filter(|o| !o.is_empty()) {
        let names: Vec<String> = others.iter().map(|f| rel(f)).collect();
        let _ = writeln!(
            out,
            "also surveyed: {} folder(s) of the repository: {}",
            names.len(),
            names.join(", ")
        );
    }
    out.push('\n');
    for cells in std::iter::once(header.map(str::to_string)).chain(rows) {
        let text = format!(
            "{:<w0$}  {:>w1$}  {:>w2$}  {:<w3$}  {:<w4$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4]
        );
        let _ = writeln!(out, "{}", text.trim_end());
    }
    if s.problems.is_empty() {
        out.push_str("\nno problems found\n");
    } else {
        let _ = writeln!(out, "\n{} problem(s):", s.problems.len());
        for p in &s.problems {
            let _ = writeln!(
                out,
                "{} {} ({}): {}",
                p.kind,
                rel(&p.path),
                p.policies.join(", "),
                terminal_safe(&p.message)
            );
        }
    }
    out
}
