"""What an AutoSxS task is: criteria, score rubric, prompt parameters and a default instruction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise.tasks import _judge_prompt
from autorater_pipelines.pairwise.tasks._few_shot import FewShotExample

__all__ = ["Criterion", "TaskDefinition"]


class Criterion(BaseModel):
    """One evaluation criterion the judge applies to both responses."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    """Short name, e.g. ``"Groundedness"``."""
    definition: str = Field(min_length=1)
    """What the criterion measures, in one or two sentences."""
    steps: list[str] = Field(default_factory=list)
    """How to check it, in order; may be empty."""


class TaskDefinition(BaseModel):
    """An AutoSxS task: everything needed to build the judge prompt for one example.

    Built-in tasks come from :func:`autorater_pipelines.pairwise.tasks.get_task`; a ``custom`` task is built from
    ``experimental_args["custom_task_definition"]``.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    """Task name: ``summarization``, ``question_answering`` or ``custom``."""
    version: str
    """Three-digit version (``"001"``) of a built-in task; what was asked for (``"latest"``...) for custom."""
    criteria: list[Criterion] = Field(min_length=1)
    """Evaluation criteria, in the order the judge sees them."""
    score_rubric: dict[str, str]
    """Answer label → meaning: ``A``, ``B`` and ``SAME``, or a pointwise scale (``"1"`` … ``"5"``)."""
    score_scale: list[int] = Field(default_factory=list)
    """The pointwise scale, ascending (empty: the rubric is ``A``/``B``/``SAME``). The judge then scores each
    response; the higher score wins, equal scores tie."""
    few_shot_examples: list[FewShotExample] = Field(default_factory=list)
    """Worked examples shown to the judge before the task (custom tasks' ``few_shot_examples_config``)."""
    few_shot_unread: str = ""
    """The few-shot dataset when it was not read from here (``submit --dry-run`` reads no cloud data): its form
    was checked, its rows are read and checked by the pipeline's first step, and ``few_shot_examples`` is empty."""
    _examples_block: str | None = PrivateAttr(default=None)
    required_prompt_parameter_keys: list[str]
    """``autorater_prompt_parameters`` keys that must be given."""
    optional_prompt_parameter_keys: list[str] = Field(default_factory=list)
    """``autorater_prompt_parameters`` keys that may be given."""
    default_instruction: str = ""
    """The value of ``{{ default_instruction }}`` in prompt templates (empty: not offered)."""
    verdict_pattern: str = ""
    """A free-text verdict format of the task's own (empty: the judge answers in JSON): the ``verdict_pattern``
    its answers are read with when ``autorater_parameters`` set none (:func:`~autorater_pipelines.pairwise.
    strength.task_settings`)."""
    verdict_map: dict[str, str] = Field(default_factory=dict)
    """With :attr:`verdict_pattern`: match → position or strength label (``A>>B`` … ``B>>A``)."""
    answer_format: str = ""
    """With :attr:`verdict_pattern`: the prompt's "Your answer" section, saying how to write the verdict."""

    def unread_notes(self) -> list[str]:
        """What was not read from here (``submit --dry-run``): a line naming ``few_shot_unread``, or none."""
        if not self.few_shot_unread:
            return []
        return [
            f"few_shot_examples_config.dataset {self.few_shot_unread} not read from here: its rows are checked by "
            "the pipeline's first step"
        ]

    @property
    def spec(self) -> str:
        """``name@version``, e.g. ``"summarization@001"``."""
        return f"{self.name}@{self.version}"

    @property
    def prompt_parameter_keys(self) -> list[str]:
        """Every accepted prompt parameter key: required ones first, then optional ones."""
        return [*self.required_prompt_parameter_keys, *self.optional_prompt_parameter_keys]

    @property
    def pointwise(self) -> bool:
        """True when the judge scores each response on :attr:`score_scale`."""
        return bool(self.score_scale)

    @property
    def judgment_schema(self) -> dict[str, Any]:
        """JSON schema of the judge's answer: :data:`JUDGMENT_SCHEMA`, or the pointwise scores' schema."""
        return _judge_prompt.pointwise_schema(self.score_scale) if self.pointwise else _judge_prompt.JUDGMENT_SCHEMA

    @property
    def template_variables(self) -> dict[str, str]:
        """Extra variables for prompt templates: ``{"default_instruction": ...}`` when the task has one."""
        return {"default_instruction": self.default_instruction} if self.default_instruction else {}

    def render_judge_prompt(self, prompt_values: Mapping[str, str], response_first: str, response_second: str) -> str:
        """Build the autorater prompt for one comparison.

        Args:
            prompt_values: Rendered autorater prompt parameters (``{"inference_instruction": ...}``); keys
                outside :attr:`prompt_parameter_keys` are ignored, absent optional keys are left out.
            response_first: The response shown first, labelled "Response A".
            response_second: The response shown second, labelled "Response B".

        Returns:
            The prompt text; the judge must answer with :attr:`judgment_schema` JSON, whose ``A``/``B`` (or
            ``response_a_score``/``response_b_score``) refer to the positions shown (undoing a swap is the
            caller's job).

        Raises:
            InputError: A required prompt parameter is missing from ``prompt_values``.

        """
        missing = [k for k in self.required_prompt_parameter_keys if k not in prompt_values]
        if missing:
            raise InputError(
                f"task {self.spec!r} needs prompt parameter(s) {missing}, got {sorted(prompt_values)}; map "
                "each to a column or template",
                source="autorater_prompt_parameters",
            )
        values = [(k, str(prompt_values[k])) for k in self.prompt_parameter_keys if k in prompt_values]
        return _judge_prompt.render(
            criteria=[c.model_dump() for c in self.criteria],
            score_rubric=self.score_rubric,
            task_values=values,
            response_first=response_first,
            response_second=response_second,
            score_scale=self.score_scale,
            examples_block=self.examples_block,
            answer_format=self.answer_format,
        )

    @property
    def examples_block(self) -> str:
        """The worked examples as prompt text (empty without few-shot examples); computed once per task."""
        if not self.few_shot_examples:
            return ""
        if self._examples_block is None:
            self._examples_block = _judge_prompt.render_examples(self.few_shot_examples, pointwise=self.pointwise)
        return self._examples_block
