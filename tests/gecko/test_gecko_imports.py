import subprocess
import sys


def test_gecko_imports_no_kfp():
    code = "import sys; sys.modules['kfp'] = None; import autorater_pipelines.gecko as g; print(len(g.__all__))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) > 10
