"""Typed model stages: one object per model-calling stage of a run, passed whole to the model-call layer.

A stage (AutoSxS's autorater and models A/B; Gecko's rubric generator and validator) is its model spec, its
``<stage>_parameters`` (call options and the stage's own keys, a :class:`ModelCallOptions` model) and the
project/region of Vertex AI calls. It is built once from the pipeline's parameter model and travels whole from
there to the stage function, which gets its model with :meth:`ModelStage.get_model` — never as a keyword list.
An evaluation subclasses it per stage (naming :attr:`ModelStage.SOURCE`, typing ``options``, adding its prompt).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pydantic

from autorater_pipelines.evaluation import DEFAULT_MODEL
from autorater_pipelines.evaluation.model_checks import check_model_spec, probe_model_endpoint
from autorater_pipelines.evaluation.parameters import ModelCallOptions
from autorater_pipelines.models import GenerateConfig, Model, get_model

__all__ = ["ModelStage"]


class ModelStage(pydantic.BaseModel):
    """One model-calling stage of a run: model spec, call options, project and region."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)
    SOURCE: ClassVar[str] = ""
    """The stage's name in the pipeline parameters (``<SOURCE>_parameters`` …), named in messages."""

    model: str = DEFAULT_MODEL
    """Model spec (docs/models.md "Model specs"); an empty pipeline parameter is :data:`DEFAULT_MODEL`."""
    options: ModelCallOptions
    """The ``<SOURCE>_parameters``: model-call settings (GenerateConfig fields) and the stage's own keys."""
    project: str = ""
    """Google Cloud project of Vertex AI calls; empty = none."""
    location: str = ""
    """Google Cloud region of Vertex AI calls; empty = none."""

    @classmethod
    def options_model(cls) -> type[ModelCallOptions]:
        """The class of :attr:`options` (the subclass's annotation)."""
        annotation = cls.model_fields["options"].annotation
        assert isinstance(annotation, type) and issubclass(annotation, ModelCallOptions)
        return annotation

    @property
    def options_source(self) -> str:
        """The pipeline parameter of the options: ``<SOURCE>_parameters``."""
        return f"{self.SOURCE}_parameters"

    @property
    def model_source(self) -> str:
        """The pipeline parameter of the model spec: ``<SOURCE>_model``."""
        return f"{self.SOURCE}_model"

    def generate_config(self, **overrides: Any) -> GenerateConfig:
        """The model-call layer's config of this stage (settings, project, location; ``overrides`` win).

        Raises:
            InputError: a setting GenerateConfig refuses, naming ``<SOURCE>_parameters``.
        """
        config: GenerateConfig = self.options.generate_config(
            source=self.options_source, project=self.project, location=self.location, **overrides
        )
        return config

    def get_model(self) -> Model:
        """The stage's model (:func:`autorater_pipelines.models.get_model` with :meth:`generate_config`).

        Raises:
            InputError: a malformed model spec or a setting the provider refuses.
        """
        return get_model(self.model, self.generate_config())

    def check(self, *, readable: Callable[[str], bool] | None = None, notes: list[str] | None = None) -> None:
        """Check the model spec and options without calling the model (:func:`check_model_spec`).

        Args:
            readable: Which files to read from here (``replay/`` recordings); None = all.
            notes: Where to say what was not checked from here.

        Raises:
            InputError: a malformed spec, a ``replay/`` file that is not a recording, a Vertex AI model without a
                project or API key, naming the model parameter.
        """
        check_model_spec(
            self.model,
            self.options,
            self.model_source,
            project=self.project,
            location=self.location,
            readable=readable,
            notes=notes,
            options_source=self.options_source,
        )

    def probe(self) -> None:
        """Open a TCP connection to an explicit endpoint (no request): :func:`probe_model_endpoint`.

        Raises:
            InputError: nothing answers at the stage's ``base_url``.
        """
        probe_model_endpoint(
            self.model, self.options, self.options_source, project=self.project, location=self.location
        )
