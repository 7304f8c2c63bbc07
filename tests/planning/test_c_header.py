"""`host.plan M --embed --header model_data.h`: a header a stock TFLM project includes as it is.

Proved without TFLM's sources: the header compiles warning-free (-Wall -Wextra -Werror) as C11
and C++11 with gcc and arm-none-eabi-gcc, its array is 16-byte aligned and holds exactly the
planned model's bytes, and the pip TFLM runs the model in exactly the arena the header states
for tflm-x86_64 and fails one byte below it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.tflm_oracle import runs_in_arena, shared_model
from support.vela_models import vela_like

from host.planning.cli import main
from host.planning.libraries.registry import library
from host.planning.targets.target import target_arena
from host.tflite.model import Model
from host.tflite.modelgen import build_demo_model


def _planned(tmp_path: Path, source: Path, target: str, *extra: str) -> tuple[bytes, str]:
    """The planned model's bytes and the header host.plan writes with them."""
    out, header = tmp_path / "planned.tflite", tmp_path / "model_data.h"
    args = [str(source), "-o", str(out), "--header", str(header), "--target", target, "-q"]
    assert main([*args, *extra]) == 0
    return out.read_bytes(), header.read_text()


def _demo(tmp_path: Path) -> Path:
    p = tmp_path / "demo.tflite"
    p.write_bytes(build_demo_model())
    return p


def _array(text: str, name: str = "g_model") -> bytes:
    body = text[text.index(f"const unsigned char {name}[] = {{") :]
    body = body[: body.index("};")]
    return bytes(int(h, 16) for h in re.findall(r"0x([0-9a-fA-F]{2})", body))


def _define(text: str, macro: str) -> int:
    m = re.search(rf"^#define {macro} (\d+)$", text, re.M)
    assert m, f"no #define {macro}"
    return int(m[1])


def test_array_is_the_planned_model_and_names_are_configurable(tmp_path: Path) -> None:
    data, text = _planned(tmp_path, _demo(tmp_path), "tflm-cortex-m")
    assert _array(text) == data
    assert f"const unsigned int g_model_len = {len(data)};" in text
    assert "alignas(16) const unsigned char g_model[] = {" in text
    data, text = _planned(tmp_path, _demo(tmp_path), "tflm-cortex-m", "--header-name", "kws")
    assert _array(text, "kws") == data and _define(text, "KWS_ARENA_SIZE") > 0


TU_C = """#include "model_data.h"
#include <stdint.h>
#include <string.h>
_Static_assert(G_MODEL_ARENA_SIZE > 0, "arena size");
static alignas(16) uint8_t tensor_arena[G_MODEL_ARENA_SIZE];
int check(void) {
  memcpy(tensor_arena, g_model, 8);
  return ((uintptr_t)g_model % 16 == 0 ? 0 : 1) + (g_model_len == EXPECTED_LEN ? 0 : 2);
}
"""
TU_CXX = """#include "model_data.h"
#include <cstdint>
#include <cstring>
static_assert(G_MODEL_ARENA_SIZE > 0, "arena size");
constexpr int kTensorArenaSize = G_MODEL_ARENA_SIZE;
alignas(16) static std::uint8_t tensor_arena[kTensorArenaSize];
extern "C" int check(void) {
  std::memcpy(tensor_arena, g_model, 8);
  return (reinterpret_cast<std::uintptr_t>(g_model) % 16 == 0 ? 0 : 1) +
         (g_model_len == EXPECTED_LEN ? 0 : 2);
}
"""
MAIN = "int check(void);\nint main(void) { return check(); }\n"
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-pedantic"]
TOOLCHAINS = {
    "gcc": ("gcc", "g++", []),
    "arm-none-eabi-gcc": ("arm-none-eabi-gcc", "arm-none-eabi-g++", ["-mcpu=cortex-m4", "-mthumb"]),
}


@pytest.mark.parametrize("toolchain", sorted(TOOLCHAINS))
def test_header_compiles_warning_free_as_c_and_cxx(tmp_path: Path, toolchain: str) -> None:
    cc, cxx, flags = TOOLCHAINS[toolchain]
    if not shutil.which(cc) or not shutil.which(cxx):
        pytest.skip(f"{cc} / {cxx} are not installed")
    data, _ = _planned(tmp_path, _demo(tmp_path), "tflm-cortex-m")
    expected = [f"-DEXPECTED_LEN={len(data)}u", f"-I{tmp_path}"]
    for compiler, std, tu, name in ((cc, "-std=c11", TU_C, "c"), (cxx, "-std=c++11", TU_CXX, "cc")):
        src, obj = tmp_path / f"tu.{name}", tmp_path / f"tu_{name}.o"
        src.write_text(tu)
        cmd = [compiler, std, *WARNINGS, *flags, *expected, "-c", str(src), "-o", str(obj)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0 and not proc.stderr, f"{' '.join(cmd)}\n{proc.stderr}"
        if toolchain == "gcc":  # link and run: the array is 16-byte aligned, its length right
            main_c, exe = tmp_path / "main.c", tmp_path / f"check_{name}"
            main_c.write_text(MAIN)
            subprocess.run([cc, "-c", str(main_c), "-o", str(tmp_path / "main.o")], check=True)
            subprocess.run([cxx, str(obj), str(tmp_path / "main.o"), "-o", str(exe)], check=True)
            assert subprocess.run([str(exe)]).returncode == 0


@pytest.mark.parametrize("name", ["demo", "tflm_person_detect_int8", "tiny_kws_dscnn_int8"])
def test_stated_arena_runs_pip_tflm_and_one_byte_less_fails(tmp_path: Path, name: str) -> None:
    source = _demo(tmp_path) if name == "demo" else shared_model(name)
    data, text = _planned(tmp_path, source, "tflm-x86_64")
    arena = _define(text, "G_MODEL_ARENA_SIZE")
    assert "in all (exact)" in text and "exact for tflite::RecordingMicroInterpreter" in text
    assert runs_in_arena(data, arena)
    assert not runs_in_arena(data, arena - 1)


@pytest.mark.parametrize(
    ("kernels", "title"), [("reference", "TFLM reference kernels"), ("cmsis-nn", "CMSIS-NN")]
)
def test_header_states_the_arena_of_the_chosen_kernels(
    tmp_path: Path, kernels: str, title: str
) -> None:
    data, text = _planned(tmp_path, _demo(tmp_path), "tflm-cortex-m", "--kernels", kernels)
    arena = target_arena(Model(data), "tflm-cortex-m", library(kernels)).min_arena
    assert _define(text, "G_MODEL_ARENA_SIZE") == arena
    assert f"with\n * the {title}" in text


def test_header_lands_with_the_model_or_neither(tmp_path: Path, capsys) -> None:
    model = _demo(tmp_path)
    before = model.read_bytes()
    bad = tmp_path / "missing" / "model_data.h"
    assert main([str(model), "--embed", "--header", str(bad), "-q"]) == 2
    assert "missing/model_data.h" in capsys.readouterr().err
    assert model.read_bytes() == before and not bad.parent.exists()


def test_header_refuses_another_tools_plan_unless_told(tmp_path: Path, capsys) -> None:
    model = tmp_path / "vela.tflite"
    model.write_bytes(vela_like())
    header = tmp_path / "model_data.h"
    assert main([str(model), "--header", str(header), "-q"]) == 2
    assert "already carries Arm Vela" in capsys.readouterr().err and not header.exists()
    assert main([str(model), "--header", str(header), "--replace-plan", "-q"]) == 0
    text = header.read_text()
    assert "TFLM refuses this model: a TFLM build with the CMSIS-NN kernels" in text
    assert "(NOT exact: see host.plan's notes)" in text


@pytest.mark.parametrize("name", ["int", "alignas", "_Bool", "__cplusplus", "_Model", "a__b",
                                  "class", "bool", "and", "NULL", "9lives", "g-model"])  # fmt: skip
def test_names_no_c_or_cxx_compiler_takes_are_refused(tmp_path: Path, name: str, capsys) -> None:
    """Keywords of C11 and C++, reserved names and non-identifiers are refused with a message
    (issue 26: `int`, `alignas`, `_Bool`, `__cplusplus` once gave a header that did not
    compile, exit 0), and nothing is written."""
    header = tmp_path / "model_data.h"
    with pytest.raises(SystemExit) as exc:
        main([str(_demo(tmp_path)), "-o", str(tmp_path / "p.tflite"), "--header", str(header),
              "--header-name", name, "-q"])  # fmt: skip
    assert exc.value.code == 2
    assert repr(name) in capsys.readouterr().err
    assert not header.exists()


@pytest.mark.parametrize(
    ("file_name", "name"),
    [("9model.h", "g_model"), ("__x__.h", "g_model"), ("modèle données.h", "g_model"),
     ("model.h", "model_h"), ("g_model_len.hpp", "g_model"), ("G_MODEL_ARENA_SIZE", "g_model")],
)  # fmt: skip
def test_guard_from_any_file_name_compiles(tmp_path: Path, file_name: str, name: str) -> None:
    """The include guard is derived safely from any file name: never a leading digit, a
    reserved or non-ASCII name, or one of the header's own names."""
    header = tmp_path / file_name
    args = [str(_demo(tmp_path)), "-o", str(tmp_path / "p.tflite"), "--header", str(header)]
    assert main([*args, "--header-name", name, "-q"]) == 0
    for compiler, std, ext in (("gcc", "-std=c11", "c"), ("g++", "-std=c++11", "cc")):
        src = tmp_path / f"tu.{ext}"
        src.write_text(f'#include "{file_name}"\n#include "{file_name}"\n'
                       f"unsigned int n(void) {{ return {name}_len; }}\n")  # fmt: skip
        cmd = [compiler, std, *WARNINGS, f"-I{tmp_path}", "-c", str(src), "-o", str(tmp_path / "o")]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0 and not proc.stderr, f"{file_name}: {proc.stderr}"


def test_model_text_in_the_comment_cannot_end_it(tmp_path: Path) -> None:
    """The refusal quoted in the header's comment names the model's custom operators: one named
    '*/ ... /*' stays inside the comment (it became code before)."""
    if not shutil.which("gcc"):
        pytest.skip("gcc is not installed")
    from host.planning import c_header
    from host.planning.targets.result import TargetArena

    arena = TargetArena("tflm-cortex-m", head=16, tail=16, min_arena=32)
    hostile = "custom operator '*/ int injected(void) { return 1; } /*'"
    text = c_header.render(b"\x00" * 4, "g_model", arena, "kernels", "m.h", "m*/x", hostile)
    (tmp_path / "m.h").write_text(text)
    src = tmp_path / "use.c"
    src.write_text('#include "m.h"\nint injected(void) { return 2; }\n')
    cmd = [
        "gcc",
        "-std=c11",
        *WARNINGS,
        f"-I{tmp_path}",
        "-c",
        str(src),
        "-o",
        str(tmp_path / "u.o"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
