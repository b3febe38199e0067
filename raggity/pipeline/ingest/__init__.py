"""The ingest room: folders (or in-memory documents) into an index. Entry: indexer.Indexer."""
