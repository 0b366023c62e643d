"""The package's one exception."""

from __future__ import annotations

from typing import Union

from ._types import ErrorCode

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

    def __init__(self, code: Union[ErrorCode, str], message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
