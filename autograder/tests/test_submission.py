"""Submissions: directories, .zip, .tar.gz, git checkouts (working tree and bare), nesting, unsafe
archives; student files found by path or by name."""

import io
import subprocess
import tarfile
import unittest
import zipfile
from pathlib import Path, PurePosixPath

from gpulab import submission
from gpulab.errors import GpulabError
from tests.helpers import TempDir


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


FILES = {"alice-course/labs/scan/scan.cu": "scan!", "alice-course/labs/scan/notes.md": "hi",
         "alice-course/common/src/runner.cpp": "hack", "alice-course/labs/transpose/transpose.cu": "tr"}


class SubmissionTest(TempDir, unittest.TestCase):
    def found(self, path: Path):
        with submission.unpacked(path) as up:
            files = submission.list_files(up.root)
            f = submission.find_student_files("scan", ["scan.cu"], files)
            data = submission.read_student_file(up.root, f.files["scan.cu"]) if f.any else None
            return f, files, data, up.skipped

    def test_directory_nested_top_folder(self):
        d = tree(self.tmp / "alice", FILES)
        f, files, data, _ = self.found(d)
        self.assertEqual(f.files["scan.cu"], PurePosixPath("alice-course/labs/scan/scan.cu"))
        self.assertEqual(data, b"scan!")
        self.assertEqual(len(files), 4)

    def test_zip(self):
        z = self.tmp / "alice.zip"
        with zipfile.ZipFile(z, "w") as zf:
            for rel, text in FILES.items():
                zf.writestr(rel, text)
            zf.writestr("__MACOSX/._scan.cu", "junk")
        f, files, data, _ = self.found(z)
        self.assertEqual(data, b"scan!")
        self.assertNotIn("__MACOSX", str(files))
        self.assertEqual(submission.submission_name(z), "alice")

    def test_zip_rejects_traversal(self):
        z = self.tmp / "evil.zip"
        with zipfile.ZipFile(z, "w") as zf:
            zf.writestr("../../etc/evil.cu", "x")
            zf.writestr("/abs/scan.cu", "x")
            zf.writestr("ok/scan.cu", "fine")
        f, _, data, skipped = self.found(z)
        self.assertEqual(data, b"fine")
        self.assertEqual(len(skipped), 2)
        self.assertFalse((self.tmp.parent / "etc" / "evil.cu").exists())

    def test_tar_gz_with_symlink_skipped(self):
        t = self.tmp / "bob.tar.gz"
        with tarfile.open(t, "w:gz") as tf:
            data = b"scan-tar"
            info = tarfile.TarInfo("bob/scan/scan.cu")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
            link = tarfile.TarInfo("bob/link.cu")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tf.addfile(link)
        f, _, data, skipped = self.found(t)
        self.assertEqual(data, b"scan-tar")
        self.assertEqual(f.files["scan.cu"], PurePosixPath("bob/scan/scan.cu"))
        self.assertTrue(any("link.cu" in s for s in skipped))
        self.assertEqual(submission.submission_name(t), "bob")

    def test_bare_file_by_name(self):
        d = tree(self.tmp / "carol", {"scan.cu": "bare"})
        f, _, data, _ = self.found(d)
        self.assertEqual(data, b"bare")

    def test_path_beats_name_and_ambiguity_is_noted(self):
        d = tree(self.tmp / "dan", {"backup/scan.cu": "old", "x/labs/scan/scan.cu": "new", "y/scan.cu": "other"})
        f, _, data, _ = self.found(d)
        self.assertEqual(data, b"new")
        d2 = tree(self.tmp / "erin", {"a/scan.cu": "a", "b/c/scan.cu": "b"})
        f2, _, data2, _ = self.found(d2)
        self.assertEqual(data2, b"a")                     # the shallowest
        self.assertTrue(any("also found" in n for n in f2.notes))

    def test_missing(self):
        d = tree(self.tmp / "frank", {"README": "nothing"})
        f, _, _, _ = self.found(d)
        self.assertFalse(f.any)
        self.assertEqual(f.missing, ["scan.cu"])

    def git(self, *args, cwd):
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                       env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(self.tmp)})

    def test_git_checkout_and_bare_repository(self):
        work = tree(self.tmp / "gina", {"labs/scan/scan.cu": "from git"})
        self.git("init", "-q", cwd=work)
        self.git("add", ".", cwd=work)
        self.git("commit", "-qm", "x", cwd=work)
        f, files, data, _ = self.found(work)          # a working tree: .git is skipped
        self.assertEqual(data, b"from git")
        self.assertFalse(any(".git" in str(p) for p in files))
        bare = self.tmp / "gina.git"
        self.git("clone", "-q", "--bare", str(work), str(bare), cwd=self.tmp)
        f, _, data, _ = self.found(bare)
        self.assertEqual(data, b"from git")
        self.assertEqual(submission.submission_name(bare), "gina")

    def test_bad_inputs(self):
        with self.assertRaises(GpulabError):
            self.found(self.tmp / "nope")
        bad = self.tmp / "x.zip"
        bad.write_text("not a zip")
        with self.assertRaisesRegex(GpulabError, "valid .zip"):
            self.found(bad)
        odd = self.tmp / "x.rar"
        odd.write_text("?")
        with self.assertRaisesRegex(GpulabError, "not a directory"):
            self.found(odd)

    def test_huge_student_file_refused(self):
        d = self.tmp / "h"
        d.mkdir()
        (d / "scan.cu").write_bytes(b"x" * (submission.MAX_STUDENT_FILE + 1))
        with self.assertRaisesRegex(GpulabError, "limit"):
            self.found(d)


if __name__ == "__main__":
    unittest.main()
