"""Run the ``graphmem`` command in this process, through the real Click entry point.

A subprocess per call cost more than half the suite's time (the interpreter and graphmem's imports
on every command). :func:`run_cli` calls the same root group the console script calls, with what a
fresh process would have and nothing left over from the previous call:

- stdin, stdout and stderr are Click's test streams (``input`` feeds stdin), output is text;
- ``env`` is the *whole* environment of the call (like ``subprocess.run(env=...)``): variables
  missing from it are unset for the call, and everything is restored afterwards;
- ``cwd`` is the working directory of the call (restored afterwards);
- warnings behave as in a fresh interpreter (default filters, nothing remembered from earlier
  calls) and are printed as ``note: ...`` lines on stderr, as ``graphmem.cli.main`` sets up;
- the embeddings' "already reported this model failure" set starts empty, as in a new process;
- log records reach stderr as in a process where nobody configured logging (``logging.lastResort``:
  WARNING and up, the message alone), not pytest's capture handlers;
- an exception that escapes the CLI becomes its traceback on stderr and exit status 1, as Python
  would print it, so tests asserting "no traceback" still see one.

The result is a :class:`subprocess.CompletedProcess`, so tests written against subprocess keep
their assertions (``returncode``, ``stdout``, ``stderr``).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner

from graphmem.cli import _note, cli
from graphmem.embeddings import manager as _embeddings_manager

__all__ = ["run_cli", "graphmem_env"]


def graphmem_env(**extra: str) -> dict[str, str]:
    """This process's environment without any ``GRAPHMEM_*`` variable, offline, no embedding
    model, plus ``extra`` (what most CLI tests ran their subprocesses with)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env.update(GRAPHMEM_EMBED_MODEL="none", HF_HUB_OFFLINE="1")
    env.update(extra)
    return env


class _StderrNow(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when the record arrives (Click swaps it per call)."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(self.format(record) + "\n")


@contextmanager
def _fresh_process_state(env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    reported = set(_embeddings_manager._REPORTED)
    with warnings.catch_warnings():
        warnings.resetwarnings()  # also forgets which warnings were already shown (new filter version)
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=category)
        warnings.showwarning = _note
        try:
            if env is not None:
                os.environ.clear()
                os.environ.update(env)
            if cwd is not None:
                os.chdir(cwd)
            root.handlers = [_StderrNow(logging.WARNING)]
            root.setLevel(logging.WARNING)
            _embeddings_manager._REPORTED.clear()
            yield
        finally:
            _embeddings_manager._REPORTED.clear()
            _embeddings_manager._REPORTED.update(reported)
            root.handlers, root.level = saved_handlers, saved_level
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)


def run_cli(args: Sequence[str | os.PathLike[str]], *, env: Mapping[str, str] | None = None,
            cwd: str | os.PathLike[str] | None = None, input: str | bytes | None = None,
            ) -> subprocess.CompletedProcess[str]:
    """``graphmem ARGS...`` in this process; see the module docstring for what is isolated."""
    argv = [str(a) for a in args]
    runner = CliRunner()
    with _fresh_process_state(env, cwd):
        result = runner.invoke(cli, argv, input=input, obj={}, prog_name="graphmem", catch_exceptions=True)
        stderr = result.stderr
        code = result.exit_code
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            assert result.exc_info is not None
            stderr += "".join(traceback.format_exception(*result.exc_info))
            code = 1
    return subprocess.CompletedProcess(["graphmem", *argv], code, result.stdout, stderr)


def home_args(home: str | Path) -> list[str]:
    """``--home HOME`` (the first two words of most calls)."""
    return ["--home", str(home)]
