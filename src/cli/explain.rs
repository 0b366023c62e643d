//! `lisa-context explain`: every candidate, what happened to it, and why.

use std::fmt::Write as _;

use lisa_context::{Snapshot, Status};

/// Renders the explanation table.
pub fn table(s: &Snapshot) -> String {
    let mut rows: Vec<[String; 4]> = Vec::new();
    for c in &s.considered {
        let (status, why) = match &c.status {
            Status::Absent => ("absent", String::new()),
            Status::Included => ("included", String::new()),
            Status::Truncated => {
                let b = s.instruction_files.iter().find(|b| b.path == c.path);
                let why = b.map_or(String::new(), |b| {
                    format!(
                        "{} of {} bytes (budget or read cap)",
                        b.included_bytes, b.bytes
                    )
                });
                ("truncated", why)
            }
            Status::Deduped(same) => ("deduped", format!("same text as {}", same.display())),
            Status::SameFile(same) => ("deduped", format!("same file as {}", same.display())),
            Status::Skipped(r) => ("skipped", r.as_str().to_string()),
            _ => ("unknown", String::new()),
        };
        rows.push([
            status.to_string(),
            c.origin.as_str().to_string(),
            c.path.display().to_string(),
            why,
        ]);
    }
    for k in &s.skills {
        let why = match (k.listed, k.executable) {
            (false, _) => "won its name; not listed (project skill cap)".to_string(),
            (true, true) => format!("rank {} from {}; executable", k.rank, k.source),
            (true, false) => format!("rank {} from {}", k.rank, k.source),
        };
        rows.push([
            format!("skill {}", k.name),
            k.origin.as_str().to_string(),
            k.path.display().to_string(),
            why,
        ]);
    }
    for sh in &s.shadowed_project_skills {
        rows.push([
            "shadowed".into(),
            "project".into(),
            sh.path.display().to_string(),
            format!("{} is claimed by {}", sh.name, sh.shadowed_by.display()),
        ]);
    }
    for r in &s.rejected_skills {
        rows.push([
            "rejected".into(),
            "skill".into(),
            r.path.display().to_string(),
            r.reason.as_str().to_string(),
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
        s.repo_root.display(),
        s.cwd.display(),
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
            h.path.display(),
            h.report.characters,
            h.report.html_comments,
            h.report.kinds.join(", ")
        );
    }
    out.trim_end().to_string() + "\n"
}
