"""Orchestration: the ingest and ask pipelines, query transforms, answer cache."""
