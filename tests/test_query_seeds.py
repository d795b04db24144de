"""kb.query seeds only from the entities a question names specifically (retrieval/query_seeds.py).

The texts are the kind that made the old matcher seed from "II", "Father", "Out" and "first":
encyclopedia prose through the offline extractor, and agent extractions that hold generic entities.
"""

from __future__ import annotations

import graphmem
from graphmem.retrieval.query_seeds import HUB_MIN_PASSAGES, StemSet, named_seeds, same_word

BIOGRAPHY = [
    ("Richard II of England", "Richard II was King of England from 1377 until he was deposed in 1399. "
     "Richard II was the son of Edward the Black Prince. His father died in 1376. "
     "Out of the first years of his reign came the Peasants' Revolt."),
    ("Edward the Black Prince", "Edward the Black Prince was the eldest son of King Edward III. "
     "He was the father of Richard II. The first of his campaigns was fought at Crécy."),
    ("Anne of Bohemia", "Anne of Bohemia was the first wife of Richard II. "
     "Anne of Bohemia married Richard II in 1382. Her father was Emperor Charles IV."),
    ("Father Brown", "Father Brown is a fictional Roman Catholic priest created by G. K. Chesterton. "
     "Out of his stories came many films."),
]


def _seeds(kb: graphmem.KnowledgeBase, question: str) -> list[str]:
    return [n["name"] for n in kb.query(question)["nodes"].values() if n["seed"]]


def _ingest_biographies(kb: graphmem.KnowledgeBase) -> None:
    for i, (title, text) in enumerate(BIOGRAPHY):
        kb.documents.ingest_text(text, doc_id=f"bio{i}", title=title, extractor="offline")


def test_encyclopedia_question_seeds_from_the_names_not_from_ordinals_or_common_words(kb):
    _ingest_biographies(kb)
    # these exist as entities in this knowledge base: the old matcher seeded from them
    for name in ("Father", "first", "Out", "II"):
        kb.add_node(name, "concept")
    seeds = _seeds(kb, "Who was the father of the first wife of Richard II?")
    assert any(s.startswith("Richard II") for s in seeds)
    assert not {"Father", "first", "Out", "II", "father"} & set(seeds)
    assert all(e["source_name"] not in {"Father", "Out", "II"} and e["target_name"] not in {"Father", "Out", "II"}
               for e in kb.query("Who was the father of the first wife of Richard II?")["edges"])
    # written as a name, mid-question, "Father Brown" is one
    assert _seeds(kb, "Who created Father Brown?")[0] == "Father Brown"


def test_a_word_merely_spelled_like_an_entity_seeds_only_when_nothing_is_named(kb):
    kb.ingest_with_content("d1", "Ops", "ops.txt", "The performer uses the Kafka cluster. Kafka feeds the tracker.",
                           [{"name": "performer"}, {"name": "Kafka"}, {"name": "tracker"}],
                           [{"source": "performer", "target": "Kafka", "type": "uses", "confidence": 0.9,
                             "supporting_text": "The performer uses the Kafka cluster."}])
    assert _seeds(kb, "which performer uses Kafka?") == ["Kafka"]
    assert _seeds(kb, "tell me about the performer") == ["performer"]  # nothing better is named


def test_one_word_names_need_the_question_to_write_them_as_names(kb):
    kb.ingest_with_content("d1", "Dispatch", "d.txt", "Dispatch depends on PgBouncer. The INC-7 outage hit Dispatch. "
                           "The Tracker reads from PgBouncer.",
                           [{"name": "Dispatch"}, {"name": "PgBouncer"}, {"name": "INC-7"}, {"name": "tracker"}],
                           [{"source": "Dispatch", "target": "PgBouncer", "type": "depends on",
                             "confidence": 1.0, "supporting_text": "Dispatch depends on PgBouncer."}])
    ctx = kb.ctx
    names = kb.ctx.store.node_names

    def seeds(q: str) -> list[str]:
        got = named_seeds(ctx, q, 10)
        n = names([s.node_id for s in got])
        return [n[s.node_id] for s in got]

    assert "Dispatch" not in seeds("why did dispatch fail during inc-7?")  # a word here, and no spelling match
    assert seeds("why did dispatch fail during inc-7?") == ["INC-7"]  # a digit makes a name
    assert seeds("Why did Dispatch fail?") == ["Dispatch"]  # capital mid-question
    assert seeds("is pgbouncer up?") == ["PgBouncer"]  # an inner capital in the knowledge base's spelling
    assert seeds("Tracker: is it up?") == []  # a capital that starts the question proves nothing by itself
    assert seeds("Dispatch and INC-7: why?") == ["INC-7", "Dispatch"]  # capitalised as the knowledge base spells it
    assert seeds("dispatch") == []  # a lowercase word spelled differently is no name


def test_a_match_inside_a_longer_one_and_stemmed_matches_close_together(kb):
    kb.ingest_with_content("d1", "Storms", "s.txt",
                           "The notification storm hit the Notification Worker. The citizen left the country.",
                           [{"name": "notification storm"}, {"name": "Notification"}, {"name": "Label Printer"},
                            {"name": "citizen of country"}], [])
    assert _seeds(kb, "What caused the notification storm?") == ["notification storm"]
    assert _seeds(kb, "Would a Kafka outage stop label printing?") == ["Label Printer"]  # stems aside
    assert named_seeds(kb.ctx, "Which citizen founded the first bank of the country?", 10) == []


def test_a_name_inside_a_longer_name_stays_as_a_variant(kb):
    kb.ingest_with_content("d1", "Dracula", "d.txt", "Van Helsing hunts Dracula. Abraham Van Helsing was Dutch.",
                           [{"name": "Van Helsing"}, {"name": "Abraham Van Helsing"}, {"name": "Dracula"}], [])
    assert _seeds(kb, "Which book has Abraham Van Helsing?") == ["Abraham Van Helsing", "Van Helsing"]


def test_hubs_step_back_beside_rarer_names_but_stay_when_alone(kb):
    for i in range(HUB_MIN_PASSAGES + 5):
        kb.ingest_with_content(f"h{i}", f"Film {i}", f"f{i}.txt", f"An American Film {i} was made.",
                               [{"name": "American"}, {"name": f"Film {i}"}], [])
    said = "Inception is an American film by Christopher Nolan."
    kb.ingest_with_content("inc", "Inception", "i.txt", said,
                           [{"name": "American"}, {"name": "Inception"}, {"name": "Christopher Nolan"}],
                           [{"source": "Christopher Nolan", "target": "Inception", "type": "creates",
                             "confidence": 1.0, "supporting_text": said}])
    assert _seeds(kb, "Which American director made Inception?") == ["Inception"]
    assert _seeds(kb, "Which films are American?") == ["American"]


def test_a_seed_without_relations_stands_for_the_entities_named_after_it(kb):
    kb.ingest_with_content("r", "Redis notes", "r.txt",
                           "Redis is fast. The Route Planner uses the Redis cache. INC-9 affected the Redis cache. "
                           "The Redis cache is shared.",
                           [{"name": "Redis"}, {"name": "Redis cache"}, {"name": "Route Planner"},
                            {"name": "INC-9"}, {"name": "Redis cache tuning"}],
                           [{"source": "INC-9", "target": "Redis cache", "type": "affects", "confidence": 0.9,
                             "supporting_text": "INC-9 affected the Redis cache."}])
    sg = kb.query("Which incidents involved Redis?")
    seeds = [n["name"] for n in sg["nodes"].values() if n["seed"]]
    assert seeds[:2] == ["Redis", "Redis cache"]
    assert "Redis cache tuning" not in seeds  # named after Redis, but used less often than Redis itself
    assert ("INC-9", "Redis cache") in {(e["source_name"], e["target_name"]) for e in sg["edges"]}


def test_a_question_that_names_nothing_falls_back_to_the_search_pipeline(kb, quickstart):
    sg = kb.query("objects that are not released")  # names no entity: the passage search finds one
    assert any(n["name"] == "memory leak" for n in sg["nodes"].values())
    assert any(e["type"] == "causes" for e in sg["edges"])
    assert kb.query("zzzz qqqq")["nodes"] == {}
    # stop words only: no search either (the pipeline would match them in every passage)
    kb.ingest_with_content("p", "Plant", "p.txt", "The pump and the valve of the plant.",
                           [{"name": "pump"}, {"name": "valve"}],
                           [{"source": "pump", "target": "valve", "type": "uses", "confidence": 0.9,
                             "supporting_text": "The pump and the valve of the plant."}])
    r = kb.query_with_evidence("the of and")
    assert r["subgraph"]["nodes"] == {} and r["supporting_documents"] == []
    # only the pipeline's best few entity hits seed, not every entity sharing a word with the question
    for i in range(6):
        kb.ingest_with_content(f"o{i}", f"Objects {i}", f"o{i}.txt", f"Object pool {i} is sized daily.",
                               [{"name": f"object pool {i}"}], [])
    q = "objects that are not released"
    ranked = [h.id for h in kb.search(q, kinds=("chunk", "entity"), k=10).hits if h.kind == "entity"]
    assert len(ranked) > 3
    seeds = [nid for nid, n in kb.query(q)["nodes"].items() if n["seed"]]
    assert seeds == ranked[:3]


def test_same_word_stems():
    assert same_word("printing", "printer") and same_word("fail", "failed") and same_word("caused", "causes")
    assert same_word("leaks", "leak") and not same_word("run", "runs_x") and not same_word("cat", "cattle")


def test_stem_set_agrees_with_same_word():
    words = ["printer", "fail", "failed", "causes", "leak", "cattle", "runs", "ETA", "dispatcherrorrate", "stop"]
    sset = StemSet(w.casefold() for w in words)
    for q in ["printing", "fail", "failure", "caused", "leaks", "cat", "run", "eta", "dispatch", "stops", "sto",
              "xyzzy", "fails", "print", "prin"]:
        assert sset.has(q) == any(same_word(q, w.casefold()) for w in words), q
