"""Damaged images: the OCR reader either reads the file or says in one line why it cannot
(UnreadableFileError), never another exception, whatever bytes Pillow is given. Seeds are small
images written by Pillow (a blank strip OCR is quick on); examples flip bytes and cut the file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from raggity.documents.readers import UnreadableFileError, read_file
from tests.fuzz.conftest import FUZZ, damaged


def _image(format: str, frames: int = 1) -> bytes:
    strip = Image.new("RGB", (48, 32), "white")
    out = io.BytesIO()
    strip.save(out, format=format, save_all=frames > 1, append_images=[strip] * (frames - 1))
    return out.getvalue()


SEEDS = {"png": _image("PNG"), "jpg": _image("JPEG"), "tiff": _image("TIFF", frames=2)}


@pytest.mark.parametrize("kind", sorted(SEEDS))
@FUZZ
@given(data=st.data())
def test_flipped_and_cut_image_bytes(tmp_path: Path, kind: str, data: st.DataObject) -> None:
    path = tmp_path / f"f.{kind}"
    path.write_bytes(damaged(SEEDS[kind], data))
    try:
        documents = list(read_file(path))
    except UnreadableFileError as exc:
        reason = str(exc)
        assert reason
        assert "\n" not in reason
    else:
        assert all(document.text for document in documents)
