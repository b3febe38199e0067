"""The answer room: ranked candidates into a cited answer, or a decline. Entry: answerer.Answerer."""
