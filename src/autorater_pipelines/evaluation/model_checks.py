"""Checks of a model parameter and its ``*_parameters`` that need no model call.

The spec, the cache directory, and (for a run that starts on this machine) a TCP probe of an explicit endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from autorater_pipelines.errors import InputError

__all__ = ["check_cache_dir", "check_model_spec", "probe_model_endpoint"]


class ModelOptions(Protocol):
    """What the checks read of a stage's model-call options.

    :class:`autorater_pipelines.evaluation.parameters.ModelCallOptions` is one; a Protocol here, so that this module
    does not import the parameter models that call it.
    """

    def settings(self) -> dict[str, Any]:
        """The GenerateConfig keys the user set, with coerced values."""
        ...

    def generate_config(self, *, source: str, project: str = "", location: str = "", **overrides: Any) -> Any:
        """The GenerateConfig of these settings."""
        ...


def check_cache_dir(
    value: Any,
    source: str,
    *,
    readable: Callable[[str], bool] | None = None,
    notes: list[str] | None = None,
) -> None:
    """Refuse a local ``cache_dir`` that cannot hold the response cache (the run would silently go without it).

    ``off``, empty and unset pass. A ``gs://`` (or Vertex AI ``/gcs/``) location is left to the step, which warns
    and runs without the cache if it cannot use it; a note says so. A local path not read from here
    (``readable``) is noted too.

    Args:
        value: The ``cache_dir`` setting.
        source: The ``*_parameters`` name, for messages.
        readable: Which locations to check from here; None = all.
        notes: Where to record what was not checked.

    Raises:
        InputError: the path exists and is not a writable directory, or cannot be created.
    """
    from autorater_pipelines.models._cache import cache_dir_problem
    from autorater_pipelines.models._cache_store import gcs_uri_of

    text = value.strip() if isinstance(value, str) else ""
    if not text or text.lower() == "off":
        return
    if gcs_uri_of(text) is not None or (readable is not None and not readable(text)):
        if notes is not None:
            notes.append(
                f"{source} cache_dir {text} not checked from here: a step that cannot use it warns "
                "and runs without the response cache"
            )
        return
    problem = cache_dir_problem(text)
    if problem:
        raise InputError(
            f'cache_dir {text!r} {problem}; the response cache needs a writable directory (or "off")',
            source=source,
        )


def check_model_spec(
    spec: str,
    options: ModelOptions,
    source: str,
    *,
    project: str,
    location: str,
    readable: Callable[[str], bool] | None = None,
    notes: list[str] | None = None,
    options_source: str = "",
) -> None:
    """Check a model parameter without calling the model or creating an SDK client (``models.check_model``).

    A malformed spec, a Vertex AI model with no project (and no API key) and a bad ``replay/`` recording fail.

    Args:
        spec: The model spec.
        options: Its ``*_parameters``.
        source: The model parameter's name (``autorater_model``), for messages.
        project: The run's Google Cloud project.
        location: The run's region.
        readable: Which ``replay/`` recordings to read from here; None = all.
        notes: Where to record a recording that was not read.
        options_source: The name of ``options``' parameter (``autorater_parameters``); default ``source``.

    Raises:
        InputError: naming ``source``.
    """
    from autorater_pipelines.models import check_model, parse_model_spec

    check_cache_dir(options.settings().get("cache_dir"), options_source or source, readable=readable, notes=notes)
    try:
        prefix, name = parse_model_spec(spec)
        if prefix == "replay" and readable is not None and not readable(name):
            from autorater_pipelines.models.providers.replay import check_recording_uri

            check_recording_uri(name)  # not read from here; a malformed URI is still refused as a run refuses it
            if notes is not None:
                notes.append(f"{source} recording {name} not read from here")
            return
        config = options.generate_config(source=options_source or source, project=project, location=location)
        check_model(spec, config)
    except InputError as exc:
        if exc.source == "model spec":
            raise InputError(str(exc).removeprefix("model spec: "), source=source) from None
        raise


def probe_model_endpoint(spec: str, options: ModelOptions, source: str, *, project: str, location: str) -> None:
    """Open a TCP connection to a model's explicit endpoint (no request), so a wrong ``base_url`` fails at once.

    Only an explicit endpoint is probed: a ``base_url`` in ``options`` or an ``openai/`` model (whose endpoint may
    come from ``$OPENAI_BASE_URL``); replay models and providers' default hosts are not. ``autorater run`` calls it
    for every model of both pipelines (AutoSxS: the autorater and models A/B; Gecko: the rubric generator and the
    validator) before the run starts, and the DataFrame APIs before their first call.

    Args:
        spec: The model spec.
        options: Its ``*_parameters``.
        source: The ``*_parameters`` name, for messages.
        project: The run's Google Cloud project.
        location: The run's region.

    Raises:
        InputError: the endpoint is not an http(s) URL, or nothing accepts a connection there (within 5 s), with
            the URL, the model and the fix.
    """
    from autorater_pipelines.models import get_model

    if options.settings().get("base_url") or spec.startswith("openai/"):
        config = options.generate_config(source=source, project=project, location=location)
        try:
            get_model(spec, config).check_reachable()
        except InputError as exc:
            if exc.source is not None:
                raise
            raise InputError(str(exc), source=source) from None  # name the parameter that holds the endpoint
