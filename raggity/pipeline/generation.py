"""What the pipeline needs from a loaded generator, beyond the core streaming seam."""

from __future__ import annotations

from typing import Protocol

from raggity.core.protocols import Generator


class TextGenerator(Generator, Protocol):
    @property
    def context_size(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...
