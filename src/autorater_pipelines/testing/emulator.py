"""Command line of the model emulator: ``python -m autorater_pipelines.testing.emulator --port 8080``.

Prints ``model emulator listening on http://127.0.0.1:PORT`` on stdout, then serves until Ctrl-C or
SIGTERM. Point any model at it with ``base_url`` (see :class:`ModelEmulator`).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from autorater_pipelines.testing._server import ModelEmulator

__all__ = ["ModelEmulator", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until interrupted (Ctrl-C or SIGTERM); prints its URL first.

    Args:
        argv: Command-line arguments (default ``sys.argv[1:]``).

    Returns:
        Process exit status (0).
    """
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
    parser.add_argument("--fault-status", type=int, default=503, help="HTTP status of faults (default: 503)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault generator (default: 0)")
    parser.add_argument(
        "--text",
        default=None,
        help="fixed answer text (default: a short text, or JSON matching the response schema)",
    )
    args = parser.parse_args(argv)
    responder = (lambda _request: args.text) if args.text is not None else None
    emulator = ModelEmulator(
        responder,
        latency_s=args.latency_ms / 1000.0,
        requests_per_minute=args.requests_per_minute,
        fault_rate=args.fault_rate,
        fault_status=args.fault_status,
        seed=args.seed,
        host=args.host,
        port=args.port,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with emulator:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
