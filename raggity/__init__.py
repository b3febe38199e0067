"""raggity: local retrieval-augmented answers from your own documents, offline."""

__version__ = "0.1.0"
