//! How much memory a cached build holds, roughly.

use std::mem::size_of;
use std::path::PathBuf;

use crate::skills::{Frontmatter, Skill};
use crate::snapshot::Built;

/// What one skill record holds, its own size included.
pub(super) fn skill_bytes(k: &Skill) -> usize {
    let path = |p: &PathBuf| p.capacity();
    let fm = |f: &Frontmatter| {
        f.name.capacity()
            + f.description.capacity()
            + f.license.as_ref().map_or(0, String::capacity)
            + f.compatibility.as_ref().map_or(0, String::capacity)
            + f.allowed_tools.as_ref().map_or(0, String::capacity)
            + f.version.as_ref().map_or(0, String::capacity)
            + f.tags
                .iter()
                .map(|t| t.capacity() + size_of::<String>())
                .sum::<usize>()
            + f.metadata
                .iter()
                .map(|(k, v)| k.capacity() + v.capacity() + 64)
                .sum::<usize>()
            + f.extra.keys().map(|k| k.capacity() + 128).sum::<usize>()
    };
    size_of::<Skill>()
        + k.name.capacity()
        + k.description.capacity()
        + k.source.capacity()
        + k.root.capacity()
        + path(&k.path)
        + path(&k.rel)
        + fm(&k.frontmatter)
}

/// An estimate of the heap bytes a build holds (texts, paths, trace), for
/// `Loader::cached_bytes`; its instruction texts, skills and trace entries
/// left out, since the cache holds each of them once for all its builds and
/// weighs them there (a pointer per skill and per entry stays).
pub(super) fn estimate_bytes(built: &Built) -> usize {
    let path = |p: &PathBuf| p.capacity();
    let s = &built.snapshot;
    size_of::<Built>()
        + s.prompt.capacity()
        + s.fingerprint.capacity()
        + path(&s.repo_root)
        + path(&s.cwd)
        + s.instruction_files
            .iter()
            .map(|b| size_of_val(b) + path(&b.path))
            .sum::<usize>()
        + s.skills.len() * size_of::<std::sync::Arc<Skill>>()
        + s.deduped
            .iter()
            .map(|d| size_of_val(d) + path(&d.path) + path(&d.same_as))
            .sum::<usize>()
        + s.skipped
            .iter()
            .map(|d| size_of_val(d) + path(&d.path))
            .sum::<usize>()
        + s.rejected_skills
            .iter()
            .map(|d| size_of_val(d) + path(&d.path))
            .sum::<usize>()
        + s.shadowed_project_skills
            .iter()
            .map(|d| {
                size_of_val(d)
                    + d.name.capacity()
                    + d.looks_like.as_ref().map_or(0, String::capacity)
                    + path(&d.path)
                    + path(&d.shadowed_by)
            })
            .sum::<usize>()
        + s.scoped_rules
            .iter()
            .map(|r| {
                size_of_val(r)
                    + path(&r.path)
                    + path(&r.rel)
                    + r.misread.as_ref().map_or(0, String::capacity)
                    + r.globs.iter().map(|g| g.capacity() + size_of::<String>()).sum::<usize>()
            })
            .sum::<usize>()
        + s.rules
            .iter()
            .map(|r| {
                size_of_val(r)
                    + path(&r.path)
                    + r.name.capacity()
                    + r.why.capacity()
                    + r.description.as_ref().map_or(0, String::capacity)
                    + r.misread.as_ref().map_or(0, String::capacity)
                    + r.globs.iter().map(|g| g.capacity() + size_of::<String>()).sum::<usize>()
            })
            .sum::<usize>()
        // A compiled glob's automaton, roughly.
        + s.rule_matcher.globs() * 1024
        + s.considered
            .iter()
            .map(|c| size_of_val(c) + path(&c.path) + 32)
            .sum::<usize>()
        + built
            .trace
            .entries
            .len()
            * size_of::<std::sync::Arc<crate::trace::TraceEntry>>()
}
