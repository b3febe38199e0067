"""The on-disk index: LanceDB vectors, Tantivy BM25, the manifest that says which chunks are live."""
