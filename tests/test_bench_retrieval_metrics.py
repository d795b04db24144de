"""The measuring code of the retrieval benches (bench/common.py, bench/entity_quality.py, bench/twowiki.py,
bench/musique_to_jsonl.py): recall, the paired bootstrap, the halves, fusion, name matching, loaders."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from common import halves, paired_bootstrap, recall_at, rrf_rankings  # noqa: E402
from entity_quality import fold, lenient_match, score  # noqa: E402
from musique_to_jsonl import convert  # noqa: E402
from twowiki import load_2wiki  # noqa: E402


def test_recall_at_is_the_share_of_gold_in_the_top_k():
    assert recall_at(["a", "b", "c"], {"a", "c"}, 2) == 0.5
    assert recall_at(["a", "b", "c"], {"a", "c"}, 3) == 1.0
    assert recall_at([], {"a"}, 5) == 0.0


def test_paired_bootstrap_of_identical_methods_is_a_zero_interval():
    xs = [0.0, 0.5, 1.0, 1.0, 0.5] * 10
    ci = paired_bootstrap(xs, xs, resamples=500)
    assert ci["diff"] == ci["diff_lo"] == ci["diff_hi"] == 0.0
    assert ci["ratio"] == ci["ratio_lo"] == ci["ratio_hi"] == 1.0


def test_paired_bootstrap_brackets_the_difference_and_is_reproducible():
    base = [0.0, 0.5, 1.0, 0.5] * 25
    better = [min(1.0, b + 0.5) if i % 2 else b for i, b in enumerate(base)]
    ci = paired_bootstrap(better, base, resamples=2000)
    mean_diff = 100 * (sum(better) - sum(base)) / len(base)
    assert ci["diff"] == pytest.approx(mean_diff)
    assert 0 < ci["diff_lo"] < ci["diff"] < ci["diff_hi"]
    assert ci["ratio_lo"] > 1.0
    assert paired_bootstrap(better, base, resamples=2000) == ci  # fixed seed


def test_paired_bootstrap_refuses_unpaired_lists():
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 0.0])


def test_halves_are_even_and_odd_positions():
    even, odd = halves(5)
    assert even == [0, 2, 4] and odd == [1, 3]


def test_rrf_weight_moves_the_second_ranking_down():
    a, b = [[1, 2, 3]], [[3, 2, 1]]
    assert rrf_rankings(a, b, 3) == [[1, 3, 2]]  # 1 and 3 tie (a's order kept); 2 is second in both
    assert rrf_rankings(a, b, 3, weight_b=0.25) == [[1, 2, 3]]  # b counts less: a's order wins
    assert rrf_rankings(a, [[3, 4, 5]], 3, weight_b=4.0)[0][0] == 3


@pytest.mark.parametrize(("a", "b", "strict", "lenient"), [
    ("U.S.", "u s", True, True),
    ("Christopher Nolan", "christopher nolan", True, True),
    ("Christopher Nolan", "director Christopher Nolan", False, True),
    ("the Beatles", "Beatle", False, True),
    ("first", "First Army", False, False),  # a one-word name only matches a one-word name
    ("Nolan's", "Nolan", False, False),
])
def test_name_matching_rules(a, b, strict, lenient):
    assert (fold(a) == fold(b)) is strict
    assert lenient_match(fold(a), fold(b)) is lenient


def test_score_counts_both_rules():
    s = score({"christopher nolan", "film"}, {"director christopher nolan", "inception"})
    assert s == {"pred": 2, "ref": 2, "strict": 0, "lenient_pred": 1, "lenient_ref": 1}


def test_2wiki_loader_matches_gold_on_titles(tmp_path):
    (tmp_path / "2wiki").mkdir()
    corpus = [{"title": "A", "text": "a text"}, {"title": "B", "text": "b text"}, {"title": "C", "text": "c"}]
    questions = [{"_id": "q1", "type": "comparison", "question": "A or B?", "answer": "A",
                  "supporting_facts": [["A", 0], ["B", 1], ["A", 1]]}]
    (tmp_path / "2wiki" / "2wikimultihopqa_corpus.json").write_text(json.dumps(corpus), encoding="utf-8")
    (tmp_path / "2wiki" / "2wikimultihopqa_dev100.json").write_text(json.dumps(questions), encoding="utf-8")
    records, qs, gold = load_2wiki(tmp_path)
    assert [r["title"] for r in records] == ["A", "B", "C"] and records[0]["text"] == "a text"
    assert qs == [{"id": "q1", "question": "A or B?", "type": "comparison"}]
    assert gold == [{"2wiki-0000", "2wiki-0001"}]
    questions[0]["supporting_facts"].append(["Z", 0])
    (tmp_path / "2wiki" / "2wikimultihopqa_dev100.json").write_text(json.dumps(questions), encoding="utf-8")
    with pytest.raises(SystemExit, match="Z"):
        load_2wiki(tmp_path)


def test_musique_records_keep_the_title_out_of_the_text():
    openie = {"docs": [{"title": "Nolan", "text": "Christopher Nolan directed Inception.",
                        "extracted_entities": ["Christopher Nolan", "Inception"],
                        "extracted_triples": [["Christopher Nolan", "directed", "Inception"], ["bad"]]}]}
    records, counts = convert(openie)
    [rec] = records
    assert rec["title"] == "Nolan" and rec["text"] == "Christopher Nolan directed Inception."
    assert counts["triples"] == 1 and counts["malformed_triples"] == 1
    assert rec["relations"][0]["supporting_text"] == "Christopher Nolan directed Inception."


def test_the_notes_vault_loads_with_every_answer_a_note() -> None:
    from multihop import load_notes

    ds = load_notes()
    titles = {r["id"] for r in ds.records}
    assert len(ds.records) == 32 and len(ds.questions) == 36
    # the records are what graphmem's Markdown reader gives: its title (the first heading) must be the file name the
    # gold ids use, and the text is the body without the front matter (what bm25s and graphmem both index)
    assert all(r["title"] == r["id"] for r in ds.records)
    assert not any(r["text"].startswith("---") for r in ds.records)
    assert all(g and g <= titles for g in ds.gold)
    assert ds.kinds is not None
    assert {k: ds.kinds.count(k) for k in set(ds.kinds)} == {"names-topic-not-answer": 16, "names-answer": 10,
                                                             "describes": 10}
    assert ds.folder is not None and ds.folder.is_dir()
    blind = load_notes("notes-blind")
    assert len(blind.records) == 60 and len(blind.questions) == 48
    assert all(r["title"] == r["id"] and not r["text"].startswith("---") for r in blind.records)
    assert any((blind.folder / f"{r['id']}.md").read_text(encoding="utf-8").startswith("---") for r in blind.records)
    assert all(g and g <= {r["id"] for r in blind.records} for g in blind.gold)
    assert blind.kinds is not None and blind.kinds.count("names-topic-not-answer") == 20


def test_a_folder_is_ranked_by_file_names_and_kinds_are_reported_apart(tmp_path: Path) -> None:
    import graphmem
    from multihop import Dataset, by_kind, graphmem_rankings, record_ids

    folder = tmp_path / "vault"
    folder.mkdir()
    (folder / "Redis.md").write_text("# Redis\n\nOur cache and session store.\n", encoding="utf-8")
    (folder / "Cache eviction incident.md").write_text("# Cache eviction incident\n\nRedis ran out of memory.\n",
                                                       encoding="utf-8")
    questions = [{"id": "q1", "question": "redis out of memory"}, {"id": "q2", "question": "which session store"}]
    ds = Dataset("v", [], questions, [{"Cache eviction incident"}, {"Redis"}], ("offline",), folder=folder,
                 kinds=["a", "b"])
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}) as kb:
        kb.ingest_paths([folder])
        ids = record_ids(kb, ds)
        assert sorted(ids.values()) == ["Cache eviction incident", "Redis"]
        ranked, _ = graphmem_rankings(kb, questions, {"preset": "bm25"}, ids)
    assert ranked[0][0] == "Cache eviction incident" and ranked[1][0] == "Redis"
    baseline = [["Redis", "Cache eviction incident"], ["Redis", "Cache eviction incident"]]
    kinds = by_kind(ranked, ds, baseline)
    assert kinds["a"] == {"n": 1, "R@1": 100.0, "bm25s R@1": 0.0, "R@2": 100.0, "bm25s R@2": 100.0}
    assert kinds["b"]["R@1"] == kinds["b"]["bm25s R@1"] == 100.0


def test_a_vault_with_anything_but_top_level_notes_is_refused(tmp_path: Path) -> None:
    """Folder ingest takes every file, subfolders too, and a record id is a file's name: the loader says so
    instead of the run stopping later at "ingest added X of Y" or two notes sharing an id."""
    from multihop import load_notes

    vault = tmp_path / "notes_vault"
    (vault / "sub").mkdir(parents=True)
    (vault / "Redis.md").write_text("---\ntags: [topic]\n---\n# Redis\n\nA cache.\n", encoding="utf-8")
    (tmp_path / "notes_vault_queries.jsonl").write_text(
        json.dumps({"id": "q1", "query": "what is redis", "answers": ["Redis"], "kind": "names-answer"}) + "\n",
        encoding="utf-8")
    ds = load_notes("notes", root=tmp_path)
    assert ds.records == [{"id": "Redis", "title": "Redis", "text": "# Redis\n\nA cache.\n"}]
    (vault / "sub" / "Redis.md").write_text("# Redis\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"sub/Redis.md.*top-level .md notes only"):
        load_notes("notes", root=tmp_path)
    (vault / "sub" / "Redis.md").unlink()
    (vault / "sub").rmdir()
    (vault / "todo.txt").write_text("x", encoding="utf-8")
    with pytest.raises(SystemExit, match="todo.txt"):
        load_notes("notes", root=tmp_path)
