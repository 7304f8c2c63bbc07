"""Kernel libraries: what each implementation of the operators does to the arena.

library.py states the interface, libraries.py the registry (names, CPUs, defaults); one module
per library (reference.py, microarena.py) holds its facts; operands.py reads the shapes and
options their rules need.
"""
