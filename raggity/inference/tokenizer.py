"""A Hugging Face tokenizer.json loaded with `tokenizers`, configured for our max length."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer as HFTokenizerModel

from raggity.core.errors import ModelError


def load_hf_tokenizer(path: Path, max_tokens: int) -> HFTokenizerModel:
    """Loads tokenizer.json with truncation at `max_tokens` and no padding: the embedder pads each
    model call to its own longest text, after grouping texts by length.

    Packaged tokenizer.json files often fix truncation and padding at 128; both are overridden.
    """
    try:
        tokenizer = HFTokenizerModel.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on malformed files
        raise ModelError(
            f"{path}: cannot load tokenizer: {exc}", "point the config at a valid tokenizer.json"
        ) from exc
    tokenizer.enable_truncation(max_tokens)
    tokenizer.no_padding()
    return tokenizer


class HFTokenizer:
    """Token offsets for chunking, counted exactly as the embedder will see them."""

    def __init__(self, path: Path) -> None:
        self._tokenizer = HFTokenizerModel.from_file(str(path))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return list(encoding.offsets)
