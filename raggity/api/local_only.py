"""Commands that work on a local index folder only, so far: one clear line for an index at a URI."""

from __future__ import annotations

from raggity.config.schema import Config
from raggity.core.errors import ConfigError
from raggity.store.layout import IndexLayout


def local_layout(config: Config, command: str) -> IndexLayout:
    """The index folder `config` names, or a ConfigError when the index is on object storage (whose
    local state folder would otherwise be reported as "no index yet")."""
    location = config.index_location
    if location.on_object_store:
        raise ConfigError(
            f"{location.uri}: `{command}` works on a local index folder only so far",
            "see docs/scaling.md#not-done-yet",
        )
    return IndexLayout(config.index_dir)
