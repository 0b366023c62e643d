//! The bootstrap a loader keeps: which home root and which policy files,
//! and how to load the layered policy from them again.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use crate::error::BootstrapError;
use crate::policy::keys::ROOTS;
use crate::policy::{
    BUILTIN_NAME, HOME_POLICY_FILE, Layer, Memo, Policy, PolicyError, PolicySource,
};
use crate::sandbox::{self, Stamp};

/// How the loader reads environment variables (for `$NAME` and `~` in the
/// policy's home candidates).
pub(super) type Env = Box<dyn Fn(&str) -> Option<OsString> + Send + Sync>;

/// The settings a loader keeps from its builder so that it can load its
/// policy again when a policy file changes.
pub(super) struct Bootstrap {
    /// The explicit home root, if any.
    pub(super) home: Option<PathBuf>,
    /// The command line's policy file, if any.
    pub(super) policy_file: Option<PathBuf>,
    /// The shipped policy that stands for the built-in one (`--policy
    /// NAME`), if any.
    pub(super) base: Option<String>,
    /// Whether the home's `context-policy.toml` is read (true but for a
    /// one-run bypass of a broken file).
    pub(super) home_policy: bool,
    /// How variables of the home candidates are read.
    pub(super) env: Env,
    /// The home a server admitted ([`crate::LoaderBuilder::home_below`]):
    /// its policy file is read through the admitted directory's handle,
    /// never by its path.
    pub(super) admitted: Option<Arc<sandbox::Admitted>>,
    /// What the policy layer keeps of the policies built (shipped policies
    /// parsed, merged and located; name rules compiled): this loader's
    /// own, or its group's ([`crate::LoaderBuilder::share`]).
    pub(super) memo: Arc<Memo>,
}

/// The outcome of one load of the layered policy.
pub(super) struct Loaded {
    /// The policy files read (or looked for), each with its stamp taken
    /// just before it was read: the policy file, then the home's policy file
    /// when the home is known. A change to any of them calls for another
    /// load.
    pub(super) files: Vec<(PathBuf, Stamp)>,
    /// When the load began: a stamp this recent cannot vouch for the content
    /// read.
    pub(super) started: SystemTime,
    /// The policy and the home root, or why they could not be had.
    pub(super) result: Result<(Arc<Policy>, Option<PathBuf>), BootstrapError>,
}

impl Bootstrap {
    /// The home root this bootstrap would use with `policy`'s candidates.
    pub(super) fn home_for(&self, policy: &Policy) -> Option<PathBuf> {
        match &self.home {
            Some(explicit) => Some(crate::vocab::home::normalize(explicit)),
            None => crate::vocab::home::first_candidate(
                policy.roots.home.iter().map(|c| c.get_ref().as_str()),
                &*self.env,
            ),
        }
    }

    /// Whether [`base_source`](Self::base_source) would find the base
    /// policy, without copying its text.
    pub(super) fn check_base(&self) -> Result<(), BootstrapError> {
        match &self.base {
            Some(name) if !crate::policy::SHIPPED_NAMES.contains(&name.as_str()) => {
                Err(BootstrapError::UnknownPolicy { name: name.clone() })
            }
            _ => Ok(()),
        }
    }

    /// The lowest layer: the shipped policy named, else the built-in one.
    pub(super) fn base_source(&self) -> Result<PolicySource, BootstrapError> {
        match &self.base {
            None => Ok(PolicySource::builtin()),
            Some(name) => PolicySource::shipped(name)
                .ok_or_else(|| BootstrapError::UnknownPolicy { name: name.clone() }),
        }
    }

    /// The policy of the layers outside the home: the base, and the policy
    /// file over it when one is given, its named roots located. A shipped
    /// policy alone is the memo's one copy of it (see
    /// [`Policy::shipped_located`]).
    fn outside(&self, file: Option<&PolicySource>) -> Result<Arc<Policy>, BootstrapError> {
        if file.is_none()
            && let Some(policy) = self.base_alone()
        {
            return Ok(policy?);
        }
        let mut sources = vec![self.base_source()?];
        sources.extend(file.cloned());
        let mut policy = Policy::from_sources_in(&sources, &self.memo)?;
        policy.locate_named_roots_as_merged(&*self.env);
        Ok(Arc::new(policy))
    }

    /// The base policy alone, located (see [`Policy::shipped_located`]):
    /// `None` for a base that is not shipped.
    fn base_alone(&self) -> Option<Result<Arc<Policy>, PolicyError>> {
        let name = self.base.as_deref().unwrap_or(BUILTIN_NAME);
        Policy::shipped_located(name, &*self.env, &self.memo)
    }

    /// Loads the layered policy: the policy file (for the home candidates),
    /// the home, the home's policy file, and the merge of all of them. The
    /// files are read even when an earlier one is broken, as far as the home
    /// can be told, so that each is watched.
    pub(super) fn load(&self) -> Loaded {
        let started = SystemTime::now();
        let mut files = Vec::new();
        let file = match &self.policy_file {
            Some(path) => {
                files.push((path.clone(), sandbox::user_file_stamp(path)));
                PolicySource::read(Layer::CommandLine, path, true)
            }
            None => Ok(None),
        };
        // Where the home is comes from the layers that do not live in it; a
        // broken policy file (or an unknown base) leaves only an explicit
        // home known. The policy of those layers is kept: when the home
        // holds no policy file it is the whole policy, and building it again
        // would cost as much as the first time.
        let mut outside_policy = None;
        let home = match &file {
            Ok(file) if self.check_base().is_ok() => self.outside(file.as_ref()).map(|p| {
                let home = self.home_for(&p);
                outside_policy = Some(p);
                home
            }),
            _ => Ok(self.home.as_deref().map(crate::vocab::home::normalize)),
        };
        let home_file = match &home {
            _ if !self.home_policy => None,
            Ok(home) => home.as_ref().map(|h| h.join(HOME_POLICY_FILE)),
            Err(_) => self
                .home
                .as_deref()
                .map(|h| crate::vocab::home::normalize(h).join(HOME_POLICY_FILE)),
        };
        if let Some(path) = &home_file {
            files.push((path.clone(), sandbox::user_file_stamp(path)));
        }
        let result = (|| {
            let file = file?;
            let home = home?;
            let home_layer = match (&home_file, &self.admitted) {
                // The admitted home, still the directory admitted: its own
                // file, whatever its path leads to now.
                (Some(_), Some(admitted)) if home.as_deref() == Some(admitted.path()) => {
                    PolicySource::read_admitted(Layer::Home, admitted, HOME_POLICY_FILE).map_err(
                        |e| BootstrapError::HomeRefused {
                            path: admitted.path().to_path_buf(),
                            reason: e.reason,
                        },
                    )??
                }
                (Some(path), _) => PolicySource::read(Layer::Home, path, false)?,
                (None, _) => None,
            };
            let policy = match (home_layer, outside_policy) {
                // The same layers as the policy that found the home.
                (None, Some(same)) => same,
                (home_layer, _) => {
                    let mut sources = vec![self.base_source()?];
                    sources.extend(home_layer);
                    sources.extend(file);
                    let mut policy = Policy::from_sources_in(&sources, &self.memo)?;
                    policy.locate_named_roots_as_merged(&*self.env);
                    if policy
                        .definition(ROOTS.home)
                        .is_some_and(|d| d.layer == Layer::Home)
                    {
                        let invalid = policy.invalid_value(
                            ROOTS.home,
                            "the home's own policy cannot set `roots.home`: it was read from \
                             the home those candidates would replace",
                        );
                        return Err(BootstrapError::Policy(PolicyError::Invalid(invalid)));
                    }
                    Arc::new(policy)
                }
            };
            Ok((policy, home))
        })();
        Loaded {
            files,
            started,
            result,
        }
    }
}
