"""How long the fake's server takes to stop, against stock uvicorn's.

Usage::

    python benchmarks/server_stop.py [--repeats 15]

Serves the no-op ASGI app on 127.0.0.1 from a thread, once with the fake's
`QuietServer` (its stop wakes the main loop and drains open connections only
while there are any) and once with stock `uvicorn.Server` (a 0.1 s tick, a
fixed 0.1 s pause), interleaved in this same run, each after one request
(with a keep-alive client closed first, and with one left open), and prints
the median time from the request to stop to the thread's end, and the ratio
stock / fake. A test suite starts and stops a server per test module or so;
the tests under tests/fakes/test_server.py hold what the stop must keep.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import threading
import time
from collections.abc import Callable

import httpx
import uvicorn

from reqfold.fakes.app import noop_app
from reqfold.fakes.server import base_url, bind_socket, make_server


def one_stop(server_class: type[uvicorn.Server], keep_open: bool) -> float:
    """Seconds from asking `server_class` to stop until its thread ends."""
    sock = bind_socket()
    server = server_class(make_server(noop_app).config)
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True
    )
    thread.start()
    client = httpx.Client()
    client.post(base_url(sock) + "/noop", content=b"{}")
    if not keep_open:
        client.close()
    start = time.perf_counter()
    stop: Callable[[], None] = getattr(server, "stop", None) or (
        lambda: setattr(server, "should_exit", True)
    )
    stop()
    thread.join(30)
    spent = time.perf_counter() - start
    if thread.is_alive():
        raise SystemExit(f"{server_class.__name__} did not stop within 30 s")
    client.close()
    sock.close()
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    fake = type(make_server(noop_app))
    print(f"server stop, medians of {args.repeats} (load {os.getloadavg()[0]:.1f})")
    print(f"{'connection':>12} {'fake ms':>8} {'uvicorn ms':>11} {'ratio':>7}")
    for keep_open in (False, True):
        times: dict[type[uvicorn.Server], list[float]] = {fake: [], uvicorn.Server: []}
        for _ in range(args.repeats):
            for server_class in times:
                times[server_class].append(one_stop(server_class, keep_open))
        ours = statistics.median(times[fake]) * 1000
        stock = statistics.median(times[uvicorn.Server]) * 1000
        label = "kept open" if keep_open else "closed"
        print(f"{label:>12} {ours:8.1f} {stock:11.1f} {stock / ours:6.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
