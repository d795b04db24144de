"""Readers: one per format; bad files are skipped with a reason (and a line where there is one)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from graphmem.ingest.readers import NotText, Skipped, bulk, html, markdown, pdf, reader_for, text


def _read(mod, path: Path, content: bytes, doc_id="x"):
    return list(mod.read(path, doc_id, content))


def test_markdown_front_matter_and_title(tmp_path):
    md = (b"---\ntitle: Dispatch API\ntags: [api, core]\nowner: team-a\nreviewed: 2026-01-02\n---\n"
          b"# Heading\nBody text.\n")
    [doc] = _read(markdown, tmp_path / "d.md", md)
    assert doc.title == "Dispatch API"
    assert doc.metadata["tags"] == ["api", "core"] and doc.metadata["owner"] == "team-a"
    assert doc.metadata["reviewed"] == "2026-01-02"  # dates kept as JSON-friendly text
    assert doc.text == "# Heading\nBody text.\n"
    json.dumps(doc.metadata)


def test_markdown_title_from_heading_and_bad_yaml(tmp_path):
    [doc] = _read(markdown, tmp_path / "d.md", b"Intro\n\n## The Route Planner ##\ntext")
    assert doc.title == "The Route Planner"
    bad = b"---\ntitle: [unclosed\n---\n# T\nbody"
    [doc] = _read(markdown, tmp_path / "b.md", bad)
    assert "not valid YAML" in doc.metadata["front_matter_problem"]
    assert "body" in doc.text and doc.title == "T"


def test_crlf_front_matter(tmp_path):
    [doc] = _read(markdown, tmp_path / "c.md", b"---\r\ntitle: Win\r\n---\r\nbody\r\n")
    assert doc.title == "Win" and doc.text.startswith("body")


def test_text_reader(tmp_path):
    [doc] = _read(text, tmp_path / "notes.txt", "caf\u00e9 notes".encode("utf-8-sig"))
    assert doc.text == "caf\u00e9 notes" and doc.title == "notes.txt"


def test_html_strips_markup_scripts_and_styles(tmp_path):
    page = b"""<html><head><title> Harbor  map </title><style>p { color: red }</style></head>
    <body><script>var secret = 1;</script><h1>Map</h1><p>Dispatch API uses ledger-db.</p>
    <ul><li>one &amp; two</li><li>three</li></ul></body></html>"""
    [doc] = _read(html, tmp_path / "m.html", page)
    assert doc.title == "Harbor map"
    assert "secret" not in doc.text and "color" not in doc.text
    assert "Dispatch API uses ledger-db." in doc.text and "one & two\n\nthree" in doc.text


def test_binary_and_bad_utf8_raise_not_text(tmp_path):
    with pytest.raises(NotText, match="binary"):
        _read(text, tmp_path / "b.txt", b"abc\x00def")
    with pytest.raises(NotText, match="line 2"):
        _read(text, tmp_path / "u.txt", b"fine\nbad \xff byte")


def test_jsonl_records_and_bad_lines(tmp_path):
    lines = [
        json.dumps({"id": "n1", "title": "One", "text": "First note.", "metadata": {"k": 1}}),
        "{not json",
        json.dumps({"id": "n2", "text": ""}),
        "",
        json.dumps({"id": "n3", "title": "Three", "content": "Third note about Redis.", "source": "wiki://3",
                    "entities": [{"name": "Redis", "type": "software", "supporting_text": "Redis"}],
                    "relations": []}),
        json.dumps({"id": "n4", "text": "x", "entities": [{"type": "no name"}]}),
    ]
    out = _read(bulk, tmp_path / "b.jsonl", "\n".join(lines).encode())
    docs = [o for o in out if not isinstance(o, Skipped)]
    skipped = [o for o in out if isinstance(o, Skipped)]
    assert [d.doc_id for d in docs] == ["n1", "n3"]
    assert docs[0].metadata["k"] == 1 and docs[1].source == "wiki://3"
    assert docs[1].extraction is not None and docs[1].extraction.entities[0].name == "Redis"
    assert [(s.line, s.reason.split(" ")[0]) for s in skipped] == [(2, "not"), (3, "'text'"), (6, "entities[0].name:")]


def test_json_list_shape_with_line_numbers(tmp_path):
    data = '[\n  {"title": "A", "text": "alpha"},\n  {"title": "A", "text": "again"},\n  {"title": "B"}\n]'
    out = _read(bulk, tmp_path / "c.json", data.encode(), doc_id="c.json")
    docs = [o for o in out if not isinstance(o, Skipped)]
    assert [d.doc_id for d in docs] == ["A", "A#1"]  # repeated titles stay two documents
    [sk] = [o for o in out if isinstance(o, Skipped)]
    assert sk.line == 4 and "record 2" in sk.reason and "'text'" in sk.reason


def test_json_broken_midway_reports_line(tmp_path):
    data = '[\n {"title": "A", "text": "alpha"},\n {"title": "B", "text": oops}\n]'
    out = _read(bulk, tmp_path / "c.json", data.encode())
    assert not isinstance(out[0], Skipped)
    assert isinstance(out[1], Skipped) and out[1].line == 3 and "not valid JSON" in out[1].reason


def _pdf_bytes(pages: list[str]) -> bytes:
    """A minimal valid PDF with one text line per page (hand-written objects)."""
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", None, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for t in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({t}) Tj ET".encode()
        objs.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
        content_no = len(objs)
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_no} 0 R "
                    "/Resources << /Font << /F1 3 0 R >> >> >>")
        kids.append(f"{len(objs)} 0 R")
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>"
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs, start=1):
        offsets.append(out.tell())
        out.write(f"{i} 0 obj\n{o}\nendobj\n".encode())
    xref = out.tell()
    out.write(f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode())
    for off in offsets:
        out.write(f"{off:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def test_pdf_pages_kept(tmp_path):
    [doc] = _read(pdf, tmp_path / "r.pdf", _pdf_bytes(["Page one text.", "Page two text."]))
    assert "Page one text." in doc.text and "Page two text." in doc.text
    assert [p[2] for p in doc.pages] == [1, 2]
    s, e, _ = doc.pages[1]
    assert doc.text[s:e] == "Page two text."


def test_pdf_encrypted_and_broken(tmp_path):
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(_pdf_bytes(["secret"])))
    writer = pypdf.PdfWriter()
    for p in reader.pages:
        writer.add_page(p)
    writer.encrypt("pw")
    buf = io.BytesIO()
    writer.write(buf)
    [sk] = _read(pdf, tmp_path / "e.pdf", buf.getvalue())
    assert isinstance(sk, Skipped) and "encrypted" in sk.reason
    [sk] = _read(pdf, tmp_path / "b.pdf", b"%PDF-1.4\nthis is not really a pdf")
    assert isinstance(sk, Skipped) and "broken PDF" in sk.reason


def test_reader_choice_and_overrides(tmp_path):
    assert reader_for(Path("a.MD")) is markdown.read
    assert reader_for(Path("a.rst")) is text.read  # plain text by default (issue 13 item 10)
    assert reader_for(Path("a.adoc")) is None
    assert reader_for(Path("a.adoc"), {".adoc": "text"}) is text.read
    assert reader_for(Path("a.rst"), {".rst": "markdown"}) is markdown.read
    from graphmem import InvalidInput

    with pytest.raises(InvalidInput, match="unknown reader 'nope'"):
        reader_for(Path("a.rst"), {".rst": "nope"})


def test_a_number_past_pythons_digit_limit_costs_one_record_not_the_run(tmp_path):
    """int('9' * 5000) raises ValueError (not JSONDecodeError): the whole ingest used to stop with a traceback."""
    huge = "9" * 5000
    out = _read(bulk, tmp_path / "a.jsonl", ('{"id": "ok", "text": "fine"}\n'
                                             f'{{"id": "bad", "text": "x", "metadata": {{"n": {huge}}}}}\n').encode())
    assert not isinstance(out[0], Skipped)
    assert isinstance(out[1], Skipped) and out[1].line == 2 and "digits" in out[1].reason
    records = ['{"id": "l1", "text": "one"}', f'{{"id": "l2", "text": "x", "n": {huge}}}',
               '{"id": "l3", "text": "three"}']
    listed = _read(bulk, tmp_path / "b.json", ("[" + ", ".join(records) + "]").encode())
    assert [getattr(d, "doc_id", None) for d in listed if not isinstance(d, Skipped)] == ["l1", "l3"]
    whole = _read(bulk, tmp_path / "c.json", f'{{"documents": [{{"id": "a", "text": "x", "n": {huge}}}]}}'.encode())
    assert len(whole) == 1 and isinstance(whole[0], Skipped) and "digits" in whole[0].reason


def test_a_pdf_title_that_is_not_text_falls_back_to_the_file_name(tmp_path):
    import pypdf
    from pypdf.generic import NameObject, NumberObject

    writer = pypdf.PdfWriter()
    for page in pypdf.PdfReader(io.BytesIO(_pdf_bytes(["Page one text."]))).pages:
        writer.add_page(page)
    writer.add_metadata({"/Producer": "test"})
    writer._info.get_object()[NameObject("/Title")] = NumberObject(42)  # what a hostile file holds
    buf = io.BytesIO()
    writer.write(buf)
    [doc] = _read(pdf, tmp_path / "report.pdf", buf.getvalue())
    assert doc.title == "report" and "Page one text." in doc.text  # before: TypeError, the whole run stopped


def test_a_pdf_decompression_bomb_is_a_skipped_file(tmp_path, monkeypatch):
    """pypdf's LimitReachedError is a PyPdfError, not a PdfReadError: it stopped the whole run."""
    import pypdf
    from pypdf.errors import LimitReachedError

    class Bomb:
        def __init__(self, *args, **kwargs):
            raise LimitReachedError("Limit reached while decompressing.")

    monkeypatch.setattr(pypdf, "PdfReader", Bomb)
    [out] = _read(pdf, tmp_path / "bomb.pdf", b"%PDF-1.4")
    assert isinstance(out, Skipped) and "broken PDF (LimitReachedError" in out.reason


def test_html_without_a_closing_head_keeps_its_body():
    """'<head>' without '</head>' (valid HTML5, minifiers write it) hid the whole body: 'no text in the document'."""
    from graphmem.ingest.readers.html import html_to_text

    assert html_to_text("<html><head><title>x</title><body><p>body text</p></body></html>") == ("x", "body text")
    assert html_to_text("<title>Oops<p>all text here</p>") == ("Oops", "all text here")
    assert html_to_text("<title>Page</title><body><svg><title>Close icon</title></svg><p>hi</p>") == ("Page", "hi")
    assert html_to_text("<head><script>x=1</script></head><body><p>ok</p><script>bad()</script></body>") == ("", "ok")
