"""The course's documents point at things that exist: the papers a handout cites by seed number are
named in it, and every "file, "Section"" pointer of a lab file finds that section."""

import re
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Title words of each source document (/work/shared/seeds/README.md), as a handout must name them.
SEED_TITLES = {"000": "Provably Efficient GPU Algorithms", "001": "lecture notes", "002": "Sort Hard",
               "003": "CIS 565", "004": "A Novel Computational Model for GPUs"}


def headings(md: Path) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#+\s+(.*)$", md.read_text(encoding="utf-8"), re.MULTILINE)}


class DocsTest(unittest.TestCase):
    def test_handouts_name_the_papers_they_cite(self):
        for md in sorted(REPO.glob("labs/*/README.md")):
            text = md.read_text(encoding="utf-8")
            for seed in sorted(set(re.findall(r"seed (\d{3})", text))):
                with self.subTest(handout=str(md.relative_to(REPO)), seed=seed):
                    self.assertIn(SEED_TITLES[seed], text.split("## References", 1)[-1] if "## References" in text else "")

    def test_rubric_format_pointer_resolves(self):
        for rubric in sorted(REPO.glob("labs/*/rubric.toml")):
            first = rubric.read_text(encoding="utf-8").splitlines()[0]
            m = re.search(r'format: ([\w/.-]+\.md), "([^"]+)"', first)
            with self.subTest(rubric=str(rubric.relative_to(REPO))):
                self.assertIsNotNone(m, first)
                self.assertIn(m.group(2), headings(REPO / m.group(1)))


    def test_section_pointers_in_lab_files_resolve(self):
        # `README.md, "Stage 8"` in a starter pointed at a section that did not exist (issue 12, item 3).
        cite = re.compile(r'([\w/.-]*(?:README|RESULTS)(?:\.md)?),\s*"([^"]+)"')
        checked = 0
        for f in sorted(REPO.glob("labs/*/*")):
            if not f.is_file() or f.suffix not in (".cu", ".cuh", ".hpp", ".cpp", ".toml", ".md"):
                continue
            text = re.sub(r"\s*\n\s*(//|#)?\s*", " ", f.read_text(encoding="utf-8"))
            for m in cite.finditer(text):
                name = m.group(1)
                doc = REPO / name if "/" in name else f.parent / (name if name.endswith(".md") else name + ".md")
                with self.subTest(file=str(f.relative_to(REPO)), cites=m.group(0)):
                    self.assertTrue(doc.is_file(), doc)
                    self.assertTrue(any(h.startswith(m.group(2)) for h in headings(doc)), sorted(headings(doc)))
                checked += 1
        self.assertGreater(checked, 5)

    def test_task_sheets_fit_and_have_their_sections(self):
        wanted = ("Before you start", "Stages, in order", "Rules", "Points", "What to submit", "Policies",
                  "Debugging and pitfalls", "Write-up questions", "References")
        for md in sorted(REPO.glob("labs/*/README.md")):
            with self.subTest(task_sheet=str(md.relative_to(REPO))):
                self.assertLessEqual(len(md.read_text(encoding="utf-8").splitlines()), 250)
                hs = headings(md)
                for w in wanted:
                    self.assertTrue(any(h.startswith(w) for h in hs), w)
                self.assertTrue((md.parent / "RESULTS.md").is_file())
                self.assertTrue((md.parent / "answers.md").is_file())


if __name__ == "__main__":
    unittest.main()
