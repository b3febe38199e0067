"""The chunk table's columns, defined once for every writer of it: the local LanceDB table, the table
on object storage, and the Ray stages that write the latter from their workers.

One row per chunk id: the chunk's text and metadata, its `vector` once embedded, and (on object
storage) `search_text`, the column Lance's full-text index covers (Tantivy holds it locally).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from raggity.core.types import Chunk, Location
from raggity.core.vectors import Vectors

# The metadata columns, in table order. A table written before a column existed lacks it (`anchor`).
COLUMNS = [
    "id",
    "source",
    "text",
    "heading",
    "parent_id",
    "ordinal",
    "n_tokens",
    "line_start",
    "line_end",
    "page_start",
    "page_end",
    "anchor",
]
SEARCH_TEXT = "search_text"


def chunk_schema(dim: int | None, *, search_text: bool) -> Any:
    """The table's pyarrow schema: the metadata columns, `search_text` when the table carries its own
    keyword index, and `vector` once embedded (`dim` given)."""
    import pyarrow as pa  # noqa: PLC0415 - lance loads on first use

    fields = [
        ("id", pa.string()),
        ("source", pa.string()),
        ("text", pa.string()),
        ("heading", pa.string()),
        ("parent_id", pa.string()),
        ("ordinal", pa.int32()),
        ("n_tokens", pa.int32()),
        ("line_start", pa.int32()),
        ("line_end", pa.int32()),
        ("page_start", pa.int32()),
        ("page_end", pa.int32()),
        # The HTML fragment a citation opens at; tables written before it existed read as None.
        ("anchor", pa.string()),
    ]
    if search_text:
        fields.append((SEARCH_TEXT, pa.string()))
    if dim is not None:
        fields.append(("vector", pa.list_(pa.float32(), dim)))
    return pa.schema(fields)


def chunk_row(chunk: Chunk) -> dict[str, Any]:
    """One chunk's columns, `search_text` included (a schema without it ignores it)."""
    loc = chunk.location
    return {
        "id": chunk.id,
        "source": chunk.source,
        "text": chunk.text,
        "heading": chunk.heading,
        "parent_id": chunk.parent_id,
        "ordinal": chunk.ordinal,
        "n_tokens": chunk.n_tokens,
        "line_start": loc.line_start,
        "line_end": loc.line_end,
        "page_start": loc.page_start,
        "page_end": loc.page_end,
        "anchor": loc.anchor,
        SEARCH_TEXT: chunk.search_text,
    }


def chunk_rows(chunks: Sequence[Chunk], vectors: Vectors, schema: Any) -> Any:
    """`chunks` with their `vectors` (row i for chunk i) as a pyarrow table of `schema`."""
    import pyarrow as pa  # noqa: PLC0415 - lance loads on first use

    columns: dict[str, list[Any]] = {name: [] for name in schema.names if name != "vector"}
    for chunk in chunks:
        row = chunk_row(chunk)
        for name, values in columns.items():
            values.append(row[name])
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    width = schema.field("vector").type.list_size
    vector = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), width)
    return pa.table({**columns, "vector": vector}, schema=schema)


def row_chunk(row: dict[str, Any]) -> Chunk:
    """The chunk a table row holds."""
    return Chunk(
        id=row["id"],
        source=row["source"],
        text=row["text"],
        heading=row["heading"],
        location=Location(
            row["line_start"], row["line_end"], row["page_start"], row["page_end"], row.get("anchor")
        ),
        parent_id=row["parent_id"],
        ordinal=row["ordinal"],
        n_tokens=row["n_tokens"],
    )


def present_columns(dataset: Any) -> list[str]:
    """The metadata columns this table has: one written before a column existed lacks it."""
    present = set(dataset.schema.names)
    return [name for name in COLUMNS if name in present]
