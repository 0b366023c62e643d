//! Printing the effective policy, optionally saying which layer set each value.
//!
//! The plain form is `toml`'s serialization of the resolved sections. The
//! digest ([`Policy::digest`]) hashes the same sections serialized as JSON,
//! written straight into the hasher (no text is kept, and JSON's writer is the
//! cheaper of the two). The annotated form is that
//! same text read into a `toml_edit` document, whose values then receive their
//! layer as a comment: the document keeps the values' text as it was written,
//! so a comment can never land inside a value.

use serde::Serialize;
use toml_edit::{DocumentMut, Item, Table};

use super::{
    Fingerprint, Instructions, Policy, Roots, Rules, Skills, SurveyGate, Templates, Trust,
    validate::SUPPORTED_VERSION,
};

#[derive(Serialize)]
struct Doc<'a> {
    version: i64,
    roots: &'a Roots,
    instructions: &'a Instructions,
    skills: &'a Skills,
    trust: &'a Trust,
    rules: &'a Rules,
    fingerprint: &'a Fingerprint,
    templates: &'a Templates,
    /// Printed, not hashed: the gate's allowances change no snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    survey: Option<&'a SurveyGate>,
}

impl Policy {
    /// The digest of the policy's values and of where its named roots are.
    pub(super) fn compute_digest(&self) -> u128 {
        self.digest_from(self.values_state())
    }

    /// The digest's hasher once it has taken the policy's values.
    pub(super) fn values_state(&self) -> xxhash_rust::xxh3::Xxh3 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        hash_values(self, &mut h);
        h
    }

    /// The digest, from the hasher `h` that has taken the policy's values
    /// ([`values_state`](Self::values_state)): where the named roots are
    /// is added.
    pub(super) fn digest_from(&self, mut h: xxhash_rust::xxh3::Xxh3) -> u128 {
        for p in &self.named_paths {
            // Whether it is found, then its length and bytes: no list of
            // paths can pass for another.
            let bytes = p
                .as_deref()
                .map_or(&[][..], |p| p.as_os_str().as_encoded_bytes());
            h.update(&[u8::from(p.is_some())]);
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
        // Where the user's home is, when the policy reads by it
        // (`unmarked-levels = "to-home"` stops there, `@~/` imports start there).
        if self.instructions.unmarked_levels == super::UnmarkedLevels::ToHome
            || self.instructions.tilde_imports
        {
            let bytes = self
                .user_home
                .as_deref()
                .map_or(&[][..], |p| p.as_os_str().as_encoded_bytes());
            h.update(&[2, u8::from(self.user_home.is_some())]);
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
        h.digest128()
    }

    /// The effective policy as plain TOML.
    pub fn to_toml(&self) -> String {
        plain(self)
    }

    /// The effective policy as TOML, each value annotated with its layer.
    pub fn to_annotated_toml(&self) -> String {
        annotated(self)
    }
}

fn doc(policy: &Policy) -> Doc<'_> {
    Doc {
        version: SUPPORTED_VERSION,
        roots: &policy.roots,
        instructions: &policy.instructions,
        skills: &policy.skills,
        trust: &policy.trust,
        rules: &policy.rules,
        fingerprint: &policy.fingerprint,
        templates: &policy.templates,
        survey: None,
    }
}

/// The effective policy as TOML: each section's core keys, then its compat
/// part as a table of its own (`[instructions.compat]`).
pub(super) fn plain(policy: &Policy) -> String {
    let doc = Doc {
        survey: Some(&policy.survey),
        ..doc(policy)
    };
    match toml::to_string(&doc) {
        Ok(text) => with_compat_tables(text),
        Err(e) => format!("# cannot print the policy: {e}\n"),
    }
}

/// `text` (the sections as serialized, every key at its section's top
/// level) with each compat key moved into its section's compat table.
/// Only the printed form is shaped so: the digest hashes the values.
fn with_compat_tables(text: String) -> String {
    let Ok(mut doc) = text.parse::<DocumentMut>() else {
        return text;
    };
    for key in Policy::compat_keys() {
        let mut parts = key.split('.');
        let (Some(section), Some(compat), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Some(table) = doc.get_mut(section).and_then(Item::as_table_mut) else {
            continue;
        };
        let Some(item) = table.remove(name) else {
            continue;
        };
        let part = table
            .entry(compat)
            .or_insert_with(|| Item::Table(Table::new()));
        if let Some(part) = part.as_table_mut() {
            part.insert(name, item);
        }
    }
    doc.to_string()
}

/// Feeds the effective policy's values to `hasher`, serialized as JSON.
pub(super) fn hash_values(policy: &Policy, hasher: &mut xxhash_rust::xxh3::Xxh3) {
    /// A writer that only hashes.
    struct Hashing<'h>(&'h mut xxhash_rust::xxh3::Xxh3);
    impl std::io::Write for Hashing<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    if let Err(e) = serde_json::to_writer(Hashing(hasher), &doc(policy)) {
        // Every value has a JSON form (maps are keyed by strings); were one
        // ever refused, the TOML text still tells policies apart.
        hasher.update(e.to_string().as_bytes());
        hasher.update(plain(policy).as_bytes());
    }
}

/// The effective policy as TOML, each value followed by `# <layer>` (or, for
/// a value written over several lines, preceded by a `# <layer>` line).
pub(super) fn annotated(policy: &Policy) -> String {
    let mut out = String::new();
    out.push_str("# Effective lisa-context policy. Layers, lowest first:\n");
    let labels = labels(policy);
    for (label, (_, name)) in labels.iter().zip(policy.layers()) {
        out.push_str(&format!(
            "#   {:<13} {}\n",
            label,
            crate::vocab::unicode::terminal_safe(name)
        ));
    }
    out.push_str("# Each value is followed by the layer that set it.\n\n");
    let text = plain(policy);
    match text.parse::<DocumentMut>() {
        Ok(mut doc) => {
            annotate_table(policy, &labels, "", doc.as_table_mut());
            out.push_str(&doc.to_string());
        }
        // The plain form is always TOML; should it ever not be, it is still
        // printed, unannotated, rather than lost.
        Err(e) => {
            out.push_str(&format!("# (layers not shown: {e})\n"));
            out.push_str(&text);
        }
    }
    out
}

/// Each source's label, in [`Policy::sources`] order: its layer's word
/// (`built-in`, `home`, `command-line`); when several shipped policies
/// are laid (`--policy gemini` over `lisa`), each built-in one by its name
/// too (`built-in lisa`, `built-in gemini`), so no two read alike.
fn labels(policy: &Policy) -> Vec<String> {
    let sources = policy.sources();
    let builtins = sources
        .iter()
        .filter(|s| s.layer == super::Layer::Builtin)
        .count();
    sources
        .iter()
        .map(|s| {
            let word = s.layer.as_str();
            if s.layer != super::Layer::Builtin || builtins < 2 {
                return word.to_string();
            }
            let name = s
                .name
                .strip_prefix("<built-in policies/")
                .and_then(|n| n.strip_suffix(".toml>"))
                .unwrap_or(&s.name);
            format!("{word} {name}")
        })
        .collect()
}

/// Annotates every value of `table`, whose dotted path is `path` (empty for
/// the document's root).
fn annotate_table(policy: &Policy, labels: &[String], path: &str, table: &mut Table) {
    // The label of the source that set a key: by its index, as the
    // definition records it.
    let origin = |dotted: &str| {
        policy
            .definition(dotted)
            .and_then(|d| labels.get(d.source).cloned())
            .or_else(|| policy.origin(dotted).map(|l| l.as_str().to_string()))
    };
    for (key, item) in table.iter_mut() {
        let dotted = if path.is_empty() {
            key.get().to_string()
        } else {
            format!("{path}.{}", key.get())
        };
        match item {
            Item::Table(inner) => annotate_table(policy, labels, &dotted, inner),
            Item::ArrayOfTables(array) => {
                // The array is one value, set whole by one layer: each entry's
                // header carries that layer.
                if let Some(layer) = origin(&dotted) {
                    for entry in array.iter_mut() {
                        entry.decor_mut().set_suffix(format!("  # {layer}"));
                    }
                }
            }
            Item::Value(value) => {
                let Some(layer) = origin(&dotted) else {
                    continue;
                };
                if value.to_string().contains('\n') {
                    // A comment after a value that runs over several lines
                    // would sit far from its key: it goes on a line before.
                    let mut key = key;
                    let prefix = key
                        .leaf_decor()
                        .prefix()
                        .and_then(|p| p.as_str())
                        .unwrap_or("")
                        .to_string();
                    key.leaf_decor_mut()
                        .set_prefix(format!("{prefix}# {layer}\n"));
                } else {
                    value.decor_mut().set_suffix(format!("  # {layer}"));
                }
            }
            Item::None => {}
        }
    }
}
