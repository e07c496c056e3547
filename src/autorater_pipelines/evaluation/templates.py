"""The one Jinja2 sandbox for user templates of both pipelines, bounded in time, output size and loop iterations.

Users write Jinja2 templates for AutoSxS prompt parameters (``{"template": "… {{ column }} …"}``) and Gecko
prompt overrides (``rubric_generation_prompt_template``, ``validator_prompt_template``). They run in
:class:`BoundedEnvironment`, a :class:`jinja2.sandbox.SandboxedEnvironment` (no access to Python internals)
with :class:`jinja2.StrictUndefined` and these limits on every render (:data:`LIMITS`):

- **output size**: at most ``max_chars`` characters in the rendered text and in any value built along the way
  (``*`` repetition, ``+`` and ``~`` concatenation, ``%`` formatting, filters, method calls and the globals
  ``lipsum``, ``range``, ``dict``, ``namespace``, ``cycler``, ``joiner``). A call that can build far more than it is
  given is refused *before* it allocates, from a bound on its result (:mod:`._template_sizes`): ``lipsum(n, …)``,
  ``join`` with a long separator, ``replace``, ``expandtabs``, ``translate``, ``indent``, ``wordwrap``, ``sum``;
  so are numeric arguments larger than the limit (``'x'|center(10**9)``, ``'%*s' % (10**9, 'x')``), format widths of
  7 digits or more (``'{:>{w}}'.format('x', w=10**9)`` included), and a value printed or converted to text whose
  nested contents exceed the limit;
- **loop iterations**: at most ``max_iterations`` iterations of ``{% for %}`` loops in total (nested loops
  count every inner iteration), plus calls; ``range`` gives at most ``max_iterations`` numbers;
- **time**: at most ``max_seconds`` of rendering, checked at every loop iteration and call. No single operation
  can run long: each is bounded in size before it starts.

A refusal raises :class:`jinja2.exceptions.SecurityError`; callers turn it into an ``InputError`` naming
the parameter. The defaults allow any prompt a model can read (4 million characters ≈ 1 million tokens,
the largest context window of current models) and refuse the denial-of-service templates of the
bad-input corpus in milliseconds (a nested loop over ``range(99999)``; a 6 MB render;
``lipsum(n=1000000, min=20, max=100)``, which used to run 75 s and reach 1.7 GB before it was refused).
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import operator
import re
import time
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.utils import generate_lorem_ipsum
from markupsafe import Markup

from autorater_pipelines.evaluation import _template_sizes as sizes

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
_WIDTH_CALLS = frozenset(
    {"center", "ljust", "rjust", "zfill", "expandtabs", "indent", "wordwrap", "truncate", "batch", "slice"}
)
_NUMBER = re.compile(r"\d+")
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
        self.check_time()

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise SecurityError(f"the template took longer than {self.limits.max_seconds:g} s to render")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("autorater_template_budget", default=None)


def _limits(env: Any) -> RenderLimits:
    return getattr(env, "limits", LIMITS)


_size = sizes.size


def _check_size(value: Any, limits: RenderLimits, what: str) -> Any:
    if _size(value) > limits.max_chars:
        raise SecurityError(f"{what} would produce more than {limits.max_chars} characters")
    return value


def _check_bound(estimate: Callable[..., int], args: Any, kwargs: Any, limits: RenderLimits, what: str) -> None:
    """Refuse a call whose result would exceed the limit, from ``estimate`` (a bound computed before the call)."""
    try:
        bound = estimate(*args, **kwargs)
    except (TypeError, ValueError, AttributeError, OverflowError):
        return  # arguments the call itself refuses: let it raise its own error
    if bound > limits.max_chars:
        raise SecurityError(f"{what} would produce up to {bound} characters, more than {limits.max_chars}")


def _check_star_widths(text: Any, values: Any, limits: RenderLimits, what: str) -> None:
    """Refuse ``'%*s' % (10**9, 'x')``: a ``*`` width or precision taken from the values."""
    if isinstance(text, str) and "*" in text and isinstance(values, tuple):
        for value in values:
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > limits.max_chars:
                raise SecurityError(f"{what}: width or precision {value} is larger than {limits.max_chars}")


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


def _check_time() -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.check_time()


def _guard_loop(iterable: Any) -> Iterator[Any]:
    """Iterate ``iterable``, spending one step of the render's budget per item."""
    for item in iterable:
        _step()
        yield item


def _bounded_filter(env: BoundedEnvironment, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    passed = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0  # the context/environment jinja passes
    estimate = sizes.FILTER_SIZES.get(name)

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        _step()
        what = f"filter {name!r}"
        head, values = args[:passed], list(args[passed:])
        if name in sizes.MATERIALIZED and values:
            values[0] = sizes.materialized(values[0], _step)
        if name in _FORMAT_CALLS and values:
            _check_format(values[0], what)
            _check_star_widths(values[0], tuple(values[1:]), env.limits, what)
        _check_arguments(name, [*values, *kwargs.values()], env.limits, what)
        if estimate is not None:
            _check_bound(estimate, values, kwargs, env.limits, what)
        result = func(*head, *values, **kwargs)
        _check_time()
        return _check_size(result, env.limits, what)

    return call


class _BoundedFormatter(SandboxedFormatter):
    """``str.format``'s formatter in the sandbox, refusing widths and values beyond the limits once fields are known.

    The format spec is checked after nested fields are filled in (``'{:>{w}}'.format('x', w=10**9)``).
    """

    def format_field(self, value: Any, format_spec: str) -> Any:
        limits = _limits(self._env)
        for number in _NUMBER.findall(format_spec):
            if len(number) > 7 or int(number) > limits.max_chars:
                raise SecurityError(f"str.format: width or precision {number} is larger than {limits.max_chars}")
        _check_size(value, limits, "str.format")
        return super().format_field(value, format_spec)


class _BoundedEscapeFormatter(_BoundedFormatter, SandboxedEscapeFormatter):
    """:class:`_BoundedFormatter` for ``Markup`` strings (escapes the values)."""


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
        finalize = options.pop("finalize", None)
        super().__init__(**options)
        self.limits = limits
        self.finalize = self._bounded_finalize(finalize)
        self.filters = {name: _bounded_filter(self, name, f) for name, f in self.filters.items()}
        self.filters[_GUARD] = _guard_loop
        self.filters[_CONCAT] = self._concat
        self.globals.update(lipsum=self._lipsum, range=self._range)

    def _bounded_finalize(self, finalize: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
        """Every ``{{ expression }}`` output: refused before ``str()`` when its contents exceed the limit."""

        def bounded(value: Any) -> Any:
            _check_size(value, self.limits, "printing a value")
            return value if finalize is None else finalize(value)

        return bounded

    def _lipsum(self, n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002 - jinja's
        """jinja2's ``lipsum``, refused before it starts when ``n`` paragraphs of ``max`` words exceed the limit."""
        _check_bound(sizes.lipsum_size, (n, html, min, max), {}, self.limits, f"lipsum(n={n!r}, max={max!r})")
        return _check_size(generate_lorem_ipsum(n, html, min, max), self.limits, "lipsum")

    def _range(self, *args: int) -> range:
        """The sandbox's ``range``, at most ``max_iterations`` numbers (no template can iterate more)."""
        numbers = range(*args)
        if len(numbers) > self.limits.max_iterations:
            raise SecurityError(
                f"range{args!r} has {len(numbers)} numbers, more than the {self.limits.max_iterations} loop "
                "iterations a template may run"
            )
        return numbers

    def _concat(self, values: list[Any]) -> str:
        if sum(_size(v) for v in values) > self.limits.max_chars:  # before str(): a nested value may be huge
            raise SecurityError(f"'~' concatenation would produce more than {self.limits.max_chars} characters")
        texts = [v if isinstance(v, str) else str(v) for v in values]
        if sum(map(len, texts)) > self.limits.max_chars:
            raise SecurityError(f"'~' concatenation would produce more than {self.limits.max_chars} characters")
        return "".join(texts)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format``/``format_map`` of a template string, through :class:`_BoundedFormatter`."""
        if not isinstance(value, (types.MethodType, types.BuiltinMethodType)) or value.__name__ not in _FORMAT_CALLS:
            return None
        owner = value.__self__
        if not isinstance(owner, str):
            return None
        formatter: _BoundedFormatter = (
            _BoundedEscapeFormatter(self, escape=owner.escape) if isinstance(owner, Markup) else _BoundedFormatter(self)
        )
        is_map = value.__name__ == "format_map"

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if is_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument and no keyword arguments")
                return type(owner)(formatter.vformat(owner, (), args[0]))
            return type(owner)(formatter.vformat(owner, args, kwargs))

        return functools.update_wrapper(wrapper, value)

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
                    and max(len(seq), _size(seq)) * times > limits.max_chars  # a list's strings count too
                ):
                    raise SecurityError(f"repetition would produce more than {limits.max_chars} items")
            return operator.mul(left, right)
        if operator_ == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                _check_size(_size(left) + _size(right), limits, "'+'")
            return _check_size(operator.add(left, right), limits, "'+'")
        _check_format(left, "'%' formatting")
        _check_star_widths(left, right, limits, "'%' formatting")
        _check_size(right, limits, "'%' formatting")
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
        estimate = sizes.METHOD_SIZES.get(name) if isinstance(owner, (str, bytes, bytearray)) else None
        if estimate is not None:
            if name in sizes.MATERIALIZED and args:
                args = (sizes.materialized(args[0], _step), *args[1:])
            _check_bound(estimate, (owner, *args), kwargs, __self.limits, what)
        result = super().call(__context, __obj, *args, **kwargs)
        _check_time()
        return _check_size(result, __self.limits, what)
