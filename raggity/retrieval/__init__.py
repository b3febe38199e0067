"""Retrieval: dense and BM25 retrievers, fusion, rerank, dedup, abstention, selection, ordering."""
