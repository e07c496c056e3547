"""KFP pipelines of autorater-pipelines (wiring only) and the helpers that compile and run them."""

from autorater_pipelines.pipelines._compile import PIPELINE_NAMES, compile_pipelines, load_pipeline_function

__all__ = ["PIPELINE_NAMES", "compile_pipelines", "load_pipeline_function"]
