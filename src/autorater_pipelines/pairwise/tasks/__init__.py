"""AutoSxS task definitions: evaluation criteria, score rubric, prompt parameters and the judge prompt.

- :func:`get_task` parses GCPC's ``task`` parameter (``summarization@001``, ``question_answering@latest``,
  ``custom``) into a :class:`TaskDefinition`.
- :meth:`TaskDefinition.render_judge_prompt` builds the autorater prompt; the judge answers with
  :data:`JUDGMENT_SCHEMA` JSON ``{"explanation": ..., "choice": "A" | "B" | "SAME"}``.
"""

from autorater_pipelines.pairwise.tasks._builtin import BUILTIN_TASKS
from autorater_pipelines.pairwise.tasks._definition import Criterion, TaskDefinition
from autorater_pipelines.pairwise.tasks._judge_prompt import CHOICES, JUDGE_PROMPT_TEMPLATE, JUDGMENT_SCHEMA
from autorater_pipelines.pairwise.tasks._registry import available_tasks, check_prompt_parameters, get_task

__all__ = [
    "BUILTIN_TASKS",
    "CHOICES",
    "JUDGE_PROMPT_TEMPLATE",
    "JUDGMENT_SCHEMA",
    "Criterion",
    "TaskDefinition",
    "available_tasks",
    "check_prompt_parameters",
    "get_task",
]
