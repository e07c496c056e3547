"""Gecko prompt templates as users write them: Jinja2 (``{{ prompt }}``) or the Vertex AI SDK's ``{prompt}``.

Which syntax a template uses is read from its text: a Jinja2 expression or statement (``{{ name``, ``{%``,
``{#``) makes it Jinja2, rendered in the sandbox of :mod:`autorater_pipelines.gecko.prompts`; anything else is
a Vertex AI SDK template (``vertexai.preview.evaluation``, as in the Gecko sample notebook), where only these
placeholders are replaced and every other brace text stays as written (JSON examples, ``{1}[keyword]``
markup):

- ``{prompt}`` — the generation prompt (rubric generation; validation when ``prompt_column`` is set);
- ``{rubrics}`` — the questions of the call, one ``<question>…<choices>yes,no`` line each, the text the
  SDK's ``rubrics`` column holds;
- ``{question}`` — the question text (validation with one question per call);
- ``{image}`` / ``{video}`` — the row's media, sent as a media part exactly where the placeholder stands
  (text before it, the image, text after it). Without it the media part comes first, as with Jinja2.

As the SDK fills ``{name}`` from the column of that name, the names of ``prompt_column`` and ``media_column``
work too (``{caption}`` for ``prompt_column="caption"``, ``{response}`` for ``media_column="response"``).

A template that never uses what the call needs (a validator template without the questions, a generator
template without the prompt) is refused when it is compiled, before any model call.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import jinja2
from jinja2 import meta

from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import prompts
from autorater_pipelines.models import MediaPart

__all__ = [
    "MEDIA_PLACEHOLDERS",
    "VERTEX_PLACEHOLDERS",
    "GeckoTemplate",
    "compile_template",
    "rubrics_text",
    "syntax_of",
]

logger = logging.getLogger(__name__)

VERTEX_PLACEHOLDERS = ("prompt", "rubrics", "question", "image", "video")
"""Names a Vertex AI SDK style template may use; every other ``{…}`` is literal text."""
MEDIA_PLACEHOLDERS = frozenset({"image", "video"})

_JINJA = re.compile(r"\{%|\{#|\{\{-?\s*[A-Za-z_]")
_IDENTIFIER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def syntax_of(text: str) -> str:
    """``jinja`` when the text holds a Jinja2 expression, statement or comment, else ``vertex``."""
    return "jinja" if _JINJA.search(text) else "vertex"


def rubrics_text(questions: Sequence[Mapping[str, Any]]) -> str:
    """The questions as the Vertex SDK's ``rubrics`` column holds them: ``<question>Q<choices>a,b`` per line."""
    return "\n".join(
        f"<question>{q['question']}<choices>{','.join(map(str, q.get('choices') or []))}" for q in questions
    )


@dataclasses.dataclass(frozen=True)
class GeckoTemplate:
    """A compiled prompt template (see the module docstring).

    Attributes:
        text: The template text.
        syntax: ``jinja`` or ``vertex``.
        source: Parameter name for error messages.
        names: Variables (Jinja2) or placeholders (Vertex) the template uses.
        jinja: The compiled Jinja2 template (None for Vertex syntax).
        builtin: One of our built-in templates (not a user override).
        aliases: Column names used as placeholders (Vertex syntax) → the placeholder they stand for.

    """

    text: str
    syntax: str
    source: str
    names: frozenset[str]
    jinja: jinja2.Template | None = None
    builtin: bool = False
    aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def uses(self, name: str) -> bool:
        """Tell whether the template uses a variable or placeholder."""
        return name in self.names

    def render(self, *, media: Sequence[MediaPart] = (), **values: Any) -> tuple[str | MediaPart, ...]:
        """Render the template into the parts of one model request.

        Args:
            media: The row's media parts: where ``{image}``/``{video}`` stands (Vertex syntax), else first.
            **values: The variables (``prompt``, ``rubrics``, ``questions``, ``question`` …).

        Returns:
            Text strings and media parts in order; empty text pieces are left out.

        Raises:
            InputError: the template cannot be rendered (an undefined variable, a forbidden operation).

        """
        if self.jinja is not None:
            return (*media, prompts.render(self.jinja, source=self.source, **values))
        parts: list[str | MediaPart] = []
        placed = False
        pieces = _IDENTIFIER.split(self.text)  # text, name, text, name, …, text
        for i, piece in enumerate(pieces):
            if i % 2 == 1 and piece in self.aliases:
                piece = self.aliases[piece]
            if i % 2 == 0 or piece not in self.names:
                text = piece if i % 2 == 0 else "{" + piece + "}"
                if parts and isinstance(parts[-1], str):
                    parts[-1] += text
                else:
                    parts.append(text)
            elif piece in MEDIA_PLACEHOLDERS:
                parts.extend(media)
                placed = True
            else:
                value = values[piece]
                text = value if isinstance(value, str) else str(value)
                if parts and isinstance(parts[-1], str):
                    parts[-1] += text
                else:
                    parts.append(text)
        if not placed:
            parts[:0] = list(media)
        return tuple(p for p in parts if not (isinstance(p, str) and not p))


def _jinja_names(text: str, source: str) -> tuple[jinja2.Template, frozenset[str]]:
    template = prompts.compile_template(text, source=source)
    try:
        names = meta.find_undeclared_variables(prompts.parse_template(text))
    except jinja2.TemplateSyntaxError as exc:  # compile_template has already reported syntax errors
        raise InputError(f"invalid template syntax at line {exc.lineno}: {exc.message}", source=source) from None
    return template, frozenset(names)


def compile_template(
    text: str,
    *,
    source: str,
    variables: Collection[str],
    required: Sequence[Collection[str]] = (),
    needs: str = "",
    hints: Mapping[str, str] | None = None,
    builtin: bool = False,
    aliases: Mapping[str, str] | None = None,
) -> GeckoTemplate:
    """Compile a Jinja2 or Vertex SDK style template and check that it uses what the call needs.

    Args:
        text: The template text.
        source: Parameter name for error messages (``validator_prompt_template`` …).
        variables: The names this call provides (Jinja2 variables; for Vertex syntax, the placeholders of
            :data:`VERTEX_PLACEHOLDERS` among them are replaced).
        required: Groups of names; the template must use at least one name of each group.
        needs: What the required names carry, for the error message (``the questions`` …).
        hints: How to make a placeholder available, by name, for the error message.
        builtin: The template is one of ours (recorded in :attr:`GeckoTemplate.builtin`).
        aliases: Vertex syntax: column names that stand for a placeholder, as the SDK fills ``{column}`` from the
            column of that name (``{"caption": "prompt", "response": "image"}`` for ``prompt_column="caption"``,
            ``media_column="response"``).

    Returns:
        The compiled template.

    Raises:
        InputError: empty text, invalid Jinja2, a Jinja2 variable or a Vertex placeholder of
            :data:`VERTEX_PLACEHOLDERS` that this call does not provide, or a required name that is never used.

    """
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"prompt template must be non-empty text, got {text!r}", source=source)
    available = set(variables)
    syntax = syntax_of(text)
    if syntax == "jinja":
        jinja, names = _jinja_names(text, source)
        unknown = sorted(names - (available - MEDIA_PLACEHOLDERS))
        if unknown:
            hint = (hints or {}).get(unknown[0])
            raise InputError(
                f"cannot render template: {unknown[0]!r} is undefined"
                + (f" ({hint})" if hint else "")
                + f"; available variables: {sorted(available - MEDIA_PLACEHOLDERS)}",
                source=source,
            )
    else:
        jinja = None
        aliases = {a: n for a, n in (aliases or {}).items() if a not in VERTEX_PLACEHOLDERS and n in available}
        used = {aliases.get(n, n) for n in _IDENTIFIER.findall(text)}
        names = frozenset(n for n in used if n in VERTEX_PLACEHOLDERS)
        missing = sorted(names - available)
        if missing:
            hint = (hints or {}).get(missing[0])
            offered = sorted(available & set(VERTEX_PLACEHOLDERS))
            raise InputError(
                f"placeholder {{{missing[0]}}} is not available in this template"
                + (f" ({hint})" if hint else "")
                + f"; available placeholders: {['{' + n + '}' for n in offered]}",
                source=source,
            )
        literal = sorted(used - names)
        if literal:
            shown = ["{" + n + "}" for n in literal]
            logger.warning("%s: %s left as literal text (not a placeholder of this template)", source, shown)
    for group in required:
        if not names & set(group):
            shown = [n for n in group if syntax == "jinja" or n in VERTEX_PLACEHOLDERS]
            wanted = " or ".join(("{{ %s }}" if syntax == "jinja" else "{%s}") % n for n in shown)
            raise InputError(
                f"the template never uses {wanted}, so the model would not see {needs or 'what it needs'}; "
                f"add the placeholder (Vertex AI SDK style '{{name}}' or Jinja2 '{{{{ name }}}}')",
                source=source,
            )
    return GeckoTemplate(text, syntax, source, names, jinja, builtin, dict(aliases or {}) if jinja is None else {})
