"""Every lab follows the lab template (common/template/): its task sheet, its deck, its write-up
and its instructor notes have the template's parts, and the sheet's points are the rubric's.

The template is the one source: the sections and the stage table's header are read from
common/template/README.md, so a change there is a change for every lab.
"""

import re
import unittest
from pathlib import Path

from gpulab import decks
from gpulab.rubric import load_rubric

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "common" / "template"
MAX_LINES = 250
STAGE_HEADER = "| # | stage | file: function | hours | points |"
QUESTION = re.compile(r"^(\d+)\.\s+\*\*\((\d+(?:\.\d+)?) points?\)\*\*", re.MULTILINE)
ANSWER_HEADING = re.compile(r"^##\s+(\d+)\.\s+.*\((\d+(?:\.\d+)?) points?\)\s*$", re.MULTILINE)
NOTES_HEADING = re.compile(r"^###\s+(\d+)\.\s+.*\((\d+(?:\.\d+)?) points?\)\s*$", re.MULTILINE)


def sections(text: str) -> list[str]:
    """The `##` headings, outside code fences and comments."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            out.append(line[3:].strip())
    return out


def section(text: str, name: str) -> str:
    """The body of the `##` section whose heading starts with `name`."""
    m = re.search(rf"^## {re.escape(name)}.*?$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return m.group(1) if m else ""


def template_sections() -> list[str]:
    """The template's section names, less their placeholders: 'Write-up questions (`answers.md`,
    <w> points)' -> 'Write-up questions'."""
    return [re.split(r"\s*\(", s)[0] for s in sections((TEMPLATE / "README.md").read_text(encoding="utf-8"))]


def labs() -> list[str]:
    return sorted(p.parent.name for p in REPO.glob("labs/*/rubric.toml"))


def stage_rows(sheet: str) -> list[list[str]]:
    """The cells of each row of the stage table (after its header and ruler)."""
    lines = sheet.splitlines()
    i = lines.index(STAGE_HEADER)
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


class TemplateTest(unittest.TestCase):
    def test_the_template_has_its_parts(self):
        for name in ("README.md", "deck.md", "answers.md", "NOTES.md"):
            self.assertTrue((TEMPLATE / name).is_file(), name)
        sheet = (TEMPLATE / "README.md").read_text(encoding="utf-8")
        self.assertLessEqual(len(sheet.splitlines()), MAX_LINES)
        self.assertIn(STAGE_HEADER, sheet)
        self.assertEqual(template_sections(), [
            "Before you start", "The problem", "The model", "Stages, in order", "Checkpoints", "Rules", "Points",
            "What to submit", "Policies", "Debugging and pitfalls", "Write-up questions", "References"])
        deck = (TEMPLATE / "deck.md").read_text(encoding="utf-8")
        self.assertTrue(decks.is_deck(deck))
        classes = set().union(*(decks.classes(s) for s in decks.split(deck).slides))
        self.assertTrue({"lead", "objectives", "predict", "answer", "refs"} <= classes, classes)


class LabSheetTest(unittest.TestCase):
    def sheet(self, lab: str) -> str:
        return (REPO / "labs" / lab / "README.md").read_text(encoding="utf-8")

    def test_length_and_sections_in_the_templates_order(self):
        want = template_sections()
        for lab in labs():
            with self.subTest(lab=lab):
                text = self.sheet(lab)
                self.assertLessEqual(len(text.splitlines()), MAX_LINES)
                got = [next((w for w in want if s.startswith(w)), s) for s in sections(text)]
                self.assertEqual(got, want, "the sheet's ## sections, against common/template/README.md")

    def test_stage_table_points_are_the_rubrics(self):
        for lab in labs():
            with self.subTest(lab=lab):
                rubric = load_rubric(REPO / "labs" / lab / "rubric.toml")
                totals = {sp.id: sp.total for sp in rubric.stages}
                extra = {sp.id for sp in rubric.stages if sp.extra_credit}
                seen: list[str] = []
                for row in stage_rows(self.sheet(lab)):
                    self.assertEqual(len(row), 5, row)
                    number, stages, where, hours, points = row
                    ids = re.findall(r"`([a-z0-9-]+)`", stages)
                    self.assertTrue(ids, row)
                    self.assertIn(":", where, "file: function")
                    self.assertRegex(hours, r"^\d+(\.\d+)?$")
                    graded = [i for i in ids if i in totals]
                    self.assertEqual(float(points), sum(totals[i] for i in graded), row)
                    self.assertEqual(number == "EC", bool(graded) and all(i in extra for i in graded), row)
                    seen += graded
                self.assertEqual(sorted(seen), sorted(totals), "every graded stage once in the stage table")

    def test_checkpoints_are_commands_that_grade_the_stages_done(self):
        for lab in labs():
            with self.subTest(lab=lab):
                body = section(self.sheet(lab), "Checkpoints")
                ids = {sp.id for sp in load_rubric(REPO / "labs" / lab / "rubric.toml").stages}
                commands = re.findall(rf"gpulab grade labs/{lab}((?: --stage [a-z0-9-]+)+)", body)
                self.assertTrue(commands, f"no `gpulab grade labs/{lab} --stage ...` in Checkpoints")
                for c in commands:
                    for stage in re.findall(r"--stage ([a-z0-9-]+)", c):
                        self.assertIn(stage, ids)
                self.assertRegex(body, r"[Cc]heckpoint 1")

    def test_rules_say_what_of_the_libraries_is_allowed(self):
        for lab in labs():
            with self.subTest(lab=lab):
                rules = section(self.sheet(lab), "Rules")
                self.assertIn("CUB", rules)
                self.assertRegex(rules, r"(?i)allowed")

    def test_submission(self):
        for lab in labs():
            with self.subTest(lab=lab):
                body = section(self.sheet(lab), "What to submit")
                self.assertIn(f"gpulab submit {lab}", body)
                self.assertRegex(body, r"\*\*Due:\*\*")
                self.assertIn("answers.md", body)

    def test_write_up_points(self):
        for lab in labs():
            with self.subTest(lab=lab):
                rubric = load_rubric(REPO / "labs" / lab / "rubric.toml")
                manual = sum(m.points for m in rubric.manual)
                sheet = self.sheet(lab)
                heading = next(s for s in sections(sheet) if s.startswith("Write-up questions"))
                self.assertIn(f"{manual:g} points", heading)
                questions = [(int(n), float(p)) for n, p in QUESTION.findall(section(sheet, "Write-up questions"))]
                self.assertEqual([n for n, _ in questions], list(range(1, len(questions) + 1)))
                self.assertEqual(sum(p for _, p in questions), manual)
                answers = (REPO / "labs" / lab / "answers.md").read_text(encoding="utf-8")
                self.assertIn(f"({manual:g} points", answers.splitlines()[0])
                self.assertEqual([(int(n), float(p)) for n, p in ANSWER_HEADING.findall(answers)], questions,
                                 "answers.md's headings: one per question, with its points")
                notes = (REPO / "solutions" / lab / "NOTES.md").read_text(encoding="utf-8")
                self.assertEqual([(int(n), float(p)) for n, p in NOTES_HEADING.findall(section(notes, "Write-up answers"))],
                                 questions, "NOTES.md, 'Write-up answers': one per question")


class LabDeckTest(unittest.TestCase):
    def test_deck_has_objectives_steps_model_and_instructor_answers(self):
        for lab in labs():
            with self.subTest(lab=lab):
                deck = decks.split((REPO / "slides" / f"{lab}.md").read_text(encoding="utf-8"))
                titles = [decks.title(s) for s in deck.slides]
                self.assertTrue(any(t.startswith("Learning objectives") for t in titles))
                model = [s for s in deck.slides if decks.title(s).startswith("Model vs measurement")]
                self.assertTrue(model, "a model-vs-measurement slide")
                self.assertRegex(model[0], r"H[12]00")
                self.assertRegex(model[0], r"20\d\d-\d\d-\d\d")
                code = [s for s in deck.slides if re.search(r"^```(cuda|cpp|c\+\+)\s*$", s, re.MULTILINE)]
                self.assertGreaterEqual(len(code), 3, "each step's code change (at least three)")
                answers = [i for i, s in enumerate(deck.slides) if decks.is_answer(s)]
                self.assertTrue(answers, "answers of graded questions on instructor-only slides")
                for i, s in enumerate(deck.slides):
                    if "predict" in decks.classes(s):
                        nxt = decks.classes(deck.slides[i + 1]) if i + 1 < len(deck.slides) else set()
                        self.assertTrue(nxt & {"reveal", "answer"}, f"'{titles[i]}' has no answer slide after it")
                self.assertIn("refs", decks.classes(deck.slides[-1]))


if __name__ == "__main__":
    unittest.main()
