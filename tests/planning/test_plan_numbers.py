"""The plan's numbers say what they are (issue 12): whose head, one lifetime notation, and
--check agreeing with the runtime on what a valid plan is, printing the head it gives."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from host.planning import checker
from host.planning.cli import main
from host.planning.libraries.microarena import MICROARENA
from host.planning.model import metadata
from host.planning.model.lifetimes import SPAN_LEGEND, span_text, walk
from host.runtime.binding import MA_ERR_PLAN, Interpreter, MicroarenaError
from host.tflite.model import OFFLINE_PLAN_NAME, Model

KERAS = Path(__file__).resolve().parents[1] / "data" / "keras"


def _planned(tmp_path: Path, name: str, runtime: str = "microarena") -> Path:
    out = tmp_path / f"{name}.planned.tflite"
    assert main([str(KERAS / f"{name}.tflite"), "-q", "--runtime", runtime, "-o", str(out)]) == 0
    return out


def test_head_label_names_the_runtime_planned_for(tmp_path: Path, capsys) -> None:
    """An LSTM planned for microarena: the head is this runtime's, and labelled so."""
    out = _planned(tmp_path, "lstm_int8")
    text = capsys.readouterr().out
    head = Interpreter(out.read_bytes()).stats().head
    assert f"arena head       {head} bytes (exact: what the microarena runtime reports" in text
    assert "what TFLM reports" not in text


def test_one_lifetime_notation_in_table_and_check(tmp_path: Path, capsys) -> None:
    out = _planned(tmp_path, "mlp_int8", "tflm")
    table = capsys.readouterr().out
    assert table.count(SPAN_LEGEND) == 1
    m = Model.load(out)
    lt = {x.tensor.global_index: x for x in walk(m).lifetimes}
    a, b = sorted(lt)[:2]
    row = next(r for r in table.splitlines() if r.split()[:1] == [str(a)])
    assert span_text(lt[a].first, lt[a].last) in row
    # Put two tensors live together at one offset: --check names their lives the same way.
    offsets = metadata.read(m).offsets  # type: ignore[union-attr]
    first_two = [g for g in sorted(lt, key=lambda g: lt[g].first)][:2]
    a, b = first_two
    offsets[b] = offsets[a]
    m.set_metadata(OFFLINE_PLAN_NAME, metadata.encode(offsets, 1))
    m.save(out)
    assert main(["--check", str(out)]) == 1
    text = capsys.readouterr().out
    for g in (a, b):
        assert f"live {span_text(lt[g].first, lt[g].last)}" in text


def _variant(src: Path, dst: Path, change) -> Path:
    """The model with its plan header/offsets changed by `change(version, nsub, offsets)`."""
    m = Model.load(src)
    p = metadata.read(m)
    assert p is not None
    version, nsub, offsets = change(p.version, p.num_subgraphs, list(p.offsets))
    data = struct.pack(f"<3i{len(offsets)}i", version, nsub, len(offsets), *offsets)
    m.set_metadata(OFFLINE_PLAN_NAME, data)
    m.save(dst)
    return dst


def _first_planned(m: Model) -> int:
    return min(x.tensor.global_index for x in walk(m).lifetimes)


def _set(g: int, value: int):
    def change(v: int, n: int, offs: list[int]):
        offs[g] = value
        return v, n, offs

    return change


def test_check_and_runtime_agree_on_valid_plans(tmp_path: Path, capsys) -> None:
    src = _planned(tmp_path, "mlp_int8")
    g = _first_planned(Model.load(src))
    size = next(x.size for x in walk(Model.load(src)).lifetimes if x.tensor.global_index == g)
    last_ok = (metadata.MAX_END - size) // 16 * 16
    cases = {
        "as planned": lambda v, n, o: (v, n, o),
        "version 7": lambda v, n, o: (7, n, o),
        "3 subgraphs in the header": lambda v, n, o: (v, 3, o),
        "offset 0x7ffffff0": _set(g, 0x7FFFFFF0),
        "last offset inside 2 GiB": _set(g, last_ok),
        "first offset beyond": _set(g, last_ok + 16),
        "misaligned": _set(g, 8),
        "negative": _set(g, -5),
    }
    verdicts = {}
    for i, (what, change) in enumerate(cases.items()):
        path = _variant(src, tmp_path / f"v{i}.tflite", change)
        check_ok = not checker.check(Model.load(path), MICROARENA)
        try:
            Interpreter(path.read_bytes(), 1 << 16)
            runtime_ok = True
        except MicroarenaError as e:
            runtime_ok = e.status != MA_ERR_PLAN  # only the plan is judged, not the arena
        assert check_ok == runtime_ok, what
        verdicts[what] = check_ok
    assert verdicts == {
        "as planned": True,
        "version 7": True,
        "3 subgraphs in the header": True,
        "offset 0x7ffffff0": False,
        "last offset inside 2 GiB": True,
        "first offset beyond": False,
        "misaligned": False,
        "negative": False,
    }
    # Header fields both ignore are noted, not passed over in silence.
    assert main(["--check", str(tmp_path / "v1.tflite"), "--runtime", "microarena"]) == 0
    assert "note: format version 7" in capsys.readouterr().out
    assert main(["--check", str(tmp_path / "v2.tflite"), "--runtime", "microarena"]) == 0
    assert "header says 3 subgraphs, the model has 1" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["mlp_int8", "lstm_float"])
def test_check_prints_the_head_the_plan_gives(tmp_path: Path, capsys, name: str) -> None:
    out = _planned(tmp_path, name)
    capsys.readouterr()
    assert main(["--check", str(out), "--runtime", "microarena"]) == 0
    head = Interpreter(out.read_bytes()).stats().head
    assert f"head {head} bytes with this plan on microarena-cortex-m (exact)" in (
        capsys.readouterr().out
    )


def test_runtime_says_which_count_is_wrong(tmp_path: Path) -> None:
    """A plan buffer shorter than its own count: not "has 9 offsets but the model has 9"."""
    src = _planned(tmp_path, "mlp_int8")
    m = Model.load(src)
    n = len(m.tensors)
    m.set_metadata(OFFLINE_PLAN_NAME, struct.pack(f"<3i{n - 1}i", 0, 1, n, *([-1] * (n - 1))))
    m.save(tmp_path / "short.tflite")
    with pytest.raises(MicroarenaError) as e:
        Interpreter((tmp_path / "short.tflite").read_bytes(), 1 << 16)
    assert e.value.message == (
        f"OfflineMemoryAllocation declares {n} offsets but its buffer holds {n - 1}"
    )
    m.set_metadata(OFFLINE_PLAN_NAME, metadata.encode([-1] * (n + 1), 1))
    m.save(tmp_path / "long.tflite")
    with pytest.raises(MicroarenaError) as e:
        Interpreter((tmp_path / "long.tflite").read_bytes(), 1 << 16)
    assert f"has {n + 1} offsets but the model has {n} tensors" in e.value.message
