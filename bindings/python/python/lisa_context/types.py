"""Every answer type of lisa-context (the snapshot, its records, the trust
reports, the protocol's responses), as frozen dataclasses and `Literal`
aliases generated from `schema/response.schema.json` (see `_types`)."""

from ._types import *  # noqa: F403
from ._types import __all__ as __all__
