"""A submission: a directory, a .zip, a .tar.gz/.tgz/.tar, or a git checkout (working tree or bare).

It is unpacked safely into a temporary directory (no absolute paths, no `..`, no links, size
limits), then each lab's allowed student files are found by their path (labs/<lab>/<file>) or, failing
that, by their bare name anywhere in the tree. Everything else is listed as ignored.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Iterator

from gpulab import proc
from gpulab.errors import GpulabError

MAX_TOTAL_BYTES = 200 * 1024 * 1024   # unpacked submission
MAX_FILES = 20000
MAX_STUDENT_FILE = 2 * 1024 * 1024     # one allowed student file
JUNK = ("__MACOSX", ".DS_Store", ".git", "__pycache__", ".ipynb_checkpoints")


def _safe_member(name: str) -> PurePosixPath | None:
    """A relative path with no `..` and no drive/absolute part, or None (then the member is skipped)."""
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or any(part in ("..", "") for part in p.parts) or not p.parts:
        return None
    return p


def _extract_zip(path: Path, dest: Path) -> list[str]:
    skipped, total = [], 0
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise GpulabError(f"submission {path}: not a valid .zip file") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_FILES:
            raise GpulabError(f"submission {path}: {len(infos)} files (limit {MAX_FILES})")
        for info in infos:
            rel = _safe_member(info.filename.rstrip("/")) if info.filename.rstrip("/") else None
            mode = info.external_attr >> 16
            if rel is None or stat.S_ISLNK(mode):
                skipped.append(f"{info.filename} (unsafe path or link: not extracted)")
                continue
            if info.is_dir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            total = _place_member(path, dest / rel, zf.open(info), info.file_size, total)
    return skipped


def _place_member(archive: Path, target: Path, src: BinaryIO, size: int, total: int) -> int:
    """Copies one archive member to `target`; returns the bytes unpacked so far, refusing archives
    that unpack to more than MAX_TOTAL_BYTES (a zip bomb costs one error, not the disk)."""
    total += size
    if total > MAX_TOTAL_BYTES:
        raise GpulabError(f"submission {archive}: more than {MAX_TOTAL_BYTES >> 20} MB unpacked")
    target.parent.mkdir(parents=True, exist_ok=True)
    with src, open(target, "wb") as out:
        shutil.copyfileobj(src, out)
    return total


def _extract_tar(path: Path, dest: Path) -> list[str]:
    skipped, total = [], 0
    try:
        tf = tarfile.open(path)
    except (tarfile.TarError, OSError) as e:
        raise GpulabError(f"submission {path}: not a readable tar archive ({e})") from None
    with tf:
        members = tf.getmembers()
        if len(members) > MAX_FILES:
            raise GpulabError(f"submission {path}: {len(members)} files (limit {MAX_FILES})")
        for m in members:
            rel = _safe_member(m.name)
            if rel is None or not (m.isfile() or m.isdir()):
                skipped.append(f"{m.name} (unsafe path, link or device: not extracted)")
                continue
            if m.isdir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            src = tf.extractfile(m)
            if src is not None:
                total = _place_member(path, dest / rel, src, m.size, total)
    return skipped


def _is_bare_git(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / ".git").exists()


def _export_bare_git(path: Path, dest: Path) -> list[str]:
    """A bare repository (or a .git dir): its HEAD commit's files, via `git archive`."""
    tar_path = dest.parent / "head.tar"
    res = proc.run(["git", "--git-dir", str(path), "archive", "--format=tar", "-o", str(tar_path), "HEAD"], timeout=120)
    if not res.ok:
        raise GpulabError(f"submission {path}: a git repository whose HEAD cannot be read "
                          f"({(res.stderr or res.stdout).strip()[:200]})")
    skipped = _extract_tar(tar_path, dest)
    tar_path.unlink()
    return skipped


@dataclass
class Unpacked:
    """A submission on disk: `root` is the tree to search; `skipped` lists what was not unpacked."""

    name: str
    root: Path
    skipped: list[str] = field(default_factory=list)


def submission_name(path: Path) -> str:
    """The student's name for gradebooks: the file or folder name without archive suffixes."""
    name = path.name
    for suffix in (".tar.gz", ".tgz", ".tar", ".zip", ".git"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


@contextlib.contextmanager
def unpacked(path: Path) -> Iterator[Unpacked]:
    """Yields the submission as a directory tree (temporary for archives, removed afterwards)."""
    path = Path(path)
    if not path.exists():
        raise GpulabError(f"submission {path}: no such file or directory")
    name = submission_name(path)
    if path.is_dir() and not _is_bare_git(path):
        yield Unpacked(name, path)
        return
    with tempfile.TemporaryDirectory(prefix="gpulab-sub-") as tmp:
        dest = Path(tmp) / "tree"
        dest.mkdir()
        lower = path.name.lower()
        if path.is_dir():
            skipped = _export_bare_git(path, dest)
        elif lower.endswith(".zip"):
            skipped = _extract_zip(path, dest)
        elif lower.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
            skipped = _extract_tar(path, dest)
        else:
            raise GpulabError(f"submission {path}: not a directory, .zip, .tar.gz or git checkout")
        yield Unpacked(name, dest, skipped)


def list_files(root: Path) -> list[PurePosixPath]:
    """Every regular file under root (relative, POSIX), skipping VCS/OS junk and links."""
    out: list[PurePosixPath] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in JUNK and not os.path.islink(os.path.join(dirpath, d)))
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            if f in JUNK or os.path.islink(full) or not os.path.isfile(full):
                continue
            out.append(PurePosixPath(os.path.relpath(full, root).replace(os.sep, "/")))
            if len(out) > MAX_FILES:
                raise GpulabError(f"submission {root}: more than {MAX_FILES} files")
    return out


@dataclass
class Found:
    """Where a lab's student files were found in a submission."""

    lab: str
    files: dict[str, PurePosixPath] = field(default_factory=dict)   # rubric name -> path in submission
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.files)


def find_student_files(lab: str, wanted: list[str] | tuple[str, ...], files: list[PurePosixPath]) -> Found:
    """Finds each wanted file (relative to labs/<lab>/): by path suffix labs/<lab>/<f>, then <lab>/<f>,
    then <f>, then by bare name; among equals, the shallowest path wins (and the others are noted)."""
    found = Found(lab)
    for want in wanted:
        w = PurePosixPath(want)
        tiers = [
            [p for p in files if _ends_with(p, PurePosixPath("labs", lab) / w)],
            [p for p in files if _ends_with(p, PurePosixPath(lab) / w)],
            [p for p in files if _ends_with(p, w)],
            [p for p in files if p.name == w.name],
        ]
        hit = next((t for t in tiers if t), [])
        if not hit:
            found.missing.append(want)
            continue
        hit.sort(key=lambda p: (len(p.parts), str(p)))
        found.files[want] = hit[0]
        if len(hit) > 1:
            others = ", ".join(str(p) for p in hit[1:4])
            found.notes.append(f"{want}: took {hit[0]}; also found {others}")
    return found


def _ends_with(path: PurePosixPath, suffix: PurePosixPath) -> bool:
    n = len(suffix.parts)
    return len(path.parts) >= n and path.parts[-n:] == suffix.parts


def read_student_file(root: Path, rel: PurePosixPath) -> bytes:
    """The file's bytes, refusing huge files (they are not source code)."""
    full = root / rel
    size = full.stat().st_size
    if size > MAX_STUDENT_FILE:
        raise GpulabError(f"{rel}: {size} bytes (limit {MAX_STUDENT_FILE}): not graded")
    return full.read_bytes()
