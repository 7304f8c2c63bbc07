"""The runtime's report speaks TFLM's RecordingMicroAllocator language: the category names and
units the C core prints (report.c) are the ones the TFLM tail model defines."""

from __future__ import annotations

import ctypes

from host.planning.targets.tflm import CATEGORIES
from host.runtime.binding import REC_COUNT, categories, load_library


def test_runtime_categories_are_tflms() -> None:
    assert categories() == tuple(name for name, _ in CATEGORIES)


def test_runtime_units_are_tflms() -> None:
    lib = load_library()
    lib.ma_rec_category_unit.argtypes = [ctypes.c_int]
    lib.ma_rec_category_unit.restype = ctypes.c_char_p
    units = tuple(lib.ma_rec_category_unit(c).decode() for c in range(REC_COUNT))
    assert units == tuple(unit for _, unit in CATEGORIES)
    assert lib.ma_rec_category_unit(REC_COUNT) == b""  # out of range: empty, never a crash
