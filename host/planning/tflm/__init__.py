"""Facts about stock TFLM, whatever kernels it runs: its structs (structs.py), the operators
the pip interpreter registers (registered.py, generated), the conditions its Prepare checks
(prepare.py), what it refuses (refusal.py) and the categories of its arena report
(categories.py)."""
