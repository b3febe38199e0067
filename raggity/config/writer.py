"""Writes a starter raggity.toml: every key with its default and a one-line comment."""

from __future__ import annotations

import dataclasses

import tomli_w

from raggity.config.schema import SECTIONS

HEADER = """\
# raggity configuration. Every key is shown with its default; delete what you do not change.
# Relative paths are resolved against this file's folder, never the current folder.
"""


def starter_toml() -> str:
    parts = [HEADER]
    for name, cls in SECTIONS.items():
        parts.append(f"\n[{name}]\n")
        for field in dataclasses.fields(cls):
            default = field.default_factory() if callable(field.default_factory) else field.default
            parts.append(f"# {field.metadata['help']}\n")
            parts.append(tomli_w.dumps({field.name: default}))
    return "".join(parts)
