"""The lecture decks as slides: Marp Markdown split at its slide rulers, and the instructor-only
slides taken out for the student handout.

A deck (a Markdown file whose front matter says `marp: true`) is a list of slides separated by
lines `---` outside code fences. A slide of class `answer` (`<!-- _class: answer -->`, alone or
with other classes) holds the answer to a graded question or a solution-level number: the lecturer
has it, the student handout does not until the solutions are released (autograder/README.md,
"The handout"). Standard library only: scripts/render-slides.sh runs this file to render the
student version of a deck (`python3 autograder/gpulab/decks.py --student DECK.md > OUT.md`).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

ANSWER_CLASS = "answer"
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULER = re.compile(r"^---\s*$")
_CLASS = re.compile(r"<!--\s*_class:\s*([^>]*?)\s*-->")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.MULTILINE)


@dataclass
class Deck:
    front: str            # the front matter with its rulers ('' when there is none)
    slides: list[str]     # each slide's text, without the ruler lines between slides


def is_deck(text: str) -> bool:
    """A Marp deck: front matter that says `marp: true`."""
    m = re.match(r"---\s*\n(.*?)\n---\s*\n", text, re.DOTALL)
    return bool(m and re.search(r"^marp:\s*true\s*$", m.group(1), re.MULTILINE))


def split(text: str) -> Deck:
    """The deck's front matter and slides (rulers inside code fences do not split)."""
    lines = text.splitlines(keepends=True)
    front = ""
    i = 0
    if lines and _RULER.match(lines[0]):
        for j in range(1, len(lines)):
            if _RULER.match(lines[j]):
                front = "".join(lines[: j + 1])
                i = j + 1
                break
    slides, cur, fenced = [], [], False
    for line in lines[i:]:
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and _RULER.match(line):
            slides.append("".join(cur))
            cur = []
            continue
        cur.append(line)
    slides.append("".join(cur))
    return Deck(front, slides)


def join(deck: Deck) -> str:
    """The inverse of split()."""
    body = "---\n".join(s if s.endswith("\n") or not s else s + "\n" for s in deck.slides[:-1])
    if len(deck.slides) > 1:
        body += "---\n"
    return deck.front + body + deck.slides[-1]


def classes(slide: str) -> set[str]:
    """The slide's classes (`<!-- _class: a b -->`)."""
    out: set[str] = set()
    for m in _CLASS.finditer(slide):
        out |= set(m.group(1).split())
    return out


def title(slide: str) -> str:
    m = _HEADING.search(slide)
    return m.group(1).strip() if m else ""


def is_answer(slide: str) -> bool:
    return ANSWER_CLASS in classes(slide)


def strip_answers(text: str) -> tuple[str, int]:
    """(the deck without its answer slides, how many were taken out). Text that is not a deck is
    returned unchanged."""
    if not is_deck(text):
        return text, 0
    deck = split(text)
    kept = [s for s in deck.slides if not is_answer(s)]
    removed = len(deck.slides) - len(kept)
    if removed == 0:
        return text, 0
    if not kept:
        kept = [""]
    if not kept[-1].endswith("\n") and deck.slides[-1].endswith("\n"):
        kept[-1] += "\n"
    return join(Deck(deck.front, kept)), removed


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "--student":
        print("usage: decks.py --student DECK.md   (prints the deck without its answer slides)", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text, _ = strip_answers(f.read())
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
