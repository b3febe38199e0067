"""Every configuration key: its type, default, allowed range and one-line help, in one place.

The loader, `rag init`, raggity.toml.example and docs/configuration.md all derive from these
dataclasses, so a key cannot exist in one and be missing from another.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from raggity.config.location import IndexLocation, is_uri, parse_index_location


class Reach(Enum):
    """How a key can reach outside its config file's folder. A config found by walking up the tree
    may use such a value only once the user trusts it (`rag trust`, see raggity/config/trust.py)."""

    WHEN_SET = "when set"  # true, or any non-empty string
    PATH_OUTSIDE = "path outside"  # a path, or list of paths, resolving outside the config's folder
    MODEL_AS_PATH = "model as path"  # a model name read as a path: has a `/`, or starts with `.` or `~`
    NOT_A_FILE_NAME = "not a file name"  # a file name that is a path: has a `/`, or is `.` or `..`


# Threads are created up front: 100,000 ONNX Runtime threads took 16 GB before the first query, and
# as many llama.cpp threads aborted the process. More than this helps no machine raggity runs on.
MAX_THREADS = 256


def key(
    default: Any,
    help: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    reach: Reach | None = None,
    choices: tuple[str, ...] | None = None,
    url: bool = False,
) -> Any:
    """A config field with its help text, inclusive numeric range (or the strings it may be), how
    it may reach outside, and whether it is a URL (checked by raggity.config.urls: no password)."""
    meta = {"help": help, "lo": lo, "hi": hi, "reach": reach, "choices": choices, "url": url}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class IndexConfig:
    path: str = key(
        ".raggity",
        "Index folder, relative to this file (LanceDB, Tantivy, manifest, caches), or an s3://, gs:// or "
        "az:// URI of an index on object storage (see docs/scaling.md).",
        reach=Reach.PATH_OUTSIDE,
    )
    root: str = key(
        "",
        'Folder that indexed files are recorded relative to, relative to this file (".": this file\'s '
        "folder; empty: absolute paths), so that a shared index's citations open on every checkout; "
        "files outside it keep absolute paths.",
        reach=Reach.PATH_OUTSIDE,
    )
    keep_versions_seconds: int = key(
        600,
        "Replaced versions of the index stay this long for readers still reading them (a long ask, "
        "rag mcp, a teammate's search), then rag compact and the cleanup after an ingest delete them.",
        lo=0,
        hi=604_800,
    )
    compact_after_ingest: bool = key(
        True, "After an ingest that changed the index, delete the versions older than keep_versions_seconds."
    )
    vector_index_min_rows: int = key(
        100_000,
        "Chunks from which ingest builds an approximate (IVF-SQ) vector index and searches through it; "
        "below, search is exact (see docs/scaling.md).",
        lo=1000,
    )
    # A table: [index.storage]. Values are strings, numbers or true/false; see raggity.config.location.
    storage: dict[str, str] = key(
        {},
        "Object-store connection options passed to LanceDB/Lance (endpoint, region, allow_http, ...) "
        "for an index at a URI; never credentials, which come from the environment.",
        reach=Reach.WHEN_SET,
    )


@dataclass(frozen=True)
class IngestConfig:
    paths: list[str] = key(
        [],
        "Folders `rag ingest` reads when no PATH is given, relative to this file.",
        reach=Reach.PATH_OUTSIDE,
    )
    include: list[str] = key([], "Only files matching one of these globs are read (empty: every known type).")
    exclude: list[str] = key([], "Files matching any of these globs are skipped.")
    ignore_files: list[str] = key(
        [".gitignore", ".ragignore"],
        "Gitignore-style files honoured in every folder.",
        reach=Reach.NOT_A_FILE_NAME,
    )
    chunk_tokens: int = key(256, "Tokens per retrievable chunk (embedder tokens).", lo=16, hi=510)
    parent_tokens: int = key(1024, "Tokens per parent passage used by parent_document expansion.", lo=16)
    max_file_mb: float = key(64.0, "Larger files are skipped with a warning.", lo=0.001)
    max_file_chars: int = key(
        5_000_000,
        "Files whose extracted text is longer are skipped with a warning; reading stops there.",
        lo=1000,
    )
    follow_symlinks: bool = key(
        False, "Follow symbolic links that point outside the ingested folder.", reach=Reach.WHEN_SET
    )
    include_hidden: bool = key(False, "Also read hidden files and folders (names starting with a dot).")
    include_generated: bool = key(
        False,
        "Also read generated, minified and vendored files (lock files, *.min.js, vendor/...), and the "
        "source of an HTML page that is read (git-stash.txt next to git-stash.html, Sphinx's "
        "_sources/intro.rst.txt for intro.html).",
    )
    engine: str = key(
        "local",
        "How `rag ingest` reads, chunks and embeds: local (in this process) or ray (Ray Data stages on a "
        "Ray cluster; needs pip install 'raggity[scale]' and an index at an s3:// URI).",
        choices=("local", "ray"),
    )
    ray_address: str = key(
        "",
        "Ray cluster for engine = ray (empty: $RAY_ADDRESS, else a Ray started on this machine for the "
        "ingest).",
        reach=Reach.WHEN_SET,
        url=True,
    )
    ocr: str = key(
        "auto",
        "Scanned PDF pages (no text layer) and .png/.jpg/.tif images: auto (read by OCR when pip install "
        "'raggity[ocr]' is installed, else skipped with a line saying so) or off (skipped).",
        choices=("auto", "off"),
    )
    ocr_max_pages: int = key(
        50,
        "Pages per file read by OCR (about 10 s a page on 2 cores); later pages are reported unread.",
        lo=1,
    )


@dataclass(frozen=True)
class EmbeddingConfig:
    model: str = key(
        "all-MiniLM-L6-v2",
        "Embedding model name (a packaged default or a pulled model).",
        reach=Reach.MODEL_AS_PATH,
    )
    model_path: str = key(
        "",
        "Folder with model.onnx (or onnx/model.onnx) and tokenizer.json; overrides model.",
        reach=Reach.WHEN_SET,
    )
    max_tokens: int = key(
        320,
        "Longest input the embedder sees: chunk_tokens plus [CLS]/[SEP] and the heading trail.",
        lo=8,
        hi=512,
    )
    batch_size: int = key(
        32, "Most chunks per ONNX call (a call also stops at 2,048 padded tokens).", lo=1, hi=1024
    )
    threads: int = key(
        0,
        "ONNX Runtime threads (0: one per CPU this process may use, after affinity and cgroup quota).",
        lo=0,
        hi=MAX_THREADS,
    )
    providers: list[str] = key(
        [],
        "ONNX Runtime execution providers for the embedder and reranker, best first (empty: "
        "CUDAExecutionProvider, CoreMLExecutionProvider or DmlExecutionProvider when onnxruntime has "
        "it, else CPUExecutionProvider).",
    )


@dataclass(frozen=True)
class RetrievalConfig:
    # Bounded: Tantivy reserves room for every hit asked for, and a billion aborted the process.
    candidates: int = key(
        30, "Hits taken from each of the dense and BM25 lists before fusion.", lo=1, hi=10_000
    )
    top_k: int = key(5, "Chunks given to the model (and shown by `rag search`).", lo=1)
    hybrid: bool = key(True, "Fuse BM25 with dense search; false uses dense search alone.")
    rrf_k: int = key(60, "Reciprocal rank fusion constant k in 1/(k + rank).", lo=1)
    rerank: bool = key(True, "Reorder fused candidates with the cross-encoder when it is installed.")
    rerank_model: str = key(
        "ms-marco-MiniLM-L-6-v2",
        "Cross-encoder: a model name under the models folder, or a folder path.",
        reach=Reach.MODEL_AS_PATH,
    )
    rerank_max_tokens: int = key(512, "Longest query + passage pair the cross-encoder sees.", lo=16, hi=512)
    dedup_cosine: float = key(0.92, "Drop a candidate this similar (cosine) to a better one.", lo=0.0, hi=1.0)
    sufficiency_floor: float = key(
        0.25, "Abstain when the best dense cosine is below this (see docs/retrieval.md).", lo=0.0, hi=1.0
    )
    relevance_floor: float = key(
        0.0, "Drop candidates whose rerank score is below this (0: off).", lo=0.0, hi=1.0
    )
    parent_document: bool = key(False, "Give the model each hit's surrounding parent passage.")
    hyde: bool = key(False, "Also search with the embedding of an LLM-written hypothetical answer.")
    step_back: bool = key(False, "Also search with a broader question written by the LLM.")
    expand: bool = key(False, "Also search with expand_n LLM-written rephrasings.")
    expand_n: int = key(3, "Rephrasings written when expansion is on.", lo=1, hi=10)
    graph: bool = key(False, "Add chunks of entities linked to the question (needs `rag graph-build`).")
    graph_hops: int = key(1, "Graph neighbourhood depth for graph retrieval.", lo=0, hi=4)
    bm25_tokenizer: str = key(
        "en_stem",
        "How keyword search splits text into words: en_stem (English words, stemmed) or multilingual "
        "(words of any script whole and unstemmed, code identifiers whole, Chinese, Japanese and Korean "
        "as overlapping character pairs). Changing it rebuilds the index at the next ingest.",
        choices=("en_stem", "multilingual"),
    )


@dataclass(frozen=True)
class GenerationConfig:
    model: str = key(
        "qwen2.5-coder-1.5b-instruct",
        "Generator: a packaged model name, a pulled or added model (rag models list), or an Ollama model as ollama:NAME:TAG.",
        reach=Reach.MODEL_AS_PATH,
    )
    model_path: str = key("", "Path to any GGUF file; overrides model.", reach=Reach.WHEN_SET)
    max_tokens: int = key(512, "Most tokens in one answer.", lo=1)
    source_tokens: int = key(
        400, "Most prompt tokens of source text, best sources first (fewer: the answer starts sooner).", lo=64
    )
    temperature: float = key(0.1, "Sampling temperature (0: greedy).", lo=0.0, hi=2.0)
    # Bounded: llama.cpp takes memory in proportion before it finds a context too large, 20 GB in
    # 40 s for a billion tokens. 131,072 is the longest the packaged models can be stretched to.
    context_size: int = key(
        4096,
        "Model context window in tokens (prompt + answer; `rag ask` loads only what its one question can use, up to this).",
        lo=512,
        hi=131_072,
    )
    threads: int = key(
        0,
        "llama.cpp threads (0: one per CPU this process may use, after affinity and cgroup quota).",
        lo=0,
        hi=MAX_THREADS,
    )
    gpu_layers: int = key(
        -1,
        "Model layers offloaded to the GPU (-1: all when llama-cpp-python was built with GPU offload, "
        "else none; 0: CPU only).",
        lo=-1,
    )
    seed: int = key(0, "Sampling seed, for repeatable answers.", lo=0)
    cache: bool = key(False, "Reuse answers for the same question over the same retrieved chunks.")


SECTIONS: dict[str, type] = {
    "index": IndexConfig,
    "ingest": IngestConfig,
    "embedding": EmbeddingConfig,
    "retrieval": RetrievalConfig,
    "generation": GenerationConfig,
}


def data_home() -> Path:
    """Where raggity keeps state that belongs to no config file."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "raggity"


@dataclass(frozen=True)
class Config:
    index: IndexConfig = field(default_factory=IndexConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    # The file this came from; None means built-in defaults with the index in the data home.
    source: Path | None = None

    @property
    def base_dir(self) -> Path:
        return self.source.parent if self.source is not None else data_home()

    @property
    def index_location(self) -> IndexLocation:
        """Where the index lives: its local folder (index_dir), or its object-store URI and options."""
        if not is_uri(self.index.path):
            if self.index.storage:  # refused: options would silently do nothing for a folder
                parse_index_location(self.index.path, self.index.storage, base_dir=self.base_dir)
            return IndexLocation(str(self.index_dir))
        return parse_index_location(self.index.path, self.index.storage, base_dir=self.base_dir)

    @property
    def index_dir(self) -> Path:
        """Relative index paths resolve against the config file, never the current folder. For an
        index on object storage: a folder of this user's local state for it (the answer cache)."""
        if is_uri(self.index.path):
            digest = hashlib.sha256(self.index.path.encode("utf-8")).hexdigest()[:16]
            return data_home() / "remote" / digest
        path = Path(self.index.path).expanduser()
        if path.is_absolute():
            return path
        if self.source is None:
            return data_home() / "index"
        return (self.base_dir / path).resolve()

    @property
    def source_root(self) -> Path | None:
        """The folder indexed files are named relative to ([index] root); None where files are named
        by their absolute paths (no root set, or no config file)."""
        return self.resolve(self.index.root) if self.index.root and self.source is not None else None

    def resolve(self, path: str) -> Path:
        return (self.base_dir / Path(path).expanduser()).resolve()
