//! Reading the user's policy files: the one read of the policy layer, done
//! here so that `policy` itself stays pure (it parses and checks text; it
//! never touches the disk). The files belong to the user, not to a
//! repository: each is read by its full path through
//! [`read_user_file`](super::ambient::read_user_file), but a served home's,
//! which is read through the admitted home's handle.

use std::path::Path;

use super::admitted::{Admitted, NotAdmitted};
use super::ambient::{UserFileError, read_user_file};
use crate::policy::{HOME_POLICY_FILE, Layer, MAX_POLICY_BYTES, Policy, PolicyError, PolicySource};

impl PolicySource {
    /// Reads a policy file. The file must be a regular file (a symlink to one
    /// is followed: the user's own dotfiles often are links) of at most
    /// [`MAX_POLICY_BYTES`]; a FIFO or device is refused without blocking.
    ///
    /// Returns `Ok(None)` when `required` is false and the file does not exist.
    pub fn read(layer: Layer, path: &Path, required: bool) -> Result<Option<Self>, PolicyError> {
        // The policy belongs to the user (or to whoever runs the command), not
        // to a repository: the sandbox reads it by its full path, through a
        // link anywhere, but without blocking and only if it is a regular file.
        Self::from_read(
            layer,
            path,
            required,
            read_user_file(path, MAX_POLICY_BYTES),
        )
    }

    /// Reads the policy file `name` of a home a server admitted
    /// ([`Admitted`]), as [`read`](Self::read) reads a home's policy file
    /// but through the admitted home's handle, opened now: a link is
    /// followed only inside the home. The outer error: the home is no
    /// longer the one admitted, and nothing was read.
    pub(crate) fn read_admitted(
        layer: Layer,
        home: &Admitted,
        name: &str,
    ) -> Result<Result<Option<Self>, PolicyError>, NotAdmitted> {
        let path = home.path().join(name);
        let bytes = home.read_file(Path::new(name), MAX_POLICY_BYTES)?;
        Ok(Self::from_read(layer, &path, false, bytes))
    }

    /// The layer read from `path`, given what reading it gave.
    fn from_read(
        layer: Layer,
        path: &Path,
        required: bool,
        read: Result<Vec<u8>, UserFileError>,
    ) -> Result<Option<Self>, PolicyError> {
        let unreadable = |source| PolicyError::Unreadable {
            path: path.to_path_buf(),
            source,
        };
        let bytes = match read {
            Ok(bytes) => bytes,
            Err(UserFileError::NotFound(_)) if !required => return Ok(None),
            Err(UserFileError::NotFound(e) | UserFileError::Io(e)) => return Err(unreadable(e)),
            Err(UserFileError::NotAFile) => {
                return Err(PolicyError::NotAFile {
                    path: path.to_path_buf(),
                });
            }
            Err(UserFileError::TooLarge) => {
                return Err(PolicyError::TooLarge {
                    path: path.to_path_buf(),
                    limit: MAX_POLICY_BYTES,
                });
            }
        };
        let text = String::from_utf8(bytes).map_err(|_| PolicyError::NotUtf8 {
            path: path.to_path_buf(),
        })?;
        Ok(Some(Self::from_file(layer, path, text)))
    }
}

impl Policy {
    /// Loads the effective policy for a home root: the built-in policy, then
    /// `home/context-policy.toml` when it exists, then `extra` when given.
    pub fn load(home: Option<&Path>, extra: Option<&Path>) -> Result<Self, PolicyError> {
        let mut sources = vec![PolicySource::builtin()];
        if let Some(home) = home
            && let Some(s) = PolicySource::read(Layer::Home, &home.join(HOME_POLICY_FILE), false)?
        {
            sources.push(s);
        }
        if let Some(extra) = extra
            && let Some(s) = PolicySource::read(Layer::CommandLine, extra, true)?
        {
            sources.push(s);
        }
        Self::from_sources(&sources)
    }
}
