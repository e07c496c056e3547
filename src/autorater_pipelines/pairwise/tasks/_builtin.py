"""The built-in pairwise tasks: AutoSxS's ``summarization`` and ``question_answering``, and ``arena_hard``.

The criteria follow the ones the Vertex AI AutoSxS documentation lists for each task (summarization:
instruction following, groundedness, comprehensiveness, brevity; question answering: answers the question
fully, groundedness, relevance, comprehensiveness), written in our own words, with evaluation steps and a
fluency criterion added. Google's own judge prompt is not public, so judgments are comparable in intent,
not identical. ``arena_hard`` judges open-ended prompts on Arena-Hard-Auto's five-label verdict scale (its judge
ends with ``My final verdict is: [[A>B]]``; :mod:`autorater_pipelines.pairwise.strength`), with criteria in our own
words. A new wording is a new version: never edit a published version in place.
"""

from __future__ import annotations

from typing import Any

from autorater_pipelines.pairwise.strength import ARENA_HARD_VERDICT_MAP, ARENA_HARD_VERDICT_PATTERN
from autorater_pipelines.pairwise.tasks._definition import Criterion, TaskDefinition

__all__ = ["BUILTIN_TASKS"]

_PROMPT_KEYS: dict[str, Any] = {
    "required_prompt_parameter_keys": ["inference_instruction"],
    "optional_prompt_parameter_keys": ["inference_context"],
}

_RUBRIC = {
    "A": "Response A is better than Response B on the criteria as a whole.",
    "B": "Response B is better than Response A on the criteria as a whole.",
    "SAME": "Neither response is meaningfully better: they are equally good or equally poor.",
}

_GROUNDED = Criterion(
    name="Groundedness",
    definition="The response states only what the context and the instruction support. It adds no outside "
    "facts, invented details or claims that contradict the context.",
    steps=[
        "List the factual claims the response makes.",
        "Check each claim against the context and the instruction; note claims that are missing from them "
        "or that contradict them.",
    ],
)

_FLUENT = Criterion(
    name="Fluency",
    definition="The response is clear, well organised and grammatical, and easy to read.",
    steps=["Note errors of grammar or wording, confusing sentences and poor structure."],
)

SUMMARIZATION_001 = TaskDefinition(
    name="summarization",
    version="001",
    criteria=[
        Criterion(
            name="Instruction following",
            definition="The response does what the instruction asks of the summary: its requested length, "
            "format, focus and audience.",
            steps=[
                "Identify every requirement the instruction states or clearly implies.",
                "Check which requirements the response meets, misses or contradicts.",
            ],
        ),
        _GROUNDED,
        Criterion(
            name="Comprehensiveness",
            definition="The summary keeps the key points of the context that the instruction calls for and "
            "gives each an appropriate weight.",
            steps=[
                "Identify the main points of the context that a good summary must keep.",
                "Check which of them the response covers, and whether minor points crowd out major ones.",
            ],
        ),
        Criterion(
            name="Conciseness",
            definition="The summary is brief: no filler, repetition or needless detail, yet not so short "
            "that essential meaning is lost.",
            steps=["Note redundant or wordy passages, and places where cutting lost essential meaning."],
        ),
        _FLUENT,
    ],
    score_rubric=_RUBRIC,
    default_instruction="Summarize the following text.",
    **_PROMPT_KEYS,
)

QUESTION_ANSWERING_001 = TaskDefinition(
    name="question_answering",
    version="001",
    criteria=[
        Criterion(
            name="Answers the question",
            definition="The response directly and completely answers the question that was asked, rather "
            "than a different or narrower one.",
            steps=[
                "Work out what the question asks for, including every part of a multi-part question.",
                "Check whether the response answers each part, or evades, hedges or refuses without reason.",
            ],
        ),
        _GROUNDED,
        Criterion(
            name="Relevance",
            definition="Everything in the response helps answer the question; it does not drift into "
            "unrelated material.",
            steps=["Note content that does not help answer the question."],
        ),
        Criterion(
            name="Completeness",
            definition="The response includes the key details from the context that a good answer needs, "
            "and is accurate about them.",
            steps=[
                "Identify the details from the context that the answer depends on.",
                "Check which of them the response includes and whether it states them correctly.",
            ],
        ),
        _FLUENT,
    ],
    score_rubric=_RUBRIC,
    default_instruction="Answer the question.",
    **_PROMPT_KEYS,
)

ARENA_HARD_001 = TaskDefinition(
    name="arena_hard",
    version="001",
    criteria=[
        Criterion(
            name="Correctness",
            definition="The response is accurate: no mistakes, false statements or code that does not work.",
            steps=[
                "Work out your own answer to the user's prompt before reading the responses.",
                "Compare each response with it; find and note every mistake or inaccurate statement.",
            ],
        ),
        Criterion(
            name="Helpfulness",
            definition="The response does what the prompt asks, and asks for clarification rather than guessing "
            "when the prompt is genuinely ambiguous.",
            steps=["Check whether the response answers the prompt as it was meant and follows its instructions."],
        ),
        Criterion(
            name="Relevance and conciseness",
            definition="Every part of the response serves the prompt; it is clear and not verbose.",
            steps=["Note content that does not serve the prompt, and needless length or repetition."],
        ),
        Criterion(
            name="Completeness",
            definition="The response includes the information a good answer needs.",
            steps=["Note important information missing from the response that would help the user."],
        ),
    ],
    score_rubric={
        "A>>B": "Response A is significantly better than Response B.",
        "A>B": "Response A is slightly better than Response B.",
        "A=B": "A tie: the responses are about equally good.",
        "B>A": "Response B is slightly better than Response A.",
        "B>>A": "Response B is significantly better than Response A.",
    },
    default_instruction="Answer the user's prompt.",
    required_prompt_parameter_keys=["inference_instruction"],
    optional_prompt_parameter_keys=["inference_context"],
    verdict_pattern=ARENA_HARD_VERDICT_PATTERN,
    verdict_map=ARENA_HARD_VERDICT_MAP,
    answer_format="Explain your comparison first. Then end your answer with your final verdict: exactly one of "
    "the labels of the score rubric in double square brackets, on its own line, for example:\n"
    "My final verdict is: [[A>B]]",
)

BUILTIN_TASKS: dict[str, dict[str, TaskDefinition]] = {
    "summarization": {"001": SUMMARIZATION_001},
    "question_answering": {"001": QUESTION_ANSWERING_001},
    "arena_hard": {"001": ARENA_HARD_001},
}
"""Task name → version → definition."""
