"""The package's one exception."""

from __future__ import annotations

import json
from typing import List, Optional, Union

from ._types import ErrorCode, PolicyProblem

__all__ = ["LisaContextError"]


class LisaContextError(Exception):
    """Every failure of this package: `code` is one of the protocol's stable
    words (`ErrorCode`: `bad-cwd`, `policy-invalid`, `bad-request`,
    `skill-not-found`, ...), the same as `serve`'s `error.code` and the Node
    package's `LisaContextError.code`; `message` is for a person (for
    `policy-invalid`, the whole diagnostic: file, line, column, help).
    """

    code: Union[ErrorCode, str]
    message: str
    help: Optional[str]
    """What to do about it, when there is something to say (`serve`'s `help`)."""
    available: Optional[List[str]]
    """For `skill-not-found`: the skills available from the cwd, in name order."""
    problems: Optional[List[PolicyProblem]]
    """For `policy-invalid`: each problem, with its file, line, column and key."""

    def __init__(
        self,
        code: Union[ErrorCode, str],
        message: str,
        *,
        help: Optional[str] = None,
        available: Optional[List[str]] = None,
        problems: Optional[List[PolicyProblem]] = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.help = help
        self.available = available
        self.problems = problems

    @classmethod
    def _from_report(cls, text: str) -> "LisaContextError":
        """From the library's error report as JSON text: the same fields
        `serve` writes as `error` (the native module raises through this)."""
        d = json.loads(text)
        problems = d.get("problems")
        return cls(
            d["code"],
            d["message"],
            help=d.get("help"),
            available=d.get("available"),
            problems=None if problems is None else [PolicyProblem._from_json(p) for p in problems],
        )
