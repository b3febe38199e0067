"""The graph room: builds an index's entity graph from its chunks (`rag graph-build`, and after an
ingest when [retrieval] graph is on); the search room reads it (pipeline/search/graph_source.py)."""
