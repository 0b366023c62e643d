//! The policy layer's memos: kept answers of its pure computations, held
//! by whoever builds policies (a loader's bootstrap holds one [`Memo`],
//! shared by the loaders of a group; a policy holds the matchers of its own
//! globs). The policy layer keeps no process-wide state: a memo lives and
//! dies with the object that owns it.
//!
//! A memo is keyed by everything its answer depends on (a shipped policy's
//! name and text, a pattern's text), so using it answers exactly what
//! computing again would.

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, MutexGuard};

use super::diagnostic::InvalidPolicy;
use super::effective::Policy;
use super::schema::PolicyLayer;
use super::source::PolicySource;
use super::validate::Kept;

/// What a loader keeps of the policies it built: the shipped policies'
/// layers as parsed and checked, each shipped policy merged alone and
/// located, and the last few `skills.name-rule`s compiled.
///
/// Everything kept is a pure function of its key: a shipped policy's text
/// is part of the binary, and a located policy is handed out only while
/// the environment finds its named roots where they were found.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    /// Each shipped policy's layer, parsed and checked.
    parsed: Mutex<HashMap<&'static str, PolicyLayer>>,
    /// Each shipped policy merged alone.
    merged: Mutex<HashMap<&'static str, Policy>>,
    /// Each shipped policy merged alone, its named roots located (at most
    /// one per name: located elsewhere, it replaces the old one).
    located: Mutex<HashMap<&'static str, Arc<Policy>>>,
    /// The last few name rules that compiled.
    name_rules: Kept<regex::Regex>,
}

/// Locks `m`; every update is one insert of a pure answer, so a poisoned
/// map is still sound.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Memo {
    /// `source` parsed and checked on its own (see
    /// [`PolicySource::check`]): a shipped policy's text is part of the
    /// binary, parsed and checked once per memo.
    pub(super) fn layer(&self, source: &PolicySource) -> Result<PolicyLayer, InvalidPolicy> {
        let Some(name) = source.shipped_name() else {
            return source.parse_text();
        };
        if let Some(layer) = lock(&self.parsed).get(name) {
            return Ok(layer.clone());
        }
        let layer = source.parse_text()?;
        lock(&self.parsed).insert(name, layer.clone());
        Ok(layer)
    }

    /// The shipped policy `name` merged alone as kept, else `merge` kept.
    pub(super) fn merged<E>(
        &self,
        name: &'static str,
        merge: impl FnOnce() -> Result<Policy, E>,
    ) -> Result<Policy, E> {
        if let Some(policy) = lock(&self.merged).get(name) {
            return Ok(policy.clone());
        }
        let policy = merge()?;
        lock(&self.merged).insert(name, policy.clone());
        Ok(policy)
    }

    /// The shipped policy `name` located as kept, when `env` still finds
    /// its named roots where they were found; else `locate` kept in its
    /// place.
    pub(super) fn located<E>(
        &self,
        name: &'static str,
        env: &dyn Fn(&str) -> Option<OsString>,
        locate: impl FnOnce() -> Result<Arc<Policy>, E>,
    ) -> Result<Arc<Policy>, E> {
        if let Some(kept) = lock(&self.located).get(name)
            && kept.is_located_for(env)
        {
            return Ok(Arc::clone(kept));
        }
        let policy = locate()?;
        lock(&self.located).insert(name, Arc::clone(&policy));
        Ok(policy)
    }

    /// `skills.name-rule` compiled (see
    /// [`compile_name_rule`](super::validate::compile_name_rule)): the
    /// check of the layer that sets it and the effective policy compile the
    /// same text, and a loader builds its policy anew whenever a policy
    /// file changes. The last few rules that compiled are kept (a compiled
    /// `Regex` is shared, so a copy is cheap).
    pub(super) fn name_rule(&self, rule: &str) -> Result<regex::Regex, regex::Error> {
        self.name_rules
            .or(4, rule, || super::validate::compile_name_rule(rule))
    }
}
