"""The one Jinja2 sandbox for user templates of both pipelines, bounded in time, output size and loop iterations.

Users write Jinja2 templates for AutoSxS prompt parameters (``{"template": "… {{ column }} …"}``) and Gecko
prompt overrides (``rubric_generation_prompt_template``, ``validator_prompt_template``). They run in
:class:`BoundedEnvironment`, a :class:`jinja2.sandbox.SandboxedEnvironment` (no access to Python internals)
with :class:`jinja2.StrictUndefined` and these limits on every render (:data:`LIMITS`):

- **output size**: at most ``max_chars`` characters in the rendered text and in any value built along the way
  (``*`` repetition, ``+`` and ``~`` concatenation, ``%`` formatting, filters and method calls); numeric
  arguments larger than the limit (``'x'|center(10**9)``) and format widths of 7 digits or more are refused
  before anything is allocated;
- **loop iterations**: at most ``max_iterations`` iterations of ``{% for %}`` loops in total (nested loops
  count every inner iteration), plus calls;
- **time**: at most ``max_seconds`` of rendering.

A refusal raises :class:`jinja2.exceptions.SecurityError`; callers turn it into an ``InputError`` naming
the parameter. The defaults allow any prompt a model can read (4 million characters ≈ 1 million tokens,
the largest context window of current models) and refuse the denial-of-service templates of the
bad-input corpus in milliseconds (a nested loop over ``range(99999)``; a 6 MB render).
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import operator
import re
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

__all__ = ["LIMITS", "BoundedEnvironment", "RenderLimits", "SecurityError"]


@dataclasses.dataclass(frozen=True)
class RenderLimits:
    """Limits of one template render.

    Attributes:
        max_chars: Characters in the output and in any string or list built while rendering.
        max_iterations: Loop iterations and calls, in total.
        max_seconds: Wall-clock seconds of rendering.
        max_exponent: Largest exponent of ``**``.
    """

    max_chars: int = 4_000_000
    max_iterations: int = 100_000
    max_seconds: float = 5.0
    max_exponent: int = 100


LIMITS = RenderLimits()
"""The limits every :class:`BoundedEnvironment` applies unless given others."""

_GUARD = "_autorater_loop_guard"
_CONCAT = "_autorater_concat"
_WIDE_FORMAT = re.compile(r"%[-+ #0*]*\d{7,}|%[-+ #0*]*\d*\.\d{7,}|\{[^{}]*:[^{}]*\d{7,}[^{}]*\}")
_WIDTH_CALLS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "indent", "wordwrap", "truncate", "batch"})
_FORMAT_CALLS = frozenset({"format", "format_map"})


class _Budget:
    """What one render may still spend."""

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.steps = 0
        self.deadline = time.monotonic() + limits.max_seconds

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.limits.max_iterations:
            raise SecurityError(f"the template ran more than {self.limits.max_iterations} loop iterations or calls")
        if self.steps % 64 == 0 and time.monotonic() > self.deadline:
            raise SecurityError(f"the template took longer than {self.limits.max_seconds:g} s to render")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("autorater_template_budget", default=None)


def _limits(env: Any) -> RenderLimits:
    return getattr(env, "limits", LIMITS)


def _size(value: Any) -> int:
    """Characters (or items) ``value`` holds, counting the strings of a list or tuple."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple)):
        return len(value) + sum(len(v) for v in value if isinstance(v, str))
    return 0


def _check_size(value: Any, limits: RenderLimits, what: str) -> Any:
    if _size(value) > limits.max_chars:
        raise SecurityError(f"{what} would produce more than {limits.max_chars} characters")
    return value


def _check_format(text: Any, what: str) -> None:
    if isinstance(text, str) and _WIDE_FORMAT.search(text):
        raise SecurityError(f"{what}: format widths or precisions of 7 or more digits are not allowed")


def _check_arguments(name: str, args: Iterable[Any], limits: RenderLimits, what: str) -> None:
    """Refuse arguments that would make a call allocate more than the limit before it returns.

    Args:
        name: The filter or method name: width arguments of padding/wrapping calls are bounded.
        args: The arguments (and, for a string method, the string itself).
        limits: The render limits.
        what: The operation, for the message.
    """
    for arg in args:
        if name in _WIDTH_CALLS and isinstance(arg, int) and not isinstance(arg, bool) and abs(arg) > limits.max_chars:
            raise SecurityError(f"{what}: argument {arg} is larger than {limits.max_chars}")
        _check_size(arg, limits, what)


def _step() -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.step()


def _guard_loop(iterable: Any) -> Iterator[Any]:
    """Iterate ``iterable``, spending one step of the render's budget per item."""
    for item in iterable:
        _step()
        yield item


def _bounded_filter(env: BoundedEnvironment, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        _step()
        what = f"filter {name!r}"
        if name in _FORMAT_CALLS and args:
            _check_format(args[0], what)
        _check_arguments(name, [*args, *kwargs.values()], env.limits, what)
        return _check_size(func(*args, **kwargs), env.limits, what)

    return call


class _BoundedTemplate(jinja2.Template):
    """A template whose :meth:`render` runs within the environment's :class:`RenderLimits`."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        """Render like :meth:`jinja2.Template.render`, within the limits (SecurityError when one is passed)."""
        limits = _limits(self.environment)
        token = _BUDGET.set(_Budget(limits))
        try:
            ctx = self.new_context(dict(*args, **kwargs))
            parts, total = [], 0
            try:
                for chunk in self.root_render_func(ctx):
                    total += len(chunk)
                    if total > limits.max_chars:
                        raise SecurityError(f"the rendered text is longer than {limits.max_chars} characters")
                    parts.append(chunk)
            except RecursionError:
                raise SecurityError("the template recurses too deeply (a macro calling itself?)") from None
            except Exception:
                self.environment.handle_exception()
            return "".join(parts)
        finally:
            _BUDGET.reset(token)


class BoundedEnvironment(SandboxedEnvironment):
    """Jinja2 sandbox with :class:`RenderLimits` (module docstring).

    Args:
        limits: The limits of each render; default :data:`LIMITS`.
        **options: :class:`jinja2.Environment` options; defaults ``undefined=StrictUndefined``,
            ``autoescape=False``, ``keep_trailing_newline=True``.
    """

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    template_class = _BoundedTemplate

    def __init__(self, *, limits: RenderLimits = LIMITS, **options: Any) -> None:
        options.setdefault("undefined", jinja2.StrictUndefined)
        options.setdefault("autoescape", False)
        options.setdefault("keep_trailing_newline", True)
        super().__init__(**options)
        self.limits = limits
        self.filters = {name: _bounded_filter(self, name, f) for name, f in self.filters.items()}
        self.filters[_GUARD] = _guard_loop
        self.filters[_CONCAT] = self._concat

    def _concat(self, values: list[Any]) -> str:
        texts = [v if isinstance(v, str) else str(v) for v in values]
        if sum(map(len, texts)) > self.limits.max_chars:
            raise SecurityError(f"'~' concatenation would produce more than {self.limits.max_chars} characters")
        return "".join(texts)

    def _generate(
        self, source: nodes.Template, name: str | None, filename: str | None, defer_init: bool = False
    ) -> str:
        for loop in source.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, _GUARD, [], [], None, None, lineno=loop.lineno)
        for concat in list(source.find_all(nodes.Concat)):
            concat.nodes = [nodes.Filter(nodes.List(concat.nodes, lineno=concat.lineno), _CONCAT, [], [], None, None)]
        return super()._generate(source, name, filename, defer_init=defer_init)

    def call_binop(self, context: Any, operator_: str, left: Any, right: Any) -> Any:
        """Apply ``*``, ``**``, ``+`` or ``%`` within the limits."""
        _step()
        limits = self.limits
        if operator_ == "**":
            if isinstance(right, (int, float)) and abs(right) > limits.max_exponent:
                raise SecurityError(f"exponent {right!r} is larger than {limits.max_exponent}")
            return operator.pow(left, right)
        if operator_ == "*":
            for seq, times in ((left, right), (right, left)):
                if (
                    isinstance(seq, (str, list, tuple))
                    and isinstance(times, int)
                    and len(seq) * times > limits.max_chars
                ):
                    raise SecurityError(f"repetition would produce more than {limits.max_chars} items")
            return operator.mul(left, right)
        if operator_ == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                _check_size(_size(left) + _size(right), limits, "'+'")
            return _check_size(operator.add(left, right), limits, "'+'")
        _check_format(left, "'%' formatting")
        return _check_size(super().call_binop(context, operator_, left, right), limits, "'%' formatting")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        """Call ``__obj`` as the sandbox does, within the limits."""
        _step()
        name = str(getattr(__obj, "__name__", type(__obj).__name__))
        what = f"calling {name!r}"
        owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
        if name in _FORMAT_CALLS:
            _check_format(owner, what)
        _check_arguments(name, [*args, *kwargs.values()], __self.limits, what)
        return _check_size(super().call(__context, __obj, *args, **kwargs), __self.limits, what)
