"""Per-tool runtime statistics kept by the registry."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ToolStats:
    """What a tool has done so far in this process."""

    usage_count: int = 0
    success_count: int = 0
    failure_count: int = 0
    consecutive_failures: int = 0
    last_error: str | None = None
    last_latency_s: float = 0.0
    total_latency_s: float = 0.0

    def record(self, ok: bool, latency_s: float, error: str | None) -> None:
        self.usage_count += 1
        self.last_latency_s = latency_s
        self.total_latency_s += latency_s
        if ok:
            self.success_count += 1
            self.consecutive_failures = 0
        else:
            self.failure_count += 1
            self.consecutive_failures += 1
            self.last_error = error
