import subprocess
import sys

CORE_MODULES = [
    "autorater_pipelines",
    "autorater_pipelines.models",
    "autorater_pipelines.io",
    "autorater_pipelines.pairwise.prompt_parameters",
    "autorater_pipelines.pairwise.tasks",
    "autorater_pipelines.pairwise",
    "autorater_pipelines.autosxs.metrics",
    "autorater_pipelines.autosxs",
    "autorater_pipelines.cli",
    "autorater_pipelines.testing",
]


def test_core_library_imports_without_kfp():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'kfp' or name.startswith('kfp.'):\n"
        "            raise ImportError('kfp is blocked in this test')\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for m in {CORE_MODULES!r}:\n"
        "    __import__(m)\n"
        "assert not any(n == 'kfp' or n.startswith('kfp.') for n in sys.modules)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
