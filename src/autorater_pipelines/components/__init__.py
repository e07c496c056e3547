"""KFP components of autorater-pipelines: one thin module per component.

Every component is a lightweight Python component on :data:`IMAGE` with
``install_kfp_package=False``: on Vertex AI the image already holds this package (and kfp); in the
KFP local ``SubprocessRunner(use_venv=False)`` the current environment does. Bodies import the core
library inside the function and call one entry point.
"""

from autorater_pipelines import __version__

IMAGE = f"us-docker.pkg.dev/autorater-pipelines/images/autorater-pipelines:{__version__}"
"""Default container image of every component; ``autorater compile --image URI`` replaces it."""

__all__ = ["IMAGE"]
