"""Writes a starter raggity.toml: every key with its default and a one-line comment."""

from __future__ import annotations

import dataclasses

import tomli_w

from raggity.config.schema import SECTIONS

HEADER = """\
# raggity configuration. Every key is shown with its default; delete what you do not change.
# Relative paths are resolved against this file's folder, never the current folder.
"""

# Commented lines under a table-valued key's header: what a user would put there.
TABLE_EXAMPLES = {
    ("index", "storage"): (
        '# region = "eu-west-1"\n# endpoint = "http://127.0.0.1:9000"  # an S3-compatible server\n'
        "# allow_http = true\n"
    ),
}


def starter_toml() -> str:
    parts = [HEADER]
    for name, cls in SECTIONS.items():
        parts.append(f"\n[{name}]\n")
        for field in dataclasses.fields(cls):
            default = field.default_factory() if callable(field.default_factory) else field.default
            parts.append(f"# {field.metadata['help']}\n")
            if isinstance(default, dict):
                # A table ([index.storage]): its header, and commented examples of what it may hold.
                parts.append(f"[{name}.{field.name}]\n{TABLE_EXAMPLES.get((name, field.name), '')}")
                continue
            parts.append(tomli_w.dumps({field.name: default}))
    return "".join(parts)
