"""The transient line on stderr that says which stage is running while nothing else is on screen.

Between Enter and the first answer text a question can take many seconds (the model loading, its
judgement, the prompt read on a busy CPU); a blank screen for that long looks like a hang. The line
shows the stage in plain words, is erased before any answer text is written, and is shown only when
stderr is a terminal and the output is not JSON, so pipes and scripts never see it.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.status import Status
from rich.text import Text

# What each pipeline stage is, in the words of someone waiting for an answer; a stage not named
# here keeps the previous words (it is part of the same step as seen from outside). {n} is the
# number of items the stage receives.
STAGE_WORDS = {
    "rewrite": "reading the conversation",
    "plan": "searching",
    "embed": "searching",
    "rerank": "ranking passages",
    "focus": "reading {n} sources",
    "load-model": "loading the model",
    "model-judgement": "checking that the sources answer it",
    "generate": "writing the answer",
    "citations": "checking citations",
}


class StatusLine:
    """`with StatusLine(console, shown=...) as line:` pass `line.stage` as the pipeline's stage hook
    and call `line.stop()` before writing answer text; leaving the block erases the line too."""

    def __init__(self, console: Console, *, shown: bool) -> None:
        self.words = "searching"  # what the line says now
        self._status: Status | None = None
        if shown and console.is_terminal:
            self._status = Status(Text(self.words), console=console, spinner="dots")

    def __enter__(self) -> StatusLine:
        if self._status is not None:
            self._status.start()
        return self

    def stage(self, name: str, n_in: int) -> None:
        words = STAGE_WORDS.get(name)
        if self._status is not None and words is not None:
            self.words = words.format(n=n_in)
            self._status.update(Text(self.words))

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
