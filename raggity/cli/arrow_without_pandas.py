"""Loads pyarrow's dataset module without pandas, for a `rag search` process.

`import lance` imports pyarrow.dataset, whose module set-up builds a scalar, and pyarrow's pandas
shim then imports pandas to ask whether the value is a pandas object: about a third of a cold
`rag search` went to pandas (installed here by the scale extra's Ray Data; raggity never uses it).
Hidden while pyarrow.dataset loads, pandas is remembered as absent by that probe only: a later
`import pandas` works as usual, and so do pyarrow's conversions to and from pandas (they import it
themselves), though a search makes none.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType


class _PandasHidden:
    """A meta path finder that reports pandas as not installed."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def load_arrow_without_pandas() -> None:
    if "pandas" in sys.modules or "pyarrow.dataset" in sys.modules:
        return  # too late to spare it, and nothing to hide
    hidden = _PandasHidden()
    sys.meta_path.insert(0, hidden)
    try:
        importlib.import_module("pyarrow.dataset")
    finally:
        sys.meta_path.remove(hidden)
