"""The forms a patch arrives in, and the patches that cannot apply (equiv/linux/patch.py):
the mm tree's quilt mails (``--- a/FILE~name`` / ``+++ a/FILE``), ``diff -N``'s Epoch
timestamps, CRLF line ends, the reasons a hunk does not apply, a file created under a file
or where the tree has a directory, symbolic links.  Through the Python API and the command
line (bad input: exit 3, one line), and against GNU patch (``patch -p1 --fuzz 0``) where it
is installed: the same files change, with the same text.

Fast: the trees are a few C lines built in tmp_path (tests/test_patch_apply.py's); two tests
run on the real 6.12 mm/mm_init.c when the linux612 fixture (tests/test_linux_tree.py)
finds it.
"""

from __future__ import annotations

import difflib
import io
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from test_linux_tree import linux612  # noqa: F401  (the session fixture)
from test_patch_apply import MAKEFILE, MM, ROOT, _diff, _mail, _snapshot, _tree

from equiv.engine.errors import InputError
from equiv.linux.patch import Change, FileChange, dry_run, parse_patches, pick_name, prepare
from equiv.proofs import main

GNU_PATCH = shutil.which("patch")
OLD_COMMENT = "/* the old one */"
NEW_COMMENT = "/* the old one, kept for the ABI */"


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return _tree(tmp_path / "base", {"Makefile": MAKEFILE, "mm/mm_init.c": MM,
                                     "include/linux/mm.h": "#define PAGE_SHIFT 12\n",
                                     "mm/other.c": "int other;\n"})


def _quilt(path: str, before: str, after: str, name: str, old: str | None = None) -> str:
    """A quilt diff as the mm tree's scripts write it: ``a/`` on both sides, the old name
    ``PATH~NAME`` (or ``old``), no ``diff --git`` line."""
    lines = difflib.unified_diff(before.splitlines(keepends=True),
                                 after.splitlines(keepends=True),
                                 f"a/{old or path + '~' + name}", f"a/{path}")
    return "".join(lines)


def _mm_commits(subject: str, diff: str, name: str, headers: bool = False) -> str:
    """An mm-commits mail: the notice naming the quilt file, the patch's own From/Subject/
    Date after a line of dashes, its message, the diff, quilt's closing ``_`` and the list
    of the author's patches in -mm.  With ``headers``, as saved from a mail reader (an mbox
    ``From`` line and the mail's own headers, whose Subject names the quilt file)."""
    mail = (f"The quilt patch titled\n     Subject: {subject}\nhas been added to the -mm "
            f"mm-unstable branch.  Its filename is\n     {name}.patch\n\n"
            "------------------------------------------------------\n"
            f"From: A Developer <dev@example.org>\nSubject: {subject}\n"
            "Date: Mon, 31 Aug 2026 10:00:00 +0200\n\nThe commit message.\n\n"
            "Signed-off-by: A Developer <dev@example.org>\n"
            "Signed-off-by: Andrew Morton <akpm@linux-foundation.org>\n---\n\n"
            " mm/mm_init.c |    2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n"
            f"{diff}_\n\nPatches currently in -mm which might be from dev@example.org are\n\n"
            f"{name}.patch\n\n")
    if not headers:
        return f"[merged mm-stable] {name}.patch removed from -mm tree\n\n{mail}"
    return ("From akpm@linux-foundation.org Mon Aug 31 10:00:00 2026\n"
            "From: Andrew Morton <akpm@linux-foundation.org>\n"
            "To: mm-commits@vger.kernel.org, dev@example.org\n"
            f"Subject: + {name}.patch added to mm-unstable branch\n"
            "Date: Mon, 31 Aug 2026 10:00:00 -0700\n\n" + mail)


COMMENTED = MM.replace(OLD_COMMENT, NEW_COMMENT)
QUILT = _mm_commits("mm: say why the old one stays",
                    _quilt("mm/mm_init.c", MM, COMMENTED, "mm-say-why"), "mm-say-why")


def _changed(root: Path, base: Path) -> dict[str, bytes | None]:
    """The files of ``root`` that differ from ``base`` (None: removed)."""
    rels = {str(p.relative_to(t)) for t in (root, base) for p in t.rglob("*") if p.is_file()}
    out: dict[str, bytes | None] = {}
    for rel in sorted(rels):
        a = (base / rel).read_bytes() if (base / rel).is_file() else None
        b = (root / rel).read_bytes() if (root / rel).is_file() else None
        if a != b:
            out[rel] = b
    return out


def _ours(base: Path, patches: list[Path], dest: Path) -> dict[str, bytes | None]:
    got = prepare(base, [], patches, dest)
    return {f.path: (dest / f.path).read_bytes() if f.status != "removed" else None
            for f in got.files}


def _gnu(base: Path, patches: list[Path], dest: Path) -> dict[str, bytes | None]:
    """What GNU patch changes in a full copy of ``base``, without fuzz."""
    assert GNU_PATCH is not None
    shutil.copytree(base, dest)
    for p in patches:
        r = subprocess.run([GNU_PATCH, "-p1", "--fuzz=0", "--no-backup-if-mismatch", "-s",
                            "-i", str(p)], cwd=dest, capture_output=True, text=True,
                           check=False)
        assert r.returncode == 0, r.stdout + r.stderr
    return _changed(dest, base)


# ---- the mm tree's quilt mails ---------------------------------------------------------------


@pytest.mark.parametrize("headers", [False, True], ids=["as-archived", "with-mail-headers"])
def test_a_quilt_mail_patches_its_file_and_is_named_by_its_own_subject(
        base: Path, tmp_path: Path, headers: bool) -> None:
    patch = tmp_path / "mm-say-why.patch"
    patch.write_text(_mm_commits("mm: say why the old one stays",
                                 _quilt("mm/mm_init.c", MM, COMMENTED, "mm-say-why"),
                                 "mm-say-why", headers))
    (p,) = parse_patches(patch.read_bytes(), "q.patch")
    assert p.subject == "mm: say why the old one stays"
    (fd,) = p.files
    assert (fd.old_path, fd.new_path, fd.git) == ("mm/mm_init.c~mm-say-why", "mm/mm_init.c",
                                                  False)
    got = prepare(base, ["mm/mm_init.c"], [patch], tmp_path / "copy")
    assert (got.root / "mm/mm_init.c").read_text() == COMMENTED
    assert not (got.root / "mm/mm_init.c~mm-say-why").exists()
    assert [(f.path, f.status) for f in got.files] == [("mm/mm_init.c", "modified")]


def test_a_quilt_mail_that_does_not_apply_names_hunk_line_and_text(base: Path,
                                                                  tmp_path: Path) -> None:
    made_on = MM.replace(OLD_COMMENT, "/* the older one */")
    patch = tmp_path / "q.patch"
    patch.write_text(_mm_commits("mm: say why", _quilt("mm/mm_init.c", made_on, COMMENTED,
                                                       "mm-say-why"), "mm-say-why"))
    with pytest.raises(InputError) as e:
        dry_run(base, [patch])
    assert str(e.value) == (
        f'--patch {patch} ("mm: say why"): hunk 1 of mm/mm_init.c (@@ -12,7 +12,7 @@) does '
        "not apply: a line it removes differs from mm/mm_init.c at line 15: expected "
        "'/* the older one */', found '/* the old one */' (where it fits best: lines 12-18, "
        "offset 0, 6 of its 7 old lines equal)")


@pytest.mark.parametrize(("old", "new", "extra", "patched"), [
    # the backup name quilt leaves beside the file: the shorter base name wins
    ("a/mm/mm_init.c~mm-say-why", "a/mm/mm_init.c", {"mm/mm_init.c~mm-say-why": MM},
     "mm/mm_init.c"),
    # a hand-made diff against a renamed copy: the name that exists is patched in place
    ("a/mm/mm_init.c", "b/mm/mm_init_new.c", {}, "mm/mm_init.c"),
    ("a/mm/mm_init.c.orig", "b/mm/mm_init.c", {}, "mm/mm_init.c"),
])
def test_two_names_without_a_git_header_patch_one_file_as_gnu_patch_picks(
        base: Path, tmp_path: Path, old: str, new: str, extra: dict[str, str],
        patched: str) -> None:
    _tree(base, extra)
    text = "".join(difflib.unified_diff(MM.splitlines(keepends=True),
                                        COMMENTED.splitlines(keepends=True), old, new))
    patch = tmp_path / "p.diff"
    patch.write_text(text)
    ((fd,),) = [p.files for p in parse_patches(text.encode(), "p.diff")]
    assert pick_name(fd, base) == patched
    ours = _ours(base, [patch], tmp_path / "copy")
    assert ours == {patched: COMMENTED.encode()}
    if GNU_PATCH:
        assert _gnu(base, [patch], tmp_path / "gnu") == ours


def test_a_quilt_diff_of_a_file_in_neither_name(base: Path, tmp_path: Path) -> None:
    patch = tmp_path / "q.patch"
    patch.write_text(_quilt("mm/gone.c", "int a;\n", "int b;\n", "mm-gone"))
    with pytest.raises(InputError) as e:
        dry_run(base, [patch])
    assert str(e.value) == (f"--patch {patch}: patches mm/gone.c, which is not in the tree "
                            f"(--linux {base} has neither; the diff names it mm/gone.c~mm-gone "
                            "and mm/gone.c)")


def test_a_quilt_diff_that_creates_a_file_and_diff_N_timestamps(base: Path,
                                                               tmp_path: Path) -> None:
    """A quilt diff from nothing (``@@ -0,0``) creates the best name, as GNU patch does;
    ``diff -Nu`` marks an absent side with a timestamp at the Epoch (in any zone)."""
    quilt = tmp_path / "1.patch"
    quilt.write_text(_quilt("mm/sub/new.c", "", "int a;\n", "mm-new"))
    epoch = tmp_path / "2.patch"
    epoch.write_text(
        "diff -Nu a/mm/made.c b/mm/made.c\n"
        "--- a/mm/made.c\t1970-01-01 01:00:00.000000000 +0100\n"
        "+++ b/mm/made.c\t2026-08-31 10:00:00.123456789 +0200\n@@ -0,0 +1 @@\n+int made;\n"
        "diff -Nu a/mm/other.c b/mm/other.c\n"
        "--- a/mm/other.c\t2026-08-31 10:00:00.000000000 +0200\n"
        "+++ b/mm/other.c\t1970-01-01 00:00:00.000000000 +0000\n@@ -1 +0,0 @@\n-int other;\n")
    ((a,), (b, c)) = [p.files for p in (*parse_patches(quilt.read_bytes(), "1"),
                                        *parse_patches(epoch.read_bytes(), "2"))]
    assert (a.old_path, a.new_path) == ("mm/sub/new.c~mm-new", "mm/sub/new.c")
    assert (b.old_path, b.new_path, c.old_path, c.new_path) == (None, "mm/made.c",
                                                                "mm/other.c", None)
    ours = _ours(base, [quilt, epoch], tmp_path / "copy")
    assert ours == {"mm/sub/new.c": b"int a;\n", "mm/made.c": b"int made;\n", "mm/other.c": None}
    if GNU_PATCH:
        assert _gnu(base, [quilt, epoch], tmp_path / "gnu") == ours


# ---- CRLF ----------------------------------------------------------------------------------


def _crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode()


@pytest.mark.parametrize("form", ["diff", "mail", "quilt"])
def test_a_patch_whose_every_line_ends_in_crlf_applies_to_lf_files(
        base: Path, tmp_path: Path, form: str) -> None:
    """As GNU patch without --binary: the CR of every line of a diff whose +++ line ends in
    CRLF is dropped; the file keeps its LF line ends."""
    diff = _diff("mm/mm_init.c", MM, COMMENTED)
    text = {"diff": diff, "mail": _mail("[PATCH] mm: crlf", diff), "quilt": QUILT}[form]
    patch = tmp_path / "crlf.patch"
    patch.write_bytes(_crlf(text))
    (p,) = parse_patches(patch.read_bytes(), "crlf.patch")
    assert p.subject == {"diff": None, "mail": "mm: crlf",
                         "quilt": "mm: say why the old one stays"}[form]
    ours = _ours(base, [patch], tmp_path / "copy")
    assert ours == {"mm/mm_init.c": COMMENTED.encode()}
    if GNU_PATCH:
        assert _gnu(base, [patch], tmp_path / "gnu") == ours


def test_line_ends_that_differ_are_named(base: Path, tmp_path: Path) -> None:
    """CRLF hunk lines under an LF +++ line stay CRLF (as in GNU patch), and do not apply
    to an LF file; an LF patch does not apply to a CRLF file: both say so."""
    diff = _diff("mm/mm_init.c", MM, COMMENTED)
    head, _, hunks = diff.partition("@@")
    patch = tmp_path / "mixed.patch"
    patch.write_bytes(head.encode() + _crlf("@@" + hunks))
    with pytest.raises(InputError) as e:
        dry_run(base, [patch])
    assert str(e.value) == (f"--patch {patch}: hunk 1 of mm/mm_init.c (@@ -12,7 +12,7 @@) does "
                            "not apply: the hunk's lines end in CRLF and the file's in LF; its 7 "
                            "old lines match mm/mm_init.c but for the line ends")
    (base / "mm/mm_init.c").write_bytes(_crlf(MM))
    patch.write_text(diff)
    with pytest.raises(InputError, match=r"does not apply: the file's lines end in CRLF and the "
                                         r"hunk's in LF; its 7 old lines match mm/mm_init.c but "
                                         r"for the line ends$"):
        dry_run(base, [patch])


# ---- why a hunk does not apply ---------------------------------------------------------------


Z9 = "".join(f"int z{k};\n" for k in range(9))
WHY = [
    # the first differing line of a removed line, where the hunk fits best (offset +2)
    (MM.replace("\treturn x + 1;", "\treturn x + 0;"), MM.replace("\treturn x + 1;", "\tx++;"),
     "/* a */\n/* b */\n" + MM,
     "hunk 1 of mm/mm_init.c (@@ -9,7 +9,7 @@) does not apply: a line it removes differs "
     "from mm/mm_init.c at line 14: expected '\\treturn x + 0;', found '\\treturn x + 1;' "
     "(where it fits best: lines 11-17, offset 2, 6 of its 7 old lines equal)"),
    # nothing like it anywhere
    (Z9, Z9.replace("z4", "y"), MM,
     "hunk 1 of mm/mm_init.c (@@ -2,7 +2,7 @@) does not apply: its context differs from "
     "mm/mm_init.c at line 2: expected 'int z1;', found '#include <linux/mm.h>' (at no offset "
     "does any of its 7 old lines match)"),
    # longer than the file
    ("a\n" * 40, "a\n" * 39 + "b\n", "a\n",
     "hunk 1 of mm/mm_init.c (@@ -37,4 +37,4 @@) does not apply: mm/mm_init.c has 1 line: "
     "the hunk's 4 old lines do not fit in it"),
    # the same text but for the newline at the end of the file
    ("int a;\nint b;\nint c;\n", "int a;\nint b;\nint c;\nint d;\n", "int a;\nint b;\nint c;",
     "hunk 1 of mm/mm_init.c (@@ -1,3 +1,4 @@) does not apply: its context differs from "
     "mm/mm_init.c at line 3: expected 'int c;', found 'int c;' (without the newline at its "
     "end) (where it fits best: lines 1-3, offset 0, 2 of its 3 old lines equal)"),
]


@pytest.mark.parametrize(("made_on", "after", "tree", "message"), WHY)
def test_why_a_hunk_does_not_apply(tmp_path: Path, made_on: str, after: str, tree: str,
                                   message: str) -> None:
    base = _tree(tmp_path / "base", {"mm/mm_init.c": tree})
    patch = tmp_path / "p.diff"
    patch.write_text(_diff("mm/mm_init.c", made_on, after, context=3))
    with pytest.raises(InputError) as e:
        dry_run(base, [patch])
    assert str(e.value) == f"--patch {patch}: {message}"


def test_a_hunk_whose_text_is_only_where_it_may_not_apply(base: Path, tmp_path: Path) -> None:
    """Hunks out of order: the second's old lines are inside what the first changed."""
    one = _diff("mm/mm_init.c", MM, MM.replace("\tint i;\n", "\tlong i;\n"))
    two = _diff("mm/mm_init.c", MM, MM.replace("return x + 1;", "return x + 2;"))
    hunk = lambda d: d[d.index("@@"):]  # noqa: E731
    patch = tmp_path / "p.diff"
    patch.write_text(one[:one.index("@@")] + hunk(one) + hunk(two))
    with pytest.raises(InputError) as e:
        dry_run(base, [patch])
    assert str(e.value) == (f"--patch {patch}: hunk 2 of mm/mm_init.c (@@ -9,7 +9,7 @@) does "
                            "not apply: its 7 old lines are at line 9, inside what the previous "
                            "hunk changed (up to line 24): the hunks overlap or are out of order")


# ---- files in the way, symbolic links ----------------------------------------------------------


def _new(path: str, text: str = "int x;\n") -> str:
    return _diff(path, "", text)


IN_THE_WAY = [
    ([_new("mm/foo") + _new("mm/foo/bar.c")],
     "creates mm/foo/bar.c, but mm/foo is a file in the tree, not a directory (this patch "
     "creates it)"),
    ([_new("mm/foo"), _new("mm/foo/bar.c")],
     "creates mm/foo/bar.c, but mm/foo is a file in the tree, not a directory (an earlier "
     "patch creates it)"),
    ([_new("mm/other.c/bar.c")],
     "creates mm/other.c/bar.c, but mm/other.c is a file in the tree, not a directory "
     "(--linux {base} has it)"),
    ([_new("include/linux")], "creates include/linux, but the tree has a directory include/linux"),
    ([_new("mm/other.c")], "creates mm/other.c, which is already in the tree"),
]


@pytest.mark.parametrize(("diffs", "message"), IN_THE_WAY)
def test_a_file_created_where_something_is_in_the_way(base: Path, tmp_path: Path,
                                                      diffs: list[str], message: str) -> None:
    patches = []
    for k, d in enumerate(diffs):
        patches.append(tmp_path / f"{k}.diff")
        patches[-1].write_text(d)
    with pytest.raises(InputError) as e:
        dry_run(base, patches)
    assert str(e.value) == f"--patch {patches[-1]}: {message.format(base=base)}"


def test_deleting_a_file_then_creating_one_under_its_name(base: Path, tmp_path: Path) -> None:
    patch = tmp_path / "p.diff"
    patch.write_text(_diff("mm/other.c", "int other;\n", "") + _new("mm/other.c/x.c"))
    got = prepare(base, [], [patch], tmp_path / "copy")
    assert [(f.path, f.status) for f in got.files] == [("mm/other.c", "removed"),
                                                       ("mm/other.c/x.c", "added")]


SYMLINK = ("diff --git a/mm/lnk b/mm/lnk\nnew file mode 120000\nindex 0000000..1234567\n"
           "--- /dev/null\n+++ b/mm/lnk\n@@ -0,0 +1 @@\n+../include\n"
           "\\ No newline at end of file\n")
LINK_REFUSED = ("the symbolic link mm/lnk (git mode 120000), which is not applied: the copy "
                "holds regular files only (the C files read are regular files, and a link "
                "could lead out of the copy); leave that file's diff out of the patch")


@pytest.mark.parametrize(("text", "verb"), [
    (SYMLINK, "creates"),
    (SYMLINK + _new("mm/lnk/x.h"), "creates"),
    ("diff --git a/mm/lnk b/mm/lnk\nindex 1234567..89abcde 120000\n--- a/mm/lnk\n"
     "+++ b/mm/lnk\n@@ -1 +1 @@\n-../include\n\\ No newline at end of file\n+../lib\n"
     "\\ No newline at end of file\n", "changes"),
    ("diff --git a/mm/lnk b/mm/lnk\ndeleted file mode 120000\n", "deletes"),
])
def test_a_symbolic_link_in_a_patch_is_refused(text: str, verb: str) -> None:
    with pytest.raises(InputError) as e:
        parse_patches(text.encode(), "link.patch")
    assert str(e.value) == f"--patch link.patch: {verb} {LINK_REFUSED}"


# ---- the command line ------------------------------------------------------------------------


def _cli(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """``main`` with the proof replaced: the patches read and applied (the option check's
    dry run) are all that runs."""
    fake = types.ModuleType("equiv.zone_device.source.cli")
    fake.run_linux = lambda args, cfg, emit, err: 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "equiv.zone_device.source.cli", fake)
    err = io.StringIO()
    return main(argv, io.StringIO(), err), err.getvalue()


def test_the_command_line_reads_quilt_mails_and_crlf(base: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "q.patch").write_text(QUILT)
    (tmp_path / "crlf.patch").write_bytes(_crlf(_diff("mm/other.c", "int other;\n",
                                                      "int other = 1;\n")))
    assert _cli(["--linux", str(base), "--patch", str(tmp_path / "q.patch"), "--patch",
                 str(tmp_path / "crlf.patch")], monkeypatch) == (0, "")


@pytest.mark.parametrize(("text", "message"), [
    (_new("mm/foo") + _new("mm/foo/bar.c"),
     "creates mm/foo/bar.c, but mm/foo is a file in the tree, not a directory (this patch "
     "creates it)"),
    (SYMLINK, "creates " + LINK_REFUSED),
    (_diff("mm/mm_init.c", MM, COMMENTED).replace("\n", "\r\n").replace(
        "+++ b/mm/mm_init.c\r\n", "+++ b/mm/mm_init.c\n"),
     "hunk 1 of mm/mm_init.c (@@ -12,7 +12,7 @@) does not apply: the hunk's lines end in "
     "CRLF and the file's in LF; its 7 old lines match mm/mm_init.c but for the line ends"),
])
def test_bad_patches_exit_3_with_one_line(base: Path, tmp_path: Path, text: str,
                                          message: str) -> None:
    (tmp_path / "bad.patch").write_bytes(text.encode())
    before = _snapshot(base)
    p = subprocess.run([sys.executable, "-m", "equiv.proofs", "--linux", str(base), "--patch",
                        "bad.patch"], capture_output=True, text=True, check=False, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (p.returncode, p.stdout, p.stderr) == (3, "", f"equiv: error: --patch bad.patch: "
                                                         f"{message}\n")
    assert _snapshot(base) == before


# ---- the real tree ---------------------------------------------------------------------------


REAL_OLD = "\t * which will set the page count to 1 when allocating the page.\n"
REAL_NEW = "\t * which sets the page count to 1 when it allocates the page.\n"


def test_a_quilt_mail_to_the_real_mm_init(linux612: Path, tmp_path: Path,  # noqa: F811
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-line comment change to 6.12's mm/mm_init.c in the mm tree's format, made on a
    tree with 5 fewer lines at the top: it applies at offset +5, through the API and the
    command line."""
    path = "mm/mm_init.c"
    real = (linux612 / path).read_text()
    assert real.count(REAL_OLD) == 1
    made_on = "".join(real.splitlines(keepends=True)[5:])
    patch = tmp_path / "mm-comment.patch"
    patch.write_text(_mm_commits("mm: reword a ZONE_DEVICE comment",
                                 _quilt(path, made_on, made_on.replace(REAL_OLD, REAL_NEW),
                                        "mm-comment"), "mm-comment"))
    before = _snapshot(linux612 / "mm")
    got = prepare(linux612, [path], [patch], tmp_path / "copy")
    assert (got.root / path).read_text() == real.replace(REAL_OLD, REAL_NEW)
    line = real[:real.index(REAL_OLD)].count("\n") + 1
    assert got.files == (FileChange(path=path, status="modified", changes=(
        Change(base=range(line, line + 1), patched=range(line, line + 1)),)),)
    assert [p.subject for p in got.patches] == ["mm: reword a ZONE_DEVICE comment"]
    assert _cli(["--linux", str(linux612), "--patch", str(patch)], monkeypatch) == (0, "")
    assert _snapshot(linux612 / "mm") == before


def test_a_quilt_mail_made_on_another_tree_gets_the_hunk_and_line(
        linux612: Path, tmp_path: Path) -> None:  # noqa: F811
    """Made on a tree whose comment above reads otherwise: the hunk, the line of the real
    file and both texts are named."""
    path = "mm/mm_init.c"
    real = (linux612 / path).read_text()
    other = "\t * ZONE_DEVICE pages of every type are released directly to the driver\n"
    made_on = real.replace("\t * ZONE_DEVICE pages are released directly to the driver page "
                           "allocator\n", other)
    assert made_on != real
    patch = tmp_path / "mm-comment.patch"
    patch.write_text(_mm_commits("mm: reword", _quilt(path, made_on, made_on.replace(
        REAL_OLD, REAL_NEW), "mm-comment"), "mm-comment"))
    line = real[:real.index(REAL_OLD)].count("\n")  # the line above
    with pytest.raises(InputError) as e:
        dry_run(linux612, [patch])
    assert str(e.value) == (
        f'--patch {patch} ("mm: reword"): hunk 1 of mm/mm_init.c (@@ -{line - 2},7 '
        f"+{line - 2},7 @@) does not apply: its context differs from mm/mm_init.c at line "
        f"{line}: expected {other.rstrip()!r}, found '\\t * ZONE_DEVICE pages are released "
        f"directly to the driver page allocator' (where it fits best: lines {line - 2}-"
        f"{line + 4}, offset 0, 6 of its 7 old lines equal)")

