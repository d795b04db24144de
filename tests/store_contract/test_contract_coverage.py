"""Every store protocol method has a contract test, and every contract test names real methods.

Each protocol has one module here, ``test_contract_<name>.py`` with ``PROTOCOL = <the protocol>``;
its tests declare what they specify with ``@pytest.mark.contract("method", ...)``.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from graphmem.store import Store
from graphmem.store.protocols import PROTOCOLS

HERE = Path(__file__).parent


def _protocol_methods(proto: type) -> set[str]:
    return {name for name, value in vars(proto).items() if callable(value) and not name.startswith("_")}


def _contract_modules() -> list[ModuleType]:
    return [importlib.import_module(f"{__package__}.{p.stem}") for p in sorted(HERE.glob("test_contract_*.py"))
            if p.stem != "test_contract_coverage"]


def _claims(module: ModuleType) -> set[str]:
    names: set[str] = set()
    for _, obj in inspect.getmembers(module):
        for mark in getattr(obj, "pytestmark", []):
            if mark.name == "contract":
                names.update(mark.args)
    return names


def test_every_protocol_has_one_contract_module() -> None:
    owners = [m.PROTOCOL for m in _contract_modules()]
    assert sorted(p.__name__ for p in owners) == sorted(p.__name__ for p in PROTOCOLS)


@pytest.mark.parametrize("module", _contract_modules(), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_method_of_the_protocol_has_a_contract_test(module: ModuleType) -> None:
    wanted = _protocol_methods(module.PROTOCOL)
    claimed = _claims(module)
    assert sorted(wanted - claimed) == [], f"{module.PROTOCOL.__name__} methods without a contract test"
    assert sorted(claimed - wanted) == [], f"contract marks naming no method of {module.PROTOCOL.__name__}"


def test_every_protocol_is_runtime_checkable(store) -> None:
    assert all(isinstance(store, p) for p in PROTOCOLS)


def test_store_is_exactly_the_union_of_the_protocols() -> None:
    union = set().union(*(_protocol_methods(p) for p in PROTOCOLS))
    assert {n for n in dir(Store) if not n.startswith("_") and callable(getattr(Store, n))} == union
    # One owner per method: a method in two protocols would be specified twice, differently.
    assert sum(len(_protocol_methods(p)) for p in PROTOCOLS) == len(union)
