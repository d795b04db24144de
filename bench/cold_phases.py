"""CPU time of each phase of a cold skills query or memory search, in this (fresh) process.

    python bench/cold_phases.py KB skills      # import numpy; import graphmem + its CLI; open;
    python bench/cold_phases.py KB memory      # load the model; load the skills index; one query

Run it a few times per version (``PYTHONPATH=<other checkout>/src`` for the other one), with a
bytecode cache as an installed graphmem has (``PYTHONPYCACHEPREFIX=DIR``, and without
``PYTHONDONTWRITEBYTECODE``; the first run fills the cache), and compare the lines.
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> int:
    """Print CPU ms per phase."""
    home, what = argv[0], argv[1]
    t0 = time.process_time()
    import numpy  # noqa: F401

    t1 = time.process_time()
    import graphmem
    import graphmem.cli  # noqa: F401

    t2 = time.process_time()
    kb = graphmem.open(home)
    t3 = time.process_time()
    kb.embed_query("warm up")
    t4 = time.process_time()
    if what == "skills":
        kb.skills.index()
        t5 = time.process_time()
        kb.skills.retrieve("write a unit test for my python code", 8)
    else:
        t5 = time.process_time()
        kb.memory.search("what did Ana do in Lisbon?", user_id="user3")
    t6 = time.process_time()
    print(f"numpy {1000 * (t1 - t0):.0f}  graphmem+cli {1000 * (t2 - t1):.0f}  open {1000 * (t3 - t2):.0f}  "
          f"model {1000 * (t4 - t3):.0f}  index {1000 * (t5 - t4):.0f}  query {1000 * (t6 - t5):.0f}  (CPU ms)")
    kb.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
