"""The arena a model needs on each target (an interpreter and its ABI): TFLM's set-up replayed
(tflm.py) and the targets with their figures (target.py)."""
