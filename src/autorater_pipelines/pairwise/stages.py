"""The autorater stage of a pairwise evaluation: judge model spec, ``autorater_parameters``, project and region.

Built once from the pipeline parameters (:meth:`Autorater.of` in a step, or the evaluation's parsed parameters)
and handed whole to :func:`autorater_pipelines.pairwise.judge.judge_shard`; AutoSxS and arena share it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pydantic

from autorater_pipelines.evaluation import DEFAULT_MODEL
from autorater_pipelines.evaluation.stages import ModelStage
from autorater_pipelines.pairwise.settings import SOURCE, AutoraterParameters

__all__ = ["Autorater"]


class Autorater(ModelStage):
    """The autorater stage: ``autorater_model`` and ``autorater_parameters`` (judge settings and call options)."""

    SOURCE: ClassVar[str] = "autorater"
    options: AutoraterParameters = pydantic.Field(default_factory=AutoraterParameters)

    @classmethod
    def of(cls, model: str = "", parameters: Any = None, *, project: str = "", location: str = "") -> Autorater:
        """The stage from its pipeline parameters as a step receives them (``parameters`` a dict, None or parsed).

        Raises:
            InputError: an unknown key or a bad value of ``autorater_parameters``.
        """
        options = AutoraterParameters.parse(parameters, source=SOURCE)
        return cls(model=model or DEFAULT_MODEL, options=options, project=project or "", location=location or "")
