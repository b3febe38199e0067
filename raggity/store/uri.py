"""Secrets out of object-store messages, and (re-exported from raggity.config.location, where the
config loader validates them) the IndexLocation of an index: a local folder or an object-store prefix.

Credentials never come from raggity.toml: the object store client reads them from the standard
environment variables and credential chain, and `redact` scrubs them out of any message we print.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from raggity.config.location import REMOTE_SCHEMES, IndexLocation, parse_index_location
from raggity.config.urls import REDACTED, redact_userinfo

__all__ = [
    "REDACTED",
    "REMOTE_SCHEMES",
    "SECRET_ENVIRONMENT",
    "IndexLocation",
    "parse_index_location",
    "redact",
]

# Environment variables whose values are secrets: scrubbed from every message by value.
SECRET_ENVIRONMENT = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS_JSON",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_CLIENT_SECRET",
)
_SIGNED_PARAMETER = re.compile(
    r"(?i)(x-amz-(?:signature|credential|security-token)|signature|sig|access_?key(?:_id)?|"
    r"secret(?:_access_key)?|session_?token|token)(=|:\s*|\"\s*:\s*\")([^&\s\"',;)]+)"
)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with secrets removed: values of the credential environment variables, signed URL
    parameters and key=value pairs that name a secret, and user:password@ in URLs, whatever the
    password holds (raggity.config.urls.redact_userinfo). Object store errors can quote a request;
    this runs on every message built from one."""
    env = os.environ if environ is None else environ
    for name in SECRET_ENVIRONMENT:
        value = env.get(name, "")
        if len(value) >= 4:
            text = text.replace(value, REDACTED)
    text = _SIGNED_PARAMETER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return redact_userinfo(text)
