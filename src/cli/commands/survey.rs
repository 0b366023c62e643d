//! `survey`: every shipped policy side by side for one cwd.

use lisa_context::Loader;

use crate::cli::args::{Cli, Deny, Place, SurveyFormat};
use crate::cli::context::{At, FAILED, OK, absolute, encode, write_out};
use crate::cli::explain;

/// Prints the survey of `policies` (default: every shipped one) as a table,
/// JSON or SARIF; with `--deny warnings`, fails when a problem was found.
pub(in crate::cli) fn run(
    cli: &Cli,
    place: &Place,
    policies: &[String],
    with_home_policy: bool,
    format: SurveyFormat,
    deny: Option<Deny>,
) -> miette::Result<u8> {
    let at = At::of(place)?;
    let names: Vec<String> = if policies.is_empty() {
        lisa_context::policy::SHIPPED_NAMES
            .iter()
            .map(|n| (*n).to_string())
            .collect()
    } else {
        policies.to_vec()
    };
    // One ordinary build per policy, side by side.
    let builders = names.iter().map(|name| {
        let mut b = Loader::builder()
            .shipped_policy(name.clone())
            .home_policy(with_home_policy);
        if let Some(home) = &cli.home {
            b = b.home(absolute(home));
        }
        (name.clone(), b)
    });
    let survey = match lisa_context::protocol::Survey::run(builders, &at.cwd, at.root()) {
        Ok(s) => s,
        Err(lisa_context::SurveyError::Bootstrap { source, .. }) => {
            return Err(source.into());
        }
        Err(lisa_context::SurveyError::Snapshot { source, .. }) => {
            return Err(source.into());
        }
        Err(e) => return Err(miette::miette!("{e}")),
    };
    let text = match format {
        SurveyFormat::Text => explain::survey_table(&survey),
        SurveyFormat::Json => encode(&survey, "the survey")?,
        SurveyFormat::Sarif => encode(&survey.sarif(), "the survey")?,
    };
    write_out(text.as_bytes())?;
    // The gate: a problem at or above its kind's level `warning` (a kind
    // not declared counts as one).
    let fails = survey.problems.iter().any(|p| {
        lisa_context::protocol::SURVEY_PROBLEM_KINDS
            .iter()
            .find(|k| k.kind == p.kind)
            .is_none_or(|k| k.level != "note")
    });
    Ok(if deny.is_some() && fails { FAILED } else { OK })
}
