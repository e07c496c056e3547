"""Without the `cloud` extra, gs:// and bq:// sources fail with one line naming the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

BLOCK = (
    "import sys\n"
    "class Block:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.startswith(('google.cloud.storage', 'google.cloud.bigquery')):\n"
    "            raise ImportError(f'No module named {name!r} (blocked by the test)')\n"
    "sys.meta_path.insert(0, Block())\n"
)


@pytest.mark.parametrize(
    ("uri", "needs"),
    [("gs://bucket/data.jsonl", "google-cloud-storage"), ("bq://project.dataset.table", "google-cloud-bigquery")],
)
def test_a_cloud_source_without_the_extra_names_it(uri: str, needs: str) -> None:
    code = BLOCK + (
        "from autorater_pipelines import io\n"
        "from autorater_pipelines.errors import InputError\n"
        "try:\n"
        f"    io.read_dataset({uri!r})\n"
        "except InputError as exc:\n"
        "    print(exc)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # no credentials, no emulator
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"support needs {needs}: pip install 'autorater-pipelines[cloud]'" in result.stdout
