"""Store contract suite (a package so that its conftest.py does not shadow tests/conftest.py, which
other tests import as ``conftest``)."""
