"""What a process that will generate an answer sets up before anything else is imported.

A CUDA build of llama.cpp crashed while loading a model when numpy had been imported before it
(raggity/inference/llama_runtime.py says what is known). The commands below may generate, so the CLI
opens llama.cpp's native library before it runs them; a program using the API does the same by
calling `prepare_to_generate()` before it imports numpy, or anything that imports numpy.
"""

from __future__ import annotations

from raggity.inference.llama_runtime import load_native_first


def prepare_to_generate() -> bool:
    """Opens llama.cpp's native library now; False when numpy was imported first (too late) or
    llama-cpp-python is not installed."""
    return load_native_first()
