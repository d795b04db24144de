"""Skills rankings do not depend on the string hash seed: the same request in processes with
different PYTHONHASHSEED values returns the same lists (scores included), for every strategy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import graphmem

N_SKILLS = 40
# The request names eight skills exactly (their triggers), in pairs whose rows share a slot of a
# small set's hash table (1 and 33, 3 and 35, ...), and matches eight others better by its words
# (DECOYS): those are the walk's fused seeds, the exact ones join as exact matches only, in the
# order they are listed.
EXACT = (1, 33, 3, 35, 5, 37, 7, 39)
DECOYS = tuple(range(10, 18))
DECOY_WORDS = "crimson ledger vault harbor quartz"  # one-word triggers: no exact match unless marked

# Prints each result list (scores at full precision) and the personalisation the PPR walk was
# given, in its order: the push order follows it, and on a big collection (1,635 skills) a
# different order moved scores in the fourth digit.
QUERY_SCRIPT = """
import json, sys
import graphmem
from graphmem.skills import retrieve
walks = []
ppr = retrieve.personalized_pagerank
def spy(pers, *a, **k):
    walks.append(list(pers.items()))
    return ppr(pers, *a, **k)
retrieve.personalized_pagerank = spy
kb = graphmem.open(sys.argv[1], read_only=True)
q = sys.argv[2]
lists = [[[h.to_dict(), repr(h.score)] for h in kb.skills.retrieve(q, k, strategy=s)]
         for s in (None, "ppr", "bfs") for k in (8, 20)]
print(json.dumps([lists, walks], sort_keys=True))
"""


def _tree(root: Path) -> None:
    for i in range(N_SKILLS):
        related = [f"k{(i + 1) % N_SKILLS:02d}", f"k{(i + 32) % N_SKILLS:02d}"]
        folder = root / f"col/k{i:02d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: k{i:02d}\ndescription: Widget task {i}{' for the ' + DECOY_WORDS if i in DECOYS else ''}.\n"
            f"triggers: [run widget step{i}{', ' + DECOY_WORDS.replace(' ', ', ') if i in DECOYS else ''}]\n"
            f"related: [{', '.join(related)}]\n---\nSteps.\n", encoding="utf-8")


def test_skills_rankings_are_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    _tree(tmp_path / "skills")
    home = tmp_path / "kb"
    with graphmem.open(home, config={"embeddings": {"model": "none"}}) as kb:
        kb.skills.build([tmp_path / "skills"])
    query = "please " + " then ".join(f"run widget step{i}" for i in EXACT) + " for the " + DECOY_WORDS
    outputs = []
    for seed in ("1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", QUERY_SCRIPT, str(home), query], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0].count('"via": "exact"') >= len(EXACT)
    assert all(o == outputs[0] for o in outputs[1:]), "the walk's seeds or the results follow the hash seed"
