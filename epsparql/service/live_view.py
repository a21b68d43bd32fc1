"""The live view (``GET /view``): filled in by the live view's own change."""
from __future__ import annotations

from typing import Any

__all__ = ["live_routes"]


def live_routes() -> list[Any]:
    """The routes of the live view's page and data."""
    return []
