"""`.ci/run` runs exactly the README's test command, and that command lints and type-checks before
pytest (issue 14: CI and a newcomer run the same thing)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("Install the dev extras and run the whole test suite", 1)[1]
    return re.search(r"```\n(.+?)\n```", section, re.S).group(1).strip()


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    command = readme_test_command()
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert command in lines


def test_the_test_command_lints_and_type_checks_before_the_tests() -> None:
    steps = [step.strip() for step in readme_test_command().split("&&")]
    assert steps.index("ruff check src tests bench") < steps.index("python -m pytest")
    assert steps.index("mypy") < steps.index("python -m pytest")
    assert steps[-1] == "python -m pytest"


def test_lint_and_type_settings_are_in_pyproject() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[tool.ruff.lint]" in pyproject and "[tool.mypy]" in pyproject
    hooks = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert "ruff check" in hooks and "entry: mypy" in hooks
