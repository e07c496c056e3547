"""Command line of the model emulator: ``python -m autorater_pipelines.testing.emulator --port 8080``.

``--judge length`` (AutoSxS) and ``--judge gecko`` answer every request by what it asks
(:mod:`autorater_pipelines.testing.demo_models`): judge prompts, generation prompts of models A/B, Gecko rubric
generation and validation.

Prints ``model emulator listening on http://127.0.0.1:PORT`` on stdout, then serves until Ctrl-C or
SIGTERM. Point any model at it with ``base_url`` (see :class:`ModelEmulator`).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any

from autorater_pipelines.testing._server import ModelEmulator

__all__ = ["ModelEmulator", "main"]


def _statuses(text: str) -> tuple[int, ...]:
    try:
        statuses = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HTTP statuses like 503 or 429,503, got {text!r}") from None
    if not statuses or not all(400 <= s <= 599 for s in statuses):
        raise argparse.ArgumentTypeError(f"expected HTTP error statuses (400-599), got {text!r}")
    return statuses


def _parser() -> argparse.ArgumentParser:
    """The command line: one option per :class:`ModelEmulator` setting, each with its default and unit."""
    parser = argparse.ArgumentParser(
        prog="python -m autorater_pipelines.testing.emulator",
        description="Emulated Vertex AI / Gemini API generateContent and OpenAI chat completions.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one (default: 0)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay per request in ms (default: 0)")
    parser.add_argument(
        "--requests-per-minute",
        type=float,
        default=None,
        help="quota; beyond it answer 429 with Retry-After (default: none)",
    )
    parser.add_argument(
        "--fault-rate",
        type=float,
        default=0.0,
        help="probability of a random fault per request, 0-1 (default: 0)",
    )
    parser.add_argument(
        "--fault-status",
        type=_statuses,
        default=(503,),
        help="HTTP status of faults, or a comma-separated list picked at random, e.g. 429,503 (default: 503)",
    )
    parser.add_argument(
        "--quota-burst",
        type=float,
        default=None,
        help="capacity of the quota's token bucket in requests (default: one minute's worth)",
    )
    parser.add_argument(
        "--retry-hint",
        choices=["header", "body", "none"],
        default="header",
        help="how a quota 429 says when to retry: Retry-After header, Google RetryInfo in the body, or not at all",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault generator (default: 0)")
    parser.add_argument(
        "--text",
        default=None,
        help="fixed answer text (default: a short text, or JSON matching the response schema)",
    )
    parser.add_argument(
        "--judge",
        choices=["length", "gecko"],
        default=None,
        help="scripted models, each request answered by what it asks (autorater_pipelines.testing.demo_models): "
        "length = AutoSxS judge prompts get a judge for which the longer response wins; gecko = rubric "
        "generation requests get a valid rubric for their prompt and validator requests answers in the format "
        "asked; with either, every other request (models A/B) gets a plausible generated response "
        "(default: a short fixed text, or JSON matching the response schema)",
    )
    parser.add_argument(
        "--api-versions",
        type=lambda text: tuple(v.strip() for v in text.split(",") if v.strip()),
        default=None,
        help="serve only these API versions, comma-separated, e.g. v1 (other paths: 404, as a server that serves "
        "another version; default: every version)",
    )
    parser.add_argument(
        "--catch-all",
        default=None,
        metavar="BODY",
        help="answer every POST path without a route with HTTP 200 and BODY (JSON when it parses, else an HTML "
        "page), as a web app's catch-all route (default: 404)",
    )
    parser.add_argument(
        "--no-record",
        action="store_true",
        help="keep only counters, not every request (long benchmarks; counters on GET /stats)",
    )
    return parser


def _catch_all(text: str | None) -> dict[str, Any] | str | None:
    """``--catch-all``'s body: a JSON object when it parses as one, else the text (sent as an HTML page)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until interrupted (Ctrl-C or SIGTERM); prints its URL first.

    Args:
        argv: Command-line arguments (default ``sys.argv[1:]``).

    Returns:
        Process exit status: 0, or 1 when the address cannot be listened on (one line on stderr, no traceback).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.text is not None and args.judge is not None:
        parser.error("--text and --judge are mutually exclusive")
    responder = (lambda _request: args.text) if args.text is not None else None
    if args.judge is not None:
        from autorater_pipelines.testing import demo_models

        responder = demo_models.length_judge_and_models if args.judge == "length" else demo_models.gecko_model
    # every request is checked for Gecko's media probe mark: import it now, not during the first request, which
    # would otherwise wait for the gecko package's imports (measured 1.5 s instead of 0.2 s at load 10)
    import autorater_pipelines.gecko.media_probe  # noqa: F401

    emulator = ModelEmulator(
        responder,
        latency_s=args.latency_ms / 1000.0,
        requests_per_minute=args.requests_per_minute,
        fault_rate=args.fault_rate,
        fault_status=args.fault_status[0] if len(args.fault_status) == 1 else args.fault_status,
        seed=args.seed,
        quota_burst=args.quota_burst,
        record_requests=not args.no_record,
        retry_hint=args.retry_hint,
        api_versions=args.api_versions,
        catch_all=_catch_all(args.catch_all),
        host=args.host,
        port=args.port,
    )
    try:
        emulator.start()
    except OSError as exc:  # e.g. the port is taken by an emulator started earlier
        print(
            f"error: the model emulator cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; stop what "
            "listens there (an emulator started earlier?) or choose another --port",
            file=sys.stderr,
        )
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        print(f"model emulator listening on {emulator.url}", flush=True)
        print(
            f"  use base_url={emulator.url!r} with gemini-*, vertex/*, gemini/* or openai/* models",
            file=sys.stderr,
            flush=True,
        )
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
