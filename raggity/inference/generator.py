"""Local text generation with llama.cpp; imported only when an answer is actually generated."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from raggity.core.abandoned_thread import leave_at_exit_while_running
from raggity.core.errors import ContextOverflowError, ModelError
from raggity.inference import llama_runtime
from raggity.inference.cpu_budget import threads_to_use
from raggity.inference.greedy_grammar import GreedyGrammar
from raggity.inference.llama_runtime import gpu_layers_to_use

T = TypeVar("T")
# The thread a model loads in (see `interruptibly`).
LOADER_THREAD = "raggity-model-load"

# Small models loop on a phrase without a penalty; 1.1 is llama.cpp's usual default.
_REPEAT_PENALTY = 1.1
# Tokens llama.cpp evaluates at once within a batch (its n_ubatch), on the CPU and on a GPU.
_CPU_MICRO_BATCH = 128
_GPU_MICRO_BATCH = 512


class LlamaGenerator:
    def __init__(
        self,
        gguf: Path,
        *,
        identity: str,
        context_size: int = 4096,
        threads: int = 0,
        seed: int = 0,
        gpu_layers: int = -1,
    ) -> None:
        """`threads` 0 uses the CPUs this process may run on (raggity/inference/cpu_budget.py);
        `gpu_layers` -1 offloads every layer when the build can (raggity/inference/llama_runtime.py)."""
        bindings = llama_runtime.bindings()
        self.threads = threads_to_use(threads)
        self.gpu_offload_supported = bool(bindings.llama_supports_gpu_offload())
        self.gpu_layers = gpu_layers_to_use(gpu_layers, self.gpu_offload_supported)

        def load() -> Any:
            with _without_extra_buffers() if cpu_has_amx() else contextlib.nullcontext():
                return bindings.Llama(
                    model_path=str(gguf),
                    n_ctx=context_size,
                    # The prompt's threads too: left out, llama-cpp-python takes every CPU of the machine.
                    n_threads=self.threads,
                    n_threads_batch=self.threads,
                    n_gpu_layers=self.gpu_layers,
                    # llama.cpp reserves its compute buffer for a whole micro-batch's logits over the
                    # vocabulary: 306 MB at its default 512 for Qwen2.5's 152k tokens, 76 MB at 128,
                    # and on the CPU prefill took as long at 128 (bench: 1,751 tokens, 18.7 s both).
                    # A GPU build keeps the default: that buffer is the device's, and unmeasured here.
                    n_ubatch=_CPU_MICRO_BATCH if self.gpu_layers == 0 else _GPU_MICRO_BATCH,
                    # Read, not mapped: llama.cpp repacks most weights into its own buffers for the
                    # CPU's fast kernels, and with a mapping the file's pages stayed resident beside
                    # that copy (1.9 GB against 1.35 GB for the 1.5B model, bench: ask peak RSS).
                    use_mmap=False,
                    seed=seed,
                    verbose=False,
                )

        try:
            self._llm: Any = interruptibly(load)
        except (ValueError, RuntimeError) as exc:
            # llama.cpp loads the weights, then allocates the context: a context_size too large for
            # memory fails the second step, which is no fault of the file.
            fix = (
                f"lower [generation] context_size ({context_size} tokens could not be set up)"
                if "llama_context" in str(exc)
                else "check [generation] model and model_path"
            )
            raise ModelError(f"{gguf}: cannot load GGUF model: {exc}", fix) from exc
        self._identity = identity
        self._context_size = context_size

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def context_size(self) -> int:
        return self._context_size

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def stream(
        self,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, object] | None = None,
    ) -> Iterator[str]:
        extra: dict[str, Any] = {}
        guide: GreedyGrammar | None = None
        guarded: _Guarded | None = None
        if json_schema is not None and temperature == 0.0:
            from llama_cpp import LogitsProcessorList  # noqa: PLC0415 - loads the runtime on first use

            # Same tokens as llama's own grammar sampling below, in a fraction of the time.
            guide = GreedyGrammar(self._llm, json_schema, repeat_penalty=_REPEAT_PENALTY)
            guarded = _Guarded(guide, self._llm.token_eos())
            extra["logits_processor"] = LogitsProcessorList([guarded])
        elif json_schema is not None:
            # Grammar-constrained decoding: even a tiny model cannot emit unparseable JSON.
            extra["response_format"] = {"type": "json_object", "schema": json_schema}
        try:
            with _overflow_as_error():
                parts = self._llm.create_chat_completion(
                    messages=list(messages),
                    max_tokens=max_tokens,
                    temperature=temperature,
                    repeat_penalty=1.0 if guide is not None else _REPEAT_PENALTY,
                    stream=True,
                    **extra,
                )
                for part in parts:
                    delta = part["choices"][0]["delta"].get("content")
                    if delta:
                        yield delta
            if guarded is not None:
                guarded.raise_caught()
        finally:
            if guide is not None:
                guide.close()

    def continuation_probability(
        self, messages: Sequence[dict[str, str]], text: str, *, fresh: bool = False
    ) -> float:
        """Probability that the reply to `messages` starts with `text` (greedy, no penalty).

        Runs the ordinary chat completion with `text`'s tokens forced one by one, reading each one's
        probability on the way; llama keeps the evaluated prompt in its cache, so a completion of
        the same messages right after reuses it and pays no second prefill.

        `fresh` empties that cache first. llama reads only what follows the prefix a prompt shares
        with the last one, and the float sums of a prompt read in other batches differ: the same
        question's judgement read 0.283 in a new process and 0.291 after another question in the
        same one (PostgreSQL's manual, the 1.5B model), so a long-running MCP server or `rag eval`
        could decide otherwise than `rag ask`. Read fresh, the same prompt gets the same value.
        """
        from llama_cpp import LogitsProcessorList  # noqa: PLC0415 - loads the runtime on first use

        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        if not tokens:
            return 1.0
        if fresh:
            self._llm.reset()
        forced = _ForcedTokens(tokens)
        guarded = _Guarded(forced, self._llm.token_eos())
        with _overflow_as_error():
            self._llm.create_chat_completion(
                messages=list(messages),
                max_tokens=len(tokens),
                temperature=0.0,
                repeat_penalty=1.0,
                logits_processor=LogitsProcessorList([guarded]),
            )
        guarded.raise_caught()
        return math.exp(forced.log_probability)


class _Guarded:
    """A logits processor made safe to run inside llama.cpp's C sampler callback.

    An exception cannot cross C: raised in the callback (Ctrl-C lands there when the user presses it
    while the processor runs, which is most of a constrained rewrite), ctypes prints "Exception
    ignored" with a traceback, drops it and generation goes on. So the exception is kept here, the
    step and every later one emit only the end-of-generation token, which makes llama stop, and the
    caller raises it with `raise_caught` once llama has returned.
    """

    def __init__(self, inner: Callable[[Any, Any], Any], stop_token: int) -> None:
        self._inner = inner
        self._stop_token = stop_token
        self.caught: BaseException | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.caught is None:
            try:
                return self._inner(input_ids, scores)
            except BaseException as exc:  # KeyboardInterrupt above all; raise_caught re-raises it
                self.caught = exc
        import numpy as np  # noqa: PLC0415 - loads the runtime on first use

        stop = np.full_like(scores, -np.inf)
        if 0 <= self._stop_token < len(stop):
            stop[self._stop_token] = 0.0
        return stop

    def raise_caught(self) -> None:
        if self.caught is not None:
            raise self.caught


class _ForcedTokens:
    """A logits processor that emits `tokens` in order and sums their log-probabilities."""

    def __init__(self, tokens: Sequence[int]) -> None:
        self._tokens = list(tokens)
        self._step = 0
        self.log_probability = 0.0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np  # noqa: PLC0415 - loads the runtime on first use

        logits = np.asarray(scores, dtype=np.float64)
        if self._step >= len(self._tokens):
            return scores
        token = self._tokens[self._step]
        top = float(np.max(logits))
        self.log_probability += float(logits[token]) - (top + math.log(float(np.sum(np.exp(logits - top)))))
        self._step += 1
        chosen = np.full_like(scores, -np.inf)
        chosen[token] = scores[token]
        return chosen


@contextlib.contextmanager
def _overflow_as_error() -> Iterator[None]:
    """llama.cpp's refusal of a prompt longer than the context, as a one-line error. The answer
    prompt is checked before it is built; this catches the others (a query transform, a chat
    rewrite with its history), which ended in an internal error."""
    try:
        yield
    except ValueError as exc:
        if "exceed context window" not in str(exc):
            raise
        raise ContextOverflowError(
            f"the question is too long for the model ({exc})",
            "ask a shorter question, or raise [generation] context_size",
        ) from exc


@cache
def cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            return any(line.startswith("flags") and " amx_int8" in line for line in handle)
    except OSError:
        return False


@contextlib.contextmanager
def _without_extra_buffers() -> Iterator[None]:
    """Loads weights without llama.cpp's extra buffer types on AMX CPUs.

    A native build on an AMX machine (Sapphire Rapids and later) repacks weights into AMX buffers
    and segfaults in the first decode (ggml-org/llama.cpp#20824). llama-cpp-python does not expose
    `use_extra_bufts`, so the default-params factory is wrapped while the model loads.
    """
    from llama_cpp import llama as llama_module  # noqa: PLC0415 - loads the runtime on first use

    # The ctypes bindings module as `Llama.__init__` sees it (not re-exported, hence the lookup).
    bindings: Any = vars(llama_module)["llama_cpp"]
    original = bindings.llama_model_default_params

    def params() -> Any:
        value = original()
        if hasattr(value, "use_extra_bufts"):
            value.use_extra_bufts = False
        return value

    bindings.llama_model_default_params = params
    try:
        yield
    finally:
        bindings.llama_model_default_params = original


def interruptibly(load: Callable[[], T]) -> T:
    """`load()`, run in a worker thread so that Ctrl-C stops the wait at once.

    A signal reaches Python code only between bytecodes: while llama.cpp reads and repacks the
    weights in one C call (seconds, up to 20 s on a busy machine), Ctrl-C waited for it to return.
    Waiting on an event is interruptible; the abandoned load is a daemon thread, gone with the
    process that the interrupt ends. llama-cpp-python points file descriptors 1 and 2, and
    sys.stdout and sys.stderr, at /dev/null while it loads (to hide llama.cpp's log), so an
    interrupted wait puts them back first: the interrupt's message must reach the terminal."""
    done = threading.Event()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(load())
        except BaseException as exc:  # handed to the waiting thread, which raises it
            failure.append(exc)
        finally:
            done.set()

    saved = (os.dup(1), os.dup(2))
    streams = (sys.stdout, sys.stderr)
    loader = threading.Thread(target=run, name=LOADER_THREAD, daemon=True)
    try:
        loader.start()
        done.wait()
    except KeyboardInterrupt:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        sys.stdout, sys.stderr = streams
        leave_at_exit_while_running(loader)
        raise
    finally:
        for fd in saved:
            os.close(fd)
    if failure:
        raise failure[0]
    return outcome[0]
