"""Intervention: approval gates in LangChain's human-in-the-loop shape, cancellation, saved runs.

Names load on first use: ``import tether.control`` opens no database and imports no SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_getattr

if TYPE_CHECKING:
    from tether.control.approval import (
        ALLOWED_DECISIONS,
        ApprovalError,
        Decision,
        DecisionType,
        HITLRequest,
        HITLResponse,
        is_approval_request,
    )
    from tether.control.runs import RunSummary
    from tether.control.store import (
        AsyncRunStore,
        RunStore,
        default_data_dir,
        open_async_run_store,
        open_run_store,
        setup_lock,
    )

__all__ = [
    "ALLOWED_DECISIONS",
    "ApprovalError",
    "AsyncRunStore",
    "Decision",
    "DecisionType",
    "HITLRequest",
    "HITLResponse",
    "RunStore",
    "RunSummary",
    "default_data_dir",
    "is_approval_request",
    "open_async_run_store",
    "open_run_store",
    "setup_lock",
]

__getattr__ = lazy_getattr(__name__, globals())
