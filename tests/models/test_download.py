"""Model downloads against a real HTTP server on 127.0.0.1 that can drop, stall, corrupt and ignore Range."""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal

import pytest

from raggity.core.errors import DownloadError, ModelError
from raggity.models.download import (
    MANIFEST_NAME,
    DownloadItem,
    download_all,
    download_file,
    resolve_pull_spec,
    verify_download,
)

Failure = Literal["close", "reset", "stall"]
PAYLOAD = bytes(range(256)) * 1200  # 300 KiB: several read chunks
STALL_SECONDS = 1.0


@dataclass
class Behaviour:
    """What the server does; tests mutate it before making requests."""

    files: dict[str, bytes] = field(default_factory=dict)
    fail_after: dict[str, tuple[Failure, int]] = field(default_factory=dict)
    fail_always: set[str] = field(default_factory=set)
    corrupt: set[str] = field(default_factory=set)
    ignore_range: set[str] = field(default_factory=set)
    requests: list[tuple[str, str | None]] = field(default_factory=list)

    def ranges(self, path: str) -> list[str | None]:
        return [header for seen, header in self.requests if seen == path]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviour = behaviour
        self.lock = threading.Lock()

    def handle_error(self, request: object, client_address: object) -> None:
        """Writes to connections the test broke on purpose fail; that is expected."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        behaviour = self.server.behaviour
        header = self.headers.get("Range")
        with self.server.lock:
            first = self.path not in {seen for seen, _ in behaviour.requests}
            behaviour.requests.append((self.path, header))
        body = behaviour.files.get(self.path)
        if body is None:
            self.send_error(404, "Not Found")
            return
        if self.path in behaviour.corrupt:
            body = bytes(b ^ 0xFF for b in body[:16]) + body[16:]
        start = 0
        if header and self.path not in behaviour.ignore_range:
            start = int(header.removeprefix("bytes=").removesuffix("-"))
        if start >= len(body) > 0:
            self.send_error(416, "Range Not Satisfiable")
            return
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        failure = behaviour.fail_after.get(self.path)
        if failure is not None and (first or self.path in behaviour.fail_always):
            self._fail(body[start:], *failure)
        else:
            self.wfile.write(body[start:])

    def _fail(self, rest: bytes, how: Failure, n: int) -> None:
        self.wfile.write(rest[:n])
        self.wfile.flush()
        if how == "stall":
            time.sleep(STALL_SECONDS)
        elif how == "reset":
            # SO_LINGER 0 makes close() send RST: the client sees ConnectionResetError.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        self.close_connection = True


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy configured in the environment would otherwise receive the loopback requests.
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")


@pytest.fixture
def server() -> Iterator[tuple[Behaviour, str]]:
    behaviour = Behaviour()
    httpd = _Server(behaviour)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield behaviour, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_download_with_progress(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    behaviour.files["/m.gguf"] = PAYLOAD
    seen: list[tuple[int, int | None]] = []
    item = DownloadItem(f"{base}/m.gguf", "sub/m.gguf", _sha(PAYLOAD))
    path = download_file(item, tmp_path, progress=lambda done, total: seen.append((done, total)))
    assert path == tmp_path / "sub" / "m.gguf"
    assert path.read_bytes() == PAYLOAD
    assert not (tmp_path / "sub" / "m.gguf.part").exists()
    counts = [done for done, _ in seen]
    assert len(counts) > 1
    assert counts == sorted(set(counts))
    assert counts[-1] == len(PAYLOAD)
    assert {total for _, total in seen} == {len(PAYLOAD)}


@pytest.mark.parametrize("how", ["close", "reset", "stall"])
def test_dropped_connection_resumes(server: tuple[Behaviour, str], tmp_path: Path, how: Failure) -> None:
    behaviour, base = server
    behaviour.files["/m.gguf"] = PAYLOAD
    behaviour.fail_after["/m.gguf"] = (how, 100_000)
    item = DownloadItem(f"{base}/m.gguf", "m.gguf", _sha(PAYLOAD))
    path = download_file(item, tmp_path, timeout=0.3 if how == "stall" else 5.0, backoff=0.0)
    assert path.read_bytes() == PAYLOAD
    ranges = behaviour.ranges("/m.gguf")
    assert ranges[0] is None
    assert len(ranges) == 2
    resumed_from = int(str(ranges[1]).removeprefix("bytes=").removesuffix("-"))
    assert 0 < resumed_from <= 100_000
    assert str(ranges[1]).endswith("-")
    assert not (tmp_path / "m.gguf.part").exists()


def test_existing_part_is_resumed_with_range(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    behaviour.files["/m.gguf"] = PAYLOAD
    (tmp_path / "m.gguf.part").write_bytes(PAYLOAD[:1234])
    seen: list[int] = []
    item = DownloadItem(f"{base}/m.gguf", "m.gguf", _sha(PAYLOAD))
    download_file(item, tmp_path, progress=lambda done, _: seen.append(done))
    assert (tmp_path / "m.gguf").read_bytes() == PAYLOAD
    assert behaviour.ranges("/m.gguf") == ["bytes=1234-"]
    assert seen[0] > 1234
    assert seen[-1] == len(PAYLOAD)


def test_server_ignoring_range_restarts(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    behaviour.files["/m.gguf"] = PAYLOAD
    behaviour.ignore_range.add("/m.gguf")
    (tmp_path / "m.gguf.part").write_bytes(b"stale bytes from another version")
    item = DownloadItem(f"{base}/m.gguf", "m.gguf", _sha(PAYLOAD))
    assert download_file(item, tmp_path).read_bytes() == PAYLOAD
    assert behaviour.ranges("/m.gguf") == ["bytes=32-"]


def test_checksum_mismatch_leaves_nothing(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    behaviour.files["/m.gguf"] = PAYLOAD
    behaviour.corrupt.add("/m.gguf")
    item = DownloadItem(f"{base}/m.gguf", "m.gguf", _sha(PAYLOAD))
    with pytest.raises(DownloadError, match="checksum mismatch") as info:
        download_file(item, tmp_path)
    assert item.url in str(info.value)
    assert _sha(PAYLOAD) in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_http_404_is_one_line_without_retries(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    url = f"{base}/missing.gguf"
    with pytest.raises(DownloadError) as info:
        download_file(DownloadItem(url, "m.gguf"), tmp_path, backoff=0.0)
    message = str(info.value)
    assert "404" in message
    assert url in message
    assert "\n" not in message
    assert len(behaviour.requests) == 1
    assert list(tmp_path.iterdir()) == []


def test_retries_run_out_and_keep_the_part(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    behaviour.files["/m.gguf"] = PAYLOAD
    behaviour.fail_after["/m.gguf"] = ("close", 1000)
    behaviour.fail_always.add("/m.gguf")
    with pytest.raises(DownloadError, match="failed after 3 attempts"):
        download_file(DownloadItem(f"{base}/m.gguf", "m.gguf"), tmp_path, retries=2, backoff=0.0)
    assert len(behaviour.requests) == 3
    assert (tmp_path / "m.gguf.part").read_bytes() == PAYLOAD[:3000]
    assert not (tmp_path / "m.gguf").exists()


def test_unreachable_server_is_a_download_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    item = DownloadItem(f"http://127.0.0.1:{port}/m.gguf", "m.gguf")
    with pytest.raises(DownloadError, match="failed after 2 attempts"):
        download_file(item, tmp_path, retries=1, backoff=0.0)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/m.gguf", "m.gguf"])
def test_only_http_urls(tmp_path: Path, url: str) -> None:
    with pytest.raises(DownloadError, match="only http and https"):
        download_file(DownloadItem(url, "m.gguf"), tmp_path)


@pytest.mark.parametrize("relative", ["../escape.gguf", "/abs.gguf", "", "a/../../b"])
def test_unsafe_relative_paths(tmp_path: Path, relative: str) -> None:
    with pytest.raises(DownloadError, match="unsafe download path"):
        download_file(DownloadItem("http://127.0.0.1:9/m.gguf", relative), tmp_path)


def _folder_items(base: str) -> list[DownloadItem]:
    return [
        DownloadItem(f"{base}/repo/tokenizer.json", "tokenizer.json"),
        DownloadItem(f"{base}/repo/model.onnx", "onnx/model.onnx", _sha(PAYLOAD)),
    ]


def test_download_all_publishes_a_verified_folder(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    tokenizer = b'{"version": "1.0"}'
    behaviour.files.update({"/repo/tokenizer.json": tokenizer, "/repo/model.onnx": PAYLOAD})
    dest = tmp_path / "models" / "reranker"
    seen: list[tuple[int, int | None]] = []
    result = download_all(_folder_items(base), dest, progress=lambda d, t: seen.append((d, t)))
    assert result == dest
    assert (dest / "tokenizer.json").read_bytes() == tokenizer
    assert (dest / "onnx" / "model.onnx").read_bytes() == PAYLOAD
    assert not dest.with_name("reranker.partial").exists()
    manifest = json.loads((dest / MANIFEST_NAME).read_text())
    assert {r["path"]: r["sha256"] for r in manifest["files"]} == {
        "tokenizer.json": _sha(tokenizer),
        "onnx/model.onnx": _sha(PAYLOAD),
    }
    counts = [done for done, _ in seen]
    assert counts == sorted(counts)
    assert seen[-1] == (len(tokenizer) + len(PAYLOAD), len(tokenizer) + len(PAYLOAD))
    verify_download(dest)
    (dest / "tokenizer.json").write_bytes(b"{}")
    with pytest.raises(ModelError, match="expected sha256"):
        verify_download(dest)


def test_download_all_is_atomic_and_resumable(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    behaviour.files["/repo/tokenizer.json"] = b"{}"
    dest = tmp_path / "reranker"
    with pytest.raises(DownloadError, match="404"):
        download_all(_folder_items(base), dest, backoff=0.0)
    assert not dest.exists()
    # The completed file waits in the .partial folder, so the next attempt does not fetch it again.
    assert (tmp_path / "reranker.partial" / "tokenizer.json").is_file()
    behaviour.files["/repo/model.onnx"] = PAYLOAD
    behaviour.requests.clear()
    assert download_all(_folder_items(base), dest) == dest
    assert [path for path, _ in behaviour.requests] == ["/repo/model.onnx"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reranker"]


def test_failed_download_all_with_no_data_leaves_no_folders(
    server: tuple[Behaviour, str], tmp_path: Path
) -> None:
    _, base = server
    with pytest.raises(DownloadError):
        download_all(_folder_items(base), tmp_path / "reranker")
    assert list(tmp_path.iterdir()) == []


def test_checksum_failure_in_folder_leaves_no_dest(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    behaviour.files.update({"/repo/tokenizer.json": b"{}", "/repo/model.onnx": PAYLOAD})
    behaviour.corrupt.add("/repo/model.onnx")
    dest = tmp_path / "reranker"
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download_all(_folder_items(base), dest)
    assert not dest.exists()
    assert not list(tmp_path.rglob("*.part"))


def test_existing_complete_folder_is_left_alone(server: tuple[Behaviour, str], tmp_path: Path) -> None:
    behaviour, base = server
    dest = tmp_path / "reranker"
    (dest / "onnx").mkdir(parents=True)
    (dest / "tokenizer.json").write_text("{}")
    (dest / "onnx" / "model.onnx").write_bytes(b"local")
    assert download_all(_folder_items(base), dest) == dest
    assert behaviour.requests == []
    assert (dest / "onnx" / "model.onnx").read_bytes() == b"local"


def test_existing_incomplete_folder_is_an_error(tmp_path: Path) -> None:
    dest = tmp_path / "reranker"
    dest.mkdir()
    with pytest.raises(DownloadError, match="lacks"):
        download_all(_folder_items("http://127.0.0.1:9"), dest)


def test_resolve_gguf_url() -> None:
    url = "https://example.com/models/Qwen2.5%20Coder.Q4_K_M.gguf?download=true"
    assert resolve_pull_spec(url) == [DownloadItem(url, "Qwen2.5 Coder.Q4_K_M.gguf")]


@pytest.mark.parametrize("spec", ["https://example.com/model.bin", "ftp://example.com/m.gguf", "no such"])
def test_resolve_rejects(spec: str) -> None:
    with pytest.raises(DownloadError):
        resolve_pull_spec(spec)


def test_resolve_repo_id_defaults_to_the_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGGITY_HUB_URL", raising=False)
    items = resolve_pull_spec("Xenova/ms-marco-MiniLM-L-6-v2")
    root = "https://huggingface.co/Xenova/ms-marco-MiniLM-L-6-v2/resolve/main"
    assert items == [
        DownloadItem(f"{root}/tokenizer.json", "tokenizer.json"),
        DownloadItem(f"{root}/onnx/model_quantized.onnx", "onnx/model_quantized.onnx"),
    ]


def test_pull_short_name_from_overridden_hub(
    server: tuple[Behaviour, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    behaviour, base = server
    monkeypatch.setenv("RAGGITY_HUB_URL", base + "/")
    root = "/Xenova/ms-marco-MiniLM-L-6-v2/resolve/main"
    behaviour.files.update({f"{root}/tokenizer.json": b"{}", f"{root}/onnx/model_quantized.onnx": PAYLOAD})
    items = resolve_pull_spec("ms-marco-MiniLM-L-6-v2")
    assert all(item.url.startswith(f"{base}{root}/") for item in items)
    dest = download_all(items, tmp_path / "ms-marco-MiniLM-L-6-v2")
    assert (dest / "onnx" / "model_quantized.onnx").read_bytes() == PAYLOAD
    verify_download(dest)
