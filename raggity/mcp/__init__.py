"""raggity as a Model Context Protocol server: an edge, like the CLI, that only calls the Python API."""
