"""Patches applied to a private copy of a kernel tree, and the definitions they touch.

``--linux BASE --patch FILE...`` names a kernel tree and patches to apply to it, in order;
``--linux BASE --against PATCHED`` names a second tree instead.  This module reads the
patches (:func:`read_patches`), applies them to a copy of the files they touch
(:func:`prepare`; BASE is only read), and lists the functions, macros and types whose text
differs between the two trees (:func:`touched_functions`, :func:`compare_trees`).

What is modelled:

* **Input.**  Unified diffs (``diff -u``, ``git diff``) and ``git format-patch`` mails, one
  or several per file: an mbox holds mails separated by ``From <id> <weekday> ...`` lines,
  as ``git format-patch --stdout``, b4 and lore write them.  A mail's ``Subject`` (without
  its ``[PATCH ...]`` tags, RFC 2047 words decoded) names the patch in messages; its body
  may be 7bit, 8bit, quoted-printable or base64, or multipart with the diff in a text part.
  A cover letter (``[PATCH 0/N]``, no diff) among other mails is not read as a patch,
  and is named (:func:`cover_letters`).  The mm tree's
  quilt mails (mm-commits) are read too: their patch's own ``From:``/``Subject:`` block after
  a line of dashes names the patch (as an in-body ``Subject:`` does for git am).  Paths are
  taken as ``patch -p1`` does (the first component, ``a/`` or ``b/``, is dropped; git's
  quoted paths are unquoted); ``/dev/null``, or a timestamp at the Epoch (``diff -N``),
  creates or deletes a file; git's ``rename``/``copy`` headers rename or copy one.  Without a
  ``diff --git`` header, different old and new names (quilt's ``--- a/mm/mm_init.c~name`` /
  ``+++ a/mm/mm_init.c``) name one file to patch in place, picked as GNU patch picks it
  (:func:`pick_name`).  A diff whose ``+++`` line ends in CRLF has the CR of each of its lines
  dropped, as GNU patch does without ``--binary``.  Not read (an
  :class:`~equiv.engine.errors.InputError` naming what): binary diffs, combined diffs of
  merges (``@@@``), context diffs, paths leaving the tree (absolute, ``..``), symbolic links
  (git mode ``120000``: the copy holds regular files only, and a link's target may lie
  outside it).
* **Applying** is GNU patch's without fuzz (``--fuzz 0``), in memory, on bytes: every
  context and removed line of a hunk must match exactly (line end included; ``\\ No newline
  at end of file`` understood) at the line its header names, shifted by the offset the
  file's previous hunk applied at; failing that at the nearest offset (the later line first
  at equal distance), never over the lines an earlier hunk changed (its trailing context may
  match again, as in GNU patch).  A hunk with less leading than trailing context whose
  header starts at line 1 matches only at the start of the file, one with less trailing than
  leading context only at its end.  No fuzz, no whitespace-
  insensitive matching, no reversed patches (a hunk whose new text is already there is
  reported so).  A line without a newline that is no longer the last gets one; a hunk with
  no old lines (``diff -U0`` insertions) past the end goes at the end, as in GNU patch.
  Patches are applied one after the other; a file deleted by one is gone for the next.  A
  hunk that does not apply is reported with why: already applied (its new text found), line
  ends that differ (CRLF against LF), its text present but where it may not apply, or the
  first line that differs where it fits best (expected and found, with the line number).  A
  file created where the tree has a directory, or under a path that is a file, is refused.
* **Changes** (:class:`FileChange`) are recomputed from the final text against BASE with
  :class:`difflib.SequenceMatcher`: exact in that every line outside them is unchanged,
  whatever offsets and later patches did to the hunks' own line numbers.
* **Touched definitions** (:class:`Touched`): the top-level definitions
  :mod:`equiv.linux.ktree` indexes (functions, function-like macros, struct/union and enum
  definitions, in every ``#if`` branch) whose text (the definition's syntax node, comments
  inside included) differs, paired per file by kind, name and order of appearance; plus,
  once per changed region, the changed lines outside any such definition that hold more than
  blanks and comments (``#include``, object-like ``#define``, declarations, ``#if``
  lines...), named ``(file scope)``.  A definition tree-sitter cannot parse falls in the file
  scope.

Subject-free: which files to copy and compare are parameters.
"""

from __future__ import annotations

import datetime
import difflib
import email
import email.header
import email.message
import io
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from attrs import evolve, field, frozen

from equiv.engine.errors import InputError
from equiv.linux.ktree import MAKEFILE, Definition, KernelTree, Node, parser
from equiv.linux.stdin import STDIN, stdin_patches

#: The name of a :class:`Touched` entry for changed lines outside every definition.
FILE_SCOPE = "(file scope)"

#: Change kinds of :class:`Touched` and statuses of :class:`FileChange`.
ADDED, REMOVED, CHANGED, MODIFIED = "added", "removed", "changed", "modified"

_FROM_LINE = re.compile(rb"^From \S+ +(Mon|Tue|Wed|Thu|Fri|Sat|Sun) ")
_HEADER_LINE = re.compile(rb"^[A-Za-z0-9-]+:")
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_TAGS = re.compile(r"^\s*(\[[^\]]*\]\s*)+")
_COVER = re.compile(r"\[[^\]]*\b0+/\d+\s*\]")
_DASHES = re.compile(rb"^-{3,}\s*$")
_SYMLINK = re.compile(rb"^(new file mode|deleted file mode|old mode|new mode|index \S+) 120000\b")
_STAMP = re.compile(rb"^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.\d+)? ?"
                    rb"([+-])(\d\d):?(\d\d)\s*$")


# ---- the parsed patches --------------------------------------------------------------------


@frozen(kw_only=True)
class Hunk:
    """One ``@@ -a,b +c,d @@`` hunk: its lines as (``" "``, ``"-"`` or ``"+"``, text with
    its line end; none where ``\\ No newline at end of file`` follows)."""

    number: int  # 1-based, within its file's diff
    header: str  # "@@ -1050,7 +1050,12 @@", as the patch writes it
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: tuple[tuple[str, bytes], ...]

    @property
    def old(self) -> list[bytes]:
        """The lines the hunk expects (context and removed)."""
        return [t for op, t in self.lines if op != "+"]

    @property
    def new(self) -> list[bytes]:
        """The lines it leaves (context and added)."""
        return [t for op, t in self.lines if op != "-"]

    @property
    def prefix(self) -> int:
        """Leading context lines."""
        n = 0
        while n < len(self.lines) and self.lines[n][0] == " ":
            n += 1
        return n

    @property
    def suffix(self) -> int:
        """Trailing context lines."""
        n = 0
        while n < len(self.lines) and self.lines[-1 - n][0] == " ":
            n += 1
        return n


@frozen(kw_only=True)
class FileDiff:
    """The diff of one file: its paths after ``-p1`` (None for ``/dev/null``) and hunks."""

    old_path: str | None
    new_path: str | None
    hunks: tuple[Hunk, ...]
    #: git's ``copy from``/``copy to``: the old file stays
    copy: bool = False
    #: a ``diff --git`` header introduced it: different old and new paths rename (or copy)
    #: the file; without one they name a single file, picked as GNU patch picks it
    #: (:func:`pick_name`)
    git: bool = False

    @property
    def path(self) -> str:
        """The file's name in messages (the new one, or the old one when deleted)."""
        p = self.new_path or self.old_path
        assert p is not None
        return p


@frozen(kw_only=True)
class Patch:
    """One patch: a mail of a patch file, or the whole file when it is a plain diff."""

    name: str  # the patch file as given
    subject: str | None  # the mail's Subject without its [PATCH ...] tags; None: no mail
    index: int  # 1-based position among the patches of its file
    count: int  # patches in its file
    files: tuple[FileDiff, ...]

    @property
    def label(self) -> str:
        """``--patch NAME ("SUBJECT")``: how messages name it."""
        return _label(self.name, self.subject, self.index, self.count)


def _label(name: str, subject: str | None, index: int, count: int) -> str:
    if subject:
        return f'--patch {name} ("{subject}")'
    return f"--patch {name}" + (f" (mail {index} of {count})" if count > 1 else "")


def read_patches(path: Path, name: str | None = None) -> tuple[Patch, ...]:
    """The patches of the file at ``path`` (a diff, a mail or an mbox; ``-``: standard
    input, :func:`stdin_patches`), named ``name`` (default: ``path`` as given) in messages.

    Raises:
        InputError: missing, unreadable, empty, or holding no diff or a malformed one.
    """
    label = str(path) if name is None else name
    if str(path) == STDIN:
        return parse_patches(stdin_patches(), label)
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise InputError(f"--patch {label} is a directory, not a patch file") from None
    except OSError as e:
        raise InputError(f"cannot read --patch {label}: {e.strerror}") from None
    return parse_patches(data, label)


def parse_patches(data: bytes, name: str) -> tuple[Patch, ...]:
    """The patches in ``data``, the text of the patch file ``name`` (see the module
    docstring for what is read).

    Raises:
        InputError: no diff in it, or a malformed one (one line naming the patch).
    """
    return _parse(data, name)[0]


def cover_letters(path: Path) -> tuple[str, ...]:
    """The subjects (tags kept: ``[PATCH v11 0/4] mm: ...``) of the cover letters among the
    mails of the patch file at ``path`` (``-``: standard input), which are not patches.

    Raises:
        InputError: as :func:`read_patches`.
    """
    if str(path) == STDIN:
        return _parse(stdin_patches(), str(path))[1]
    try:
        return _parse(Path(path).read_bytes(), str(path))[1]
    except OSError as e:
        raise InputError(f"cannot read --patch {path}: {e.strerror}") from None


def _parse(data: bytes, name: str) -> tuple[tuple[Patch, ...], tuple[str, ...]]:
    """The patches in ``data`` and the subjects of its cover letters (:func:`parse_patches`)."""
    if not data.strip():
        raise InputError(f"--patch {name} is empty; give a unified diff or git format-patch "
                         "mails")
    chunks = _split_mbox(_lines(data))
    mails = [_mail(c) if _is_mail(c) else (None, c) for c in chunks]
    out: list[Patch] = []
    covers: list[str] = []
    for k, (subject, body) in enumerate(mails, 1):
        subject = _inbody_subject(body) or subject
        label = _label(name, _strip_tags(subject), k, len(mails))
        files = _parse_diff(body, label)
        if not files:
            if len(mails) > 1 and subject is not None and _is_cover(chunks[k - 1]):
                covers.append(subject)
                continue
            raise InputError(f"{label} holds no diff (no '--- a/FILE', '+++ b/FILE', '@@' "
                             "lines); give a unified diff or git format-patch mails")
        out.append(Patch(name=name, subject=_strip_tags(subject), index=k, count=len(mails),
                         files=files))
    if not out:
        raise InputError(f"--patch {name} holds no diff, only cover letters")
    return tuple(out), tuple(covers)


def _lines(data: bytes) -> list[bytes]:
    """``data`` split after every ``\\n`` only (a ``\\r`` stays in its line)."""
    return io.BytesIO(data).readlines()


def _split_mbox(lines: list[bytes]) -> list[list[bytes]]:
    chunks: list[list[bytes]] = [[]]
    for line in lines:
        if _FROM_LINE.match(line) and any(x.strip() for x in chunks[-1]):
            chunks.append([])
        chunks[-1].append(line)
    return [c for c in chunks if any(x.strip() for x in c)]


def _is_mail(lines: list[bytes]) -> bool:
    """A mail starts with an mbox ``From`` line, or with headers that include Subject."""
    first = next(i for i, x in enumerate(lines) if x.strip())
    if _FROM_LINE.match(lines[first]):
        return True
    subject = False
    for line in lines[first:]:
        if not line.strip():
            return subject
        if line[:1] in (b" ", b"\t"):
            continue
        if not _HEADER_LINE.match(line):
            return False
        subject = subject or line.lower().startswith(b"subject:")
    return False


def _is_cover(lines: list[bytes]) -> bool:
    subject = _mail(lines)[0] or ""
    return bool(_COVER.search(subject))


def _mail(lines: list[bytes]) -> tuple[str | None, list[bytes]]:
    """The Subject (tags kept, decoded, unfolded) and the decoded body of one mail."""
    msg = email.message_from_bytes(b"".join(lines))
    raw = msg.get("Subject")
    return (None if raw is None else _decoded(str(raw))), _lines(_payload(msg))


def _decoded(raw: str) -> str:
    """A header's value with its RFC 2047 words decoded, unfolded."""
    try:
        value = str(email.header.make_header(email.header.decode_header(raw)))
    except (ValueError, LookupError):
        value = raw
    return " ".join(value.split())


def _diff_starts(lines: list[bytes], k: int) -> bool:
    line = lines[k]
    return line.startswith((b"diff --git ", b"@@ ")) or (
        line.startswith(b"--- ") and k + 1 < len(lines) and lines[k + 1].startswith(b"+++ "))


def _inbody_subject(lines: list[bytes]) -> str | None:
    """The ``Subject:`` of a block of header lines before the first diff, at the start of the
    body or right after a line of dashes: git am's in-body headers, and the patch's own
    ``From:``/``Subject:``/``Date:`` in the mm tree's mails (Andrew Morton's mm-commits
    notices, whose mail Subject names the quilt file and the branch instead)."""
    block_may_start = True
    k = 0
    while k < len(lines) and not _diff_starts(lines, k):
        line = lines[k]
        if _DASHES.match(line):
            block_may_start = True
        elif block_may_start and _HEADER_LINE.match(line):
            subject: str | None = None
            while k < len(lines) and lines[k].strip() and (
                    _HEADER_LINE.match(lines[k]) or lines[k][:1] in (b" ", b"\t")):
                if lines[k].lower().startswith(b"subject:"):
                    value = lines[k][len(b"subject:"):]
                    while k + 1 < len(lines) and lines[k + 1][:1] in (b" ", b"\t") \
                            and lines[k + 1].strip():
                        k += 1
                        value += lines[k]
                    subject = _decoded(value.decode("utf-8", "replace")) or None
                k += 1
            if subject is not None and (k >= len(lines) or not lines[k].strip()):
                return subject
            block_may_start = False
            continue
        elif line.strip():
            block_may_start = False
        k += 1
    return None


def _payload(msg: email.message.Message) -> bytes:
    """The decoded body; of a multipart mail, its text parts and .patch/.diff attachments."""
    out = b""
    for part in msg.walk():
        if part.is_multipart() or (part is not msg and part.get_content_maintype() != "text"
                                   and not (part.get_filename() or "").endswith((".patch",
                                                                                 ".diff"))):
            continue
        body = part.get_payload(decode=True)
        out += body if isinstance(body, bytes) else b""
    return out


def _strip_tags(subject: str | None) -> str | None:
    return None if subject is None else (_TAGS.sub("", subject) or subject)


def _unquote(raw: bytes) -> bytes:
    """A C-quoted path as git writes one with special characters (``"a/x\\tb"``)."""
    out = bytearray()
    i = 1
    esc = {ord("n"): 10, ord("t"): 9, ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("v"): 11,
           ord("r"): 13}
    while i < len(raw) and raw[i] != ord('"'):
        c = raw[i]
        if c == ord("\\") and i + 1 < len(raw):
            n = raw[i + 1]
            if 48 <= n <= 55:
                out.append(int(raw[i + 1:i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(esc.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out)


def _path(raw: bytes, label: str) -> tuple[str | None, bool]:
    """The path of a ``---``/``+++`` line's value after ``-p1`` (None for /dev/null), and
    whether a timestamp after it is the Epoch (``diff -N``'s mark of an absent file)."""
    raw = raw.rstrip(b"\r\n")
    stamp = b""
    if raw.startswith(b'"'):
        end = raw.find(b'"', 1)
        while end > 0 and raw[end - 1] == ord("\\"):
            end = raw.find(b'"', end + 1)
        stamp = raw[end + 1:] if end > 0 else b""
        raw = _unquote(raw)
    else:
        raw, _, stamp = raw.partition(b"\t")
        raw = raw.rstrip(b" ")
    if raw == b"/dev/null":
        return None, False
    return _strip1(raw.decode("utf-8", "surrogateescape"), label), _is_epoch(stamp.strip())


def _is_epoch(stamp: bytes) -> bool:
    """Whether ``stamp`` (``2026-08-31 10:00:00.000000000 +0200``) is 1970-01-01 00:00:00
    UTC, the time ``diff -N`` gives a file that is absent (as GNU patch reads it)."""
    m = _STAMP.match(stamp)
    if m is None:
        return False
    y, mo, d, h, mi, sec, sign, zh, zm = m.groups()
    try:
        local = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(sec))
    except ValueError:
        return False
    zone = (int(zh) * 60 + int(zm)) * (-1 if sign == b"-" else 1)
    return local - datetime.timedelta(minutes=zone) == datetime.datetime(1970, 1, 1)


def _strip1(p: str, label: str) -> str:
    _, slash, rest = p.partition("/")
    parts = rest.split("/")
    if not slash or not rest or p.startswith("/") or ".." in parts or "" in parts:
        raise InputError(f"{label}: cannot use path {p!r} (paths are read as patch -p1 "
                         "does: a/FILE and b/FILE relative to the tree's root)")
    return rest


def _git_paths(line: bytes, label: str) -> tuple[str, str]:
    """The two paths of ``diff --git a/X b/Y`` (used when no ---/+++ lines follow)."""
    rest = line[len(b"diff --git "):].rstrip(b"\r\n")
    if rest.startswith(b'"'):
        end = rest.index(b'"', 1)
        while rest[end - 1] == ord("\\"):
            end = rest.index(b'"', end + 1)
        a, b = _unquote(rest[:end + 1]), rest[end + 2:]
        b = _unquote(b) if b.startswith(b'"') else b
    elif len(rest) % 2 == 1 and rest[:len(rest) // 2][2:] == rest[len(rest) // 2 + 1:][2:]:
        a, b = rest[:len(rest) // 2], rest[len(rest) // 2 + 1:]
    else:
        a, _, b = rest.partition(b" b/")
        b = b"b/" + b
    dec = [_strip1(x.decode("utf-8", "surrogateescape"), label) for x in (a, b)]
    return dec[0], dec[1]


def _parse_diff(lines: list[bytes], label: str) -> tuple[FileDiff, ...]:
    """The file diffs of one patch's body."""
    files: list[FileDiff] = []
    git: dict[str, str | bool | None] | None = None  # the pending ``diff --git`` header

    def flush() -> None:
        # a git header with no ---/+++: a rename, a copy, or an empty file created/deleted
        if git is None:
            return
        old, new = git["old"], git["new"]
        assert isinstance(old, str) and isinstance(new, str)
        if git["created"]:
            files.append(FileDiff(old_path=None, new_path=new, hunks=(), git=True))
        elif git["deleted"]:
            files.append(FileDiff(old_path=old, new_path=None, hunks=(), git=True))
        elif old != new:
            files.append(FileDiff(old_path=old, new_path=new, hunks=(), copy=bool(git["copy"]),
                                  git=True))

    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if line.startswith(b"diff --git "):
            flush()
            try:
                old, new = _git_paths(line, label)
            except (ValueError, IndexError):
                raise InputError(f"{label}: cannot read the paths of "
                                 f"{line.rstrip().decode('utf-8', 'replace')!r}") from None
            git = {"old": old, "new": new, "created": False, "deleted": False, "copy": False}
        elif line.startswith((b"diff --cc ", b"diff --combined ", b"@@@ ")):
            raise InputError(f"{label}: holds a combined diff of a merge, which cannot be "
                             "applied; give the patches of the merged branch")
        elif line.startswith(b"GIT binary patch") or (line.startswith(b"Binary files ")
                                                       and b" differ" in line):
            raise InputError(f"{label}: holds a binary diff, which is not applied; give "
                             "patches to text files only")
        elif line.startswith(b"*** ") and i + 1 < n and lines[i + 1].startswith(b"--- ") \
                and i + 2 < n and lines[i + 2].startswith(b"*****"):
            raise InputError(f"{label}: is a context diff, which is not read; give a unified "
                             "diff (diff -u, git diff, git format-patch)")
        elif git is not None and _SYMLINK.match(line):
            what = ("creates" if line.startswith(b"new file") else "deletes"
                    if line.startswith(b"deleted") else "changes")
            raise InputError(f"{label}: {what} the symbolic link {git['new']} (git mode "
                             "120000), which is not applied: the copy holds regular files only "
                             "(the C files read are regular files, and a link could lead out "
                             "of the copy); leave that file's diff out of the patch")
        elif git is not None and line.startswith((b"new file mode", b"deleted file mode",
                                                  b"rename from ", b"rename to ", b"copy from ",
                                                  b"copy to ")):
            value = line.rstrip(b"\r\n").split(b" ", 2)[2]
            value = _unquote(value) if value.startswith(b'"') else value
            p = value.decode("utf-8", "surrogateescape")
            if line.startswith(b"new file"):
                git["created"] = True
            elif line.startswith(b"deleted file"):
                git["deleted"] = True
            else:
                _strip1("a/" + p, label)  # the same checks as ---/+++ paths
                git["copy"] = git["copy"] or line.startswith(b"copy")
                git["old" if line.split(b" ")[1] == b"from" else "new"] = p
        elif line.startswith(b"--- ") and i + 2 < n and lines[i + 1].startswith(b"+++ ") \
                and lines[i + 2].startswith(b"@@"):
            (old_path, old_epoch), (new_path, new_epoch) = (_path(line[4:], label),
                                                            _path(lines[i + 1][4:], label))
            if old_path is None and new_path is None:
                raise InputError(f"{label}: a diff from /dev/null to /dev/null")
            name = new_path or old_path
            assert name is not None
            # GNU patch strips the CR of every line of a diff whose +++ line ends in CRLF
            crlf = lines[i + 1].endswith(b"\r\n")
            i += 2
            hunks: list[Hunk] = []
            while i < n and lines[i].startswith(b"@@"):
                hunk, i = _parse_hunk(lines, i, len(hunks) + 1, name, label, crlf)
                hunks.append(hunk)
            if old_epoch and new_path is not None and all(h.old_len == 0 for h in hunks):
                old_path = None
            elif new_epoch and old_path is not None and all(h.new_len == 0 for h in hunks):
                new_path = None
            copy = bool(git is not None and git["copy"])
            files.append(FileDiff(old_path=old_path, new_path=new_path, hunks=tuple(hunks),
                                  copy=copy, git=git is not None))
            git = None
            continue
        i += 1
    flush()
    return tuple(files)


def _parse_hunk(lines: list[bytes], i: int, number: int, path: str, label: str,
                crlf: bool = False) -> tuple[Hunk, int]:
    """The hunk whose header is ``lines[i]``, and the index of the line after it; with
    ``crlf``, the lines ending in CRLF are read as ending in LF."""

    def at(k: int) -> bytes:
        line = lines[k] if k < len(lines) else b""
        return line[:-2] + b"\n" if crlf and line.endswith(b"\r\n") else line

    m = _HUNK.match(lines[i])
    if m is None:
        raise InputError(f"{label}: hunk {number} of {path} has a malformed header "
                         f"{lines[i].rstrip().decode('utf-8', 'replace')!r}; expected "
                         "'@@ -LINE,COUNT +LINE,COUNT @@'")
    header = m.group(0).decode()
    a, b, c, d = (int(g) if g is not None else 1 for g in m.groups())
    need_old, need_new = b, d
    body: list[tuple[str, bytes]] = []
    k = i + 1
    while need_old > 0 or need_new > 0:
        line = at(k)
        if line[:1] == b"\\" and body:
            op, t = body[-1]
            body[-1] = (op, t[:-1] if t.endswith(b"\n") else t)
            k += 1
            continue
        if line == b"\n":  # a blank context line whose space a mailer dropped
            op, t = " ", line
        else:
            op, t = line[:1].decode("latin-1"), line[1:]
        if op == " ":
            need_old, need_new = need_old - 1, need_new - 1
        elif op == "-":
            need_old -= 1
        elif op == "+":
            need_new -= 1
        else:
            where = "the patch ends" if k >= len(lines) else "a line that is no hunk line"
            raise InputError(f"{label}: hunk {number} of {path} ({header}) is truncated: "
                             f"{where} before the {b} old and {d} new lines its header counts")
        if need_old < 0 or need_new < 0:
            raise InputError(f"{label}: hunk {number} of {path} ({header}) has more lines than "
                             "its header counts")
        body.append((op, t))
        k += 1
    if at(k)[:1] == b"\\" and body:
        op, t = body[-1]
        body[-1] = (op, t[:-1] if t.endswith(b"\n") else t)
        k += 1
    return Hunk(number=number, header=header, old_start=a, old_len=b, new_start=c, new_len=d,
                lines=tuple(body)), k


# ---- applying ------------------------------------------------------------------------------


def _locate(src: list[bytes], hunk: Hunk, guess: int, frozen: int) -> int | None:
    """Where (0-based) ``hunk``'s old lines match ``src`` exactly: at ``guess``, else the
    nearest offset (GNU patch's ``locate_hunk`` without fuzz), at or after ``frozen``."""
    old = hunk.old
    m, n = len(old), len(src)
    if m == 0:  # no line to match: there (as GNU patch, at the end when past it)
        return min(guess, n) if frozen <= guess else None

    def match(p: int) -> bool:
        return src[p:p + m] == old

    prefix, suffix = hunk.prefix, hunk.suffix
    if prefix < suffix and hunk.old_start <= 1:  # only at the start of the file
        return 0 if frozen == 0 and match(0) else None
    if suffix < prefix:  # only at the end of the file
        p = n - m
        return p if p >= frozen and match(p) else None
    lo, hi = frozen, n - m
    if lo > hi:
        return None
    for dist in range(max(abs(hi - guess), abs(guess - lo)) + 1):
        for p in (guess + dist, guess - dist) if dist else (guess,):
            if lo <= p <= hi and match(p):
                return p
    return None


def _nearest(lo: int, hi: int, guess: int) -> list[int]:
    """``lo..hi`` ordered as :func:`_locate` tries them: nearest ``guess`` first, the later
    first at equal distance."""
    return sorted(range(lo, hi + 1), key=lambda p: (abs(p - guess), p < guess))


def _find(src: list[bytes], lines: list[bytes], guess: int) -> int | None:
    """The 0-based start of ``lines`` in ``src`` nearest ``guess``, or None."""
    m = len(lines)
    return next((p for p in _nearest(0, len(src) - m, guess) if src[p:p + m] == lines), None) \
        if m else None


def _show(line: bytes) -> str:
    """A line as messages quote it (Python's repr: tabs and a CR visible)."""
    text = line.decode("utf-8", "replace")
    text = text[:-1] if text.endswith("\n") else text
    return repr(text if len(text) <= 120 else text[:117] + "...")


def _lf(lines: list[bytes]) -> list[bytes]:
    return [x[:-2] + b"\n" if x.endswith(b"\r\n") else x for x in lines]


def _why(src: list[bytes], h: Hunk, guess: int, frozen: int, path: str) -> str:
    """Why ``h`` matches nowhere in ``src`` (one file's lines): already applied; its lines
    there with other line ends; there but out of the place it may apply at; or the first line
    that differs where it fits best (expected and found, with the line number)."""
    old, m, n = h.old, len(h.old), len(src)
    if m == 0:
        return (f"it adds lines at line {guess + 1}, inside what the previous hunk changed "
                f"(up to line {frozen}): the hunks overlap or are out of order")
    at = _find(src, old, guess)
    if at is not None and at < frozen:
        return (f"its {m} old lines are at line {at + 1}, inside what the previous hunk "
                f"changed (up to line {frozen}): the hunks overlap or are out of order")
    if at is not None:
        lead = h.prefix < h.suffix
        return (f"its {m} old lines are at line {at + 1}, but a hunk with less "
                f"{'leading' if lead else 'trailing'} than {'trailing' if lead else 'leading'} "
                f"context applies only at the {'start' if lead else 'end'} of the file (as in "
                "GNU patch)")
    new = _find(src, h.new, guess) if h.new != h.old else None
    if new is not None:
        return (f"it is already applied: its new text is at lines {new + 1}-{new + len(h.new)} "
                f"of {path} (was the patch applied before?)")
    if _find(_lf(src), _lf(old), guess) is not None:
        ends = ("the hunk's lines end in CRLF and the file's in LF"
                if _lf(old) != old else "the file's lines end in CRLF and the hunk's in LF")
        return f"{ends}; its {m} old lines match {path} but for the line ends"
    if h.prefix < h.suffix and h.old_start <= 1:
        places = [0]
    elif h.suffix < h.prefix:
        places = [n - m]
    else:
        places = _nearest(frozen, n - m, min(max(guess, frozen), n - m))
    places = [p for p in places if frozen <= p <= n - m]
    if not places:
        return (f"{path} has {n} line{'' if n == 1 else 's'}: the hunk's {m} old lines do "
                "not fit "
                + (f"after line {frozen}, the previous hunk's end" if frozen else "in it"))
    best, score = guess, -1
    for p in places:
        eq = sum(a == b for a, b in zip(src[p:p + m], old, strict=True))
        if eq > score:
            best, score = p, eq
    k = next(k for k in range(m) if src[best + k] != old[k])
    what = ("its context" if [op for op, _ in h.lines if op != "+"][k] == " "
            else "a line it removes")
    found, expected = _show(src[best + k]), _show(old[k])
    if found == expected:
        found += " (without the newline at its end)" if not src[best + k].endswith(b"\n") \
            else " (with a newline at its end)"
    where = (f"where it fits best: lines {best + 1}-{best + m}, offset {best - guess}, {score} "
             f"of its {m} old lines equal" if score else f"at no offset does any of its {m} old "
             "lines match")
    return (f"{what} differs from {path} at line {best + k + 1}: expected {expected}, found "
            f"{found} ({where})")


def apply_hunks(src: list[bytes], diff: FileDiff, label: str) -> list[bytes]:
    """``src`` (one file's lines) with every hunk of ``diff`` applied.

    Raises:
        InputError: a hunk that matches nowhere, named by number and header, with why
            (:func:`_why`).
    """
    out: list[bytes] = []
    pos = 0  # lines of src before pos are done (a hunk may not match before it)
    offset = 0
    for h in diff.hunks:
        expected = h.old_start if h.old_len == 0 else h.old_start - 1
        at = _locate(src, h, expected + offset, pos)
        if at is None:
            why = _why(src, h, expected + offset, pos, diff.path)
            raise InputError(f"{label}: hunk {h.number} of {diff.path} ({h.header}) does not "
                             f"apply: {why}")
        offset = at - expected
        # trailing context stays unapplied (GNU patch's "frozen" lines end before it): the
        # next hunk's leading context may match it again
        keep = len(h.new) - h.suffix if h.old_len else len(h.new)
        out += src[pos:at]
        out += h.new[:keep]
        pos = at + len(h.old) - (h.suffix if h.old_len else 0)
    out += src[pos:]
    # a line marked "\ No newline at end of file" that is no longer last gets its newline
    return [t if t.endswith(b"\n") or k == len(out) - 1 else t + b"\n"
            for k, t in enumerate(out)]


def _inside(p: Path, root: Path) -> bool:
    p, root = p.resolve(), root.resolve()
    return p == root or root in p.parents


def _write(root: Path, rel: str, data: bytes, base: Path) -> None:
    """Write ``root/rel``, replacing (never following) a link there; never under ``base``."""
    rel_path = Path(rel)
    if rel_path.is_absolute() or ".." in rel_path.parts:
        raise ValueError(f"refusing to write {rel!r}: not a path inside the copy")
    dst = root / rel_path
    if _inside(dst, base):
        raise ValueError(f"refusing to write {dst}: it is inside the base tree {base}")
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.is_symlink() or dst.exists():
        dst.unlink()
    dst.write_bytes(data)


def _best(names: Sequence[str]) -> str:
    """GNU patch's best name: the fewest path components, then the shortest base name,
    then the shortest name, then the first."""
    return min(names, key=lambda p: (p.count("/"), len(p.rsplit("/", 1)[-1]), len(p),
                                     names.index(p)))


def pick_name(diff: FileDiff, root: Path, base: Path | None = None) -> str | None:
    """The one file a diff without a git header patches when its old and new names differ
    (quilt's ``--- a/mm/mm_init.c~patch-name`` / ``+++ a/mm/mm_init.c``, a hand-made
    ``--- a/x.c.orig`` / ``+++ b/x.c``), chosen as GNU patch chooses it (patch(1), "patch
    selects a file name from the candidate list"; pch.c ``best_name``): the best of the
    names that are files in ``root``; if none is and the diff creates a file (no hunk has an
    old line), the best of those needing the fewest new directories (in ``root`` or
    ``base``); else None.  The file is patched in place, never renamed."""
    names = [p for p in (diff.old_path, diff.new_path) if p is not None]
    there = [p for p in names if (root / p).is_file()]
    if there:
        return _best(there)
    if not diff.hunks or any(h.old_len for h in diff.hunks):
        return None

    def new_dirs(p: str) -> int:
        parents = [d.as_posix() for d in Path(p).parents if d != Path(".")]
        return sum(not ((root / d).is_dir() or (base is not None and (base / d).is_dir()))
                   for d in parents)

    fewest = min(new_dirs(p) for p in names)
    return _best([p for p in names if new_dirs(p) == fewest])


def _file_above(root: Path, rel: str, links: bool = False) -> str | None:
    """The first directory of ``rel`` that is a file in ``root`` (or a link, unless
    ``links``: a link to a directory is one), if any."""
    parts = rel.split("/")
    for k in range(1, len(parts)):
        above = root.joinpath(*parts[:k])
        if (above.is_symlink() and not links) or (above.exists() and not above.is_dir()):
            return "/".join(parts[:k])
    return None


def apply_patch(patch: Patch, root: Path, base: Path) -> None:
    """Apply ``patch`` to the copy at ``root`` (``base``, the tree it was copied from, only
    names it in messages and is never written).

    Raises:
        InputError: a file it patches is absent, a file it creates exists (or lies under a
            file), or a hunk does not apply.
    """
    created: set[str] = set()
    for fd in patch.files:
        old_path, new_path = fd.old_path, fd.new_path
        named = ""
        if not fd.git and old_path is not None and new_path is not None \
                and old_path != new_path:
            named = f"; the diff names it {old_path} and {new_path}"
            picked = pick_name(fd, root, base)
            if picked is None:
                in_base = any((base / p).is_file() for p in (old_path, new_path))
                why = (f"--linux {base} has neither" if not in_base
                       else "an earlier patch removed it")
                raise InputError(f"{patch.label}: patches {_best([old_path, new_path])}, "
                                 f"which is not in the tree ({why}{named})")
            old_path = picked if (root / picked).is_file() else None
            new_path = picked
        src: list[bytes] = []
        if old_path is not None:
            old = root / old_path
            if not old.is_file():
                why = ("it is a directory" if old.is_dir() else "an earlier patch removed it"
                       if (base / old_path).is_file() else f"--linux {base} does not have it")
                raise InputError(f"{patch.label}: patches {old_path}, which is not in the "
                                 f"tree ({why})")
            src = _lines(old.read_bytes())
        if new_path is not None and new_path != old_path:
            verb = ("creates" if old_path is None
                    else f"{'copies' if fd.copy else 'renames'} {old_path} to")
            if (root / new_path).is_dir() and not (root / new_path).is_symlink():
                raise InputError(f"{patch.label}: {verb} {new_path}, but the tree has a "
                                 f"directory {new_path}")
            if (root / new_path).exists():
                raise InputError(f"{patch.label}: {verb} {new_path}, which is already in the "
                                 "tree")
            above = _file_above(root, new_path)
            if above is not None:
                origin = ("this patch creates it" if above in created
                          else f"--linux {base} has it" if (base / above).is_file()
                          else "an earlier patch creates it")
                raise InputError(f"{patch.label}: {verb} {new_path}, but {above} is a file in "
                                 f"the tree, not a directory ({origin})")
        out = apply_hunks(src, evolve(fd, old_path=old_path, new_path=new_path) if named
                          else fd, patch.label)
        if new_path is None:
            if out:
                raise InputError(f"{patch.label}: deletes {old_path}, but {len(out)} of its "
                                 "lines are not in the patch")
            assert old_path is not None
            (root / old_path).unlink()
            continue
        if old_path is not None and old_path != new_path and not fd.copy:
            (root / old_path).unlink()
        _write(root, new_path, b"".join(out), base)
        if new_path != old_path:
            created.add(new_path)


# ---- the copy and its changes --------------------------------------------------------------


@frozen(kw_only=True)
class Change:
    """One changed region of a file: its 1-based lines in BASE and in the patched text.
    An empty range is where lines were only added (``base``) or only removed (``patched``)."""

    base: range
    patched: range


@frozen(kw_only=True)
class FileChange:
    """One file that differs between BASE and the patched tree."""

    path: str
    status: str  # "modified", "added" (not in BASE) or "removed" (not in the patched tree)
    changes: tuple[Change, ...]

    @property
    def patched_lines(self) -> tuple[range, ...]:
        """The changed line ranges of the patched text (the non-empty ones)."""
        return tuple(c.patched for c in self.changes if c.patched)


def file_change(path: str, before: bytes | None, after: bytes | None) -> FileChange | None:
    """How ``path`` changed from ``before`` to ``after`` (None: absent), or None if equal."""
    if before == after:
        return None
    a, b = _lines(before or b""), _lines(after or b"")
    lo = 0  # the common head and tail are left out of the (quadratic) matcher
    while lo < min(len(a), len(b)) and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < min(len(a), len(b)) - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    ops = difflib.SequenceMatcher(None, a[lo:len(a) - hi], b[lo:len(b) - hi],
                                  autojunk=False).get_opcodes()
    changes = tuple(Change(base=range(lo + i1 + 1, lo + i2 + 1),
                           patched=range(lo + j1 + 1, lo + j2 + 1))
                    for tag, i1, i2, j1, j2 in ops if tag != "equal")
    status = ADDED if before is None else REMOVED if after is None else MODIFIED
    return FileChange(path=path, status=status, changes=changes)


@frozen(kw_only=True)
class Applied:
    """A private copy of a tree with patches applied (what :func:`prepare` made)."""

    root: Path  # the copy's root (``dest``)
    base: Path  # the tree it was copied from (never written)
    patches: tuple[Patch, ...]  # in the order applied
    files: tuple[FileChange, ...]  # every patched file that differs from BASE, first touched first

    @property
    def paths(self) -> tuple[str, ...]:
        """The files that differ from BASE."""
        return tuple(f.path for f in self.files)

    def changed_lines(self, path: str) -> tuple[range, ...]:
        """The changed line ranges of ``path``'s patched text (empty if unchanged)."""
        return next((f.patched_lines for f in self.files if f.path == path), ())


def prepare(base: Path, files: Sequence[str], patches: Sequence[Path], dest: Path) -> Applied:
    """Copy ``files`` (relative paths; those absent from ``base`` are skipped), the
    Makefile and every file the patches touch from ``base`` into ``dest``, and apply the
    ``patches`` there in order.  ``base`` is only read.

    Args:
        base: the kernel tree (``--linux``).
        files: the files the caller will read from the copy.
        patches: the patch files (``--patch``), each a diff, a mail or an mbox.
        dest: a directory the caller owns (created if missing), outside ``base``.

    Raises:
        InputError: ``base`` is not a directory, a patch cannot be read or does not apply
            (one line naming the patch file, its subject, the file and the hunk).
        ValueError: ``dest`` lies inside ``base``.
    """
    base, dest = Path(base), Path(dest)
    _check_dest(base, dest)
    return _apply_all(base, files, tuple(p for f in patches for p in read_patches(f)), dest)


def prepare_steps(base: Path, files: Sequence[str], patches: Sequence[Path],
                  dest: Path) -> tuple[Applied, ...]:
    """The trees of a series, one per patch: the ``k``-th (from 0) is ``base`` with the
    first ``k + 1`` patches applied (as :func:`prepare`, each in its own subdirectory of
    ``dest``; a file holding several mails gives one tree per mail, its cover letter none).

    Raises:
        InputError: as :func:`prepare`.
        ValueError: ``dest`` lies inside ``base``.
    """
    base, dest = Path(base), Path(dest)
    _check_dest(base, dest)
    parsed = tuple(p for f in patches for p in read_patches(f))
    return tuple(_apply_all(base, files, parsed[:k + 1], dest / f"step-{k + 1:03d}")
                 for k in range(len(parsed)))


def _check_dest(base: Path, dest: Path) -> None:
    if not base.is_dir():
        raise InputError(f"--linux {str(base)!r} is not a directory; give the root of a kernel "
                         "source tree (the folder holding mm/ and include/)")
    if _inside(dest, base):
        raise ValueError(f"the copy {dest} would be inside the base tree {base}")


def _apply_all(base: Path, files: Sequence[str], parsed: tuple[Patch, ...], dest: Path) -> Applied:
    """``parsed`` applied in order to a copy of ``files`` and what they touch in ``dest``."""
    touched = dict.fromkeys(path for p in parsed for fd in p.files
                            for path in (fd.old_path, fd.new_path) if path is not None)
    dest.mkdir(parents=True, exist_ok=True)
    for rel in dict.fromkeys([*files, MAKEFILE, *touched]):
        if (base / rel).is_file():
            _write(dest, rel, (base / rel).read_bytes(), base)
    for rel in touched:  # what is in the way of a file a patch creates, as in BASE
        above = _file_above(base, rel, links=True)
        if above is not None and (base / above).is_file():
            _write(dest, above, (base / above).read_bytes(), base)
        elif (base / rel).is_dir():
            (dest / rel).mkdir(parents=True, exist_ok=True)
    for p in parsed:
        apply_patch(p, dest, base)
    changes = [file_change(rel, _read(base / rel), _read(dest / rel)) for rel in touched]
    return Applied(root=dest, base=base, patches=parsed,
                   files=tuple(c for c in changes if c is not None))


def dry_run(base: Path, patches: Sequence[Path]) -> tuple[Patch, ...]:
    """Check that ``patches`` read and apply to ``base`` (in a temporary copy of the files
    they touch, removed afterwards); the patches read.

    Raises:
        InputError: as :func:`prepare`.
    """
    with tempfile.TemporaryDirectory(prefix="equiv-patch-") as tmp:
        return prepare(base, (), patches, Path(tmp)).patches


def _read(p: Path) -> bytes | None:
    return p.read_bytes() if p.is_file() else None


# ---- what the changes touch ----------------------------------------------------------------


@frozen(kw_only=True)
class Touched:
    """A definition whose text differs between BASE and the patched tree, or changed lines
    outside every definition (``name`` :data:`FILE_SCOPE`)."""

    file: str
    #: function or macro name, "struct page" / "union x" / "enum x", or "(file scope)"
    name: str
    #: first line: in the patched text, or in BASE's for kind "removed"
    line: int
    kind: str  # "added", "removed" or "changed"
    #: "function", "macro", "struct", "union", "enum" or "file scope"
    what: str = field()

    @what.default
    def _what(self) -> str:
        return "file scope" if self.name == FILE_SCOPE else "function"


@frozen
class _Def:
    what: str
    name: str
    first: int
    last: int
    text: bytes


@frozen
class _View:
    """One version of one file: its text and its named definitions."""

    src: bytes
    defs: tuple[_Def, ...]

    def covered(self) -> set[int]:
        return {ln for d in self.defs for ln in range(d.first, d.last + 1)}


def _span(node: Node) -> tuple[int, int]:
    """The 1-based first and last line of ``node`` (a trailing newline ends no line)."""
    end_row, end_col = node.end_point
    last = end_row + 1 if end_col > 0 else end_row
    return node.start_point[0] + 1, max(last, node.start_point[0] + 1)


def _named(d: Definition) -> _Def | None:
    """``d`` as a named definition, or None for an object-like macro (file scope)."""
    if d.kind == "macro" and d.node.type != "preproc_function_def":
        return None
    what, name = d.kind, d.name
    if d.kind in ("struct", "enum"):
        what = d.node.type.split("_")[0]  # struct, union, enum
        name = f"{what} {d.name}"
    first, last = _span(d.node)
    return _Def(what, name, first, last, d.src[d.node.start_byte:d.node.end_byte])


def _view(tree: KernelTree | None, root: Path, path: str) -> _View | None:
    """``path`` in ``tree`` (parsed now from ``root`` if the tree did not read it)."""
    if tree is None or path not in tree.sources:
        if not (root / path).is_file():
            return None
        tree = KernelTree.load(root, [path])
    defs = [_named(d) for ds in tree.defs.values() for d in ds if d.file == path]
    return _View(tree.sources[path], tuple(sorted((d for d in defs if d is not None),
                                                  key=lambda d: (d.first, d.name))))


def _significant(src: bytes, rows: set[int]) -> set[int]:
    """The lines of ``rows`` (1-based) of ``src`` holding more than blanks and comments."""
    if not rows:
        return set()
    text = src.split(b"\n")
    keep = {r: bytearray(text[r - 1]) for r in rows if r - 1 < len(text)}
    stack = [parser().parse(src).root_node]
    while stack:
        node = stack.pop()
        (r0, c0), (r1, c1) = node.start_point, node.end_point
        hit = [r for r in keep if r0 + 1 <= r <= r1 + 1]
        if not hit:
            continue
        if node.type != "comment":
            stack.extend(node.children)
            continue
        for r in hit:
            line = keep[r]
            a = c0 if r == r0 + 1 else 0
            b = c1 if r == r1 + 1 else len(line)
            line[a:b] = b" " * (min(b, len(line)) - a)
    return {r for r, line in keep.items() if line.strip()}


def _touched_in(change: FileChange, old: _View | None, new: _View | None) -> list[Touched]:
    out: list[Touched] = []
    f = change.path
    by_old: dict[tuple[str, str], list[_Def]] = {}
    by_new: dict[tuple[str, str], list[_Def]] = {}
    for view, by in ((old, by_old), (new, by_new)):
        for d in view.defs if view else ():
            by.setdefault((d.what, d.name), []).append(d)
    for key in dict.fromkeys([*by_old, *by_new]):
        olds, news = by_old.get(key, []), by_new.get(key, [])
        for k in range(max(len(olds), len(news))):
            o = olds[k] if k < len(olds) else None
            n = news[k] if k < len(news) else None
            if o is not None and n is not None:
                if o.text != n.text:
                    out.append(Touched(file=f, name=n.name, line=n.first, kind=CHANGED,
                                       what=n.what))
            elif n is not None:
                out.append(Touched(file=f, name=n.name, line=n.first, kind=ADDED, what=n.what))
            elif o is not None:
                out.append(Touched(file=f, name=o.name, line=o.first, kind=REMOVED,
                                   what=o.what))
    cov_old = old.covered() if old else set()
    cov_new = new.covered() if new else set()
    rows_old = {r for c in change.changes for r in c.base if r not in cov_old}
    rows_new = {r for c in change.changes for r in c.patched if r not in cov_new}
    sig_old = _significant(old.src, rows_old) if old else set()
    sig_new = _significant(new.src, rows_new) if new else set()
    for c in change.changes:
        o_rows = [r for r in c.base if r in sig_old]
        n_rows = [r for r in c.patched if r in sig_new]
        if n_rows:
            out.append(Touched(file=f, name=FILE_SCOPE, line=n_rows[0],
                               kind=CHANGED if o_rows else ADDED, what="file scope"))
        elif o_rows:
            out.append(Touched(file=f, name=FILE_SCOPE, line=o_rows[0], kind=REMOVED,
                               what="file scope"))
    return out


def _touched(changes: Sequence[FileChange],
             view: Callable[[str, str], _View | None]) -> tuple[Touched, ...]:
    out: list[Touched] = []
    for c in changes:
        out += _touched_in(c, view("base", c.path), view("patched", c.path))
    return tuple(sorted(out, key=lambda t: (t.file, t.line, t.name, t.kind)))


def touched_functions(base_tree: KernelTree, patched_tree: KernelTree,
                      changes: Applied | Sequence[FileChange]) -> tuple[Touched, ...]:
    """Every definition whose text differs between ``base_tree`` and ``patched_tree`` in
    the changed files, and the changed file-scope lines, sorted by file and line.

    A changed file the trees did not read is parsed from their roots here.

    Args:
        base_tree: BASE (``--linux``).
        patched_tree: the patched copy (:attr:`Applied.root`) or ``--against`` tree.
        changes: what :func:`prepare` made, or :func:`diff_trees`' file changes.
    """
    files = changes.files if isinstance(changes, Applied) else tuple(changes)
    trees = {"base": base_tree, "patched": patched_tree}
    return _touched(files, lambda side, path: _view(trees[side], trees[side].root, path))


def diff_trees(base: Path, patched: Path, files: Sequence[str]) -> tuple[FileChange, ...]:
    """The files of ``files`` (relative paths) that differ between the trees ``base`` and
    ``patched`` (present in one only, or with different text).  Both are only read.

    Raises:
        InputError: either is not a directory.
    """
    for opt, root in (("--linux", base), ("--against", patched)):
        if not Path(root).is_dir():
            raise InputError(f"{opt} {str(root)!r} is not a directory; give the root of a "
                             "kernel source tree (the folder holding mm/ and include/)")
    changes = [file_change(f, _read(Path(base) / f), _read(Path(patched) / f))
               for f in dict.fromkeys(files)]
    return tuple(c for c in changes if c is not None)


def compare_trees(base: Path, patched: Path, files: Sequence[str]) -> tuple[Touched, ...]:
    """What :func:`touched_functions` gives for ``--linux base --against patched``, over
    ``files``: nothing is applied, and neither tree is written.

    Raises:
        InputError: either is not a directory.
    """
    roots = {"base": Path(base), "patched": Path(patched)}
    return _touched(diff_trees(base, patched, files),
                    lambda side, path: _view(None, roots[side], path))


__all__ = ["ADDED", "CHANGED", "FILE_SCOPE", "MODIFIED", "REMOVED", "Applied", "Change",
           "FileChange", "FileDiff", "Hunk", "Patch", "Touched", "apply_hunks", "apply_patch",
           "compare_trees", "diff_trees", "dry_run", "file_change", "parse_patches", "pick_name",
           "prepare", "prepare_steps", "read_patches", "touched_functions"]
