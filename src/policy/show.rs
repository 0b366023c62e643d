//! Printing the effective policy, optionally saying which layer set each value.

use serde::Serialize;

use super::{Instructions, Policy, Roots, Skills, Templates, Trust, validate::SUPPORTED_VERSION};

#[derive(Serialize)]
struct Doc<'a> {
    version: i64,
    roots: &'a Roots,
    instructions: &'a Instructions,
    skills: &'a Skills,
    trust: &'a Trust,
    templates: &'a Templates,
}

fn doc(policy: &Policy) -> String {
    let d = Doc {
        version: SUPPORTED_VERSION,
        roots: &policy.roots,
        instructions: &policy.instructions,
        skills: &policy.skills,
        trust: &policy.trust,
        templates: &policy.templates,
    };
    toml::to_string(&d).unwrap_or_else(|e| format!("# cannot print the policy: {e}\n"))
}

/// The effective policy as TOML.
pub(super) fn plain(policy: &Policy) -> String {
    doc(policy)
}

/// The effective policy as TOML, each key followed by `# <layer>`.
pub(super) fn annotated(policy: &Policy) -> String {
    let text = doc(policy);
    let mut out = String::new();
    out.push_str("# Effective lisa-context policy. Layers, lowest first:\n");
    for (layer, name) in policy.layers() {
        out.push_str(&format!("#   {:<13} {}\n", layer.as_str(), name));
    }
    out.push_str("# Each value is followed by the layer that set it.\n\n");
    let mut table = String::new();
    // While inside a value that spans lines: the text that ends it.
    let mut until: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(end) = until {
            out.push_str(line);
            out.push('\n');
            let closes = match end {
                "]" => trimmed.starts_with(']'),
                quote => line.contains(quote),
            };
            if closes {
                until = None;
            }
            continue;
        }
        if let Some(h) = trimmed
            .strip_prefix("[[")
            .and_then(|h| h.strip_suffix("]]"))
        {
            table = h.to_string();
            let origin = policy.origin(&table).map_or("?", |l| l.as_str());
            out.push_str(&format!("{line}  # {origin}\n"));
            continue;
        }
        if let Some(h) = trimmed.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            table = h.to_string();
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let (key, value) = match trimmed.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => ("", ""),
        };
        let Some(layer) = policy
            .origin(&format!("{table}.{key}"))
            .filter(|_| !key.is_empty())
        else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        until = open_value(value);
        if until.is_some() {
            // A comment cannot follow a value that continues on later lines.
            out.push_str(&format!("# {}\n{line}\n", layer.as_str()));
        } else {
            out.push_str(&format!("{line}  # {}\n", layer.as_str()));
        }
    }
    out
}

/// For a value that does not end on its first line, the text that ends it.
fn open_value(value: &str) -> Option<&'static str> {
    for quote in ["\"\"\"", "'''"] {
        if let Some(rest) = value.strip_prefix(quote) {
            return (!rest.contains(quote)).then_some(quote);
        }
    }
    (value.starts_with('[') && value.matches('[').count() > value.matches(']').count())
        .then_some("]")
}
