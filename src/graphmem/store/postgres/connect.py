"""Connecting to PostgreSQL: psycopg 3 and its connection pool, imported lazily (they are the optional
``postgres`` extra), and the url shown in messages (without its password)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import BackendError, InvalidInput, StoreBusy
from .urls import is_postgres_url, safe_url

__all__ = ["ConnectionPgMixin", "import_psycopg", "is_postgres_url", "safe_url"]

_MISSING = ("the PostgreSQL backend needs psycopg 3 with its pool and pgvector: pip install 'graphmem[postgres]'"
            " ({missing} is not installed)")


def import_psycopg() -> tuple[Any, Any]:
    """``(psycopg, psycopg_pool)``, or InvalidInput naming the install command."""
    try:
        import psycopg
    except ImportError:
        raise InvalidInput(_MISSING.format(missing="psycopg")) from None
    try:
        import psycopg_pool
    except ImportError:
        raise InvalidInput(_MISSING.format(missing="psycopg_pool")) from None
    return psycopg, psycopg_pool


class ConnectionPgMixin:
    """The pool, and ``_use()``: the connection a helper runs on."""

    url: str
    busy_timeout: float
    pool_size: int
    read_only: bool
    _pool: Any
    _tls: threading.local

    def _open_pool(self) -> None:
        psycopg, psycopg_pool = import_psycopg()
        from .pgbase import row_factory

        read_only = self.read_only

        def configure(conn: Any) -> None:
            conn.execute("SET application_name = 'graphmem'")
            if read_only:  # a write that slipped past refuse_write() fails on the server too
                conn.execute("SET default_transaction_read_only = on")

        # One plain connection first: a server that is down, a database that does not exist or a bad
        # parameter then fails at once with libpq's own reason. The pool alone retried for the whole timeout
        # (30 s), logging each attempt, and then said only "pool initialization incomplete".
        # A connect_timeout in the url is the user's: only a url without one gets ours.
        timeout = {} if "connect_timeout" in self.url else {"connect_timeout": max(2, int(min(self.busy_timeout, 10)))}
        try:
            psycopg.connect(self.url, **timeout).close()
        except psycopg.Error as exc:
            lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
            reason = _without_secrets("; ".join(lines) or type(exc).__name__, self.url)
            raise BackendError(f"cannot connect to PostgreSQL at {safe_url(self.url)}: {reason}; check that the "
                               "server is running and the url (user, host, database) is right") from None
        try:
            self._pool = psycopg_pool.ConnectionPool(
                self.url, min_size=1, max_size=self.pool_size, open=False, configure=configure,
                kwargs={"autocommit": True, "row_factory": row_factory}, timeout=max(self.busy_timeout, 1.0),
                name="graphmem")
            self._pool.open(wait=True, timeout=max(self.busy_timeout, 1.0))
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            try:
                self._pool.close()
            except Exception:  # noqa: BLE001 - the pool never opened; the message below says why
                pass
            raise BackendError(f"cannot connect to PostgreSQL at {safe_url(self.url)}: {exc}; check that the "
                               "server is running and the url (user, host, database) is right") from None

    @contextmanager
    def _use(self) -> Iterator[Any]:
        conn = getattr(self._tls, "conn", None)
        if conn is not None:  # inside this thread's transaction
            yield conn
            return
        from .txn import psycopg_error, to_backend_error

        try:
            with self._checkout() as conn:
                yield conn
        except psycopg_error() as exc:
            raise to_backend_error(exc, self.url, self.busy_timeout, wrote=False) from None

    @contextmanager
    def _checkout(self) -> Iterator[Any]:
        """A pooled connection; every one busy for longer than the busy timeout: StoreBusy."""
        from psycopg_pool import PoolTimeout

        try:
            cm = self._pool.connection(timeout=max(self.busy_timeout, 0.1))
            conn = cm.__enter__()
        except PoolTimeout:
            raise StoreBusy(f"all {self.pool_size} connections to {safe_url(self.url)} stayed busy for more than "
                            f"{self.busy_timeout:g} s; nothing was done; retry, or use fewer threads") from None
        try:
            yield conn
        except BaseException as exc:
            if not cm.__exit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            cm.__exit__(None, None, None)


def _without_secrets(message: str, url: str) -> str:
    """``message`` without the url's password, raw or decoded: libpq quotes a token it cannot parse
    (``invalid percent-encoded token: "hu%zzter2"``), and this message reaches stderr, HTTP and MCP."""
    from urllib.parse import parse_qs, unquote, urlsplit

    try:
        parts = urlsplit(url)
        secrets = [parts.password or ""] + parse_qs(parts.query).get("password", [])
    except ValueError:
        secrets = []
    raw = url.partition("://")[2].partition("@")[0].partition(":")[2]  # as written, before any decoding
    for query_part in url.partition("?")[2].split("&"):
        if query_part.startswith("password="):
            secrets.append(query_part[len("password="):])
    for secret in {s for value in [raw, *secrets] if value for s in (value, unquote(value))}:
        # a very short one would blank letters of the message: only where it is quoted
        message = message.replace(secret, "***") if len(secret) >= 3 else message.replace(f'"{secret}"', '"***"')
    return message

