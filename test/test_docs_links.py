"""The documentation's relative links resolve: every relative markdown link in README.md,
CONTRIBUTING.md and docs/**/*.md points to an existing file (and, with a #fragment into a markdown
file, to one of its headings), and every doc under docs/ is reachable from docs/index.md."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

pytestmark = pytest.mark.skipif(not (DOCS / "index.md").is_file(), reason="needs the source checkout's docs/")

# [text](target) and [text](target "title"); images too. Code spans and fenced blocks are removed first.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def doc_files():
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md"] + sorted(DOCS.rglob("*.md"))


def links(text):
    text = CODE.sub("", FENCE.sub("", text))
    return LINK.findall(text)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def _rel(p):
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def broken_links(path):
    """(target, why) for each relative link of one markdown file that does not resolve."""
    out = []
    for target in links(path.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue  # http:, https:, mailto: ...
        file_part, _, fragment = target.partition("#")
        dest = path if not file_part else (path.parent / file_part).resolve()
        if not dest.exists():
            out.append((target, "no such file"))
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            out.append((target, f"no heading #{fragment} in {_rel(dest)}"))
    return out


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    assert broken_links(path) == []


def test_every_doc_reachable_from_index():
    seen, todo = set(), [DOCS / "index.md"]
    while todo:
        p = todo.pop().resolve()
        if p in seen or p.suffix != ".md" or not p.is_file():
            continue
        seen.add(p)
        for target in links(p.read_text(encoding="utf-8")):
            file_part = target.partition("#")[0]
            if file_part and not re.match(r"^[a-z][a-z0-9+.-]*:", file_part, re.I):
                dest = (p.parent / file_part).resolve()
                if dest.is_dir():
                    todo.extend(dest.glob("*.md"))
                else:
                    todo.append(dest)
    missing = sorted(str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md") if p.resolve() not in seen)
    assert missing == []


def test_the_check_can_fail(tmp_path):
    (tmp_path / "a.md").write_text(
        "# Title\n\n[ok](a.md) [ok](#title) [gone](missing.md) "
        "[bad](a.md#nowhere) [web](https://example.com) `[code](x.md)`\n"
    )
    assert broken_links(tmp_path / "a.md") == [
        ("missing.md", "no such file"),
        ("a.md#nowhere", f"no heading #nowhere in {tmp_path / 'a.md'}"),
    ]
