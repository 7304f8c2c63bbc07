"""Build a converter-made MobileNetV2 (alpha 0.35, 160x160 RGB), int8, for the band rewrite.

Keras's own MobileNetV2 graph (tf_keras.applications, weights=None: seeded random weights and
batch-norm statistics, not trained), converted by the TFLite converter with full-integer
quantization from a seeded representative dataset, int8 in and out, as tools/make_keras_models.py
converts the small models of tests/data/keras. It is the MobileNet-class model with inverted
residual blocks (ADD residuals inside the high-resolution stage) that docs/bands.md measures; it
lives in tests/data/mobilenet_v2/, apart from tests/data/keras, because it is far larger than
those (the tests that sweep every converter-made model would run it on every board).

Run by hand, with tensorflow-cpu and tf-keras in their own virtual environment (never a project
dependency):

    python3 -m venv /work/tfvenv && /work/tfvenv/bin/pip install tensorflow-cpu tf-keras numpy
    /work/tfvenv/bin/python tools/make_mobilenet_v2.py [--out tests/data/mobilenet_v2]

It writes mobilenet_v2_035_160_int8.tflite and MANIFEST.tsv (bytes, sha256, operators). Running
it twice gives the same bytes (the same fixed seeds and single-threaded deterministic ops as
tools/make_keras_models.py).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from host.fileio import write_atomic  # noqa: E402
from tools import make_keras_models as mk  # noqa: E402

OUT = REPO / "tests" / "data" / "mobilenet_v2"
NAME = "mobilenet_v2_035_160_int8"
SEED = 2160
ALPHA = 0.35
SIZE = 160
CLASSES = 10  # a small classifier keeps the file small; the stages before it are Keras's own
MAX_MODEL_BYTES = 1_000_000


def build():
    import tf_keras as keras

    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)
    model = keras.applications.MobileNetV2(
        input_shape=(SIZE, SIZE, 3),
        alpha=ALPHA,
        weights=None,
        classes=CLASSES,
        # Logits: with untrained weights a softmax quantized to int8 gives the same output for
        # every input, and a test comparing outputs would compare nothing.
        classifier_activation=None,
    )
    # Batch 1 (as every test model): the applications model has a free batch dimension.
    inp = keras.layers.Input((SIZE, SIZE, 3), batch_size=1)
    model = keras.Model(inp, model(inp))
    mk._randomize_batchnorm(model.layers[-1], np.random.default_rng(SEED))
    return model


def convert(model) -> bytes:
    tf = mk._tf()
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    rng = np.random.default_rng(SEED + 1)
    # Inputs in [-1, 1], as MobileNetV2's preprocessing gives.
    samples = [
        [rng.uniform(-1, 1, (1, SIZE, SIZE, 3)).astype(np.float32)]
        for _ in range(mk.CALIBRATION_SAMPLES)
    ]
    mk.full_integer(conv, samples)
    return bytes(conv.convert())


def main(argv: list[str] | None = None) -> int:
    mk._reexec_with_fixed_hash_seed()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    mk._tf()
    data = convert(build())
    if len(data) > MAX_MODEL_BYTES:
        raise SystemExit(f"{NAME}: {len(data)} bytes, over {MAX_MODEL_BYTES}")
    write_atomic(args.out / f"{NAME}.tflite", data)
    ops = ",".join(mk.operators(data))
    sha = hashlib.sha256(data).hexdigest()
    manifest = f"name\tbytes\tsha256\toperators\n{NAME}\t{len(data)}\t{sha}\t{ops}\n"
    write_atomic(args.out / "MANIFEST.tsv", manifest.encode())
    print(f"{NAME}: {len(data)} bytes: {ops}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
