"""The `rag` command: parse arguments, call one API function, render the result."""
