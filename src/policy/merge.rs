//! Building the effective policy from its layers: `extends` resolved, the
//! layers laid over one another in precedence order, every value checked
//! where it was set.

use std::collections::BTreeMap;
use std::sync::Arc;

use globset::GlobSetBuilder;

use super::diagnostic::{PolicyError, ProblemKind};
use super::keys::{INSTRUCTIONS, ROOTS, RULES, SKILLS, TEMPLATES};
use super::memo::Memo;
use super::schema::{
    FingerprintLayer, InstructionsLayer, ROOT_WORDS, RootsLayer, RulesLayer, SURVEY, SkillsLayer,
    SurveyGate, SurveyGateLayer, TemplatesLayer, TrustLayer,
};
use super::structure;
use super::validate::{self};

use super::effective::{Definition, Policy};
use super::effective::{named_root_paths, problems_at, root_id, state_place, tilde_path};
use super::source::{PolicySource, with_base};

impl Policy {
    /// The built-in policy alone.
    pub fn builtin() -> Result<Self, PolicyError> {
        Self::from_sources(&[PolicySource::builtin()])
    }

    /// Lays `sources` over one another in the order of their [`Layer`](super::Layer)s
    /// (built-in, then home, then command line), whatever order they are
    /// given in. Two sources of the same layer apply in the order given, the
    /// later one winning. The lowest source must define every key (the
    /// built-in policy does). An empty slice means the built-in policy alone.
    pub fn from_sources(sources: &[PolicySource]) -> Result<Self, PolicyError> {
        Self::from_sources_in(sources, &Memo::default())
    }

    /// [`from_sources`](Self::from_sources), with what `memo` keeps: a
    /// shipped policy alone is part of the binary, merged once per memo (a
    /// loader's bootstrap, shared by the loaders of a group).
    pub(crate) fn from_sources_in(
        sources: &[PolicySource],
        memo: &Memo,
    ) -> Result<Self, PolicyError> {
        if sources.is_empty() {
            return Self::from_sources_in(&[PolicySource::builtin()], memo);
        }
        if let [only] = sources
            && let Some(name) = only.shipped_name()
        {
            return memo.merged(name, || Self::merge(sources, memo));
        }
        Self::merge(sources, memo)
    }

    /// The shipped policy `name` alone (`None`: no policy of that name), its
    /// named roots found with `env` (see
    /// [`locate_named_roots`](Self::locate_named_roots)). One policy per
    /// name is kept in `memo` and handed out while `env` finds its roots
    /// where they were found: the loaders of many homes in one server share
    /// it rather than each copying and locating the same values. Found
    /// elsewhere, the policy is located again and kept in the old one's
    /// place, so at most one per shipped name is held.
    pub(crate) fn shipped_located(
        name: &str,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
        memo: &Memo,
    ) -> Option<Result<Arc<Self>, PolicyError>> {
        let &(name, _) = super::shipped::SHIPPED.iter().find(|(n, _)| *n == name)?;
        let source = PolicySource::shipped(name)?;
        Some(memo.located(name, env, || {
            Self::from_sources_in(&[source], memo).map(|mut policy| {
                policy.locate_named_roots_as_merged(env);
                Arc::new(policy)
            })
        }))
    }

    /// [`from_sources`](Self::from_sources) of a non-empty slice, merged now.
    fn merge(sources: &[PolicySource], memo: &Memo) -> Result<Self, PolicyError> {
        let mut ordered = sources.to_vec();
        // A stable sort: sources of one layer keep the order they were given in.
        ordered.sort_by_key(|s| s.layer);
        let ordered = with_base(ordered, &|s| memo.layer(s))?;
        let sources: Arc<[PolicySource]> = ordered.iter().map(|(s, _)| s.clone()).collect();

        let mut roots = RootsLayer::default();
        let mut instructions = InstructionsLayer::default();
        let mut skills = SkillsLayer::default();
        let mut trust = TrustLayer::default();
        let mut rules = RulesLayer::default();
        let mut fingerprint = FingerprintLayer::default();
        let mut templates = TemplatesLayer::default();
        let mut survey = SurveyGateLayer::default();
        // For each dotted key, the index of the source that last set it.
        let mut setters: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut deprecations = Vec::new();
        for (index, (source, parsed)) in ordered.into_iter().enumerate() {
            let mut layer = match parsed {
                Some(layer) => layer,
                None => memo.layer(&source)?,
            };
            deprecations.append(&mut layer.deprecations);
            let mut set = Vec::new();
            set.extend(roots.overlay(layer.roots));
            set.extend(instructions.overlay(layer.instructions));
            set.extend(skills.overlay(layer.skills));
            set.extend(trust.overlay(layer.trust));
            set.extend(rules.overlay(layer.rules));
            set.extend(fingerprint.overlay(layer.fingerprint));
            set.extend(templates.overlay(layer.templates));
            set.extend(survey.overlay(layer.survey));
            for key in set {
                setters.insert(key, index);
            }
        }
        let mut definitions = BTreeMap::new();
        let spans = roots
            .spans()
            .into_iter()
            .chain(instructions.spans())
            .chain(skills.spans())
            .chain(trust.spans())
            .chain(rules.spans())
            .chain(fingerprint.spans())
            .chain(templates.spans())
            .chain(survey.spans());
        for (key, span) in spans {
            if let Some((&index, source)) = setters
                .get(key)
                .and_then(|i| sources.get(*i).map(|s| (i, s)))
            {
                definitions.insert(
                    key,
                    Definition {
                        layer: source.layer,
                        source: index,
                        span,
                    },
                );
            }
        }

        // Every layer was checked alone, so the failures below can only come
        // from a lowest layer that lacks keys (the built-in policy has them
        // all) or from a bug; they are still diagnostics, each pointing at the
        // file and value that set the key concerned.
        let mut missing = Vec::new();
        let roots = roots.resolve().map_err(|m| missing.extend(m)).ok();
        let instructions = instructions.resolve().map_err(|m| missing.extend(m)).ok();
        let skills = skills.resolve().map_err(|m| missing.extend(m)).ok();
        let trust = trust.resolve().map_err(|m| missing.extend(m)).ok();
        let rules = rules.resolve().map_err(|m| missing.extend(m)).ok();
        let fingerprint = fingerprint.resolve().map_err(|m| missing.extend(m)).ok();
        let templates = templates.resolve().map_err(|m| missing.extend(m)).ok();
        // A shipped policy other than the built-in one sets no `[survey]`:
        // it allows nothing then.
        let survey = survey
            .resolve()
            .unwrap_or_else(|_| SurveyGate { allow: Vec::new() });
        let (
            Some(roots),
            Some(instructions),
            Some(skills),
            Some(trust),
            Some(rules),
            Some(fingerprint),
            Some(templates),
        ) = (
            roots,
            instructions,
            skills,
            trust,
            rules,
            fingerprint,
            templates,
        )
        else {
            // No layer set these keys, so there is no value to point at: the
            // report names the lowest layer, which should have set them.
            let problems = missing
                .iter()
                .map(|k| (None, format!("no layer sets `{k}`")))
                .collect();
            let at = (ProblemKind::MissingField, "in this layer");
            return Err(problems_at(&sources, &definitions, "", at, problems).into());
        };
        let name_rule = memo.name_rule(&skills.name_rule).map_err(|e| {
            let message = format!("`{}` does not compile: {e}", SKILLS.name_rule);
            problems_at(
                &sources,
                &definitions,
                SKILLS.name_rule,
                (ProblemKind::InvalidRegex, "invalid regex"),
                vec![(None, message)],
            )
        })?;
        // A list of globs compiled into one set, a bad glob reported at its
        // value in the file that set it.
        let glob_set = |key: &'static str, list: &super::schema::Names| {
            let invalid = |span, message| {
                problems_at(
                    &sources,
                    &definitions,
                    key,
                    (ProblemKind::InvalidGlob, "invalid glob"),
                    vec![(span, message)],
                )
            };
            let mut globs = GlobSetBuilder::new();
            for g in list {
                let glob = validate::compile_glob(g.get_ref()).map_err(|e| {
                    invalid(Some(g.span()), format!("invalid glob in `{key}`: {e}"))
                })?;
                globs.add(glob);
            }
            globs
                .build()
                .map_err(|e| invalid(None, format!("`{key}` does not compile: {e}")))
        };
        let exclude_levels = glob_set(INSTRUCTIONS.exclude_levels, &instructions.exclude_levels)?;
        let rule_files = glob_set(RULES.files, &rules.files)?;
        let safe_directories = if roots.safe_directories.iter().any(|g| g.get_ref() == "*") {
            None
        } else {
            Some(glob_set(ROOTS.safe_directories, &roots.safe_directories)?)
        };

        // Every skill source names a root this policy has.
        let unknown: Vec<_> = skills
            .sources
            .iter()
            .filter(|s| root_id(&roots, s.root.get_ref()).is_none())
            .map(|s| {
                let known: Vec<&str> = ROOT_WORDS
                    .iter()
                    .copied()
                    .chain(roots.named.iter().map(|n| n.name.get_ref().as_str()))
                    .collect();
                let hint = structure::closest(s.root.get_ref(), &known)
                    .map(|k| format!(" (did you mean `{k}`?)"))
                    .unwrap_or_default();
                (
                    Some(s.root.span()),
                    format!(
                        "skill source root `{}` is not a root of this policy: {}{hint}",
                        s.root.get_ref(),
                        known.join(", ")
                    ),
                )
            })
            .collect();
        if !unknown.is_empty() {
            let at = (ProblemKind::InvalidValue, "unknown root");
            return Err(problems_at(&sources, &definitions, SKILLS.sources, at, unknown).into());
        }

        // The forged-line prefix must show as something no boundary starts
        // with. Blamed on whichever of the two values was set last: that
        // layer brought them together.
        if let Some((keys, message)) = validate::forged_prefix_clash(&templates) {
            let key = keys
                .into_iter()
                .max_by_key(|k| definitions.get(k).map(|d| d.source))
                .unwrap_or(TEMPLATES.forged_line_prefix);
            let at = (ProblemKind::InvalidValue, "set here");
            return Err(problems_at(&sources, &definitions, key, at, vec![(None, message)]).into());
        }

        // Each `[[survey.allow]]` path is a glob that compiles.
        for entry in &survey.allow {
            if let Err(e) = validate::compile_glob(entry.path.get_ref()) {
                let message = format!("invalid glob in `{}`: {}", SURVEY.allow, e.kind());
                let mut invalid = problems_at(
                    &sources,
                    &definitions,
                    SURVEY.allow,
                    (ProblemKind::InvalidGlob, "invalid glob"),
                    vec![(Some(entry.path.span()), message)],
                );
                for p in &mut invalid.problems {
                    p.help = Some(validate::glob_help(e.kind()));
                }
                return Err(invalid.into());
            }
        }

        let named_paths = named_root_paths(&roots, &|name| std::env::var_os(name));
        let tilde_path = tilde_path(&|name| std::env::var_os(name));
        let state_place = state_place(&roots, &|name| std::env::var_os(name));
        let mut policy = Self {
            roots,
            instructions,
            skills,
            trust,
            rules,
            fingerprint,
            templates,
            survey,
            definitions,
            layers: sources.iter().map(|s| (s.layer, s.name.clone())).collect(),
            sources,
            name_rule,
            exclude_levels,
            rule_files,
            safe_directories,
            named_paths,
            tilde_path,
            state_place,
            digest: 0,
            merged_values: None,
            deprecations,
            globs: Arc::default(),
        };
        let values = policy.values_state();
        policy.digest = policy.digest_from(values.clone());
        policy.merged_values = Some(Arc::new(super::effective::MergedValues(values)));
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::*;

    const HOME: &str = "version = 1\n[instructions]\nbudget-bytes = 4096\nskip-blank = false\n";
    const CLI: &str = "version = 1\n[instructions]\nbudget-bytes = 2048\n";

    fn home() -> PolicySource {
        PolicySource::from_text(Layer::Home, "home.toml", HOME)
    }

    fn cli() -> PolicySource {
        PolicySource::from_text(Layer::CommandLine, "cli.toml", CLI)
    }

    #[test]
    fn a_merged_policy_located_again_has_the_digest_of_a_whole_hash() {
        // Every shipped policy, its named roots found under two homes: the
        // digest that reuses the merge's hash of the values is the one
        // hashing everything again gives.
        for name in SHIPPED_NAMES {
            let source = PolicySource::shipped(name).unwrap();
            let merged = Policy::from_sources(&[source, home()]).unwrap();
            for dir in ["/home/a", "/home/b"] {
                let env = |k: &str| (k == "HOME").then(|| std::ffi::OsString::from(dir));
                let mut fast = merged.clone();
                fast.locate_named_roots_as_merged(&env);
                let mut whole = merged.clone();
                whole.locate_named_roots(&env);
                assert_eq!(fast.digest(), whole.digest(), "{name} {dir}");
                assert_eq!(fast.digest(), fast.compute_digest(), "{name} {dir}");
            }
        }
        // A policy whose public values changed after the merge is no longer
        // "as merged" to the caller that changed it: the whole hash sees it.
        let mut changed = Policy::from_sources(&[PolicySource::builtin()]).unwrap();
        let before = changed.digest();
        changed.instructions.budget_bytes += 1;
        changed.locate_named_roots(&|_| None);
        assert_ne!(changed.digest(), before);
    }

    #[test]
    fn a_shipped_policy_alone_is_shared_while_its_roots_are_found_in_the_same_places() {
        let env_of =
            |dir: &'static str| move |k: &str| (k == "HOME").then(|| std::ffi::OsString::from(dir));
        let (a, b) = (env_of("/home/a"), env_of("/home/b"));
        let memo = Memo::default();
        let first = Policy::shipped_located("amp", &a, &memo).unwrap().unwrap();
        let again = Policy::shipped_located("amp", &a, &memo).unwrap().unwrap();
        assert!(Arc::ptr_eq(&first, &again), "one copy for the same places");
        // Another home: located there, with the digest a whole hash gives.
        let other = Policy::shipped_located("amp", &b, &memo).unwrap().unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        for (policy, home) in [(&first, "/home/a"), (&other, "/home/b")] {
            assert_eq!(
                policy.named_root_paths(),
                [Some(std::path::PathBuf::from(home))],
                "{home}"
            );
            assert_eq!(policy.digest(), policy.compute_digest(), "{home}");
        }
        // Back to the first home: located there again, equal to the first.
        let back = Policy::shipped_located("amp", &a, &memo).unwrap().unwrap();
        assert_eq!(back.named_root_paths(), first.named_root_paths());
        assert_eq!(back.digest(), first.digest());
        // Each is the policy merging and locating it by hand gives.
        let mut by_hand = Policy::from_sources(&[PolicySource::shipped("amp").unwrap()]).unwrap();
        by_hand.locate_named_roots(&b);
        assert_eq!(by_hand.digest(), other.digest());
        assert_eq!(by_hand.to_toml(), other.to_toml());
        assert!(Policy::shipped_located("no-such-policy", &a, &memo).is_none());
    }

    #[test]
    fn sources_out_of_order_give_the_same_policy() {
        let in_order = Policy::from_sources(&[PolicySource::builtin(), home(), cli()]).unwrap();
        let shuffled = Policy::from_sources(&[cli(), PolicySource::builtin(), home()]).unwrap();
        let reversed = Policy::from_sources(&[cli(), home(), PolicySource::builtin()]).unwrap();
        for other in [&shuffled, &reversed] {
            assert_eq!(other.to_toml(), in_order.to_toml());
            assert_eq!(other.digest(), in_order.digest());
            assert_eq!(other.layers(), in_order.layers());
            assert_eq!(other.definitions, in_order.definitions);
        }
        assert_eq!(in_order.instructions.budget_bytes, 2048);
        assert!(!in_order.instructions.skip_blank);
        assert_eq!(
            in_order.origin(INSTRUCTIONS.budget_bytes),
            Some(Layer::CommandLine)
        );
        assert_eq!(in_order.origin(INSTRUCTIONS.skip_blank), Some(Layer::Home));
    }

    #[test]
    fn sources_of_one_layer_apply_in_the_order_given() {
        let second = PolicySource::from_text(
            Layer::Home,
            "second.toml",
            "version = 1\n[instructions]\nbudget-bytes = 1000\n",
        );
        let policy =
            Policy::from_sources(&[second.clone(), PolicySource::builtin(), home()]).unwrap();
        assert_eq!(
            policy.instructions.budget_bytes, 4096,
            "home.toml came later"
        );
        let policy = Policy::from_sources(&[home(), PolicySource::builtin(), second]).unwrap();
        assert_eq!(
            policy.instructions.budget_bytes, 1000,
            "second.toml came later"
        );
    }

    #[test]
    fn every_value_remembers_its_file_and_span() {
        let policy = Policy::from_sources(&[PolicySource::builtin(), home(), cli()]).unwrap();
        let names: Vec<&str> = policy.sources().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["<built-in policies/lisa.toml>", "home.toml", "cli.toml"]
        );
        let slice = |key: &str| {
            let d = policy.definition(key).unwrap();
            let text = &policy.sources()[d.source].text;
            (d.layer, text[d.span.clone()].to_string())
        };
        assert_eq!(
            slice(INSTRUCTIONS.budget_bytes),
            (Layer::CommandLine, "2048".into())
        );
        assert_eq!(
            slice(INSTRUCTIONS.skip_blank),
            (Layer::Home, "false".into())
        );
        assert_eq!(
            slice(SKILLS.name_rule),
            (Layer::Builtin, "'^[a-z0-9]+(-[a-z0-9]+)*$'".into())
        );
        // Every key of every section has a definition.
        for key in RootsLayer::KEYS
            .iter()
            .chain(InstructionsLayer::KEYS)
            .chain(SkillsLayer::KEYS)
            .chain(TrustLayer::KEYS)
            .chain(RulesLayer::KEYS)
            .chain(FingerprintLayer::KEYS)
            .chain(TemplatesLayer::KEYS)
            .chain(SurveyGateLayer::KEYS)
        {
            assert!(policy.definition(key).is_some(), "{key}");
        }
    }

    #[test]
    fn a_problem_found_after_merging_points_at_the_file_that_set_the_value() {
        let policy = Policy::from_sources(&[PolicySource::builtin(), home(), cli()]).unwrap();
        let invalid = policy.invalid_value(INSTRUCTIONS.skip_blank, "not today");
        assert_eq!(invalid.name, "home.toml");
        let p = &invalid.problems[0];
        assert_eq!(p.kind, ProblemKind::InvalidValue);
        assert_eq!(&HOME[p.span.clone()], "false");
        assert_eq!(p.message, "not today");
        let invalid = policy.invalid_value(INSTRUCTIONS.budget_bytes, "too big");
        assert_eq!(invalid.name, "cli.toml");
        assert_eq!(&CLI[invalid.problems[0].span.clone()], "2048");
    }

    #[test]
    fn a_lowest_layer_lacking_keys_is_named() {
        let Err(PolicyError::Invalid(invalid)) = Policy::from_sources(&[home()]) else {
            panic!("a home layer alone lacks keys");
        };
        assert_eq!(invalid.name, "home.toml");
        // Every key the layer lacks is a problem (the first
        // `MAX_REPORTED_PROBLEMS` reported, the rest counted), each named.
        assert!(
            invalid
                .problems
                .iter()
                .all(|p| p.message.starts_with("no layer sets `"))
        );
        assert!(invalid.problems.len() + invalid.omitted > 50);
        assert!(
            invalid
                .problems
                .iter()
                .all(|p| p.kind == ProblemKind::MissingField)
        );
    }
}
