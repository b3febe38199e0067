"""The search room: a question into ranked candidates. Entry: searcher.Searcher."""
