"""Model runtimes: ONNX embedder and cross-encoder, llama.cpp generator, tokenizers."""
