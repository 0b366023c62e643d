//! `survey`: every shipped policy side by side, over the repository's
//! folders or one cwd, and the gate a CI job runs.

use std::collections::BTreeSet;
use std::path::Path;

use lisa_context::Loader;
use lisa_context::protocol::{Baseline, SURVEY_PROBLEM_KINDS, Survey};

use crate::cli::args::{Cli, Place, SurveyFormat, SurveyScope};
use crate::cli::context::{At, FAILED, OK, absolute, encode, write_out};
use crate::cli::explain;

/// What decides the survey's scope and its exit code.
pub(in crate::cli) struct Gate<'a> {
    /// `--scope`.
    pub(in crate::cli) scope: SurveyScope,
    /// `--with-home`.
    pub(in crate::cli) with_home: bool,
    /// `--max-folders`.
    pub(in crate::cli) max_folders: usize,
    /// `--deny`: kinds, or `warnings`.
    pub(in crate::cli) deny: &'a [String],
    /// `--allow`: kinds.
    pub(in crate::cli) allow: &'a [String],
    /// `--baseline`.
    pub(in crate::cli) baseline: Option<&'a Path>,
    /// `--write-baseline`.
    pub(in crate::cli) write_baseline: Option<&'a Path>,
}

/// Prints the survey of `policies` (default: every shipped one) as a table,
/// JSON, SARIF or GitHub annotations; with `--deny`, fails (1) when a
/// problem it denies, not allowed and not in the baseline, was found.
pub(in crate::cli) fn run(
    cli: &Cli,
    place: &Place,
    policies: &[String],
    with_home_policy: bool,
    format: SurveyFormat,
    gate: &Gate<'_>,
) -> miette::Result<u8> {
    let at = At::of(place)?;
    // A baseline that cannot be read is a usage error, found before the
    // survey's work.
    let known = match gate.baseline {
        Some(file) => Some(Baseline::read(&absolute(file)).map_err(|e| miette::miette!("{e}"))?),
        None => None,
    };
    let names: Vec<String> = if policies.is_empty() {
        lisa_context::policy::SHIPPED_NAMES
            .iter()
            .map(|n| (*n).to_string())
            .collect()
    } else {
        policies.to_vec()
    };
    // The home is left out unless asked for (`--with-home`, a home named
    // with `--home`, or its policy with `--with-home-policy`): no
    // environment, so no home is found.
    let home = gate.with_home || cli.home.is_some() || with_home_policy;
    // The user's `[survey]` allowances: `--policy FILE`, and the home's
    // policy when the home is included (never the repository's: it sets
    // no policy).
    let allowances = {
        let b = crate::cli::context::layers(
            cli.home.as_deref(),
            cli.policy.as_deref(),
            cli.no_home_policy || !home,
        );
        let b = if home { b } else { b.env(|_| None) };
        b.resolve()?.0
    };
    // One ordinary build per policy, side by side.
    let builders = names.iter().map(|name| {
        let mut b = Loader::builder().shipped_policy(name.clone());
        if home {
            b = b.home_policy(with_home_policy);
            if let Some(dir) = &cli.home {
                b = b.home(absolute(dir));
            }
        } else {
            b = b.home_policy(false).env(|_| None);
        }
        (name.clone(), b)
    });
    let scope = match gate.scope {
        SurveyScope::Repo => lisa_context::Scope::Repo,
        SurveyScope::Cwd => lisa_context::Scope::Cwd,
    };
    let survey = match Survey::run_scoped(builders, &at.cwd, at.root(), scope, gate.max_folders) {
        Ok(s) => s,
        Err(lisa_context::SurveyError::Bootstrap { source, .. }) => {
            return Err(source.into());
        }
        Err(lisa_context::SurveyError::Snapshot { source, .. }) => {
            return Err(source.into());
        }
        Err(e) => return Err(miette::miette!("{e}")),
    };
    let written = match gate.write_baseline {
        Some(file) => {
            let b = Baseline::of(&survey);
            b.write(&absolute(file))
                .map_err(|e| miette::miette!("{e}"))?;
            Some(b)
        }
        None => None,
    };
    let text = match format {
        SurveyFormat::Text => explain::survey_table(&survey),
        SurveyFormat::Json => encode(&survey, "the survey")?,
        SurveyFormat::Sarif => encode(&survey.sarif(), "the survey")?,
        SurveyFormat::Github => survey.github_annotations(),
    };
    write_out(text.as_bytes())?;
    let mut baseline: BTreeSet<String> = BTreeSet::new();
    for b in known.iter().chain(written.iter()) {
        baseline.extend(b.fingerprints().into_iter().map(str::to_string));
    }
    Ok(if fails(&survey, gate, &baseline, &allowances) {
        FAILED
    } else {
        OK
    })
}

/// Whether a problem of `survey` fails the gate: one whose kind `--deny`
/// names, or of level warning under `--deny warnings` (a kind not declared
/// counts as a warning), unless `--allow` names its kind, the policy's
/// `[[survey.allow]]` its kind at its path, or the baseline knows its
/// fingerprint.
fn fails(
    survey: &Survey,
    gate: &Gate<'_>,
    baseline: &BTreeSet<String>,
    allowances: &lisa_context::policy::Policy,
) -> bool {
    let warnings = gate.deny.iter().any(|d| d == "warnings");
    let root = survey.policies.first().map(|p| p.repo_root.as_str());
    survey.problems.iter().any(|p| {
        let relative = root
            .and_then(|r| p.path.strip_prefix(r))
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(&p.path);
        if allowances.survey_allows(&p.kind, relative) {
            return false;
        }
        let level_warning = SURVEY_PROBLEM_KINDS
            .iter()
            .find(|k| k.kind == p.kind)
            .is_none_or(|k| k.level != "note");
        let denied = gate.deny.contains(&p.kind) || (warnings && level_warning);
        denied && !gate.allow.contains(&p.kind) && !baseline.contains(&p.fingerprint)
    })
}
