"""Orchestration in three rooms that do not import each other: ingest/, search/ and answer/, each
with one entry built from (config, models); models.py holds the lazy model bundle they share."""
