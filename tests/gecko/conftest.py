import importlib.util
import sys
from pathlib import Path

import pytest

from autorater_pipelines.testing.gecko_script import tiny_png

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"public evaluation data not found at {SHARED_DATA} (<repo>/../shared/data)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def public_data():
    """The conversion helpers of examples/gecko_public_data.py (not a package: loaded by path)."""
    path = REPO / "examples" / "gecko_public_data.py"
    spec = importlib.util.spec_from_file_location("gecko_public_data", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


MAGIC = {
    "png": tiny_png(),
    "jpg": b"\xff\xd8\xff\xe0" + b"\x00" * 16,
    "webp": b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 8,
    "gif": b"GIF89a" + b"\x00" * 10,
    "mp4": b"\x00\x00\x00\x18ftypisom" + b"\x00" * 12,
    "mov": b"\x00\x00\x00\x14ftypqt  " + b"\x00" * 12,
    "webm": b"\x1a\x45\xdf\xa3" + b"\x00" * 12,
}


@pytest.fixture
def media_file(tmp_path):
    def make(ext: str, data: bytes | None = None, name: str | None = None) -> Path:
        path = tmp_path / (name or f"media.{ext}")
        path.write_bytes(MAGIC[ext] if data is None else data)
        return path

    return make
