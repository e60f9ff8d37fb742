"""Patches applied to a private copy of a kernel tree (equiv/linux/patch.py) and the
``--patch`` / ``--against`` options of the command line.

Fast: the trees are a few C lines built in tmp_path; one test runs on the real 6.12
mm/mm_init.c when the linux612 fixture (tests/test_linux_tree.py) finds it.
"""

from __future__ import annotations

import difflib
import io
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from test_linux_tree import linux612  # noqa: F401  (the session fixture)

import equiv
from equiv.engine.errors import InputError
from equiv.linux.ktree import KernelTree
from equiv.linux.patch import (
    FILE_SCOPE,
    Applied,
    Change,
    FileChange,
    Touched,
    compare_trees,
    diff_trees,
    dry_run,
    parse_patches,
    prepare,
    read_patches,
    touched_functions,
)
from equiv.proofs import main

ROOT = Path(equiv.__file__).parent.parent

MM = """\
// SPDX-License-Identifier: GPL-2.0
#include <linux/mm.h>

#define NR_THINGS 4

struct thing {
	int a;
};

static int helper(int x)
{
	return x + 1;
}

/* the old one */
static void old_one(void)
{
}

#define TWICE(x) ((x) * 2)

void memmap_init_zone_device(int n)
{
	int i;

	for (i = 0; i < n; i++)
		helper(i);
}
"""

MAKEFILE = "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\nEXTRAVERSION =\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return _tree(tmp_path / "base", {"Makefile": MAKEFILE, "mm/mm_init.c": MM,
                                     "include/linux/mm.h": "#define PAGE_SHIFT 12\n",
                                     "mm/other.c": "int other;\n"})


def _diff(path: str, before: str, after: str, context: int = 3) -> str:
    """A git-style unified diff of one file (before/after "" with /dev/null for a new or
    deleted file)."""
    old = f"a/{path}" if before else "/dev/null"
    new = f"b/{path}" if after else "/dev/null"
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 old, new, n=context)
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def _mail(subject: str, diff: str, sha: str = "1" * 40) -> str:
    """A git format-patch mail."""
    return (f"From {sha} Mon Sep 17 00:00:00 2001\nFrom: A Developer <dev@example.org>\n"
            f"Date: Mon, 31 Aug 2026 10:00:00 +0200\nSubject: {subject}\n\n"
            "The commit message.\n\nSigned-off-by: A Developer <dev@example.org>\n---\n"
            " mm/mm_init.c | 2 +-\n 1 file changed\n\n" + diff + "-- \n2.43.0\n\n")


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


# ---- parsing ---------------------------------------------------------------------------------


def test_an_mbox_of_two_format_patch_mails() -> None:
    one = MM.replace("return x + 1;", "return x + 2;")
    two = one.replace("#define NR_THINGS 4", "#define NR_THINGS 8")
    folded = "=?UTF-8?q?[PATCH=20v11=202/2]=20mm:=20gr=C3=B6=C3=9Fer?=\n =?UTF-8?q?_things?="
    mbox = (_mail("[PATCH v11 1/2] mm: helper adds two", _diff("mm/mm_init.c", MM, one))
            + _mail(folded, _diff("mm/mm_init.c", one, two), "2" * 40))
    patches = parse_patches(mbox.encode(), "series.mbox")
    assert [p.subject for p in patches] == ["mm: helper adds two", "mm: größer things"]
    assert [(p.index, p.count) for p in patches] == [(1, 2), (2, 2)]
    assert patches[1].label == '--patch series.mbox ("mm: größer things")'
    (fd,) = patches[0].files
    assert (fd.old_path, fd.new_path) == ("mm/mm_init.c", "mm/mm_init.c")
    (h,) = fd.hunks
    assert (h.number, h.header, h.old_start, h.old_len) == (1, "@@ -9,7 +9,7 @@", 9, 7)
    assert ("-", b"\treturn x + 1;\n") in h.lines and ("+", b"\treturn x + 2;\n") in h.lines
    # the "-- " signature after the last hunk is not a removed line
    assert h.lines[-1] == (" ", b"/* the old one */\n") and len(h.old) == 7


def test_a_cover_letter_is_skipped_and_a_plain_diff_has_no_subject() -> None:
    cover = _mail("[PATCH v11 0/2] mm: the series", "")
    one = MM.replace("return x + 1;", "return x + 2;")
    patches = parse_patches((cover + _mail("[PATCH v11 1/2] mm: x", _diff(
        "mm/mm_init.c", MM, one))).encode(), "s.mbox")
    assert [p.subject for p in patches] == ["mm: x"]
    (plain,) = parse_patches(_diff("mm/mm_init.c", MM, one).encode(), "x.diff")
    assert plain.subject is None and plain.label == "--patch x.diff"


def test_quoted_printable_and_no_newline_at_end_of_file() -> None:
    diff = ("--- a/f.c\n+++ b/f.c\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
            "+b=3D1;\n")
    mail = ("From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] f: qp\nMIME-Version: 1.0\n"
            "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: quoted-printable"
            "\n\n---\n" + diff)
    ((fd,),) = [p.files for p in parse_patches(mail.encode(), "qp.patch")]
    assert fd.hunks[0].lines == ((" ", b"a\n"), ("-", b"b"), ("+", b"b=1;\n"))


@pytest.mark.parametrize(("text", "message"), [
    ("", "--patch p.diff is empty; give a unified diff or git format-patch mails"),
    ("just some words\n", "--patch p.diff holds no diff (no '--- a/FILE', '+++ b/FILE', '@@' "
                          "lines); give a unified diff or git format-patch mails"),
    ("--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n",
     "--patch p.diff: hunk 1 of f.c (@@ -1,3 +1,3 @@) is truncated: the patch ends before the 3 "
     "old and 3 new lines its header counts"),
    ("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
     "--patch p.diff: cannot use path 'a/../etc/passwd' (paths are read as patch -p1 does: "
     "a/FILE and b/FILE relative to the tree's root)"),
    ("diff --git a/x.bin b/x.bin\nGIT binary patch\nliteral 1\n",
     "--patch p.diff: holds a binary diff, which is not applied; give patches to text files "
     "only"),
])
def test_unreadable_patches_are_one_line_input_errors(text: str, message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_patches(text.encode(), "p.diff")
    assert str(e.value) == message


def test_a_missing_patch_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^cannot read --patch .*nope\.patch: No such file"):
        read_patches(tmp_path / "nope.patch")
    with pytest.raises(InputError, match=r"is a directory, not a patch file$"):
        read_patches(tmp_path)


# ---- applying --------------------------------------------------------------------------------


def test_hunks_apply_at_the_nearest_offset(base: Path, tmp_path: Path) -> None:
    """The patch was made against a tree with 3 fewer lines at the top and 2 more before the
    last function: its first hunk applies at +3, its second at +1."""
    made_on = MM.replace("// SPDX-License-Identifier: GPL-2.0\n#include <linux/mm.h>\n\n", "")
    made_on = made_on.replace("#define TWICE", "/* x */\n/* y */\n#define TWICE")
    after = made_on.replace("return x + 1;", "return x + 2;").replace(
        "\t\thelper(i);\n", "\t\thelper(TWICE(i));\n")
    patch = tmp_path / "0001-offset.patch"
    patch.write_text(_mail("[PATCH] mm: offsets", _diff("mm/mm_init.c", made_on, after)))
    got = prepare(base, ["mm/mm_init.c"], [patch], tmp_path / "copy")
    want = MM.replace("return x + 1;", "return x + 2;").replace(
        "\t\thelper(i);\n", "\t\thelper(TWICE(i));\n")
    assert (got.root / "mm/mm_init.c").read_text() == want
    assert got.files == (FileChange(path="mm/mm_init.c", status="modified", changes=(
        Change(base=range(12, 13), patched=range(12, 13)),
        Change(base=range(27, 28), patched=range(27, 28)))),)
    assert got.changed_lines("mm/mm_init.c") == (range(12, 13), range(27, 28))
    assert [p.subject for p in got.patches] == ["mm: offsets"]


def test_patches_apply_in_order_and_create_and_delete_files(base: Path, tmp_path: Path) -> None:
    one = MM.replace("return x + 1;", "return x + 2;")
    two = one.replace("return x + 2;", "return x + 3;")
    p1, p2 = tmp_path / "1.patch", tmp_path / "2.patch"
    p1.write_text(_mail("[PATCH 1/2] mm: two", _diff("mm/mm_init.c", MM, one)
                        + _diff("mm/new.c", "", "int new_one;\n")))
    p2.write_text(_mail("[PATCH 2/2] mm: three", _diff("mm/mm_init.c", one, two)
                        + _diff("mm/other.c", "int other;\n", "")))
    got = prepare(base, ["mm/mm_init.c", "include/linux/mm.h", "mm/absent.c"], [p1, p2],
                  tmp_path / "copy")
    assert (got.root / "mm/mm_init.c").read_text() == two
    assert (got.root / "mm/new.c").read_text() == "int new_one;\n"
    assert not (got.root / "mm/other.c").exists() and (base / "mm/other.c").exists()
    assert (got.root / "Makefile").read_text() == MAKEFILE
    assert (got.root / "include/linux/mm.h").is_file() and not (got.root / "mm/absent.c").exists()
    assert [(f.path, f.status) for f in got.files] == [
        ("mm/mm_init.c", "modified"), ("mm/new.c", "added"), ("mm/other.c", "removed")]


def test_git_renames_and_empty_new_files(base: Path, tmp_path: Path) -> None:
    p = tmp_path / "p.diff"
    p.write_text("diff --git a/mm/other.c b/mm/moved.c\nsimilarity index 100%\n"
                 "rename from mm/other.c\nrename to mm/moved.c\n"
                 "diff --git a/mm/empty.h b/mm/empty.h\nnew file mode 100644\n"
                 "index 0000000..e69de29\n")
    got = prepare(base, [], [p], tmp_path / "copy")
    assert (got.root / "mm/moved.c").read_text() == "int other;\n"
    assert not (got.root / "mm/other.c").exists() and (base / "mm/other.c").is_file()
    assert (got.root / "mm/empty.h").read_bytes() == b""
    assert [(f.path, f.status) for f in got.files] == [("mm/other.c", "removed"),
                                                       ("mm/moved.c", "added"),
                                                       ("mm/empty.h", "added")]


def test_a_failing_hunk_names_patch_subject_file_and_hunk(base: Path, tmp_path: Path) -> None:
    after = MM.replace("return x + 1;", "return x + 2;").replace("\tint i;\n", "\tlong i;\n")
    text = _mail("[PATCH v3 3/7] mm: break it", _diff("mm/mm_init.c", MM, after))
    patch = tmp_path / "0003-break.patch"
    patch.write_text(text.replace(" \tfor (i = 0; i < n; i++)", " \tfor (i = 1; i < n; i++)"))
    before = _snapshot(base)
    with pytest.raises(InputError) as e:
        prepare(base, ["mm/mm_init.c"], [patch], tmp_path / "copy")
    assert str(e.value) == (f'--patch {patch} ("mm: break it"): hunk 2 of mm/mm_init.c '
                            "(@@ -21,7 +21,7 @@) does not apply: its context differs from "
                            "mm/mm_init.c at line 26: expected '\\tfor (i = 1; i < n; i++)', "
                            "found '\\tfor (i = 0; i < n; i++)' (where it fits best: lines "
                            "21-27, offset 0, 6 of its 7 old lines equal)")
    assert _snapshot(base) == before


def test_an_applied_patch_is_reported_as_such(base: Path, tmp_path: Path) -> None:
    after = MM.replace("return x + 1;", "return x + 2;")
    (tmp_path / "p.diff").write_text(_diff("mm/mm_init.c", MM, after))
    (base / "mm/mm_init.c").write_text(after)
    with pytest.raises(InputError, match=r"hunk 1 of mm/mm_init.c \(@@ -9,7 \+9,7 @@\) does not "
                                         r"apply: it is already applied: its new text is at "
                                         r"lines 9-15 of mm/mm_init.c \(was the patch applied "
                                         r"before\?\)$"):
        dry_run(base, [tmp_path / "p.diff"])


@pytest.mark.parametrize(("diff", "message"), [
    (_diff("mm/gone.c", "int a;\n", "int b;\n"),
     "--patch {p}: patches mm/gone.c, which is not in the tree (--linux {base} does not have "
     "it)"),
    (_diff("mm/other.c", "", "int other;\n"),
     "--patch {p}: creates mm/other.c, which is already in the tree"),
])
def test_files_missing_or_already_there(base: Path, tmp_path: Path, diff: str,
                                        message: str) -> None:
    p = tmp_path / "p.diff"
    p.write_text(diff)
    with pytest.raises(InputError) as e:
        dry_run(base, [p])
    assert str(e.value) == message.format(p=p, base=base)


def test_base_is_never_written(base: Path, tmp_path: Path) -> None:
    after = MM.replace("return x + 1;", "return x + 2;")
    p = tmp_path / "p.diff"
    p.write_text(_diff("mm/mm_init.c", MM, after) + _diff("mm/other.c", "int other;\n", ""))
    before = _snapshot(base)
    got = prepare(base, ["mm/mm_init.c", "mm/other.c"], [p], tmp_path / "copy")
    assert (got.root / "mm/mm_init.c").read_text() == after
    assert _snapshot(base) == before
    with pytest.raises(ValueError, match="inside the base tree"):
        prepare(base, ["mm/mm_init.c"], [p], base / "copy")
    assert _snapshot(base) == before and not (base / "copy").exists()


# ---- what is touched -------------------------------------------------------------------------


TOUCHING = (MM.replace("#include <linux/mm.h>\n", "#include <linux/mm.h>\n#include <linux/x.h>\n")
            .replace("#define NR_THINGS 4", "#define NR_THINGS 8")
            .replace("/* the old one */\nstatic void old_one(void)\n{\n}\n\n", "")
            .replace("((x) * 2)", "((x) << 1)")
            .replace("struct thing {\n\tint a;\n", "struct thing {\n\tint a;\n\tint b;\n")
            .replace("\t\thelper(i);\n", "\t\thelper(i);\n\tnew_one();\n")
            .replace("// SPDX", "/* a new comment only */\n// SPDX")
            + "\nvoid new_one(void)\n{\n}\n")

WANT = (Touched(file="mm/mm_init.c", name=FILE_SCOPE, line=4, kind="added"),
        Touched(file="mm/mm_init.c", name=FILE_SCOPE, line=6, kind="changed"),
        Touched(file="mm/mm_init.c", name="struct thing", line=8, kind="changed", what="struct"),
        Touched(file="mm/mm_init.c", name="old_one", line=16, kind="removed"),
        Touched(file="mm/mm_init.c", name="TWICE", line=18, kind="changed", what="macro"),
        Touched(file="mm/mm_init.c", name="memmap_init_zone_device", line=20, kind="changed"),
        Touched(file="mm/mm_init.c", name="new_one", line=29, kind="added"))


def test_touched_definitions_and_file_scope(base: Path, tmp_path: Path) -> None:
    p = tmp_path / "p.diff"
    p.write_text(_diff("mm/mm_init.c", MM, TOUCHING))
    files = ["mm/mm_init.c", "include/linux/mm.h"]
    got = prepare(base, files, [p], tmp_path / "copy")
    assert (got.root / "mm/mm_init.c").read_text() == TOUCHING
    touched = touched_functions(KernelTree.load(base, files), KernelTree.load(got.root, files), got)
    assert touched == WANT
    assert touched[0].what == "file scope" and touched[-1].what == "function"
    # the same from the file changes, and for a tree that did not read the patched file
    assert touched_functions(KernelTree.load(base, ["include/linux/mm.h"]),
                             KernelTree.load(got.root, ["include/linux/mm.h"]), got.files) == WANT


def test_touched_in_added_and_removed_files(base: Path, tmp_path: Path) -> None:
    p = tmp_path / "p.diff"
    p.write_text(_diff("mm/new.c", "", "#include <a.h>\n\nint f(void)\n{\n\treturn 0;\n}\n")
                 + _diff("mm/other.c", "int other;\n", ""))
    got = prepare(base, ["mm/mm_init.c"], [p], tmp_path / "copy")
    tb, tp = KernelTree.load(base, ["mm/mm_init.c"]), KernelTree.load(got.root, ["mm/mm_init.c"])
    assert touched_functions(tb, tp, got) == (
        Touched(file="mm/new.c", name=FILE_SCOPE, line=1, kind="added"),
        Touched(file="mm/new.c", name="f", line=3, kind="added"),
        Touched(file="mm/other.c", name=FILE_SCOPE, line=1, kind="removed"))


def test_compare_trees_reads_a_second_tree_in_place(base: Path, tmp_path: Path) -> None:
    patched = _tree(tmp_path / "patched", {"Makefile": MAKEFILE, "mm/mm_init.c": TOUCHING,
                                           "include/linux/mm.h": "#define PAGE_SHIFT 12\n"})
    before = _snapshot(base), _snapshot(patched)
    files = ["mm/mm_init.c", "include/linux/mm.h", "mm/other.c", "mm/none.c"]
    assert compare_trees(base, patched, files) == (
        *WANT, Touched(file="mm/other.c", name=FILE_SCOPE, line=1, kind="removed"))
    assert [c.path for c in diff_trees(base, patched, files)] == ["mm/mm_init.c", "mm/other.c"]
    assert compare_trees(base, base, files) == ()
    assert (_snapshot(base), _snapshot(patched)) == before
    with pytest.raises(InputError, match=r"^--against '.*nope' is not a directory"):
        compare_trees(base, tmp_path / "nope", files)


# ---- the command line ------------------------------------------------------------------------


def _cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    code = main(argv, io.StringIO(), err)
    return code, err.getvalue()


def test_a_hunk_that_does_not_apply_exits_3_from_the_command_line(base: Path,
                                                                 tmp_path: Path) -> None:
    after = MM.replace("\tint i;\n", "\tlong i;\n")
    text = _mail("[PATCH 2/7] mm: long i", _diff("mm/mm_init.c", MM, after))
    (tmp_path / "bad.patch").write_text(text.replace(" \t\thelper(i);", " \t\thelper(j);"))
    before = _snapshot(base)
    p = subprocess.run([sys.executable, "-m", "equiv.proofs", "--linux", str(base), "--patch",
                        "bad.patch"], capture_output=True, text=True, check=False, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 3 and p.stdout == ""
    assert p.stderr == ('equiv: error: --patch bad.patch ("mm: long i"): hunk 1 of mm/mm_init.c '
                        "(@@ -21,7 +21,7 @@) does not apply: its context differs from "
                        "mm/mm_init.c at line 27: expected '\\t\\thelper(j);', found "
                        "'\\t\\thelper(i);' (where it fits best: lines 21-27, offset 0, 6 of "
                        "its 7 old lines equal)\n")
    assert _snapshot(base) == before


@pytest.mark.parametrize(("argv", "message"), [
    (["--patch", "{p}"], "--patch needs --linux BASE, the unpatched kernel tree (the patches "
                         "apply to)"),
    (["--against", "{base}"], "--against needs --linux BASE, the unpatched kernel tree (it is "
                              "compared with)"),
    (["--linux", "{base}", "--patch", "{p}", "--against", "{base}"],
     "--patch and --against both give the patched kernel: give --patch FILE (applied to a copy "
     "of --linux) or --against DIR, not both"),
    (["--linux", "{base}", "--patch", ""],
     "--patch needs a value, got an empty one; give --patch FILE (see --help)"),
    (["--linux", "{base}", "--against", ""],
     "--against needs a value, got an empty one; give --against DIR (see --help)"),
    (["--linux", "{base}", "--patch", "{tmp}/nope.patch"], "--patch {tmp}/nope.patch: no such file"),
    (["--linux", "{base}", "--patch", "{tmp}"],
     "--patch {tmp} is not a file; give a diff, a mail or an mbox"),
    (["--linux", "{base}", "--against", "{tmp}/nope"], "--against {tmp}/nope: no such directory"),
    (["--linux", "{base}", "--against", "{p}"],
     "--against {p} is not a directory; give the root of the patched kernel tree"),
    (["--linux", "{tmp}/nope", "--patch", "{p}"],
     "--linux '{tmp}/nope' is not a directory; give the root of a kernel source tree (the folder "
     "holding mm/ and include/)"),
])
def test_option_errors(base: Path, tmp_path: Path, argv: list[str], message: str) -> None:
    p = tmp_path / "p.diff"
    p.write_text(_diff("mm/mm_init.c", MM, MM.replace("x + 1", "x + 2")))
    fill = {"p": str(p), "base": str(base), "tmp": str(tmp_path)}
    code, err = _cli([a.format(**fill) for a in argv])
    assert (code, err) == (3, f"equiv: error: {message.format(**fill)}\n")


def test_the_linux_run_gets_the_options(base: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """--patch and --against reach equiv.zone_device.source.cli.run_linux as today's --linux does
    (args.patch a list, [] by default; args.against None by default)."""
    seen: list[tuple[list[str], str | None]] = []

    def run_linux(args: object, cfg: object, emit: object, err: object) -> int:
        seen.append((getattr(args, "patch"), getattr(args, "against")))  # noqa: B009
        return 0

    fake = types.ModuleType("equiv.zone_device.source.cli")
    fake.run_linux = run_linux  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "equiv.zone_device.source.cli", fake)
    p1, p2 = tmp_path / "1.diff", tmp_path / "2.diff"
    one = MM.replace("x + 1", "x + 2")
    p1.write_text(_diff("mm/mm_init.c", MM, one))
    p2.write_text(_diff("mm/mm_init.c", one, one.replace("x + 2", "x + 3")))
    assert _cli(["--linux", str(base), "--patch", str(p1), "--patch", str(p2)]) == (0, "")
    assert _cli(["--linux", str(base), "--against", str(base)]) == (0, "")
    assert _cli(["--linux", str(base)]) == (0, "")
    assert seen == [([str(p1), str(p2)], None), ([], str(base)), ([], None)]


# ---- the real tree -----------------------------------------------------------------------------


def test_a_patch_to_the_real_mm_init(linux612: Path, tmp_path: Path) -> None:  # noqa: F811
    """On 6.12's mm/mm_init.c: a patch made on a tree with 5 fewer lines at the top (so every
    hunk applies at offset +5) that changes memmap_init_zone_device and adds a function."""
    path = "mm/mm_init.c"
    real = (linux612 / path).read_text()
    assert "void __ref memmap_init_zone_device(" in real
    made_on = "".join(real.splitlines(keepends=True)[5:])
    new_fn = "\nstatic void __meminit zone_device_template(void)\n{\n}\n"
    edit = made_on.replace("void __ref memmap_init_zone_device(",
                           new_fn.lstrip("\n") + "\nvoid __ref memmap_init_zone_device(", 1)
    edit = edit.replace("\tunsigned long pfn, end_pfn = start_pfn + nr_pages;",
                        "\tunsigned long pfn, end_pfn = start_pfn + nr_pages;\n"
                        "\tzone_device_template();", 1)
    assert edit.count("zone_device_template") == 2
    patch = tmp_path / "0001-mm-template.patch"
    patch.write_text(_mail("[PATCH] mm: template", _diff(path, made_on, edit)))
    before = _snapshot(linux612 / "mm")
    got = prepare(linux612, [path], [patch], tmp_path / "copy")
    assert isinstance(got, Applied)
    assert (got.root / path).read_text() == real[:len(real) - len(made_on)] + edit
    assert _snapshot(linux612 / "mm") == before
    touched = touched_functions(KernelTree.load(linux612, [path]),
                                KernelTree.load(got.root, [path]), got)
    assert [(t.name, t.kind) for t in touched] == [("zone_device_template", "added"),
                                                   ("memmap_init_zone_device", "changed")]
    assert touched == compare_trees(linux612, got.root, [path])
