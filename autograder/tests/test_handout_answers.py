"""What a student receives states no graded answer (autograder/README.md, "The handout").

The course is exported as `gpulab handout` exports it (CPU only, no build) and searched for every
answer of autograder/answers/<lab>.toml; each pattern must also match the instructor's side
(solutions/<lab>/), so that a list cannot rot into patterns that guard nothing. The decks lose
their answer slides, the images only those slides show, and the course's own scripts; a release
(--release-solutions) keeps them and adds solutions/.
"""

import re
import tempfile
import unittest
from pathlib import Path

from gpulab import decks, handout, handout_check

REPO = Path(__file__).resolve().parents[2]

# Exported files that may still name an internal reference, each with its reason. Keep it short:
# every entry is a file a student reads a reference in that they cannot follow.
INTERNAL_ALLOWED = {
    "autograder/README.md": "the grader's design notes cite the issues that made each check (instructors read it too)",
    "autograder/gpulab/case_paths.py": "grader code comment (not a document students read)",
    "common/include/gpulab/scratch_guard.hpp": "the kit (being rewritten with the manifest): its comment names issue 24",
    "common/tests/test_kit.cpp": "the kit's tests (being rewritten with the manifest)",
}


def labs() -> list[str]:
    return sorted(p.parent.name for p in REPO.glob("labs/*/rubric.toml"))


class ExportStatesNoAnswer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls._tmp.name) / "handout"
        handout.export(REPO, cls.out)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_every_lab_has_an_answer_list(self):
        answers = handout_check.load_answers(REPO)
        for lab in labs():
            with self.subTest(lab=lab):
                self.assertTrue(answers.get(lab), f"autograder/answers/{lab}.toml lists no answer")

    def test_no_exported_file_states_a_graded_answer(self):
        found = handout_check.answer_leaks(REPO, self.out)
        self.assertEqual(found, [], "graded answers in the student handout:\n  " + "\n  ".join(found))

    def test_every_pattern_guards_an_answer_the_instructor_has(self):
        for lab, answers in handout_check.load_answers(REPO).items():
            texts = [p.read_text(encoding="utf-8", errors="replace")
                     for p in sorted((REPO / "solutions" / lab).rglob("*")) if p.is_file()]
            deck = REPO / "slides" / f"{lab}.md"
            if deck.is_file():
                texts += [sl for sl in decks.split(deck.read_text(encoding="utf-8")).slides if decks.is_answer(sl)]
            notes = "\n".join(re.sub(r"\s+", " ", t) for t in texts)
            for a in answers:
                for pat in a.patterns:
                    with self.subTest(lab=lab, answer=a.id, pattern=pat.pattern):
                        self.assertTrue(pat.search(notes), f"neither solutions/{lab}/ (NOTES.md, the reference) nor "
                                                           "an answer slide states it: a typo, or the notes lost it")

    def test_allowed_files_exist_and_still_need_it(self):
        for lab, answers in handout_check.load_answers(REPO).items():
            for a in answers:
                for path in a.allow:
                    with self.subTest(lab=lab, answer=a.id, file=path):
                        f = self.out / path
                        self.assertTrue(f.is_file(), "allowed file not in the export: remove the exception")
                        text = re.sub(r"\s+", " ", f.read_text(encoding="utf-8", errors="replace"))
                        self.assertTrue(any(p.search(text) for p in a.patterns),
                                        "the file no longer states the answer: remove the exception")

    def test_no_internal_references(self):
        found = handout_check.internal_references(self.out, INTERNAL_ALLOWED)
        self.assertEqual(found, [], "references students cannot follow:\n  " + "\n  ".join(found))
        for path in INTERNAL_ALLOWED:
            with self.subTest(allowed=path):
                f = self.out / path
                self.assertTrue(f.is_file() and handout_check.INTERNAL.search(f.read_text(encoding="utf-8")),
                                "no internal reference left: remove it from INTERNAL_ALLOWED")

    def test_decks_have_no_answer_slides_and_keep_their_questions(self):
        for deck in sorted((self.out / "slides").glob("*.md")):
            text = deck.read_text(encoding="utf-8")
            if not decks.is_deck(text):
                continue
            with self.subTest(deck=deck.name):
                slides = decks.split(text).slides
                self.assertFalse([decks.title(s) for s in slides if decks.is_answer(s)])
                course = (REPO / "slides" / deck.name).read_text(encoding="utf-8")
                if any(decks.is_answer(s) for s in decks.split(course).slides):
                    self.assertLess(len(slides), len(decks.split(course).slides))

    def test_what_of_scripts_a_student_gets(self):
        got = {p.name for p in (self.out / "scripts").iterdir()}
        for kept in ("setup.sh", "fetch-deps.sh", "render-slides.sh", "slide_figures.py", "plot_csv.py",
                     "check_links.py", "gpulab.in"):
            self.assertIn(kept, got)
        for gone in ("gpu-verify.sh", "gpu-check.sh", "gpu-batch-check.sh", "gpu-multi-batch-check.sh",
                     "handout-selfgrade-gpu.sh"):
            self.assertNotIn(gone, got)
        self.assertFalse((self.out / "autograder" / "answers").exists())
        self.assertFalse((self.out / "common" / "template").exists())
        self.assertFalse(list(self.out.glob("labs/*/results/tune-*")))

    def test_every_image_the_export_shows_is_there(self):
        for md in sorted(self.out.rglob("*.md")):
            for name in handout._IMAGE_REF.findall(md.read_text(encoding="utf-8", errors="replace")):
                with self.subTest(file=str(md.relative_to(self.out)), image=name):
                    self.assertTrue((self.out / "slides" / "img" / name).is_file())


DECK = """---
marp: true
theme: gpulab
---

# Title

---

<!-- _class: predict -->

## Which is faster?

```
---
a code ruler stays
```

---

<!-- _class: answer -->

## The answer

![](img/secret.png)

---

## Last

![](img/shown.png)
"""


class DeckStripTest(unittest.TestCase):
    def test_split_and_join_round_trip(self):
        d = decks.split(DECK)
        self.assertEqual(len(d.slides), 4)
        self.assertEqual(decks.join(d), DECK)
        self.assertIn("a code ruler stays", d.slides[1])
        self.assertEqual(decks.title(d.slides[2]), "The answer")
        self.assertEqual(decks.classes(d.slides[1]), {"predict"})

    def test_answer_slides_are_removed(self):
        text, n = decks.strip_answers(DECK)
        self.assertEqual(n, 1)
        self.assertNotIn("The answer", text)
        self.assertIn("Which is faster?", text)
        self.assertIn("a code ruler stays", text)
        self.assertEqual(len(decks.split(text).slides), 3)
        self.assertEqual(decks.strip_answers("# not a deck\n\n---\n\n<!-- _class: answer -->\n"),
                         ("# not a deck\n\n---\n\n<!-- _class: answer -->\n", 0))

    def test_several_classes(self):
        text = DECK.replace("<!-- _class: answer -->", "<!-- _class: reveal answer -->")
        self.assertNotIn("The answer", decks.strip_answers(text)[0])


class ExportOfADeckTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)
        src = self.tmp / "course"
        for rel, data in {"slides/lab.md": DECK, "slides/img/secret.png": "S", "slides/img/shown.png": "P",
                          "slides/img/sheet.png": "Q", "labs/lab/README.md": "![x](../../slides/img/sheet.png)\n",
                          "solutions/lab/NOTES.md": "the answer\n", "solutions/lab/lab.cu": "int x;\n"}.items():
            p = src / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(data)
        self.src = src

    def tearDown(self):
        self._tmp.cleanup()

    def test_student_export(self):
        out = self.tmp / "student"
        handout.export(self.src, out)
        self.assertNotIn("The answer", (out / "slides/lab.md").read_text())
        self.assertEqual(sorted(p.name for p in (out / "slides/img").iterdir()), ["sheet.png", "shown.png"])
        self.assertFalse((out / "solutions").exists())

    def test_release(self):
        out = self.tmp / "release"
        handout.export(self.src, out, release=True)
        self.assertEqual((out / "slides/lab.md").read_text(), DECK)
        self.assertTrue((out / "slides/img/secret.png").is_file())
        self.assertEqual((out / "solutions/lab/NOTES.md").read_text(), "the answer\n")


class AnswerListTest(unittest.TestCase):
    def test_a_leak_is_named(self):
        with tempfile.TemporaryDirectory() as t:
            root = Path(t)
            (root / "autograder/answers").mkdir(parents=True)
            (root / "autograder/answers/lab.toml").write_text(
                "[[answer]]\nid = 'pad'\ngraded = 'stage x (5 points)'\nwhat = 'w'\npatterns = ['i\\s*/\\s*1024']\n"
                "[[answer.allow]]\nfile = 'labs/lab/model.hpp'\nreason = 'r'\n")
            out = root / "out"
            (out / "labs/lab").mkdir(parents=True)
            (out / "labs/lab/README.md").write_text("store i at i + i/32 +\n  i / 1024\n")
            (out / "labs/lab/model.hpp").write_text("i/1024")
            found = handout_check.answer_leaks(root, out)
            self.assertEqual(len(found), 1)
            self.assertIn("labs/lab/README.md: lab pad (stage x (5 points))", found[0])


if __name__ == "__main__":
    unittest.main()
