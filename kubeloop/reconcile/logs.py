"""Logging in which every line of a reconcile carries the object and a reconcile id."""

from __future__ import annotations

import contextvars
import logging
import sys
import time
from typing import Literal

import orjson

Level = Literal["debug", "info", "warning", "error"]
Format = Literal["human", "json"]
LEVEL: Level = "info"  # the defaults of setup() and of kubeloop run's --log-level and --log-format
FORMAT: Format = "human"

# Set by the controller around each reconcile; read by the log filter for every record.
current: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("kubeloop_reconcile",
                                                                                 default=None)


class ReconcileFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        ctx = current.get()
        record.reconcile = ctx or {}
        record.reconcile_suffix = (
            f" [{ctx['controller']} {ctx['object']} id={ctx['reconcileID'][:8]}]" if ctx else "")
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {"ts": round(record.created, 3), "level": record.levelname.lower(), "logger": record.name,
                "msg": record.getMessage(), **getattr(record, "reconcile", {})}
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return orjson.dumps(line).decode()


def setup(level: str = LEVEL, fmt: str = FORMAT) -> None:
    """Configures the root logger once: ``fmt`` is "human" or "json"."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ReconcileFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        formatter = logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s%(reconcile_suffix)s")
        formatter.converter = time.gmtime
        handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
