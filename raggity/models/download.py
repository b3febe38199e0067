"""Resumable, checksummed model downloads over plain HTTP(S), published atomically."""

from __future__ import annotations

import functools
import http.client
import json
import os
import re
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import Message
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from raggity.core.atomic_file import atomic_write_text, fsync_dir
from raggity.core.errors import DownloadError, ModelError, os_reason
from raggity.models.hashing import sha256_file

ProgressCallback = Callable[[int, int | None], None]
"""(bytes_done, total_or_None), called as data arrives."""

HUB_URL_ENV = "RAGGITY_HUB_URL"
DEFAULT_HUB_URL = "https://huggingface.co"
MANIFEST_NAME = "raggity-model.json"
KNOWN_MODELS: dict[str, str] = {"ms-marco-MiniLM-L-6-v2": "Xenova/ms-marco-MiniLM-L-6-v2"}
# The int8 export: several times faster on CPU, and what the cross-encoder loader prefers.
HUB_FILES = ("tokenizer.json", "onnx/model_quantized.onnx")

_CHUNK = 1 << 16
_SCHEMES = frozenset({"http", "https"})
_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_RESUME_HINT = "run the same command again to resume"


@dataclass(frozen=True)
class DownloadItem:
    """One file to fetch: `relative_path` is where it goes inside the destination folder."""

    url: str
    relative_path: str
    sha256: str | None = None


class _TransferInterruptedError(Exception):
    """The transfer stopped early for a reason worth retrying (the .part file keeps what arrived)."""


def download_file(
    item: DownloadItem,
    dest_dir: Path,
    *,
    progress: ProgressCallback | None = None,
    timeout: float = 30.0,
    retries: int = 3,
    backoff: float = 0.5,
) -> Path:
    """Fetches `item` into dest_dir/relative_path, resuming any earlier .part; returns the final path.

    The final path only ever holds a complete, verified file: data streams into `<name>.part` and is
    renamed into place after the SHA-256 check. `backoff` seconds doubles after each failed attempt.
    """
    path, _ = _fetch(item, dest_dir, progress=progress, timeout=timeout, retries=retries, backoff=backoff)
    return path


def download_all(
    items: Sequence[DownloadItem],
    dest: Path,
    *,
    progress: ProgressCallback | None = None,
    timeout: float = 30.0,
    retries: int = 3,
    backoff: float = 0.5,
) -> Path:
    """Downloads a whole model folder; `dest` appears only once every file is complete and verified.

    Files land in `<dest>.partial` (kept after a failure so that a rerun resumes) together with
    raggity-model.json (each file's size and SHA-256), and the folder is then renamed to `dest`.
    An existing `dest` holding every file is returned untouched. `progress` counts bytes over the
    whole folder; its total grows as each file's size becomes known.
    """
    _check_items(items)
    if dest.exists():
        missing = [item.relative_path for item in items if not _target(item, dest).is_file()]
        if not missing:
            return dest
        raise DownloadError(f"{dest} exists but lacks {', '.join(missing)}", "remove it and pull again")
    partial = dest.with_name(dest.name + ".partial")
    try:
        partial.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DownloadError(f"cannot create {partial}: {os_reason(exc)}") from exc
    records: list[dict[str, object]] = []
    finished = 0
    try:
        for item in items:
            report = None if progress is None else functools.partial(_shifted, progress, finished)
            path, digest = _fetch(
                item, partial, progress=report, timeout=timeout, retries=retries, backoff=backoff
            )
            size = path.stat().st_size
            finished += size
            records.append({"path": item.relative_path, "url": item.url, "size": size, "sha256": digest})
    except DownloadError:
        _remove_if_empty(partial)
        raise
    _write_manifest(partial / MANIFEST_NAME, records)
    try:
        os.rename(partial, dest)
    except OSError as exc:
        raise DownloadError(f"cannot move {partial} to {dest}: {os_reason(exc)}") from exc
    fsync_dir(dest.parent)
    return dest


def verify_download(
    folder: Path, hasher: Callable[[Path], str] = sha256_file, fix: str = "pull the model again"
) -> None:
    """Re-hashes every file listed in the folder's raggity-model.json; ModelError on any difference.

    `hasher` may be a caching one, so that a large model is not re-read on every load."""
    manifest = folder / MANIFEST_NAME
    try:
        records = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        expected = {str(record["path"]): str(record["sha256"]) for record in records}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{manifest}: missing or malformed manifest", fix) from exc
    for relative, digest in expected.items():
        path = folder / relative
        actual = hasher(path) if path.is_file() else "missing"
        if actual != digest:
            raise ModelError(f"{path}: expected sha256 {digest}, got {actual}", fix)


def resolve_pull_spec(name_or_url: str) -> list[DownloadItem]:
    """What `rag models pull` fetches: a .gguf URL, a known short name, or a hub repo id."""
    spec = name_or_url.strip()
    if "://" in spec:
        return [_gguf_item(spec)]
    repo = KNOWN_MODELS.get(spec, spec)
    if not _REPO_ID.fullmatch(repo) or ".." in repo:
        raise DownloadError(
            f"unknown model {spec!r}",
            "give a hub repo id such as Xenova/ms-marco-MiniLM-L-6-v2, a known short name, "
            "or an http(s) URL of a .gguf file",
        )
    base = (os.environ.get(HUB_URL_ENV) or DEFAULT_HUB_URL).rstrip("/")
    return [DownloadItem(f"{base}/{repo}/resolve/main/{name}", name) for name in HUB_FILES]


def _gguf_item(url: str) -> DownloadItem:
    parts = urllib.parse.urlsplit(url)
    name = urllib.parse.unquote(PurePosixPath(parts.path).name)
    if parts.scheme not in _SCHEMES or not name.lower().endswith(".gguf"):
        raise DownloadError(f"cannot pull {url}", "URLs must be http(s) and name a .gguf file")
    if "/" in name or "\\" in name or name.startswith("."):
        raise DownloadError(f"cannot pull {url}: unsafe file name {name!r}")
    return DownloadItem(url, name)


def _shifted(progress: ProgressCallback, base: int, done: int, total: int | None) -> None:
    progress(base + done, None if total is None else base + total)


def _check_items(items: Sequence[DownloadItem]) -> None:
    if not items:
        raise DownloadError("nothing to download")
    paths = [PurePosixPath(item.relative_path) for item in items]
    if len(set(paths)) != len(paths) or PurePosixPath(MANIFEST_NAME) in paths:
        raise DownloadError(f"download items must have distinct paths other than {MANIFEST_NAME}")


def _target(item: DownloadItem, dest_dir: Path) -> Path:
    relative = PurePosixPath(item.relative_path)
    if not relative.parts or relative.is_absolute() or any(p in ("..", ".") for p in relative.parts):
        raise DownloadError(f"unsafe download path {item.relative_path!r} for {item.url}")
    return dest_dir.joinpath(*relative.parts)


def _fetch(
    item: DownloadItem,
    dest_dir: Path,
    *,
    progress: ProgressCallback | None,
    timeout: float,
    retries: int,
    backoff: float,
) -> tuple[Path, str]:
    """download_file, also returning the SHA-256 of the file."""
    if urllib.parse.urlsplit(item.url).scheme not in _SCHEMES:
        raise DownloadError(f"cannot download {item.url}", "only http and https URLs are supported")
    target = _target(item, dest_dir)
    expected = item.sha256.lower() if item.sha256 else None
    if target.is_file():
        # Only complete, verified files are ever renamed to a final path.
        digest = sha256_file(target)
        if expected is None or digest == expected:
            size = target.stat().st_size
            if progress is not None:
                progress(size, size)
            return target, digest
    part = target.with_name(target.name + ".part")
    try:
        part.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DownloadError(f"cannot create {part.parent}: {os_reason(exc)}") from exc
    failures = 0
    while True:
        try:
            _transfer(item.url, part, progress, timeout)
            break
        except _TransferInterruptedError as exc:
            failures += 1
            if failures > retries:
                raise DownloadError(
                    f"download of {item.url} failed after {failures} attempts: {exc}", _RESUME_HINT
                ) from exc
            time.sleep(backoff * 2 ** (failures - 1))
    digest = sha256_file(part)
    if expected is not None and digest != expected:
        part.unlink(missing_ok=True)
        raise DownloadError(
            f"checksum mismatch for {item.url}: expected {expected}, got {digest}",
            "the file changed upstream or was corrupted in transit; try again",
        )
    os.replace(part, target)
    fsync_dir(target.parent)
    return target, digest


def _transfer(url: str, part: Path, progress: ProgressCallback | None, timeout: float) -> None:
    """One attempt: appends to `part` from its current size, or rewrites it if the server restarts."""
    offset = part.stat().st_size if part.exists() else 0
    # identity: a compressed body would make byte ranges refer to the wrong representation.
    headers = {"User-Agent": "raggity", "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        response = _opener().open(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and offset:
            # The .part is not a prefix of what the server holds now: start again from zero.
            part.unlink(missing_ok=True)
            raise _TransferInterruptedError("server refused to resume; restarting") from exc
        if exc.code in _TRANSIENT_STATUS:
            raise _TransferInterruptedError(f"HTTP {exc.code}") from exc
        raise DownloadError(
            f"download failed: HTTP {exc.code} {exc.reason} for {url}", "check the model name or URL"
        ) from exc
    except (OSError, http.client.HTTPException) as exc:
        raise _TransferInterruptedError(_describe(exc)) from exc
    with response:
        start, total = _body_range(response.status, response.headers, url)
        if start != offset:
            if start != 0:
                # A range other than the one asked for cannot be appended safely.
                part.unlink(missing_ok=True)
                raise _TransferInterruptedError(
                    f"server sent bytes from {start}, expected {offset}; restarting"
                )
            offset = 0  # 200: the server ignored Range and sends the whole file again
        done = offset
        with _open_part(part, append=offset > 0) as out:
            while True:
                try:
                    chunk = response.read(_CHUNK)
                except (OSError, http.client.HTTPException) as exc:
                    raise _TransferInterruptedError(_describe(exc)) from exc
                if not chunk:
                    break
                _write(out, chunk, part)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
            _sync(out, part)
    # urllib returns a short body silently when the peer closes early; that is a dropped connection.
    if total is not None and done < total:
        raise _TransferInterruptedError(f"connection closed after {done} of {total} bytes")


def _body_range(status: int, headers: Message, url: str) -> tuple[int, int | None]:
    """(offset of the first body byte in the file, file size or None)."""
    if status == 200:
        length = headers.get("Content-Length")
        return 0, int(length) if length and length.isdigit() else None
    if status == 206:
        match = _CONTENT_RANGE.fullmatch((headers.get("Content-Range") or "").strip())
        if match is None:
            raise DownloadError(f"download failed: malformed Content-Range for {url}")
        size = match.group(3)
        return int(match.group(1)), None if size == "*" else int(size)
    raise DownloadError(f"download failed: unexpected HTTP {status} for {url}")


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """urllib also follows redirects to ftp://; a model download must stay on HTTP(S)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if urllib.parse.urlsplit(newurl).scheme not in _SCHEMES:
            raise DownloadError(f"download of {req.full_url} redirected to unsupported URL {newurl}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener() -> urllib.request.OpenerDirector:
    # Built per attempt so that proxy environment variables are read when the download runs.
    return urllib.request.build_opener(_HttpOnlyRedirects())


def _describe(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError):
        return f"{type(exc).__name__}: {exc.reason}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _open_part(part: Path, *, append: bool) -> BinaryIO:
    try:
        return part.open("ab") if append else part.open("wb")
    except OSError as exc:
        raise DownloadError(f"cannot write {part}: {os_reason(exc)}") from exc


def _write(out: BinaryIO, chunk: bytes, part: Path) -> None:
    # Disk errors are not worth retrying the network for.
    try:
        out.write(chunk)
    except OSError as exc:
        raise DownloadError(f"cannot write {part}: {os_reason(exc)}") from exc


def _sync(out: BinaryIO, part: Path) -> None:
    try:
        out.flush()
        os.fsync(out.fileno())
    except OSError as exc:
        raise DownloadError(f"cannot write {part}: {os_reason(exc)}") from exc


def _write_manifest(path: Path, records: list[dict[str, object]]) -> None:
    try:
        atomic_write_text(path, json.dumps({"format": 1, "files": records}, indent=2) + "\n")
    except OSError as exc:
        raise DownloadError(f"cannot write {path}: {os_reason(exc)}") from exc


def _remove_if_empty(folder: Path) -> None:
    """Drops a .partial folder that holds no downloaded bytes; one with data stays for resuming."""
    if folder.is_dir() and not any(p.is_file() for p in folder.rglob("*")):
        shutil.rmtree(folder, ignore_errors=True)
