"""`Loader`: the library in this process."""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from collections import OrderedDict
from typing import Any, Dict, Optional, Union

from . import _native
from ._errors import LisaContextError
from ._types import Access, Hello, RuleText, SkillFile, Snapshot, TrustDiff, TrustStatus

__all__ = ["Loader", "MAX_HOMES"]

PathArg = Union[str, "os.PathLike[str]"]
"""A path: a `str` or any `os.PathLike` of one."""

MAX_HOMES = 1024
"""The most homes a `Loader` keeps a native loader for (least recently used
dropped), as the Node package's `Loader` does."""

_BARE_WORD = re.compile(r"[A-Za-z0-9_-]+")


def _path(value: Any, name: str) -> str:
    """A path argument as `str`, or a `bad-request` naming it."""
    try:
        path = os.fspath(value)
    except TypeError:
        raise LisaContextError(
            "bad-request", f"`{name}` must be a path (str or os.PathLike), not {type(value).__name__}"
        ) from None
    if not isinstance(path, str):
        raise LisaContextError("bad-request", f"`{name}` must be a text path, not bytes")
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        raise LisaContextError("bad-request", f"`{name}` is not encodable as a file name") from None
    return path


def _opt_path(value: Any, name: str) -> Optional[str]:
    return None if value is None else _path(value, name)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise LisaContextError("bad-request", f"`{name}` must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise LisaContextError("bad-request", f"`{name}` is not valid Unicode (a lone surrogate)") from None
    return value


def _policy_from_env() -> Dict[str, str]:
    """`$LISA_CONTEXT_POLICY`, read as `--policy` reads it: a bare word names
    a shipped policy in the built-in one's place, anything else is a policy
    file laid over (relative to the process's cwd); unset or empty: none."""
    value = os.environ.get("LISA_CONTEXT_POLICY", "")
    if value == "":
        return {}
    if _BARE_WORD.fullmatch(value):
        return {"base_policy": value}
    return {"policy": os.path.abspath(value)}


def _load(text: str) -> Dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise LisaContextError("bad-request", "the native answer is not a JSON object")
    return value


_no_project_dir: Optional[str] = None
_no_project_lock = threading.Lock()


class Loader:
    """The library in this process: one loader serves any number of sessions
    (cwds) from one cache, and any number of threads at once. Every call
    lets go of the GIL while it reads and renders; from asyncio, call it
    through `asyncio.to_thread`.

    The options are the Node package's `Loader` options in snake_case:

    - `home`: the home root (default: the policy's candidates, `$LISA_HOME`,
      then `~/.lisa`).
    - `policy`: a policy file laid over the built-in and home policies
      (`--policy FILE`), watched.
    - `base_policy`: a shipped policy by name (`lisa`, `codex`, `gemini`,
      `claude-code`) in the built-in one's place (`--policy NAME`). When
      neither is given, `$LISA_CONTEXT_POLICY` is read as `--policy` reads it.
    - `home_policy`: whether to read the home's `context-policy.toml`
      (default true).
    - `capacity`: most snapshots kept (default 256; 1 to 1,048,576).
    - `cache_bytes`: most bytes of snapshots kept (default 256 MiB; 65,536
      to 2**40).

    An invalid policy does not raise here: every call then raises
    `LisaContextError` with code `policy-invalid` until the file is fixed. A
    `home` that is not a directory raises `bad-home`; an option out of range
    or of the wrong type raises `bad-request`.
    """

    def __init__(
        self,
        home: Optional[PathArg] = None,
        policy: Optional[PathArg] = None,
        base_policy: Optional[str] = None,
        home_policy: Optional[bool] = None,
        capacity: Optional[int] = None,
        cache_bytes: Optional[int] = None,
    ) -> None:
        options: Dict[str, Any] = {
            "home": _opt_path(home, "home"),
            "policy": _opt_path(policy, "policy"),
            "base_policy": None if base_policy is None else _text(base_policy, "base_policy"),
            "home_policy": home_policy,
            "capacity": capacity,
            "cache_bytes": cache_bytes,
        }
        if home_policy is not None and not isinstance(home_policy, bool):
            raise LisaContextError("bad-request", "`home_policy` must be a bool")
        if policy is None and base_policy is None:
            options.update(_policy_from_env())
        self._native = _native.NativeLoader(**options)
        self._homes: "OrderedDict[str, _native.NativeLoader]" = OrderedDict()
        self._homes_lock = threading.Lock()

    @staticmethod
    def hello() -> Hello:
        """What this build speaks: protocol version, crate version, ops,
        shipped policies, error codes (no disk access)."""
        return Hello._from_json(_load(_native.hello()))

    @staticmethod
    def no_project() -> str:
        """A cwd for a session with no project: home files and home skills
        only. An empty folder of this process's own (mode 0700, under the
        temporary directory), made on first use; it is its own root, so no
        repository above it is read."""
        global _no_project_dir
        with _no_project_lock:
            if _no_project_dir is None or not os.path.isdir(_no_project_dir):
                _no_project_dir = tempfile.mkdtemp(prefix="lisa-context-no-project-")
            return _no_project_dir

    def snapshot(self, cwd: PathArg, root: Optional[PathArg] = None, *, home: Optional[PathArg] = None) -> Snapshot:
        """The snapshot for a session's cwd (`root`: the repository root when
        the caller knows it; `home`: another home than the loader's)."""
        cwd_s = _path(cwd, "cwd")
        text = self._for(home).snapshot(cwd_s, self._root(cwd_s, root))
        return Snapshot._from_json(_load(text))

    def fingerprint(self, cwd: PathArg, root: Optional[PathArg] = None, *, home: Optional[PathArg] = None) -> str:
        """The fingerprint alone: one `stat` per examined path when nothing changed."""
        cwd_s = _path(cwd, "cwd")
        return self._for(home).fingerprint(cwd_s, self._root(cwd_s, root))

    def refresh(
        self, cwd: PathArg, fingerprint: str, root: Optional[PathArg] = None, *, home: Optional[PathArg] = None
    ) -> Optional[Snapshot]:
        """`None` while `fingerprint` still holds, else the new snapshot."""
        cwd_s = _path(cwd, "cwd")
        text = self._for(home).refresh(cwd_s, _text(fingerprint, "fingerprint"), self._root(cwd_s, root))
        return None if text is None else Snapshot._from_json(_load(text))

    def skill(self, cwd: PathArg, name: str, root: Optional[PathArg] = None, *, home: Optional[PathArg] = None) -> SkillFile:
        """The `SKILL.md` of the skill that wins `name` for the cwd
        (`skill-not-found` when none does)."""
        cwd_s = _path(cwd, "cwd")
        text = self._for(home).skill(cwd_s, _text(name, "name"), self._root(cwd_s, root))
        return SkillFile._from_json(_load(text))

    def rule(self, cwd: PathArg, name: str, root: Optional[PathArg] = None, *, home: Optional[PathArg] = None) -> RuleText:
        """The body of the rule named `name` (a `listed` rule the agent asks
        for, a `manual` one the user names), read now as a chain file is, with
        its nonce-framed `prompt` (`rule-not-found` when none has the name)."""
        cwd_s = _path(cwd, "cwd")
        text = self._for(home).rule(cwd_s, _text(name, "name"), self._root(cwd_s, root))
        return RuleText._from_json(_load(text))

    def trust_status(self, cwd: PathArg, root: Optional[PathArg] = None, *, home: Optional[PathArg] = None) -> TrustStatus:
        """The cwd's project items and their approvals (read-only)."""
        text = self._for(home).trust_status(_path(cwd, "cwd"), _opt_path(root, "root"))
        return TrustStatus._from_json(_load(text))

    def trust_diff(self, cwd: PathArg, root: Optional[PathArg] = None, *, home: Optional[PathArg] = None) -> TrustDiff:
        """The pending project items, each with its diff (read-only)."""
        text = self._for(home).trust_diff(_path(cwd, "cwd"), _opt_path(root, "root"))
        return TrustDiff._from_json(_load(text))

    def access(
        self,
        cwd: PathArg,
        path: PathArg,
        root: Optional[PathArg] = None,
        *,
        session: str = "",
        home: Optional[PathArg] = None,
    ) -> Access:
        """What touching `path` adds to the session `session` (default: one
        session per cwd and root) in `cwd`: the instruction files below the
        cwd down to `path` and the scoped rules it matches, each once per
        session, under a policy with on-access loading
        (`instructions.on-access`; the shipped `gemini` and `claude-code`
        have it). `Access.prompt` is what to put beside the tool's result;
        empty when nothing was added."""
        cwd_s = _path(cwd, "cwd")
        text = self._for(home).access(
            cwd_s, _path(path, "path"), _text(session, "session"), self._root(cwd_s, root)
        )
        return Access._from_json(_load(text))

    @property
    def cached_entries(self) -> int:
        """Snapshots in the cache for this loader's own home (those of the
        homes named per call are counted apart, as in the Node package)."""
        return self._native.cached_entries

    def _root(self, cwd: str, root: Optional[PathArg]) -> Optional[str]:
        """The root to name: the one given, or for `no_project()` the folder itself."""
        if root is not None:
            return _path(root, "root")
        return cwd if _no_project_dir is not None and cwd == _no_project_dir else None

    def _for(self, home: Optional[PathArg]) -> _native.NativeLoader:
        """The native loader for `home` (the own one when absent): one per
        home, made with this loader's options, at most `MAX_HOMES` kept; all
        share the own loader's cache, each text once, and one budget of open
        directories."""
        if home is None:
            return self._native
        key = os.path.abspath(_path(home, "home"))
        with self._homes_lock:
            loader = self._homes.get(key)
            if loader is not None:
                self._homes.move_to_end(key)
                return loader
        made = self._native.for_home(key)
        with self._homes_lock:
            loader = self._homes.setdefault(key, made)
            self._homes.move_to_end(key)
            while len(self._homes) > MAX_HOMES:
                self._homes.popitem(last=False)
            return loader
