"""Comments cite the repository's own docs/, never documents outside it nor issue numbers of a
tracker it does not have, and the docs they cite exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Documents outside the repository: the shared protocol notes, style guide and machine notes.
OUTSIDE = re.compile(
    r"kernel-mechanics|shared/protocol|observed[- ](?:cli|doc)|claude-protocol|"
    r"stream-json-messages|STYLE\.md|env/machines"
)
#: A tracker the repository does not have: comments say the why in place, or cite docs/.
ISSUE = re.compile(r"\bissues? #?\d+\b", re.IGNORECASE)
CITED = re.compile(r"docs/([\w.-]+\.md)")


def sources() -> list[Path]:
    files = [*ROOT.glob("byre_jupyter/**/*.py"), *ROOT.glob("tests/**/*.py")]
    files += [*ROOT.glob("bench/**/*.py"), *ROOT.glob("bench/*.md"), ROOT / "README.md"]
    return [f for f in files if f.resolve() != Path(__file__).resolve()]


def test_no_citation_of_documents_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sources()
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "\n".join(found)


def test_no_comment_cites_an_issue_number() -> None:
    docs = [*ROOT.glob("docs/*.md"), *ROOT.glob("scripts/**/*")]
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in [*sources(), *(d for d in docs if d.is_file())]
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert not found, "\n".join(found)


def test_every_cited_doc_exists() -> None:
    cited = {name for path in sources() for name in CITED.findall(path.read_text(errors="replace"))}
    assert cited, "nothing cites docs/: the pattern is wrong"
    assert sorted(n for n in cited if not (ROOT / "docs" / n).is_file()) == []
