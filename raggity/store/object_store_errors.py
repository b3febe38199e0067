"""One line for an object-store failure that Lance or LanceDB reports (as ValueError/OSError with the
whole Rust error chain in the message): which of unreachable, refused credentials or missing bucket it
is, with no secret and no request dump in it."""

from __future__ import annotations

import re

from raggity.core.errors import IndexLocationError, RaggityError
from raggity.store.uri import IndexLocation, redact

_UNREACHABLE = re.compile(
    r"error sending request|ConnectionRefused|tcp connect error|dns error|timed out|Connection reset", re.I
)
_CREDENTIALS = re.compile(
    r"InvalidAccessKeyId|SignatureDoesNotMatch|AccessDenied|ExpiredToken|Forbidden|\b403\b|\b401\b"
    r"|AuthenticationFailed|AuthorizationFailure",  # the last two: Azure's
    re.I,
)
_NO_BUCKET = re.compile(r"NoSuchBucket|ContainerNotFound", re.I)
_FIRST_LINE_LIMIT = 160


def store_failure_text(text: str) -> bool:
    """Whether Lance's message is the store failing (credentials, bucket, network), not the data."""
    return any(pattern.search(text) for pattern in (_CREDENTIALS, _NO_BUCKET, _UNREACHABLE))


def lance_store_error(exc: BaseException, location: IndexLocation) -> RaggityError | None:
    """The error to show for `exc` raised by Lance/LanceDB on a remote index, or None when it is not
    an object-store failure (the caller handles or re-raises it)."""
    if not location.on_object_store or not isinstance(exc, ValueError | OSError | RuntimeError):
        return None
    text = str(exc)
    if _CREDENTIALS.search(text):
        return IndexLocationError(
            f"{location.uri}: the object store refused the credentials",
            "check the credentials in the environment and their access to the bucket",
        )
    if _NO_BUCKET.search(text):
        return IndexLocationError(f"{location.uri}: no such bucket", "create it, or fix [index] path")
    if _UNREACHABLE.search(text):
        return IndexLocationError(
            f"{location.uri}: the object store is unreachable",
            "check [index.storage] endpoint and the network",
        )
    if "S3 error" in text or "object_store" in text or "Generic " in text:
        first = redact(text.splitlines()[0] if text else exc.__class__.__name__)[:_FIRST_LINE_LIMIT]
        return IndexLocationError(f"{location.uri}: object store error: {first}", "retry, or check the store")
    return None
