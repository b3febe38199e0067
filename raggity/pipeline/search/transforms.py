"""Query transforms written by the local LLM: HyDE, step-back, expansion and decomposition.

Each transform is one chat call. Expansion, step-back and decomposition ask for JSON constrained by
a JSON schema (grammar-constrained decoding), so even a 135M model returns parseable output; the
parser is defensive anyway (a reply cut off by max_tokens still yields its complete strings), and
falls back to the original question when nothing usable comes back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from raggity.core.protocols import Generator
from raggity.core.quoting import neutralise
from raggity.core.trace import Staged, TraceRecorder
from raggity.store.cache_store import CacheStore, digest

# Part of every cached transform's key: change it whenever the prompts below change. It began as the
# answer prompt's version ("10") and moves on its own now that the search room owns its prompts.
TRANSFORM_PROMPT_VERSION = "10"
MAX_SUB_QUESTIONS = 4
_MAX_QUESTION_CHARS = 200

HYDE_PROMPT = (
    "Write a short factual passage (two or three sentences) that answers the question, "
    "as it would appear in a reference document. Write only the passage."
)
STEP_BACK_PROMPT = (
    "Rewrite the user's question as one broader, more general question about the underlying topic "
    'or principle. Reply as JSON: {"questions": ["<the broader question>"]}.'
)
EXPAND_PROMPT = (
    "Rewrite the user's question in {n} different ways, using other words and synonyms, keeping its "
    'meaning. Reply as JSON: {{"questions": ["...", ...]}} with at most {n} questions.'
)
DECOMPOSE_PROMPT = (
    "Split the user's question into at most {n} simpler, self-contained sub-questions that together "
    "answer it. If it is already simple, return it alone. "
    'Reply as JSON: {{"questions": ["...", ...]}}.'
)


def questions_schema(max_items: int) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": _MAX_QUESTION_CHARS},
                "minItems": 1,
                "maxItems": max_items,
            }
        },
        "required": ["questions"],
    }


_ECHO = re.compile(r"^(?:sub-?question|question|q)\s*\d*\s*[:.)-]\s*", re.IGNORECASE)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse_questions(raw: str, limit: int, original: str) -> list[str]:
    """The questions in `raw` (JSON, or JSON cut short): stripped, deduplicated, at most `limit`,
    never empty (falls back to `original`)."""
    items: list[object] = []
    try:
        data = json.loads(raw)
        if isinstance(data, dict):
            value = data.get("questions")
            items = list(value) if isinstance(value, list) else [value]
        elif isinstance(data, list):
            items = list(data)
        elif isinstance(data, str):
            items = [data]
    except ValueError:
        # Truncated by max_tokens: keep every complete string after the "questions" key.
        body = raw.split('"questions"', 1)[-1]
        for match in _STRING.finditer(body):
            try:
                items.append(json.loads(f'"{match.group(1)}"'))
            except ValueError:
                continue
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        text = _ECHO.sub("", " ".join(item.split())).strip()
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        out.append(text)
        if len(out) >= limit:
            break
    return out or [" ".join(original.split())]


def clean_passage(raw: str) -> str:
    return " ".join(raw.split())


@dataclass(frozen=True)
class TransformSettings:
    expand_n: int = 3
    temperature: float = 0.1
    hyde_tokens: int = 128
    question_tokens: int = 160


class Transforms:
    """Runs transforms with a generator loaded only on a cache miss; records one trace stage per call
    (`transform:<name>`: outputs, ms, output tokens, whether it came from the cache)."""

    def __init__(
        self,
        generator: Callable[[], Generator],
        *,
        identity: str,
        settings: TransformSettings | None = None,
        cache: CacheStore | None = None,
    ) -> None:
        self._generator = generator
        self._identity = identity
        self.settings = settings or TransformSettings()
        self._cache = cache

    # -- the transforms ---------------------------------------------------------------------------
    def hyde(self, question: str, trace: TraceRecorder) -> list[str]:
        return self._run(
            "hyde",
            question,
            trace,
            HYDE_PROMPT,
            max_tokens=self.settings.hyde_tokens,
            schema=None,
            parse=lambda raw: [p] if (p := clean_passage(raw)) else [],
        )

    def step_back(self, question: str, trace: TraceRecorder) -> list[str]:
        return self._questions("step-back", question, trace, STEP_BACK_PROMPT, 1)

    def expand(self, question: str, trace: TraceRecorder) -> list[str]:
        n = self.settings.expand_n
        return self._questions("expand", question, trace, EXPAND_PROMPT.format(n=n), n)

    def decompose(self, question: str, trace: TraceRecorder) -> list[str]:
        system = DECOMPOSE_PROMPT.format(n=MAX_SUB_QUESTIONS)
        return self._questions("decompose", question, trace, system, MAX_SUB_QUESTIONS)

    def _questions(self, name: str, question: str, trace: TraceRecorder, system: str, n: int) -> list[str]:
        """Up to `n` generated questions, as schema-constrained JSON."""
        return self._run(
            name,
            question,
            trace,
            system,
            max_tokens=self.settings.question_tokens,
            schema=questions_schema(n),
            parse=lambda raw: parse_questions(raw, n, question),
        )

    # -- one LLM call -----------------------------------------------------------------------------
    def _key(self, name: str, question: str) -> str:
        s = self.settings
        return digest(
            "transform",
            name,
            question,
            self._identity,
            s.expand_n,
            TRANSFORM_PROMPT_VERSION,
            {
                "temperature": s.temperature,
                "hyde_tokens": s.hyde_tokens,
                "question_tokens": s.question_tokens,
            },
        )

    def _run(
        self,
        name: str,
        question: str,
        trace: TraceRecorder,
        system: str,
        *,
        max_tokens: int,
        schema: dict[str, object] | None,
        parse: Callable[[str], list[str]],
    ) -> list[str]:
        return trace.run(
            f"transform:{name}",
            1,
            lambda: self._generated(
                name, question, system, max_tokens=max_tokens, schema=schema, parse=parse
            ),
        )

    def _generated(
        self,
        name: str,
        question: str,
        system: str,
        *,
        max_tokens: int,
        schema: dict[str, object] | None,
        parse: Callable[[str], list[str]],
    ) -> Staged[list[str]]:
        key = self._key(name, question)
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None and isinstance(cached.get("outputs"), list) and cached["outputs"]:
            outputs = [str(o) for o in cached["outputs"]]
            return _outputs(outputs, int(cached.get("tokens", 0)), cached=True)
        model = self._generator()
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": f"Question: {neutralise(question.strip())}"},
        ]
        raw = "".join(
            model.stream(
                messages, max_tokens=max_tokens, temperature=self.settings.temperature, json_schema=schema
            )
        )
        outputs = parse(raw)
        tokens = model.count_tokens(raw)
        if self._cache is not None and outputs:
            self._cache.put(key, {"kind": "transform", "name": name, "outputs": outputs, "tokens": tokens})
        return _outputs(outputs, tokens, cached=False)


def _outputs(outputs: list[str], tokens: int, *, cached: bool) -> Staged[list[str]]:
    return Staged(outputs, len(outputs), {"outputs": list(outputs), "tokens": tokens, "cached": cached})
