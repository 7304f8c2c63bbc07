# ruff: noqa: F821 (Import, DefaultEnvironment and env are SCons globals)
# PlatformIO build script of the microarena library (library.json's extraScript). Reads the
# user's environment options
#   custom_microarena_model   = models/kws.tflite      (required: the model to embed)
#   custom_microarena_plan    = best|greedy|none|replace (an embedded plan stays unless replace)
#   custom_microarena_overlap = yes, custom_microarena_bands = yes, custom_microarena_cpu
#   custom_microarena_kernels = model|all
#   custom_microarena_target  = microarena-cortex-m|microarena-host (default from the compiler)
#   custom_microarena_python  = a Python with microarena installed
#   custom_microarena_tflm_api = yes: TFLM's include paths lead to microarena/tflm.h
# and runs host.device.model_header once, before anything compiles: the user's code includes
# the generated microarena_model.h; the kernel registry keeps only the model's kernels. The
# kernels' fast paths follow the build's own -mcpu/-mfpu. See docs/library.md.
import os
import subprocess
import sys

Import("env", "pio_lib_builder")

lib_dir = pio_lib_builder.path


def option(name, default=""):
    return env.GetProjectOption("custom_microarena_" + name, default)


def fail(message):
    sys.stderr.write(f"Error: microarena: {message}\n")
    env.Exit(1)


def find_python():
    """A Python that can run the generator (it needs numpy, which PlatformIO's own lacks)."""
    candidates = [
        option("python"),
        env.subst("$PYTHONEXE"),
        os.path.join(lib_dir, ".venv", "bin", "python"),
    ]
    for python in filter(None, candidates):
        probe = [python, "-c", "import numpy, host.device.model_header"]
        done = subprocess.run(
            probe, capture_output=True, env=dict(os.environ, PYTHONPATH=lib_dir), check=False
        )
        if done.returncode == 0:
            return python
    fail("no Python with microarena and numpy: set custom_microarena_python = <its path>")
    return None


model = option("model")
if not model:
    fail("set custom_microarena_model = <file.tflite> in platformio.ini")
model = os.path.join(env.subst("$PROJECT_DIR"), model)
if not os.path.isfile(model):
    fail(f"model file not found: {model}")
arm = "arm-none-eabi" in env.subst("$CC")
target = option("target", "microarena-cortex-m" if arm else "microarena-host")
gen_dir = os.path.join(env.subst("$BUILD_DIR"), "microarena_model")
cmd = [find_python(), "-m", "host.device.model_header", model, "--out-dir", gen_dir]
cmd += [
    "--target",
    target,
    "--plan",
    option("plan", "best"),
    "--kernels",
    option("kernels", "model"),
]
cmd += ["--overlap"] * (option("overlap", "no") == "yes") + ["--bands"] * (
    option("bands", "no") == "yes"
)
cmd += ["--cpu", option("cpu")] if option("cpu") else []
done = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=lib_dir), check=False)
if done.returncode != 0:
    env.Exit(1)  # the generator said why
env.Append(CPPPATH=[gen_dir], CPPDEFINES=[("MA_SELECTED_OPS_H", '\\"microarena_model_ops.h\\"')])
global_env = DefaultEnvironment()
global_env.Append(CPPPATH=[gen_dir])
if option("tflm_api", "no") == "yes":  # an application written against TFLM's C++ API
    # On the library's own path: PlatformIO passes it on to the project's sources (the
    # global environment's, above, reaches only what is built after this script).
    env.Append(CPPPATH=[os.path.join(lib_dir, "firmware", "compat")])
if arm:
    env.Append(CCFLAGS=["-ffunction-sections", "-fdata-sections"])
# The runtime reads none of the board's macros (F_CPU, ...: BOARD_MACROS of microarena's own
# platform, boards/platform/builder/main.py): without them its objects are the same for every
# board of one core and flags, so the platform's object cache shares them between boards.
env.Replace(BOARD_MACROS=[])
