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
/// draws (labels on the source, related problems, help), without repeating
/// the headline.
pub fn render(report: &dyn Diagnostic, color: Color) -> String {
    let head = match report.code() {
        Some(code) => format!("error[{code}]: {report}"),
        None => format!("error: {report}"),
    };
    let theme = if color.enabled() {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let mut drawn = String::new();
    if GraphicalReportHandler::new_themed(theme)
        .render_report(&mut drawn, report)
        .is_err()
    {
        return format!("{head}\n");
    }
    // miette opens with the code and the headline (`× message`): both are in
    // `head` already.
    let mut lines = drawn.lines().peekable();
    let mut skipped_headline = false;
    let mut rest = Vec::new();
    for line in lines.by_ref() {
        if !skipped_headline {
            if line.trim_start().starts_with('×') {
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

/// Writes the report to stderr, ignoring a closed or full stderr: the exit
/// code still says the command failed.
pub fn emit(report: &dyn Diagnostic, color: Color, note: Option<&str>) {
    let mut text = render(report, color);
    if let Some(note) = note {
        text.push_str(&format!("note: {note}\n"));
    }
    let _ = std::io::stderr().write_all(text.as_bytes());
}
