"""Open AutoSxS, Gecko and Arena evaluation: core library (no kfp import).

The Kubeflow Pipelines components and pipelines live in the ``components`` and ``pipelines``
subpackages, which import kfp; nothing else in this package does.
"""

from autorater_pipelines.errors import AutoraterError, InputError

__version__ = "0.1.0"

__all__ = ["AutoraterError", "InputError", "__version__"]
