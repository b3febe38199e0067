"""The lease and CURRENT of a gs:// index: Google Cloud Storage's generation preconditions.

A GCS object's generation changes on every write, so it serves as the etag: create-if-absent is an
upload with `ifGenerationMatch=0`, compare-and-swap and the lease's release are `ifGenerationMatch=G`.
GCS refuses a lost race with 412 (PreconditionFailedError here).

Credentials and endpoint are google-cloud-storage's own: Application Default Credentials
(GOOGLE_APPLICATION_CREDENTIALS, `gcloud auth application-default login`, the metadata server), and
STORAGE_EMULATOR_HOST for an emulator. Never raggity.toml, never printed.
"""

from __future__ import annotations

import importlib
from typing import Any

from raggity.core.errors import IndexLocationError, RaggityError
from raggity.core.extras import require
from raggity.store.object_store import PreconditionFailedError, StoredObject
from raggity.store.uri import IndexLocation, redact

_TIMEOUT = (5, 30)  # connect, read (seconds)


class GcsBucket:
    """Objects under one index's prefix in a Google Cloud Storage bucket."""

    def __init__(self, location: IndexLocation, *, client: Any | None = None) -> None:
        require("google.cloud.storage", "an index on Google Cloud Storage")
        self._location = location
        bucket, self._prefix = location.bucket_and_key()
        self._bucket = (client or _client(location)).bucket(bucket)

    def _key(self, name: str) -> str:
        return f"{self._prefix}/{name}" if self._prefix else name

    def create(self, name: str, body: bytes) -> str:
        return self._put(name, body, 0)

    def replace(self, name: str, body: bytes, etag: str) -> str:
        return self._put(name, body, _generation(etag, name))

    def get(self, name: str) -> StoredObject | None:
        from google.api_core.exceptions import NotFound  # noqa: PLC0415 - only a gs:// index loads the SDK

        blob = self._bucket.blob(self._key(name))
        try:
            body = blob.download_as_bytes(timeout=_TIMEOUT)
        except NotFound:
            return None
        except Exception as exc:
            raise gcs_error(exc, self._location) from None
        # The download's own x-goog-generation: the body and its generation are one version.
        return StoredObject(body, str(blob.generation))

    def names(self, prefix: str) -> list[str]:
        base = len(self._key(""))
        try:
            blobs = self._bucket.client.list_blobs(self._bucket, prefix=self._key(prefix), timeout=_TIMEOUT)
            return [str(blob.name)[base:] for blob in blobs]
        except Exception as exc:
            raise gcs_error(exc, self._location) from None

    def delete(self, name: str, etag: str) -> None:
        from google.api_core.exceptions import (  # noqa: PLC0415 - only a gs:// index loads the SDK
            NotFound,
            PreconditionFailed,
        )

        generation = _generation(etag, name)
        blob = self._bucket.blob(self._key(name))
        try:
            # GCS checks ifGenerationMatch on DELETE itself; the emulators (fake-gcs-server 1.54)
            # ignore it there, so the generation is read first as well: on GCS the read changes
            # nothing, on an emulator it keeps a newer writer's lease from being deleted in sequence.
            blob.reload(timeout=_TIMEOUT)
            if blob.generation != generation:
                raise PreconditionFailedError(name)
            blob.delete(if_generation_match=generation, timeout=_TIMEOUT)
        except PreconditionFailed:
            raise PreconditionFailedError(name) from None
        except NotFound:
            return
        except PreconditionFailedError:
            raise
        except Exception as exc:
            raise gcs_error(exc, self._location) from None

    def _put(self, name: str, body: bytes, generation: int) -> str:
        from google.api_core.exceptions import (  # noqa: PLC0415 - only a gs:// index loads the SDK
            NotFound,
            PreconditionFailed,
        )

        blob = self._bucket.blob(self._key(name))
        try:
            blob.upload_from_string(body, if_generation_match=generation, timeout=_TIMEOUT)
        except PreconditionFailed:
            raise PreconditionFailedError(name) from None
        except NotFound as exc:
            raise gcs_error(exc, self._location) from None
        except Exception as exc:
            raise gcs_error(exc, self._location) from None
        return str(blob.generation)


def _generation(etag: str, name: str) -> int:
    """An etag this class handed out is a generation number; anything else cannot match."""
    try:
        return int(etag)
    except ValueError:
        raise PreconditionFailedError(name) from None


def gcs_error(exc: BaseException, location: IndexLocation) -> RaggityError:
    """One line for the user, with no secret in it: unreachable, refused credentials, no bucket."""
    from google.api_core import exceptions  # noqa: PLC0415 - only a gs:// index loads the SDK
    from google.auth.exceptions import DefaultCredentialsError  # noqa: PLC0415
    from requests.exceptions import ConnectionError as RequestsConnectionError  # noqa: PLC0415

    if isinstance(exc, DefaultCredentialsError):
        return IndexLocationError(
            f"{location.uri}: no credentials for the object store",
            "set GOOGLE_APPLICATION_CREDENTIALS (or run `gcloud auth application-default login`)",
        )
    if isinstance(exc, exceptions.Unauthorized | exceptions.Forbidden):
        return IndexLocationError(
            f"{location.uri}: the object store refused the credentials",
            "check the credentials in the environment and their access to the bucket",
        )
    if isinstance(exc, exceptions.NotFound):
        return IndexLocationError(f"{location.uri}: no such bucket", "create it, or fix [index] path")
    if isinstance(exc, RequestsConnectionError | exceptions.ServiceUnavailable | TimeoutError):
        return IndexLocationError(
            f"{location.uri}: the object store is unreachable",
            "check STORAGE_EMULATOR_HOST or the network",
        )
    first = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    return IndexLocationError(
        f"{location.uri}: object store error: {redact(first)}", "retry, or check the store"
    )


def _client(location: IndexLocation) -> Any:
    # Imported by name, on first use: google.cloud.storage ships no type information.
    storage = importlib.import_module("google.cloud.storage")
    try:
        return storage.Client()
    except Exception as exc:
        raise gcs_error(exc, location) from None
