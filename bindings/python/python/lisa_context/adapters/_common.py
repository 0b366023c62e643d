"""What the adapters share, free of any framework: the section of one
working directory kept current by its fingerprint, and on-access loading
for the paths a tool call names."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from .._errors import LisaContextError
from .._loader import Loader, PathArg
from .._types import Snapshot

DEFAULT_PATH_ARGS: "tuple[str, ...]" = ("file_path", "path")
"""The tool arguments read as paths unless an adapter is told others."""

PathResolver = Callable[[str], Optional[str]]
"""Maps a path as a tool received it to the path on disk (absolute, or
relative to the adapter's cwd), or to `None` for one with no place on disk."""

# A touched path the loader cannot place loads nothing; the tool's result
# is returned as it is. Any other failure (an invalid policy, a vanished
# cwd) is raised, as the section's own rebuild raises it.
_NOTHING_TO_LOAD = frozenset({"access-outside-root", "bad-request"})


class ProjectSection:
    """The lisa-context section of one working directory.

    `current()` builds the snapshot on first use and afterwards asks the
    loader for `refresh` (one `stat` per examined path): a new snapshot is
    built only when the fingerprint moved. Safe to share between threads.
    """

    def __init__(
        self,
        loader: Loader,
        cwd: PathArg,
        root: Optional[PathArg] = None,
        home: Optional[PathArg] = None,
    ) -> None:
        self.loader = loader
        self.cwd = cwd
        self.root = root
        self.home = home
        self._snapshot: Optional[Snapshot] = None
        self._lock = threading.Lock()
        self.builds = 0
        """How many snapshots were built (the first one included)."""

    @property
    def snapshot(self) -> Optional[Snapshot]:
        """The snapshot last built, or `None` before the first request."""
        return self._snapshot

    def current(self) -> Snapshot:
        """The snapshot as the files on disk are now."""
        held = self._snapshot
        if held is None:
            fresh: Optional[Snapshot] = self.loader.snapshot(self.cwd, self.root, home=self.home)
        else:
            fresh = self.loader.refresh(self.cwd, held.fingerprint, self.root, home=self.home)
            if fresh is None:
                return held
        assert fresh is not None
        with self._lock:
            self._snapshot = fresh
            self.builds += 1
        return fresh

    def touched(self, path: str, session: str) -> str:
        """What touching `path` adds to `session`: the framed text to put
        beside the tool's result, or `""` when nothing is new (or the policy
        has no on-access loading, or the path is outside the repository)."""
        try:
            access = self.loader.access(self.cwd, path, self.root, session=session, home=self.home)
        except LisaContextError as error:
            if error.code in _NOTHING_TO_LOAD:
                return ""
            raise
        return access.prompt


def named_paths(args: Mapping[str, Any], names: Sequence[str]) -> Iterator[str]:
    """The non-empty string values of `args` under `names`, in that order."""
    for name in names:
        value = args.get(name)
        if isinstance(value, str) and value != "":
            yield value


def join_text(first: str, second: str) -> str:
    """`first` and `second` with a blank line between (either may be empty)."""
    if first == "":
        return second
    if second == "":
        return first
    return first.rstrip("\n") + "\n\n" + second
