"""Build converter-made MobileNets (Keras's own graphs), int8, for the band rewrite.

Keras's MobileNetV2 and MobileNet (v1) from tf_keras.applications, weights=None: seeded random
weights and batch-norm statistics, not trained, logits out (with untrained weights a softmax
quantized to int8 gives the same output for every input, and a test comparing outputs would
compare nothing). The TFLite converter quantizes them to full-integer int8, int8 in and out,
from a seeded representative dataset in [-1, 1], as tools/make_keras_models.py converts the
small models of tests/data/keras.

- mobilenet_v2_035_160 (alpha 0.35, 160x160 RGB): committed in tests/data/mobilenet_v2/, apart
  from tests/data/keras, because it is far larger than those (the tests that sweep every
  converter-made model would run it on every board). Inverted-residual blocks: ADD residuals
  inside the high-resolution stage.
- mobilenet_v2_035_224 (the same at 224x224) and mobilenet_v1_025_128 (alpha 0.25, 128x128
  RGB): not committed; docs/bands.md quotes what bands do on them, measured by hand.

Run by hand, with tensorflow-cpu and tf-keras in their own virtual environment (never a project
dependency):

    python3 -m venv /work/tfvenv && /work/tfvenv/bin/pip install tensorflow-cpu tf-keras numpy
    /work/tfvenv/bin/python tools/make_mobilenets.py [--model NAME] [--out DIR]

It writes NAME_int8.tflite and MANIFEST.tsv (bytes, sha256, operators) into DIR (default:
tests/data/mobilenet_v2). Running it twice gives the same bytes (the same fixed seeds and
single-threaded deterministic ops as tools/make_keras_models.py).
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
# name -> (Keras application, alpha, input size, seed)
MODELS = {
    "mobilenet_v2_035_160": ("MobileNetV2", 0.35, 160, 2160),
    "mobilenet_v2_035_224": ("MobileNetV2", 0.35, 224, 2224),
    "mobilenet_v1_025_128": ("MobileNet", 0.25, 128, 1128),
}
CLASSES = 10  # a small classifier keeps the file small; the stages before it are Keras's own
MAX_MODEL_BYTES = 1_000_000


def build(name: str):
    import tf_keras as keras

    app, alpha, size, seed = MODELS[name]
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    model = getattr(keras.applications, app)(
        input_shape=(size, size, 3),
        alpha=alpha,
        weights=None,
        classes=CLASSES,
        classifier_activation=None,
    )
    # Batch 1 (as every test model): the applications model has a free batch dimension.
    inp = keras.layers.Input((size, size, 3), batch_size=1)
    model = keras.Model(inp, model(inp))
    mk._randomize_batchnorm(model.layers[-1], np.random.default_rng(seed))
    return model


def convert(name: str, model) -> bytes:
    tf = mk._tf()
    _, _, size, seed = MODELS[name]
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    rng = np.random.default_rng(seed + 1)
    # Inputs in [-1, 1], as the MobileNets' preprocessing gives.
    samples = [
        [rng.uniform(-1, 1, (1, size, size, 3)).astype(np.float32)]
        for _ in range(mk.CALIBRATION_SAMPLES)
    ]
    mk.full_integer(conv, samples)
    return bytes(conv.convert())


def main(argv: list[str] | None = None) -> int:
    mk._reexec_with_fixed_hash_seed()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=list(MODELS), default="mobilenet_v2_035_160")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    mk._tf()
    name = f"{args.model}_int8"
    data = convert(args.model, build(args.model))
    if len(data) > MAX_MODEL_BYTES:
        raise SystemExit(f"{name}: {len(data)} bytes, over {MAX_MODEL_BYTES}")
    write_atomic(args.out / f"{name}.tflite", data)
    ops = ",".join(mk.operators(data))
    sha = hashlib.sha256(data).hexdigest()
    manifest = f"name\tbytes\tsha256\toperators\n{name}\t{len(data)}\t{sha}\t{ops}\n"
    write_atomic(args.out / "MANIFEST.tsv", manifest.encode())
    print(f"{name}: {len(data)} bytes: {ops}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
