"""Small objects beside the Lance table on an object store, written with the store's conditional requests.

Two primitives carry the whole commit protocol of a shared index (docs/scaling.md): create-if-absent
and compare-and-swap. Each store offers both in its own words, so each has its own class behind one
seam (`ConditionalObjects`), picked by the URI's scheme as an HTTP client picks a transport:

- s3:// (`S3Bucket`, here): `If-None-Match: *` and `If-Match: <etag>`. AWS S3, MinIO, Cloudflare R2
  and moto's server honour both.
- az:// (raggity.store.azure_objects): the same ETag headers on Azure Blob Storage (and Azurite).
- gs:// (raggity.store.gcs_objects): `ifGenerationMatch` (0 for create), the generation as the etag.

Credentials come from each SDK's own chain (environment variables, shared files, instance roles):
nothing here takes a key, and every error message goes through `redact`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from raggity.core.errors import IndexLocationError, RaggityError
from raggity.core.extras import require
from raggity.store.uri import IndexLocation, redact


class PreconditionFailedError(Exception):
    """The object exists (create) or changed since it was read (replace, delete)."""


@dataclass(frozen=True)
class StoredObject:
    body: bytes
    etag: str


_AUTH_CODES = frozenset(
    {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken", "InvalidToken"}
)


def object_store_error(exc: BaseException, location: IndexLocation) -> RaggityError:
    """One line for the user, with no secret in it: unreachable, refused credentials, no such bucket."""
    from botocore.exceptions import (  # noqa: PLC0415 - only a remote index needs boto3
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
    )

    if isinstance(exc, NoCredentialsError):
        return IndexLocationError(
            f"{location.uri}: no credentials for the object store",
            "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile or role) in the environment",
        )
    if isinstance(exc, EndpointConnectionError):
        return IndexLocationError(
            f"{location.uri}: the object store is unreachable",
            "check [index.storage] endpoint and the network",
        )
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in _AUTH_CODES:
            return IndexLocationError(
                f"{location.uri}: the object store refused the credentials ({code})",
                "check the credentials in the environment and their access to the bucket",
            )
        if code == "NoSuchBucket":
            return IndexLocationError(f"{location.uri}: no such bucket", "create it, or fix [index] path")
    return IndexLocationError(
        f"{location.uri}: object store error: {redact(str(exc))}", "retry, or check the store"
    )


class ConditionalObjects(Protocol):
    """The objects of one index on one store: what the lease and CURRENT need of it. `etag` is the
    store's version tag of an object (an S3 or Azure ETag, a GCS generation), opaque to callers."""

    def create(self, name: str, body: bytes) -> str:
        """Writes `name` only if it does not exist; its etag, or PreconditionFailedError."""
        ...

    def replace(self, name: str, body: bytes, etag: str) -> str:
        """Overwrites `name` only if it still has `etag`; the new etag, or PreconditionFailedError."""
        ...

    def get(self, name: str) -> StoredObject | None: ...

    def names(self, prefix: str) -> list[str]:
        """The names (relative to the index's prefix) of the objects under `prefix`."""
        ...

    def delete(self, name: str, etag: str) -> None:
        """Deletes `name` only if it still has `etag`; a missing object is already deleted."""
        ...


class StoreObjects:
    """Objects under one index's prefix, on the store its URI names (s3://, az://, gs://).

    `transport` is the seam: by default the class for the URI's scheme, built from the location's
    storage options and the SDK's credential chain; a test passes its own."""

    def __init__(self, location: IndexLocation, *, transport: ConditionalObjects | None = None) -> None:
        self._transport = transport if transport is not None else _transport(location)

    def create(self, name: str, body: bytes) -> str:
        return self._transport.create(name, body)

    def replace(self, name: str, body: bytes, etag: str) -> str:
        return self._transport.replace(name, body, etag)

    def get(self, name: str) -> StoredObject | None:
        return self._transport.get(name)

    def names(self, prefix: str) -> list[str]:
        return self._transport.names(prefix)

    def delete(self, name: str, etag: str) -> None:
        self._transport.delete(name, etag)


# The name every caller used while S3 was the only store; it picks the store by scheme now.
S3Objects = StoreObjects


def _transport(location: IndexLocation) -> ConditionalObjects:
    """The conditional-write class of the location's store; its SDK is imported only here."""
    if location.scheme == "az":
        from raggity.store.azure_objects import AzureContainer  # noqa: PLC0415 - loads the Azure SDK

        return AzureContainer(location)
    if location.scheme == "gs":
        # raggity.store.gcs_objects holds the lease and CURRENT on GCS (tested against an emulator),
        # but no GCS emulator installable here takes Lance's table writes (fake-gcs-server 1.54 has
        # no XML-API PUT; gcp-storage-emulator ignores ifGenerationMatch), so an index on gs:// would
        # ship untested: it stops here until one does (docs/scaling.md).
        raise IndexLocationError(
            f"{location.uri}: gs:// indexes are not enabled yet (Lance's writes to GCS are untested here)",
            "use an s3:// or az:// index",
        )
    if location.scheme == "s3":
        return S3Bucket(location)
    raise IndexLocationError(
        f"{location.uri}: not an object-store URI", "use an s3://, az:// or gs:// [index] path"
    )


class S3Bucket:
    """Objects under one index's prefix in an S3-compatible bucket."""

    def __init__(self, location: IndexLocation, *, client: Any | None = None) -> None:
        # boto3 comes with the scale extra, not the default install: one line naming it if absent.
        require("boto3", "an index on object storage")
        self._location = location
        self._bucket, self._prefix = location.bucket_and_key()
        self._client = client if client is not None else _client(location.storage_options)

    def _key(self, name: str) -> str:
        return f"{self._prefix}/{name}" if self._prefix else name

    def create(self, name: str, body: bytes) -> str:
        """Writes `name` only if it does not exist; its etag, or PreconditionFailedError."""
        return self._put(name, body, IfNoneMatch="*")

    def replace(self, name: str, body: bytes, etag: str) -> str:
        """Overwrites `name` only if it still has `etag`; the new etag, or PreconditionFailedError."""
        return self._put(name, body, IfMatch=etag)

    def get(self, name: str) -> StoredObject | None:
        from botocore.exceptions import ClientError  # noqa: PLC0415 - only a remote index needs boto3

        try:
            found = self._client.get_object(Bucket=self._bucket, Key=self._key(name))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise object_store_error(exc, self._location) from None
        except Exception as exc:
            raise object_store_error(exc, self._location) from None
        return StoredObject(found["Body"].read(), str(found["ETag"]))

    def names(self, prefix: str) -> list[str]:
        """The names (relative to the index's prefix) of the objects under `prefix`."""
        base = self._key("")
        found: list[str] = []
        try:
            pages = self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self._bucket, Prefix=self._key(prefix)
            )
            for page in pages:
                found += [str(item["Key"])[len(base) :] for item in page.get("Contents", [])]
        except Exception as exc:
            raise object_store_error(exc, self._location) from None
        return found

    def delete(self, name: str, etag: str) -> None:
        """Deletes `name` only if it still has `etag` (a lease taken over by another writer stays)."""
        from botocore.exceptions import ClientError  # noqa: PLC0415 - only a remote index needs boto3

        try:
            self._client.delete_object(Bucket=self._bucket, Key=self._key(name), IfMatch=etag)
        except ClientError as exc:
            if _precondition(exc):
                raise PreconditionFailedError(name) from None
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return
            raise object_store_error(exc, self._location) from None
        except Exception as exc:
            raise object_store_error(exc, self._location) from None

    def _put(self, name: str, body: bytes, **condition: str) -> str:
        from botocore.exceptions import ClientError  # noqa: PLC0415 - only a remote index needs boto3

        try:
            done = self._client.put_object(Bucket=self._bucket, Key=self._key(name), Body=body, **condition)
        except ClientError as exc:
            if _precondition(exc):
                raise PreconditionFailedError(name) from None
            raise object_store_error(exc, self._location) from None
        except Exception as exc:
            raise object_store_error(exc, self._location) from None
        return str(done["ETag"])


def _precondition(exc: Any) -> bool:
    # 409 ConditionalRequestConflict: a concurrent conditional write to the same key won the race.
    return exc.response.get("Error", {}).get("Code") in ("PreconditionFailed", "ConditionalRequestConflict")


def _client(options: Mapping[str, str]) -> Any:
    import boto3  # noqa: PLC0415 - only a remote index needs boto3
    from botocore.config import Config  # noqa: PLC0415 - only a remote index needs boto3

    endpoint = options.get("endpoint") or options.get("aws_endpoint")
    region = options.get("region") or options.get("aws_region")
    return boto3.client(
        "s3",
        endpoint_url=endpoint or None,
        region_name=region or None,
        config=Config(retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=5, read_timeout=30),
    )
