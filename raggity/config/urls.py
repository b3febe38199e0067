"""URL-valued settings, checked before anything uses them, and URLs in messages, without their userinfo.

A URL in raggity.toml may name a host, a port and a path, never a user or a password: those come from
the environment and the provider's credential chain, and a config file is shared, printed (`rag trust`)
and quoted in error messages. Spaces and control characters are refused too: the object store's client
would reject them much later, with a panic instead of a line that names the key.

Neither check is a pattern over a well-formed URL. A password may hold "/", "?", "#", "@" or a space,
each of which ends a URL's authority early for any parser (urllib's, the object store's), so a URL
whose password holds a "/" parses with the password in its path. Hence the rules: no "@" anywhere in a
URL-valued setting, and in a message, everything from "://" to the last "@" of the URL is userinfo.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from raggity.core.errors import ConfigError

REDACTED = "***"
CREDENTIALS_FIX = (
    "set credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...) "
    "or the provider's credential chain"
)
# Storage options whose values are URLs, by name (LanceDB/object_store: endpoint, aws_endpoint,
# azure_storage_endpoint, proxy_url, ...); any value with "://" in it is taken for one too.
_URL_NAMES = ("endpoint", "url")


def is_url_option(name: str, value: str) -> bool:
    """Whether the storage option `name` = `value` is a URL."""
    return any(word in name.lower() for word in _URL_NAMES) or "://" in value


def check_url(value: str, label: str, *, spaces: bool = False) -> str:
    """`value`, or a ConfigError naming `label` (never quoting the value: it may hold a password).
    `spaces`: a space is allowed (an object-store prefix may hold one; a host never does)."""
    if any(unicodedata.category(c)[0] == "C" or (c.isspace() and not (spaces and c == " ")) for c in value):
        what = "control characters" if spaces else "spaces or control characters"
        raise ConfigError(f"{label}: a URL must not contain {what}", "remove them")
    if "@" in value:
        raise ConfigError(
            f"{label}: a URL must not hold a user name or password (user:password@)", CREDENTIALS_FIX
        )
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError as exc:
        raise ConfigError(
            f"{label}: not a valid URL ({exc})", "write it as scheme://host:port/path"
        ) from None
    return value


# Where a URL in a message starts. It ends at a line break or where the next URL starts: a password
# may hold a space, a quote or a bracket as well as a "/".
_SCHEME = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://")


def redact_userinfo(text: str) -> str:
    """`text` with the user name and password of every URL in it replaced by ***.

    Whatever a URL's password holds, it lies between "://" and the last "@" before the URL ends, and
    the host after it is kept ("http://***@127.0.0.1:5055"). An "@" further on in the same line (a
    path holding one, an e-mail address after the URL) makes the text before it count as userinfo
    too: a message loses a little detail rather than a secret."""
    urls = [(match.start(), match.end()) for match in _SCHEME.finditer(text)]
    pieces: list[str] = []
    done = 0
    for number, (_, start) in enumerate(urls):
        if start < done:
            continue  # inside userinfo already taken out
        limit = urls[number + 1][0] if number + 1 < len(urls) else len(text)
        line_end = min(
            (i for i in (text.find("\n", start, limit), text.find("\r", start, limit)) if i >= 0),
            default=limit,
        )
        at = text.rfind("@", start, line_end)
        if at >= 0:
            pieces += [text[done:start], REDACTED]
            done = at
    pieces.append(text[done:])
    return "".join(pieces)
