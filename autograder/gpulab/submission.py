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
LINKS_REFUSED = "links are not accepted; upload the file itself"
JUNK = ("__MACOSX", ".DS_Store", ".git", "__pycache__", ".ipynb_checkpoints")


def _safe_member(name: str) -> PurePosixPath | None:
    """A relative path with no `..` and no drive/absolute part, or None (then the member is skipped)."""
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or any(part in ("..", "") for part in p.parts) or not p.parts:
        return None
    return p


def _extract_zip(path: Path, dest: Path) -> tuple[list[str], list[PurePosixPath]]:
    skipped, links, total = [], [], 0
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
            if rel is not None and stat.S_ISLNK(mode):
                links.append(rel)
            if rel is None or stat.S_ISLNK(mode):
                skipped.append(f"{info.filename} (unsafe path or link: not extracted)")
                continue
            if info.is_dir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            total = _place_member(path, dest / rel, zf.open(info), info.file_size, total)
    return skipped, links


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


def _extract_tar(path: Path, dest: Path) -> tuple[list[str], list[PurePosixPath]]:
    skipped, links, total = [], [], 0
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
            if rel is not None and (m.issym() or m.islnk()):
                links.append(rel)
            if rel is None or not (m.isfile() or m.isdir()):
                skipped.append(f"{m.name} (unsafe path, link or device: not extracted)")
                continue
            if m.isdir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            src = tf.extractfile(m)
            if src is not None:
                total = _place_member(path, dest / rel, src, m.size, total)
    return skipped, links


def _is_bare_git(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / ".git").exists()


def _export_bare_git(path: Path, dest: Path) -> tuple[list[str], list[PurePosixPath]]:
    """A bare repository (or a .git dir): its HEAD commit's files, via `git archive`."""
    tar_path = dest.parent / "head.tar"
    res = proc.run(["git", "--git-dir", str(path), "archive", "--format=tar", "-o", str(tar_path), "HEAD"], timeout=120)
    if not res.ok:
        raise GpulabError(f"submission {path}: a git repository whose HEAD cannot be read "
                          f"({(res.stderr or res.stdout).strip()[:200]})")
    extracted = _extract_tar(tar_path, dest)
    tar_path.unlink()
    return extracted


@dataclass
class Unpacked:
    """A submission on disk: `root` is the tree to search; `skipped` lists what was not unpacked,
    `links` the archive members that were links (not unpacked: links are not accepted)."""

    name: str
    root: Path
    skipped: list[str] = field(default_factory=list)
    links: list[PurePosixPath] = field(default_factory=list)


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
            skipped, links = _export_bare_git(path, dest)
        elif lower.endswith(".zip"):
            skipped, links = _extract_zip(path, dest)
        elif lower.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
            skipped, links = _extract_tar(path, dest)
        else:
            raise GpulabError(f"submission {path}: not a directory, .zip, .tar.gz or git checkout")
        yield Unpacked(name, dest, skipped, links)


def list_tree(root: Path) -> tuple[list[PurePosixPath], list[PurePosixPath]]:
    """(every regular file, every link) under root (relative, POSIX), skipping VCS/OS junk.
    Links are never followed nor graded; they are listed so that a student who uploaded a link
    is told so rather than that the file is missing."""
    out: list[PurePosixPath] = []
    links: list[PurePosixPath] = []

    def rel(full: str) -> PurePosixPath:
        return PurePosixPath(os.path.relpath(full, root).replace(os.sep, "/"))

    for dirpath, dirnames, filenames in os.walk(root):
        keep = []
        for d in sorted(dirnames):
            if d in JUNK:
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                links.append(rel(os.path.join(dirpath, d)))
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            if f in JUNK:
                continue
            if os.path.islink(full):
                links.append(rel(full))
                continue
            if not os.path.isfile(full):
                continue
            out.append(rel(full))
            if len(out) > MAX_FILES:
                raise GpulabError(f"submission {root}: more than {MAX_FILES} files")
    return out, links


def list_files(root: Path) -> list[PurePosixPath]:
    """Every regular file under root (relative, POSIX), skipping VCS/OS junk and links."""
    return list_tree(root)[0]


@dataclass
class Found:
    """Where a lab's student files were found in a submission."""

    lab: str
    files: dict[str, PurePosixPath] = field(default_factory=dict)   # rubric name -> path in submission
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    links: dict[str, PurePosixPath] = field(default_factory=dict)   # missing, but a link of that name is there

    @property
    def any(self) -> bool:
        return bool(self.files)

    def missing_paths(self) -> str:
        """'labs/scan/a.cu, labs/scan/b.cu': the files not found, for reports."""
        return ", ".join(f"labs/{self.lab}/{want}" for want in self.missing)

    def links_note(self) -> str:
        """'; labs/scan/a.cu is a link: links are not accepted ...' when a missing file was a link."""
        return f"; {links_refused(self.links.values())}" if self.links else ""


def links_refused(links) -> str:
    """'a.cu is a link: links are not accepted; upload the file itself' (or 'a, b are links: ...')."""
    named = sorted({str(p) for p in links})
    shown = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
    return f"{shown} {'is a link' if len(named) == 1 else 'are links'}: {LINKS_REFUSED}"


def _best(lab: str, want: str, files: list[PurePosixPath]) -> list[PurePosixPath]:
    """The candidates for one wanted file, best first (see find_student_files)."""
    w = PurePosixPath(want)
    tiers = [
        [p for p in files if _ends_with(p, PurePosixPath("labs", lab) / w)],
        [p for p in files if _ends_with(p, PurePosixPath(lab) / w)],
        [p for p in files if _ends_with(p, w)],
        [p for p in files if p.name == w.name],
    ]
    hit = next((t for t in tiers if t), [])
    return sorted(hit, key=lambda p: (len(p.parts), str(p)))


def find_student_files(lab: str, wanted: list[str] | tuple[str, ...], files: list[PurePosixPath],
                       links: list[PurePosixPath] = ()) -> Found:
    """Finds each wanted file (relative to labs/<lab>/): by path suffix labs/<lab>/<f>, then <lab>/<f>,
    then <f>, then by bare name; among equals, the shallowest path wins (and the others are noted).
    A file found only as a link stays missing, and the link is recorded to say why."""
    found = Found(lab)
    for want in wanted:
        hit = _best(lab, want, files)
        if not hit:
            found.missing.append(want)
            as_link = _best(lab, want, list(links))
            if as_link:
                found.links[want] = as_link[0]
            continue
        found.files[want] = hit[0]
        if len(hit) > 1:
            others = ", ".join(str(p) for p in hit[1:4])
            found.notes.append(f"{want}: took {hit[0]}; also found {others}")
    return found


def labs_handed_in(sub: Path, student_files: dict[str, list[str] | tuple[str, ...]]) -> list[str]:
    """The labs of `student_files` ({lab: its student files}) whose files the submission holds, as
    a grade without --lab grades them: a folder is looked into; an archive or a bare git checkout
    (unpacked only when graded) counts for every lab."""
    if not sub.is_dir() or _is_bare_git(sub):
        return list(student_files)
    files = list_tree(sub)[0]
    return [lab for lab, wanted in student_files.items() if find_student_files(lab, wanted, files).any]


def nothing_found(found: list[Found], files: list[PurePosixPath], links: list[PurePosixPath]) -> str:
    """Why no lab can be graded, in one line for the student: what was looked for, and what the
    submission holds instead (nothing, links, other files)."""
    looked = ", ".join(f"labs/{f.lab}/{w}" for f in found for w in f.missing)
    msg = f"no lab's student files found; looked for {looked}"
    named = [p for f in found for p in f.links.values()]
    if named:
        msg += f"; {links_refused(named)}"
    elif links:
        msg += f"; the submission's {len(links)} link(s) were not used: {LINKS_REFUSED}"
    if not files and not links:
        msg += "; the submission is empty"
    elif files:
        shown = ", ".join(str(f) for f in files[:5]) + (f", ... ({len(files)} files)" if len(files) > 5 else "")
        msg += f"; it holds {shown}"
    return msg


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
