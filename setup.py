"""The optional compiled core of the packing search (pyproject.toml holds everything else).

optional=True: without a C compiler (a plain Windows or macOS machine) the build goes on and
the package uses the pure-Python search, which computes the same plans, only slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "host.planning.packing._search_core",
            ["host/planning/packing/_search_core.c"],
            optional=True,
        )
    ]
)
