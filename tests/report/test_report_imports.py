"""The report package is core library: it imports, renders and re-scores with kfp blocked."""

from __future__ import annotations

import subprocess
import sys


def test_report_and_rescore_without_kfp(quickstart_out, copy_out, tmp_path):
    out = copy_out(quickstart_out)
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'kfp' or name.startswith('kfp.'):\n"
        "            raise ImportError('kfp is blocked in this test')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from autorater_pipelines.cli import main\n"
        f"assert main(['report', {str(out)!r}]) == 0\n"
        f"assert main(['rescore', {str(out)!r}, '--params', '{{\"ties_as_half\": true}}']) == 0\n"
        "assert not any(n == 'kfp' or n.startswith('kfp.') for n in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (out / "report.html").exists() and (out / "metrics.1.json").exists()
