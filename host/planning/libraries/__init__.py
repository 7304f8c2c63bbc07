"""Kernel libraries: what each implementation of the operators does to the arena.

base.py states the interface, registry.py the registry (names, CPUs, defaults); one module
per library (reference.py, cmsis_nn.py, microarena.py) holds its memory model; loops.py the
loop geometry they share (where an output may be written over an input).
"""
