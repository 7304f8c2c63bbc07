"""Facts about a model, whoever runs it: tensor lifetimes (lifetimes.py), operator operands
and options (operands.py), where a banded model's rows live (rows.py). Imports only
host.tflite, host.rewrite and packing."""
