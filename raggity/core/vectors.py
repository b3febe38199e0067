"""The array types of embeddings, in a module of their own: core/types.py names them in annotations
only, core/protocols.py at run time, and neither imports the other for them."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# Unit vectors: one per row of a float32 [n, dim] array, or a single [dim] query vector.
Vectors = npt.NDArray[np.float32]
Vector = Vectors
