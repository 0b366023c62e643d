//! How failures are shown: a first line the way cargo starts its errors
//! (`error[code]: message`), then miette's labelled details, in colour only
//! when asked for or when stderr is a terminal (and `NO_COLOR` is unset).

use std::io::{IsTerminal, Write};

use clap::ValueEnum;
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};

/// When to colour diagnostics.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Color {
    /// When stderr is a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Color {
    fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::io::stderr().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// The report as text: `error[code]: message`, then the details miette
/// draws (labels on the source, help), without repeating the headline; each
/// related problem (a policy file's several mistakes) the same way after it,
/// so every problem reads `error[code]: message` once, in a terminal or a
/// pipe alike.
pub fn render(report: &dyn Diagnostic, color: Color) -> String {
    let mut out = render_one(&Alone(report), color);
    if let Some(related) = report.related() {
        for r in related {
            out.push('\n');
            out.push_str(&render(r, color));
        }
    }
    out
}

/// One diagnostic, its related ones left out.
fn render_one(report: &dyn Diagnostic, color: Color) -> String {
    let word = match report.severity() {
        Some(miette::Severity::Warning) => "warning",
        _ => "error",
    };
    let head = match report.code() {
        Some(code) => format!("{word}[{code}]: {report}"),
        None => format!("{word}: {report}"),
    };
    let theme = if color.enabled() {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let mut drawn = String::new();
    if GraphicalReportHandler::new_themed(theme)
        .with_width(usize::MAX)
        .render_report(&mut drawn, report)
        .is_err()
    {
        return format!("{head}\n");
    }
    // miette opens with the code and the headline (`× message`, `⚠ message`
    // for a warning): both are in `head` already.
    let mut lines = drawn.lines().peekable();
    let mut skipped_headline = false;
    let mut rest = Vec::new();
    for line in lines.by_ref() {
        if !skipped_headline {
            // In colour the headline starts with escape sequences: look
            // past them for the mark.
            if plain(line).trim_start().starts_with(['×', '⚠']) {
                skipped_headline = true;
            }
            continue;
        }
        rest.push(line);
    }
    if !skipped_headline {
        rest = drawn.lines().collect();
    }
    let body = rest.join("\n");
    let body = body.trim_matches('\n');
    if body.trim().is_empty() {
        format!("{head}\n")
    } else {
        format!("{head}\n{body}\n")
    }
}

/// `line` without its ANSI escape sequences (`ESC [ ... letter`), as a
/// reader sees it.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A diagnostic shown without its related diagnostics (they are rendered
/// one by one after it).
struct Alone<'a>(&'a dyn Diagnostic);

impl std::fmt::Debug for Alone<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0, f)
    }
}

impl std::fmt::Display for Alone<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.0, f)
    }
}

impl std::error::Error for Alone<'_> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl Diagnostic for Alone<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.0.code()
    }
    fn severity(&self) -> Option<miette::Severity> {
        self.0.severity()
    }
    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.0.help()
    }
    fn url<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.0.url()
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.0.source_code()
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        self.0.labels()
    }
    fn diagnostic_source(&self) -> Option<&dyn Diagnostic> {
        self.0.diagnostic_source()
    }
}

/// Writes the policy's warnings to stderr (`warning[policy::deprecated-key]`
/// and its labelled span, each once), as errors are written.
pub fn warn_policy(policy: &lisa_context::policy::Policy, color: Color, quiet: bool) {
    if quiet {
        return;
    }
    for problem in policy.deprecations() {
        emit(problem, color, None);
    }
}

/// Writes the report to stderr, ignoring a closed or full stderr: the exit
/// code still says the command failed.
pub fn emit(report: &dyn Diagnostic, color: Color, note: Option<&str>) {
    let mut text = render(report, color);
    if let Some(note) = note {
        text.push_str(&format!("note: {note}\n"));
    }
    let _ = std::io::stderr().write_all(text.as_bytes());
}
