"""The estimate a long run prints before it starts (issue 17): one line on stderr, from
measured figures, for a proof matrix (``--compare v6.12``, ``--config all``) and for the
self-tests of both subjects; nothing for short runs, runs served by the cache, or
``--quiet``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from attrs import evolve

import equiv.zone_device.selftest
from equiv.engine.cache import Cache
from equiv.memmap import MemoryType
from equiv.proofs import main
from equiv.report.progress import announce
from equiv.zone_device.cell import COMPARE, CellSpec
from equiv.zone_device.estimate import MUTANT_CELL_SECONDS, NOTICE_S, estimate_seconds, notice
from equiv.zone_device.selftest import specs


class TestEstimate:
    def test_compare_all_orders_announced(self) -> None:
        """--compare v6.12 at every order of every preset is estimated at minutes and says so
        on stderr, in one line naming the cells; one preset's orders go order by order (a
        comparison with known differences: equiv.zone_device.cell._known_differences)."""
        from equiv.config import PRESETS

        one = [CellSpec(config="x86_64-default", revision=COMPARE + "v6.12", ptype=t, order=o)
               for o in range(19) for t in MemoryType]
        got = estimate_seconds(one, 2, None)
        assert got is not None and (got.cells, got.groups, got.cached) == (95, 19, 0)
        specs = [CellSpec(config=c, revision=COMPARE + "v6.12", ptype=t, order=o)
                 for c in PRESETS for o in range(19) for t in MemoryType]
        err = io.StringIO()
        notice(specs, 2, None, err)
        line = err.getvalue()
        assert line.startswith("equiv: about ") and "(1520 cells, 0 cached; 2 jobs)" in line
        assert line.count("\n") == 1 and len(line) <= 73

    def test_config_all_is_under_a_minute(self) -> None:
        """--config all (every preset, every order of v11): orders 0 and 1 and two or three
        order classes per preset, under a minute on 2 cores: nothing said."""
        from equiv.config import PRESETS

        specs = [CellSpec(config=c, revision="v11", ptype=t, order=o)
                 for c in PRESETS for o in range(19) for t in MemoryType]
        got = estimate_seconds(specs, 2, None)
        assert got is not None and got.seconds < NOTICE_S and got.cells == 1520
        err = io.StringIO()
        notice(specs, 2, None, err)
        assert "" == err.getvalue()

    def test_short_or_unmeasured_run_is_silent(self) -> None:
        """One order of --compare v6.12 and the default matrix (seconds each) print
        nothing."""
        err = io.StringIO()
        notice([CellSpec(config="x86_64-default", revision=COMPARE + "v6.12", ptype=t, order=0)
                for t in MemoryType],
               2, None, err)
        notice([CellSpec(config="x86_64-default", revision="v11", ptype=t, order=o)
                for o in range(19) for t in MemoryType],
               2, None, err)
        assert "" == err.getvalue()


class TestSelfTestEstimate:
    def test_zone_device_self_test_cold_is_estimated(self) -> None:
        """The whole catalogue (42 bugs x 5 cells) cold: the measured seconds per cell,
        shared among the jobs; under a minute even on one job, so nothing is printed; a
        figure of a minute or more would be said in one line."""
        n = len(specs())
        one = estimate_seconds(specs(), 1, None, "self-test")
        assert one is not None and (one.cells, one.cached, one.what) == (n, 0, "self-test")
        assert one.seconds == pytest.approx(n * MUTANT_CELL_SECONDS) and one.seconds < NOTICE_S
        err = io.StringIO()
        announce(one, 1, err)
        assert err.getvalue() == ""
        announce(evolve(one, seconds=150.0), 1, err)
        assert err.getvalue() == f"equiv: about 2 min (self-test: {n} cells, 0 cached; 1 job)\n"
        many = estimate_seconds(specs(), 8, None, "self-test")
        assert many is not None and many.seconds == pytest.approx(one.seconds / 8)

    def test_cached_cells_are_not_counted(self, tmp_path: Path) -> None:
        """A self-test whose cells the cache holds is estimated at nothing to run."""
        names, cells = ["mutant_heads_loop_one_short"], [(MemoryType.GENERIC, 0)]
        cache = Cache(str(tmp_path))
        cold = estimate_seconds(specs(names, cells), 2, cache, "self-test")
        assert cold is not None and cold.seconds > 0 and cold.cached == 0
        equiv.zone_device.selftest.self_test(1, names=names, cells=cells, cache=cache)
        warm = estimate_seconds(specs(names, cells), 2, Cache(str(tmp_path)), "self-test")
        assert warm is not None and (warm.seconds, warm.cached) == (0, 1)

    def test_vmap_self_test_takes_under_a_minute(self) -> None:
        """The vmap self-test (never cached): its measured CPU time shared among the jobs;
        under a minute even on one job since a caught bug stops its cell, so nothing is
        printed.  A figure of minutes would be (the same line as the matrix's)."""
        from equiv.vmap.mutants import MUTANTS
        from equiv.vmap.selftest import CELLS, COLD_CPU_SECONDS, estimate

        got = estimate(1)
        assert got.seconds == COLD_CPU_SECONDS < NOTICE_S
        assert estimate(2).seconds == COLD_CPU_SECONDS / 2
        err = io.StringIO()
        announce(got, 1, err)
        assert err.getvalue() == ""
        n = len(MUTANTS) * len(CELLS)
        announce(evolve(got, seconds=150.0), 1, err)
        assert err.getvalue() == f"equiv: about 2 min (self-test: {n} cells, 0 cached; 1 job)\n"

    @pytest.mark.parametrize("subject", ["zone-device", "vmap"])
    def test_the_command_prints_it_first_and_quiet_does_not(
            self, subject: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """``--self-test`` prints the estimate on stderr before the kill matrix when it is a
        minute or more (the zone-device one on one job with a figure of minutes; the real
        figures of both subjects are less), and ``--quiet`` never does (the self-test itself
        is replaced by a stub here: only what comes before it is checked)."""
        import equiv.vmap
        from equiv.engine.selftest import SelfTestResult

        seen: list[str] = []

        def stub(jobs: int | None, **_: object) -> SelfTestResult:
            seen.append(err.getvalue())
            return SelfTestResult((), (), 0.0, 1)

        monkeypatch.setattr(equiv.zone_device.selftest if subject == "zone-device" else equiv.vmap,
                            "self_test", stub)
        monkeypatch.setattr(equiv.zone_device.estimate, "MUTANT_CELL_SECONDS", 1.0)  # minutes on one job
        for quiet in (False, True):
            err, out = io.StringIO(), io.StringIO()
            argv = ["--self-test", "--jobs", "1", "--no-cache", "--subject", subject]
            assert main([*argv, *(["--quiet"] if quiet else [])], out=out, err=err) == 0
            first = seen[-1]
            if quiet or subject == "vmap":
                assert "about" not in first
            else:
                assert first.startswith("equiv: about ") and "(self-test: " in first and \
                    first.count("\n") == 1
