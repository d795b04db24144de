"""A first-round passage whose document title the query names keeps its place in the fusion of the rounds
(MuSiQue: "What currency predated the Euro in the country Signmark is from?" lost the page "Signmark",
first-round rank 4, to passages of the second round)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmem
from graphmem.errors import InvalidInput
from graphmem.retrieval.hits import Hit
from graphmem.retrieval.search import title_named, title_specificity

QUESTION = "What currency predated the euro in the country Signmark is from?"
DOCS = [
    ("page", "Signmark", "A rapper from Finland who signs his songs."),
    ("tour1", "Tour dates", "Signmark played Helsinki, Berlin and Oslo; tickets cost euro currency in every country of "
                            "the tour, the currency of each country."),
    ("tour2", "Tour prices", "Signmark tickets in Helsinki: the euro currency in each country, a currency that "
                             "predated nothing."),
    ("tour3", "Tour merchandise", "Signmark shirts were sold for euro in the country, any currency."),
    ("cities", "Cities", "Helsinki, Berlin and Oslo hosted concerts."),
]


def _hit(cid: str, title: str, doc_id: str | None = None) -> Hit:
    return Hit("chunk", cid, 0.0, {}, False, title, "", doc_id or cid, cid, 1)


def test_a_title_is_named_by_its_words_as_one_phrase() -> None:
    hits = [_hit("a", "Signmark"), _hit("b", "Henry Worrall (artist)"), _hit("c", "Worrall Henry"),
            _hit("d", "The"), _hit("e", "Notes"), _hit("f", ""), _hit("g", "Euro"), _hit("h", "Sign")]
    assert title_named(QUESTION, hits) == {"a", "g"}  # "Sign" is a word of no query word: no
    assert title_named("Where did Henry Worrall die?", hits) == {"b"}  # the disambiguation is set aside
    assert title_named("where are the notes?", hits) == {"e"}
    assert title_named("what is the", hits) == set()  # a title of stop words alone is named by no query


def test_a_title_needs_a_word_of_two_letters_and_unicode_forms_agree() -> None:
    hits = [_hit("novel", "1984"), _hit("lang", "C"), _hit("cafe", "Cafe\u0301 Central")]  # NFD, as macOS names files
    assert title_named("top 10 films of 1984 and vitamin C", hits) == set()
    assert title_named("Who ran the Caf\u00e9 Central?", hits) == {"cafe"}
    # typed without the accent, as the full-text index already matches it (FTS5 unicode61 folds diacritics)
    assert title_named("who ran the cafe central", hits) == {"cafe"}
    assert title_named("Who was Jos\u00e9 Mar\u00eda?", [_hit("jm", "Jose Maria")]) == {"jm"}


def test_a_title_other_candidates_name_too_gets_a_share_of_the_term() -> None:
    def hit(cid: str, title: str, text: str) -> Hit:
        return Hit("chunk", cid, 0.0, {}, False, title, text, cid, cid, 1, citations=[{"text": text}])

    pool = [hit("redis", "Redis", "Our cache."), hit("evict", "Cache eviction incident", "Redis ran out of memory."),
            hit("drill", "Sentinel drill", "We killed the redis master."), hit("page", "Signmark", "A rapper."),
            hit("caf", "Caf\u00e9 Rouge", "Lunch."), hit("x", "Lunch spots", "Cafe Rouge is closed on Mondays.")]
    # ctx is not needed: every hit already has its text (no store read)
    share = title_specificity(None, {"redis", "page", "caf"}, pool)  # type: ignore[arg-type]
    assert share == {"redis": pytest.approx(1 / 3), "page": 1.0, "caf": pytest.approx(1 / 2)}


def test_only_the_best_chunk_of_a_named_document_is_named() -> None:
    """The other chunks of a long document titled as the query says would take the places the second hop needs."""
    hits = [_hit("sig:c3", "Signmark", "sig"), _hit("other", "Finnish markka"), _hit("sig:c0", "Signmark", "sig")]
    assert title_named(QUESTION, hits) == {"sig:c3"}


@pytest.fixture
def kb(tmp_path: Path):
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}) as kb:
        for doc_id, title, text in DOCS:
            kb.ingest_with_content(doc_id, title, f"{doc_id}.md", text, [], [])
        yield kb


def test_the_page_the_question_names_is_not_pushed_down_by_the_rounds(kb) -> None:
    """The rounds disagree (the second, searching "Helsinki" from the first round's best passage, puts "Cities"
    first): the named page climbs over the second round's best and a first-round passage."""
    res = kb.search(QUESTION, k=5, config={"feedback_passages": 1})
    titles = [h.title for h in res.hits]
    assert titles[:3] == ["Tour prices", "Tour dates", "Signmark"]
    # no head to stay below; three other passages of the pool name "Signmark" too: a quarter of the term
    assert res.hits[2].parts["title_named"] == pytest.approx(1 / 11 / 4)
    assert all(h.parts["title_named"] == 0 for h in res.hits if h.title != "Signmark")
    # Without the term the page falls to where the rounds put it (below passages that repeat the query's words
    # and the second round's best), which is what the rule changes.
    off = kb.search(QUESTION, k=5, config={"feedback_passages": 1, "title_named_weight": 0})
    assert [h.title for h in off.hits].index("Signmark") == 4
    assert [h.title for h in off.hits][:4] == ["Tour prices", "Tour dates", "Cities", "Tour merchandise"]
    assert all(h.parts["title_named"] == 0 for h in off.hits)


# A stranger's notes vault: the query names the topic note "Redis", the incident note answers it, and both rounds
# rank the incident note first. The old term (a third ranking putting "Redis" first) made the topic note the top hit.
VAULT = [
    ("redis", "Redis", "Redis is our cache and session store, version 7, deployed on cache-01 and cache-02 behind "
                       "Sentinel. The dispatch API, the tracker and the notification worker all keep sessions there; "
                       "backups are RDB snapshots every hour, copied to the object store by a cron job that the "
                       "platform team owns. Clients connect through a TLS tunnel on port 6380. Session keys get a "
                       "TTL; memory use is on the Grafana board."),
    ("evict", "Cache eviction incident", "On 12 March Redis ran out of memory: maxmemory was unset and keys had no "
                                         "TTL, so writes failed with OOM errors. Fix: set maxmemory 6gb and "
                                         "maxmemory-policy allkeys-lru, then add a TTL to session keys; memory fell "
                                         "to 4 GB."),
    ("python", "Python", "Python 3.11 runs the workers and the scheduler; we pin dependencies with pip-tools and build "
                         "wheels in CI."),
    ("disk", "Disk full on build runner", "The build runner ran out of disk space; we fixed it by pruning Docker "
                                          "images."),
    ("dns", "DNS", "Internal zones are served by two CoreDNS pods; TTLs are 300 seconds."),
    ("tls", "Rotate TLS certificates", "Certificates renew through cert-manager thirty days before expiry."),
    ("sync", "Weekly sync 2026-03-04", "Alice owns the Phoenix deadline; Bob reviews the Kafka upgrade."),
    ("kafka", "Kafka consumer lag spike", "Consumer lag reached 2 million messages after a rebalance storm."),
    ("backup", "Restore Postgres from backup", "Use pgBackRest: stop the service, restore the stanza, start it again."),
    ("reading", "Reading list", "Designing Data-Intensive Applications; the SRE book; Database Internals."),
]


def test_a_named_title_does_not_overrule_the_passage_both_rounds_rank_first(tmp_path: Path) -> None:
    query = "how do I fix Redis running out of memory"
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}) as kb:
        for doc_id, title, text in VAULT:
            kb.ingest_with_content(doc_id, title, f"{doc_id}.md", text, [], [])
        off = kb.search(query, k=4, config={"feedback_passages": 1, "title_named_weight": 0})
        assert [h.title for h in off.hits][:2] == ["Cache eviction incident", "Redis"]
        head = off.hits[0].parts
        assert head["first_round"] == head["feedback"] == pytest.approx(1 / 11)  # first in both rounds
        res = kb.search(query, k=4, config={"feedback_passages": 1})
        assert [h.title for h in res.hits][:2] == ["Cache eviction incident", "Redis"]
        redis = res.hits[1]
        # the term lifts the topic note to just below the head, no further: what it adds is what was left
        assert 0 < redis.parts["title_named"] < 1 / 11
        assert redis.score < res.hits[0].score
        assert redis.score == pytest.approx(res.hits[0].score)
        assert redis.score == pytest.approx(sum(redis.parts[p] for p in ("first_round", "feedback", "title_named")))
        # the documents view agrees (documents are sorted again by score alone)
        docs = kb.search(query, k=4, kinds=["document"], config={"feedback_passages": 1})
        assert [h.title for h in docs.hits][:2] == ["Cache eviction incident", "Redis"]


@pytest.mark.parametrize("bad", [-1, "1", float("nan"), float("inf"), True, None])
@pytest.mark.parametrize("name", ["title_named_weight", "feedback_weight", "feedback_rrf_k"])
def test_the_weights_are_checked(kb, name, bad) -> None:
    with pytest.raises(InvalidInput, match=name):
        kb.search(QUESTION, config={"feedback_passages": 1, name: bad})


def test_a_named_title_below_the_first_rounds_pool_is_not_lifted(tmp_path: Path) -> None:
    """Only passages within the first round's top ``pool_k`` (its candidate pool) get the term: here the page is a
    candidate through the walk (every passage mentions the entity Signmark), ranked below 22 passages that repeat
    the query's words."""
    def mention(text: str) -> list[dict[str, str]]:
        return [{"name": "Signmark", "type": "person", "supporting_text": text}]

    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}) as kb:
        text = "Signmark is a rapper from Finland."
        kb.ingest_with_content("page", "Signmark", "page.md", text, mention(text), [])
        for i in range(22):
            text = f"Signmark played stop {i}; tickets cost euro, the currency of the country."
            kb.ingest_with_content(f"tour{i}", f"Tour stop {i}", f"t{i}.md", text, mention(text), [])

        def page(**changes: object) -> tuple[int, float]:
            res = kb.search(QUESTION, k=30, config={"feedback_passages": 1, **changes})
            ids = [h.doc_id for h in res.hits]
            return ids.index("page"), res.hits[ids.index("page")].parts["title_named"]

        assert page()[1] == 0  # a candidate, but below the first round's top 20
        # within a pool of 30: named, but all 22 other passages name "Signmark" too, so the page gets 1/23 of the
        # term (a title every candidate names is no sign of the answer) and climbs a little
        rank, term = page(pool_k=30)
        assert term == pytest.approx(1 / 11 / 23)
        assert 0 < rank < page(pool_k=30, title_named_weight=0)[0]
        assert page(pool_k=30, title_named_weight=0)[0] > 0


def test_titles_capped_below_the_head_keep_their_own_order(tmp_path: Path) -> None:
    """With no second round (the best passage names nothing the query lacks) the first round's best is the head;
    two named topic notes that the term would lift over it both stay below it, in the order the term gave them."""
    docs = [("cmp", "Comparison of stores", "Compare Redis and Postgres, cache and database: latency, memory."),
            ("redis", "Redis", "Our cache."), ("pg", "Postgres", "Our database."),
            ("a", "Lunch", "Sandwiches."), ("b", "Travel", "Trains."), ("c", "Books", "Novels.")]
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}) as kb:
        for doc_id, title, text in docs:
            kb.ingest_with_content(doc_id, title, f"{doc_id}.md", text, [], [])
        query = "compare redis and postgres cache database"
        off = kb.search(query, k=4, kinds=["chunk"], config={"feedback_passages": 1, "title_named_weight": 0})
        res = kb.search(query, k=4, kinds=["chunk"], config={"feedback_passages": 1})
        docs_view = kb.search(query, k=4, kinds=["document"], config={"feedback_passages": 1})
    head = off.hits[0].title
    named = [h.title for h in off.hits if h.title in ("Redis", "Postgres")]
    assert head == "Comparison of stores" and len(named) == 2
    assert [h.title for h in res.hits][:3] == [head, *named]  # the first round's order of the two is kept
    assert res.hits[0].score > res.hits[1].score > res.hits[2].score
    assert [h.title for h in docs_view.hits][:3] == [head, *named]
