"""Issue 13 item 10: wiki search snippets highlight a matched word once — a word the page
already has in bold came back as ``****PgBouncer****``, and a match inside a wikilink broke
the link (``[[**pgbouncer**]]``)."""

from __future__ import annotations

import re

BODY = ("**PgBouncer** connects to [[ledger-db]]. The pooler is [[pgbouncer]]. "
        "When **PgBouncer connection pool exhaustion** happens, dispatch fails.")


def test_bold_word_is_highlighted_once_and_links_stay_links(kb):
    kb.wiki.write_page("topic", "Pooling notes", BODY)
    [hit] = kb.wiki.search_wiki("pgbouncer")
    snip = hit["snippet"]
    assert "***" not in snip
    assert "**PgBouncer**" in snip
    assert "**[[pgbouncer]]**" in snip  # the link is intact, highlighted whole
    # bold markers pair up: every highlighted run is a matched word
    runs = re.findall(r"\*\*(.+?)\*\*", snip)
    assert runs and all(r.lower() in ("pgbouncer", "[[pgbouncer]]") for r in runs), snip


def test_plain_match_is_bold(kb):
    kb.wiki.write_page("topic", "Plain", "the pgbouncer pool ran out")
    [hit] = kb.wiki.search_wiki("pgbouncer")
    assert hit["snippet"].strip() == "the **pgbouncer** pool ran out"
