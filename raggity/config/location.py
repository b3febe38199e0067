"""Where an index lives: a local folder, or a prefix on an object store that LanceDB/Lance can open.

`[index] path` is either a path (relative to the config file's folder) or a URI with a scheme LanceDB
supports (s3://, gs://, az://). `[index.storage]` is passed through to LanceDB/Lance as their
`storage_options` (endpoint, region, allow_http, ...). Credentials never come from raggity.toml: the
object store client reads them from the standard environment variables and credential chain, so a
key that names a secret is refused here (and raggity.store.uri.redact scrubs secrets out of messages).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from raggity.config.urls import CREDENTIALS_FIX, check_url, is_url_option
from raggity.core.errors import ConfigError

REMOTE_SCHEMES = frozenset({"s3", "gs", "az"})
# Any storage option whose name holds one of these would put a secret in raggity.toml.
_SECRET_WORDS = ("secret", "token", "password", "key", "sas", "credential")


@dataclass(frozen=True)
class IndexLocation:
    """An index's root: `uri` is an absolute local path or `scheme://bucket/prefix` (no trailing /)."""

    uri: str
    storage_options: Mapping[str, str] = field(default_factory=dict)

    @property
    def scheme(self) -> str | None:
        """None for a local folder."""
        head, sep, _ = self.uri.partition("://")
        return head.lower() if sep else None

    @property
    def on_object_store(self) -> bool:
        return self.scheme is not None

    @property
    def local_path(self) -> Path:
        if self.on_object_store:
            raise ValueError(f"{self.uri} is not a local path")
        return Path(self.uri)

    def child(self, *names: str) -> str:
        """The URI of an entry inside the index (e.g. child("lancedb") for LanceDB's connect)."""
        return "/".join([self.uri.rstrip("/"), *names])

    def bucket_and_key(self, *names: str) -> tuple[str, str]:
        """(bucket, object key) of an entry inside a remote index, for conditional writes."""
        parts = urlsplit(self.child(*names))
        return parts.netloc, parts.path.lstrip("/")


def is_uri(path: str) -> bool:
    """Whether `[index] path` names an object-store location rather than a folder."""
    return "://" in path


def parse_index_location(path: str, storage: Mapping[str, object], *, base_dir: Path) -> IndexLocation:
    """`[index] path` and `[index.storage]` as an IndexLocation, or a ConfigError naming the key."""
    options = storage_options(storage)
    scheme, sep, rest = path.partition("://")
    if not sep:
        if options:
            raise ConfigError(
                "[index.storage] is set but [index] path is a local folder",
                "remove [index.storage], or set [index] path to an s3://, gs:// or az:// URI",
            )
        local = Path(path).expanduser()
        return IndexLocation(str(local if local.is_absolute() else (base_dir / local).resolve()))
    if scheme.lower() not in REMOTE_SCHEMES:
        raise ConfigError(
            f"[index] path: unsupported scheme {scheme.lower()}:// ",
            "use a local folder, or an s3://, gs:// or az:// URI",
        )
    # "@" anywhere, not only in the host part: a password holding a "/" would put it in the path.
    check_url(path, "[index] path", spaces=True)
    parts = urlsplit(path)
    if parts.query or parts.fragment:
        # Never echo the value: it may hold a key.
        raise ConfigError(
            "[index] path: the URI may hold only a bucket and a prefix (no user, query or fragment)",
            "put credentials in the environment (e.g. AWS_ACCESS_KEY_ID) and options in [index.storage]",
        )
    bucket, prefix = parts.netloc, rest.partition("/")[2].strip("/")
    if not bucket:
        raise ConfigError(f"[index] path: {path} names no bucket", "write it as s3://BUCKET/PREFIX")
    uri = f"{scheme.lower()}://{bucket}" + (f"/{prefix}" if prefix else "")
    return IndexLocation(uri, options)


def storage_options(storage: Mapping[str, object]) -> dict[str, str]:
    """`[index.storage]` as LanceDB/Lance storage options (strings), or a ConfigError: never a secret."""
    options: dict[str, str] = {}
    for key, value in storage.items():
        name = key.lower()
        if any(word in name for word in _SECRET_WORDS):
            raise ConfigError(
                f"[index.storage] {key}: credentials are not read from raggity.toml",
                CREDENTIALS_FIX,
            )
        if isinstance(value, str) and is_url_option(name, value):
            check_url(value, f"[index.storage] {key}")
        if isinstance(value, bool):
            options[name] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            options[name] = str(value)
        else:
            raise ConfigError(
                f"[index.storage] {key}: must be a string, number or true/false", "fix the value"
            )
    return options
