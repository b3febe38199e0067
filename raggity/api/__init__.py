"""The Python API: `Raggity(config)` with ingest(), search(), ask(); status and doctor helpers."""

from raggity.api.session import Raggity, SearchResult

__all__ = ["Raggity", "SearchResult"]
