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


if __name__ == "__main__":
    unittest.main()
