"""The figures README.md and docs/ quote are what the tools give now, so they cannot drift.

Each test reads a sentence of the documentation, takes its numbers, and measures them again:
the demo model's plan and arena, the planner's results on the VWW and person-detection models
and on the DSA packing problems (README's from docs/planning.md's table, which is re-run), and
the range by which this runtime's arena is below TFLM's (the only such range the documentation
may state, wherever it states it).
"""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from support import tflm_cmsis_nn

from host.paths import DSA_PROBLEMS, REPO, SHARED_MODELS, SHARED_ZOO
from host.planning.libraries.cmsis_nn import CmsisNN
from host.planning.libraries.microarena import MICROARENA
from host.planning.libraries.reference import REFERENCE
from host.planning.libraries.registry import library
from host.planning.model import metadata
from host.planning.packing import SEARCH_CORE, arena_size, lower_bound, plan, read_csv, search
from host.planning.plan import plan_model
from host.planning.targets.target import target_arena
from host.tflite.model import Model
from host.tflite.modelgen import build_demo_model

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BENCHMARKS = REPO / "benchmarks"


def _text(name: str) -> str:
    """A document with its line breaks and runs of spaces as single spaces."""
    return " ".join((REPO / name).read_text(encoding="utf-8").split())


def _numbers(pattern: str, doc: str) -> list[int]:
    m = re.search(pattern, _text(doc))
    assert m, f"{doc} no longer says: {pattern}"
    return [int(g) for g in m.groups()]


def _shared(name: str) -> Model:
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"shared model {path} is absent (tests read ../shared/models)")
    return Model.load(path)


def test_readme_demo_figures() -> None:
    model = Model(build_demo_model(), "demo")  # the bytes .ci/setup writes to build/
    r = plan_model(model)
    metadata.embed(model, r.tensor_offsets())
    t = target_arena(Model(model.to_bytes()), "microarena-cortex-m")
    said = _numbers(
        r"plan needs a (\d+)-byte head where TFLM's own greedy placement needs (\d+), and the "
        r"board reports exactly the predicted head \+ tail, (\d+) bytes with this runtime, in "
        r"an arena of (\d+) bytes",
        "README.md",
    )
    assert said == [r.head, r.tflm_head, t.head + t.tail, t.min_arena]


def test_readme_header_figure_is_the_prediction() -> None:
    """The demo's tflm-cortex-m arena README quotes for --header (measured by hand on a real
    TFLM under QEMU, exact) is what the predictor states now; the plain MicroInterpreter's
    figure beside it is history measured by hand."""
    stated = []
    for kernels in ("reference", "cmsis-nn"):
        model = Model(build_demo_model(), "demo")
        lib = library(kernels)
        metadata.embed(model, plan_model(model, lib=lib).tensor_offsets())
        stated.append(target_arena(Model(model.to_bytes()), "tflm-cortex-m", lib).min_arena)
    said = _numbers(
        r"kernels: (\d+) B exact for the recording one as stated, \d+ B for the plain one; "
        r"with CMSIS-NN 4ab83cc3, the default for `tflm-cortex-m`: (\d+) B exact as stated",
        "README.md",
    )
    assert said == stated


def test_readme_planner_results() -> None:
    vww8 = plan_model(_shared("tiny_vww_mobilenet_int8"))
    vww32 = plan_model(_shared("tiny_vww_mobilenet_float"))
    said = _numbers(
        r"cuts the head from (\d+) to (\d+) B \(int8\) and (\d+) to (\d+) B \(float\)", "README.md"
    )
    assert said == [vww8.tflm_head, vww8.head, vww32.tflm_head, vww32.head]
    person = plan_model(_shared("tflm_person_detect_int8"), overlap=True)
    vww8 = plan_model(_shared("tiny_vww_mobilenet_int8"), overlap=True)
    said = _numbers(
        r"tflm_person_detect_int8 needs (\d+) B instead of (\d+) \(-(\d+)%\), "
        r"tiny_vww_mobilenet_int8 (\d+) instead of TFLM's (\d+)",
        "README.md",
    )
    saving = round(100 * person.saving / person.tflm_head)
    assert said == [person.head, person.tflm_head, saving, vww8.head, vww8.tflm_head]


def _runtime_vs_tflm() -> tuple[list[float], list[float], dict[str, tuple[int, int]]]:
    """Per shared model both run: % by which this runtime's total and tail are below TFLM's
    (host build and TFLM_BASELINE.tsv, the pip interpreter's report, both x86-64)."""
    from host.runtime.binding import Interpreter, MicroarenaError

    baseline_file = SHARED_MODELS / "TFLM_BASELINE.tsv"
    if not baseline_file.exists():
        pytest.skip(f"{baseline_file} is absent (tests read ../shared/models)")
    with baseline_file.open(newline="") as f:
        baseline = {r["name"]: r for r in csv.DictReader(f, delimiter="\t")}
    totals, tails, tail_pairs = [], [], {}
    for path in sorted(SHARED_MODELS.glob("*.tflite")):
        row = baseline.get(path.stem, {})
        if not row.get("arena_total"):
            continue  # TFLM does not run it
        try:
            s = Interpreter(path.read_bytes()).stats()
        except MicroarenaError:
            continue  # this runtime does not run it
        totals.append(100 * (1 - s.total / int(row["arena_total"])))
        tails.append(100 * (1 - s.tail / int(row["arena_tail"])))
        tail_pairs[path.stem] = (s.tail, int(row["arena_tail"]))
    return totals, tails, tail_pairs


def test_every_below_tflm_range_is_the_measured_one() -> None:
    totals, tails, tail_pairs = _runtime_vs_tflm()
    total_range = f"{round(min(totals))}-{round(max(totals))}%"
    tail_range = f"{round(min(tails))}-{round(max(tails))}%"
    readme, runtime = _text("README.md"), _text("docs/runtime.md")
    assert f"it is {tail_range} smaller than TFLM's and the total (head + tail) {total_range}" in (
        readme
    )
    assert f"tail is {tail_range} smaller than TFLM's" in runtime
    assert f"total (head + tail) {total_range} smaller" in runtime
    assert f"{len(totals)} shared models both run" in readme
    ours, theirs = tail_pairs["tflm_person_detect_int8"]
    assert f"person_detect {ours} B vs {theirs} B" in _text("docs/kernels.md")
    for doc in DOCS:  # no other figure for how far below TFLM the arena is, anywhere
        for m in re.finditer(r"(\d+) ?- ?(\d+) ?% (smaller|below)", _text(str(doc))):
            found = f"{m[1]}-{m[2]}%"
            assert found in (total_range, tail_range), f"{doc.name}: {m[0]}"


def _benchmark(name: str) -> ModuleType:
    """A script of benchmarks/, imported for its functions."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_kernels_code_size() -> None:
    """docs/kernels.md's Cortex-M4 code size, to within 5% (it moves with every kernel)."""
    import shutil

    if not shutil.which("arm-none-eabi-size"):
        pytest.skip("arm-none-eabi-gcc is not installed")
    size = _benchmark("runtime_bench").code_size()
    assert size, "make -C firmware arm failed"
    kernels, core = _numbers(
        r"about (\d+) KiB of text for all kernels and (\d+) KiB for the core", "docs/kernels.md"
    )
    assert abs(kernels - size["kernels_text"] / 1024) <= 0.05 * size["kernels_text"] / 1024
    assert abs(core - size["core_text"] / 1024) <= 0.05 * size["core_text"] / 1024


def test_readme_operator_coverage_is_the_generated_one() -> None:
    """docs/operators.md is generated from the code (and tested); README repeats its count."""
    ours, tflm = _numbers(r"runtime has a kernel for (\d+) of the (\d+) operators",
                          "docs/operators.md")  # fmt: skip
    assert _numbers(r"Kernels for (\d+) of the (\d+) operators", "README.md") == [ours, tflm]
    pairs = _numbers(r"Coverage by types: (\d+) of the (\d+) \(operator, types\) pairs",
                     "docs/operators.md")  # fmt: skip
    assert (
        _numbers(r"runtime runs (\d+) of the (\d+) \(operator, types\) pairs", "README.md") == pairs
    )


@pytest.mark.parametrize(
    ("row", "name"),
    [
        ("person_detect", "tflm_person_detect_int8"),
        ("micro_speech_int8", "tflm_micro_speech_int8"),
        ("tiny_kws_dscnn_int8", "tiny_kws_dscnn_int8"),
    ],
)
def test_tflm_cortex_m_table_is_the_prediction(row: str, name: str) -> None:
    """docs/tflm_arena.md's Cortex-M table: the predictor's figures now, equal to those measured
    on the real TFLM (the measured column is history; the predicted one must not drift)."""
    said = _numbers(
        rf"\| {row} \| (\d+) \| (\d+) \| (\d+) \| (\d+) / (\d+) / (\d+) \|", "docs/tflm_arena.md"
    )
    t = target_arena(_shared(name), "tflm-cortex-m", REFERENCE)
    assert said[:3] == [t.head, t.tail, t.head + t.tail] == said[3:]


def test_detection_scratch_figures() -> None:
    """docs/kernels.md's TFLite_Detection_PostProcess scratch sizes (this runtime's and TFLM's)
    and docs/runtime.md's head for a 300-box model are what the planner gives now."""
    from support.conformance import single_op_model
    from support.detection_models import detect

    from host.planning.scratch import predict_tflm_head, scratch_requests
    from host.runtime.arena import predict

    def scratch(**options: int | bool) -> list[int]:
        model = Model(single_op_model(detect("docs", **options)))  # type: ignore[arg-type]
        return [
            sum(r.bytes for r in scratch_requests(model, lib)) for lib in (MICROARENA, REFERENCE)
        ]

    said = _numbers(
        r"on the conformance models (\d+) B vs TFLM's (\d+) B \(20 boxes, 1 class\), (\d+) B vs "
        r"(\d+) B \(50 boxes, 5 classes, regular\); for a 90-class SSD with 1917 anchors and 10 "
        r"detections (\d+) B vs (\d+) B",
        "docs/kernels.md",
    )
    assert said == [
        *scratch(boxes=20, classes=1, max_detections=5),
        *scratch(boxes=50, classes=5, background=False, regular=True, max_detections=20),
        *scratch(boxes=1917, classes=90, max_detections=10),
    ]
    data = single_op_model(detect("docs", 300, 10, max_detections=25))
    said = _numbers(r"300 boxes and 10 classes: head (\d+) B vs TFLM's (\d+) B", "docs/runtime.md")
    assert said == [predict(data, "host")["head"], predict_tflm_head(Model(data), REFERENCE)]


# --------------------------------------------------------------------------- DSA problems

DSA_ROW = re.compile(
    r"^\| ([A-K])\.1048576 \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \| (\d+) \| ([\d.]+) \|", re.M
)


def _dsa_table() -> dict[str, list[int]]:
    """docs/planning.md's deterministic DSA table (the first after its heading): problem ->
    [buffers, lower bound, greedy arena, best arena]; its ratio columns checked on the way."""
    text = (REPO / "docs" / "planning.md").read_text(encoding="utf-8")
    section = text[text.index('#### DSA "challenging" problems') :]
    table = section[: section.index("\nbest: ")]
    rows = {}
    for m in DSA_ROW.finditer(table):
        buffers, bound, greedy, best = int(m[2]), int(m[3]), int(m[4]), int(m[6])
        assert (m[5], m[7]) == (f"{greedy / bound:.3f}", f"{best / bound:.3f}"), m[0]
        rows[m[1]] = [buffers, bound, greedy, best]
    assert len(rows) == 11, f"docs/planning.md's DSA table has {len(rows)} rows, not 11"
    return rows


def _dsa_summary(rows: dict[str, list[int]]) -> tuple[str, str, int]:
    """(mean greedy ratio, mean best ratio, how many at the bound) as the docs print them."""
    greedy = sum(g / b for _, b, g, _ in rows.values()) / len(rows)
    best = sum(x / b for _, b, _, x in rows.values()) / len(rows)
    return f"{greedy:.3f}", f"{best:.3f}", sum(x == b for _, b, _, x in rows.values())


def test_readme_dsa_figures_are_the_docs_table() -> None:
    """README's DSA figures (ours) are docs/planning.md's measured table's, whose summary
    lines follow from its rows; the peers' figures are the problem set's published ones."""
    greedy, best, at_bound = _dsa_summary(_dsa_table())
    planning = _text("docs/planning.md")
    assert f"| microarena greedy (TFLM exact) | {greedy} |" in planning
    assert f"| microarena best | {best} |" in planning
    assert f"best: {at_bound} of 11 at the lower bound" in planning
    assert f"mean ratio {best}." in planning
    readme = _text("README.md")
    said = re.search(
        r'MiniMalloc\'s 11 "challenging" packing problems: mean arena / lower bound '
        r"\*\*([\d.]+)\*\* with `best` in at most 1 s each \(TFLM greedy ([\d.]+), "
        r"Vela ([\d.]+), OmniMalloc ([\d.]+); MiniMalloc's exact search fits (\d+) "
        r"of 11 at the bound, we fit (\d+)",
        readme,
    )
    assert said, "README.md no longer states the DSA results in the form this test reads"
    assert [said[1], said[2], said[6]] == [best, greedy, str(at_bound)]
    published = DSA_PROBLEMS / "README.md"
    if not published.exists():
        pytest.skip(f"{published} is absent (the problem set is read from ../shared/benchmarks)")
    source = " ".join(published.read_text(encoding="utf-8").split())
    assert f"| TFLM GreedyMemoryPlanner (exact port) | {said[2]} " in source
    assert f"| Arm Vela hill climb (3.10, Python) | {said[3]} " in source
    assert f"| OmniMalloc 1.0 supermalloc (PyPI) | {said[4]} " in source
    assert f"{said[5]} of 11 exactly at the bound" in source


def _dsa_problem(letter: str) -> Path:
    path = DSA_PROBLEMS / f"{letter}.1048576.csv"
    if not path.exists():
        pytest.skip(f"{path} is absent (the problem set is read from ../shared/benchmarks)")
    return path


def test_dsa_table_bounds_and_greedy_are_measured() -> None:
    """Buffers, lower bound and TFLM greedy's arena of every row, computed again (quick)."""
    for letter, (buffers, bound, greedy, _) in _dsa_table().items():
        bufs = read_csv(_dsa_problem(letter))
        measured = [len(bufs), lower_bound(bufs), arena_size(bufs, plan(bufs, planner="greedy"))]
        assert measured == [buffers, bound, greedy], letter


def test_dsa_table_best_is_the_deterministic_run() -> None:
    """The `best` column is what benchmarks/dsa_bench.py --no-clock-cap --time-limit 1 computes
    now (that work budget without a wall-clock cap: the same plans on any machine with the
    compiled search core; the Python one would need minutes for it)."""
    if SEARCH_CORE != "c":
        pytest.skip("the compiled search core is not built: the Python search takes minutes")
    bench = _benchmark("dsa_bench")
    for letter, (_, _, _, best) in _dsa_table().items():
        assert bench.run(_dsa_problem(letter), 1.0, clock_cap=False)["best"] == best, letter


def test_dsa_python_core_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/planning.md's plans of the Python search core at 1 s (its own budget, far below the
    clock cap, here made farther): mean ratio and problems at the bound (about 1 s of CPU)."""
    mean, at_bound = re.search(
        r"Its plans are those of the smaller budget: on the DSA problems at 1 s a mean ratio of "
        r"(\d\.\d+) \((none|\d+) at the bound",
        _text("docs/planning.md"),
    ).groups()  # type: ignore[union-attr]
    monkeypatch.setattr(search, "_core", None)
    ratios = []
    for letter in "ABCDEFGHIJK":
        bufs = read_csv(_dsa_problem(letter))
        ratios.append(
            arena_size(bufs, plan(bufs, time_limit=1, clock_limit=600)) / lower_bound(bufs)
        )
    assert f"{sum(ratios) / len(ratios):.3f}" == mean
    assert sum(r == 1 for r in ratios) == (0 if at_bound == "none" else int(at_bound))


def test_vela_plan_figures() -> None:
    """docs/planning.md's heads for the Vela model: TFLM's with Vela's plan, and ours."""
    from host.planning.scratch import predict_tflm_head

    path = SHARED_ZOO / "tflm_person_detect_vela.tflite"
    if not path.exists():
        pytest.skip(f"zoo model {path} is absent (tests read ../shared/zoo)")
    model = Model.load(path)
    said = _numbers(
        r"Vela's plan for `tflm_person_detect_vela` needs a (\d+)-byte head, the best plan "
        r"without its knowledge of the Ethos-U operator (\d+)",
        "docs/planning.md",
    )
    assert said == [predict_tflm_head(model, REFERENCE), plan_model(model).head]


def test_bands_figures() -> None:
    """docs/bands.md's person_detect sentence: the head with --bands --overlap is the one the
    real TFLM reports for the rewritten, planned model."""
    from support.tflm_oracle import run_tflm

    from host.planning import band_choice

    original = _shared("tflm_person_detect_int8")
    banding = band_choice.apply(original, 0.1, REFERENCE, True)
    assert banding.chosen is not None
    r = plan_model(banding.model, time_limit=1.5, overlap=True, **banding.placement)
    metadata.embed(banding.model, r.tensor_offsets())
    tflm_head = run_tflm(banding.model.to_bytes()).head
    over = plan_model(_shared("tflm_person_detect_int8"), overlap=True)
    said = _numbers(
        r"tflm_person_detect_int8 with `--bands --overlap`, TFLM reports a head of (\d+) B where "
        r"it needs (\d+) B unplanned and (\d+) B with `--overlap` alone, for (\d+)\.(\d)% more "
        r"MACs \(cut after operator (\d+), (\d+) bands\)",
        "docs/bands.md",
    )
    c = banding.chosen
    percent = f"{100 * c.added_fraction:.1f}".split(".")
    assert said == [
        tflm_head,
        over.tflm_head,
        over.head,
        int(percent[0]),
        int(percent[1]),
        c.cut,
        c.bands,
    ]
    assert tflm_head == r.head


def test_bands_mobilenet_v2_figures() -> None:
    """docs/bands.md's MobileNetV2 sentence: with the cut and band count it quotes, the head the
    real TFLM reports for the rewritten, planned model, the unbanded heads and the MACs added."""
    from support.tflm_oracle import MOBILENET_V2, run_tflm

    from host.planning import band_choice
    from host.planning.model.macs import model_macs
    from host.rewrite import bands as rw

    said = _numbers(
        r"`mobilenet_v2_035_160_int8` .{0,200}? cut after operator (\d+) into (\d+) bands, TFLM "
        r"reports a head of (\d+) B where it needs (\d+) B unplanned and (\d+) B with "
        r"`--overlap` alone \(0\.(\d+)x\), for (\d+)\.(\d)% more MACs",
        "docs/bands.md",
    )
    original = Model.load(MOBILENET_V2)
    cut, count = said[:2]
    stage = rw.find_stage(original, cut)
    t = stage.t_tensor
    bounds = band_choice.aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], count)
    assert bounds is not None
    banded, r = band_choice.plan_banded(original, cut, bounds, REFERENCE, True, 1.5)
    metadata.embed(banded, r.tensor_offsets())
    over = plan_model(original, overlap=True)
    added = rw.band_macs(stage, bounds) - rw.stage_macs(stage)
    percent = f"{100 * added / model_macs(original):.1f}".split(".")
    ratio = f"{r.head / over.head:.2f}".split(".")[1]
    assert said[2:] == [
        run_tflm(banded.to_bytes()).head,
        over.tflm_head,
        over.head,
        int(ratio),
        int(percent[0]),
        int(percent[1]),
    ]
    assert r.head == said[2]


def test_cmsis_nn_person_detect_tail_is_the_measured_one() -> None:
    """docs/tflm_arena.md's CMSIS-NN vs reference tail on person_detect: the hand-measured data."""
    diff, cmsis, ref = _numbers(
        r"person_detect is (\d+) bytes above the reference kernels' \((\d+) vs (\d+)\)",
        "docs/tflm_arena.md",
    )
    data = tflm_cmsis_nn.load()
    runs = [
        data.run("tflm_person_detect_int8", "mps2-an386", k, "none")
        for k in ("cmsis-nn", "reference")
    ]
    assert all(runs), "measured.json lost person_detect on mps2-an386"
    assert [cmsis, ref] == [r.tail for r in runs if r]
    assert diff == cmsis - ref


def test_min_arena_tail_example() -> None:
    """docs/tflm_arena.md's tail in exactly the arena to set: the prediction, equal to the tail
    TFLM + CMSIS-NN printed in that arena (measured data), r bytes past a multiple of 16."""
    tail, at_min, arena, r = _numbers(
        r"tflm_person_detect_int8 with CMSIS-NN on a Cortex-M4: tail (\d+) B, (\d+) B in its "
        r"(\d+)-byte minimum arena, r = (\d+)",
        "docs/tflm_arena.md",
    )
    t = target_arena(_shared("tflm_person_detect_int8"), "tflm-cortex-m", CmsisNN("cortex-m4"))
    measured = tflm_cmsis_nn.load().run("tflm_person_detect_int8", "mps2-an386", "cmsis-nn", "none")
    assert measured is not None
    assert [tail, at_min, arena, r] == [t.tail, t.min_arena_tail, t.min_arena, t.min_arena % 16]
    assert (at_min, arena) == (measured.tail, measured.min_arena)
    assert at_min - tail in (r, r - 16)


def test_tail_by_arena_end_is_the_prediction() -> None:
    """docs/tflm_arena.md's tails measured by hand in arenas ending at several r mod 16: the
    replay of TFLM + CMSIS-NN gives each."""
    from host.planning.targets.tflm import predict
    from host.planning.tflm.structs import CORTEX_M

    said = _numbers(
        r"TFLM printed tails of (\d+) B in an arena of (\d+) B \(r = (\d+)\), (\d+) B in (\d+) B "
        r"\(r = (\d+)\) and (\d+) B in (\d+) B \(r = (\d+)\)",
        "docs/tflm_arena.md",
    )
    model, cmsis = _shared("tflm_person_detect_int8"), library("cmsis-nn", "cortex-m4")
    for tail, arena, r in zip(said[::3], said[1::3], said[2::3], strict=True):
        assert (tail, r) == (predict(model, CORTEX_M, arena, cmsis).tail, arena % 16)
