# SCons build script of the project-local "microarena" PlatformIO platform.
#
# Builds one firmware image for the board of the environment with the system arm-none-eabi-gcc:
#   boards/common (start-up, printing, semihosting or not) + boards/<board>/ (UART, clock)
#   + the application from firmware/apps/<custom_app> (model | probe | hello)
#   + for the model and probe applications: the runtime (sources and flags from firmware/build.mk)
#   + for the model application: the model chosen by custom_model, converted to C at build time
#     by apps/model/embed_model.py; with custom_plan = best|greedy a model without an offline plan
#     first gets one from host.plan (a plan it carries is kept; custom_plan = replace re-plans).
# Objects are shared between builds through an object cache (ObjectCache below).
# `-t upload` on an emulated board runs the image on QEMU (python -m host.emulate).
# Environment variables MICROARENA_APP, _MODEL and _PLAN override the options, so tests
# can build variants without editing platformio.ini (they also set PLATFORMIO_BUILD_DIR).

import os
import sys

from SCons.CacheDir import CacheDir
from SCons.Script import AlwaysBuild, Default, DefaultEnvironment
from SCons.Util import hash_collect

env = DefaultEnvironment()
board = env.BoardConfig()
board_id = env.subst("$BOARD")
project_dir = env.subst("$PROJECT_DIR")
sys.path.insert(0, project_dir)  # a checkout's host package; an installed one is found anyway
# A user's project names this platform in a microarena checkout (symlink://<it>/boards/platform,
# examples/platformio): that checkout's host package.
platform_tree = os.path.dirname(os.path.dirname(os.path.realpath(env.PioPlatform().get_dir())))
if os.path.isdir(os.path.join(platform_tree, "host")):
    sys.path.insert(1, platform_tree)
from host.device.firmware import (  # noqa: E402
    board_defines,
    board_sources,
    machine_flags,
    memory_size_symbols,
    object_cache,
)
from host.paths import BOARDS, CHECKOUT, FIRMWARE  # noqa: E402
from host.runtime.sources import runtime_build  # noqa: E402

# The folders host/paths.py knows: the checkout's, or the installed package's data.
boards_root = str(BOARDS)
board_dir = os.path.join(boards_root, board_id)
common_dir = os.path.join(boards_root, "common")
firmware_dir = str(FIRMWARE)
# Python compiled the package's modules when pip installed it: write nothing into it.
sys.dont_write_bytecode = not CHECKOUT

runtime = runtime_build()
# A user's project builds its own src_dir, the runtime coming as a library (library.json);
# this repository's projects build firmware/apps/<custom_app>.
user_project = os.path.realpath(env.subst("$PROJECT_SRC_DIR")) != os.path.realpath(
    os.path.join(firmware_dir, "apps")
)


class ObjectCache(CacheDir):
    """Compiled objects shared by every image of a board: models, plans, applications.

    Each variant builds in its own folder (PLATFORMIO_BUILD_DIR), and SCons's own cache keys a
    file by its path, so the runtime would compile again for every model. An object is keyed
    here by what decides its bytes: the compile command (SCons leaves include paths out of it)
    and the contents of its source and of every header it includes. Only objects are cached:
    generated model sources and images depend on more than SCons sees.
    """

    def cachepath(self, node):
        if not self.is_enabled():
            return None, None
        sigs = [child.get_cachedir_csig() for child in node.children()]
        sigs += [node.get_contents_sig(), node.name]
        sig = hash_collect(sigs)
        folder = os.path.join(self.path, sig[: self.config["prefix_len"]].upper())
        return folder, os.path.join(folder, sig)

    def retrieve(self, node):
        return node.name.endswith(".o") and super().retrieve(node)

    def push(self, node):
        if node.name.endswith(".o"):
            return super().push(node)
        return None


def option(name, default=""):
    """A custom_* option of the environment, overridden by MICROARENA_<NAME> if set."""
    override = os.environ.get("MICROARENA_" + name.upper())
    if override:
        return override
    return env.GetProjectOption("custom_" + name, default)


def fail(message):
    sys.stderr.write(f"Error: {message}\n")
    env.Exit(1)


if not os.path.isdir(board_dir):
    fail(f"board '{board_id}' has no folder {board_dir}")

cache_dir = object_cache()
if cache_dir:
    try:  # a fresh clone has no build/ yet
        os.makedirs(cache_dir, exist_ok=True)
    except OSError as e:
        fail(
            f"cannot create the object cache {cache_dir} ({e.strerror}); "
            "set MICROARENA_BUILD_CACHE to a writable folder, or empty to build without it"
        )
    env.CacheDir(cache_dir, ObjectCache)

emulated = bool(board.get("build.semihosting", False))
facts = ("cpu", "fpu", "float_abi", "f_cpu", "uart_base", "uart")
board_build = {k: board.get("build." + k, "") for k in facts}
cpu_flags = machine_flags({k: v for k, v in board_build.items() if v})

env.Replace(
    AR="arm-none-eabi-gcc-ar",
    AS="arm-none-eabi-as",
    CC="arm-none-eabi-gcc",
    CXX="arm-none-eabi-g++",
    GDB="arm-none-eabi-gdb",
    OBJCOPY="arm-none-eabi-objcopy",
    RANLIB="arm-none-eabi-gcc-ranlib",
    SIZETOOL="arm-none-eabi-size",
    PROGNAME="firmware",
    PROGSUFFIX=".elf",
    SIZEPRINTCMD="$SIZETOOL -B -d $SOURCES",
    # Checked against upload.maximum_size: the code memory's sections (code, rodata, the model
    # unless the board keeps it apart in .model, data initialisers); against maximum_ram_size:
    # data + bss (the arena) + the stack. The linker checks the same figures (--defsym below).
    SIZECHECKCMD="$SIZETOOL -A -d $SOURCES",
    SIZEPROGREGEXP=r"^(?:\.isr_vector|\.text|\.rodata|\.ARM\.exidx|\.data)\s+(\d+)",
    SIZEDATAREGEXP=r"^(?:\.data|\.bss|\.stack)\s+(\d+)",
    LDSCRIPT_PATH=os.path.join(board_dir, board.get("build.ldscript", "link.ld")),
)

# The same warning and optimisation flags (firmware/build.mk) for board, application, runtime.
env.Append(
    ASFLAGS=cpu_flags,
    CCFLAGS=cpu_flags + [f for f in runtime.warn if f != "-std=c11"] + runtime.arm_flags,
    CFLAGS=["-std=c11"],
    CPPPATH=[common_dir, board_dir, os.path.join(firmware_dir, "include")],
    LINKFLAGS=cpu_flags
    + runtime.arm_link
    + [
        "-L" + common_dir,  # link.ld INCLUDEs sections.ld
        "-Wl,-Map," + os.path.join("$BUILD_DIR", "firmware.map"),
    ]
    + memory_size_symbols(lambda key: board.get(key, 0)),
    LIBS=["c", "m", "gcc"],
)
# The board's facts as macros, in BOARD_MACROS: board support and the application read them,
# the runtime none, so it builds without them (build_runtime) and its objects are the same for
# boards of one core and flags (mps2-an386, nrf52840_dk) and come from the object cache.
board_macros = [(k, v.replace('"', '\\"')) for k, v in board_defines(board_id, board_build)]
if emulated:
    board_macros.append("BOARD_EMULATED")
if option("profile", "0") == "1":  # the model application times each operator
    board_macros.append("MA_APP_PROFILE")
env.Replace(BOARD_MACROS=board_macros)
env["_CPPDEFFLAGS"] += " ${_defines(CPPDEFPREFIX, BOARD_MACROS, CPPDEFSUFFIX, __env__)}"

# Board support (host/device/firmware.py): start-up, printing, the UART, semihosting only
# where an emulator runs; a user's project also gets newlib's system calls (printf on the UART).
support = board_sources(board_id, board_build, emulated, hosted_c=user_project)
env.BuildSources(
    os.path.join("$BUILD_DIR", "boards"),
    boards_root,
    ["-<*>"] + [f"+<{os.path.relpath(p, boards_root)}>" for p in support],
)

app = option("app", "user" if user_project else "model")


def app_dir(name):
    return os.path.join(firmware_dir, "apps", name)


testing = "test" in env.GetBuildType()


REGISTRY = os.path.join("src", "kernels", "registry.c")


def build_runtime(ops_header):
    """The runtime. Only the kernel registry depends on the model: with ops_header (the
    generated model_ops.h) it keeps just the model's kernels, so every other object is the
    same for all models of a board and comes from the object cache."""
    env.Append(CPPPATH=[str(d) for d in runtime.include_dirs])
    sources = [str(p.relative_to(firmware_dir)) for p in runtime.sources]
    src_filter = ["-<*>"] + [f"+<{p}>" for p in sources if p != REGISTRY]
    variant = os.path.join("$BUILD_DIR", "runtime")
    # Without the board's macros; whatever env gets later applies as to every object.
    objects = [
        env.Object(n, BOARD_MACROS=[])
        for n in env.CollectBuildFiles(variant, firmware_dir, src_filter)
    ]
    env.Append(PIOBUILDFILES=objects)
    registry_env = env.Clone(BOARD_MACROS=[])
    if ops_header:
        name = os.path.basename(ops_header)
        registry_env.Append(CPPDEFINES=[("MA_SELECTED_OPS_H", f'\\"{name}\\"')])
    registry = registry_env.Object(
        os.path.join("$BUILD_DIR", "runtime", REGISTRY.replace(".c", ".o")),
        os.path.join(firmware_dir, REGISTRY),
    )
    if ops_header:
        # Generated at build time: SCons cannot scan for it before it exists.
        registry_env.Depends(registry, ops_header)
    env.Append(PIOBUILDFILES=registry)


def plan_model(path, gen_dir, planner):
    """The model with an offline memory plan embedded by host.plan (OfflineMemoryAllocation)."""
    planned = os.path.join(gen_dir, "planned", os.path.basename(path))
    env.Command(
        planned,
        path,
        env.VerboseAction(
            f'"$PYTHONEXE" -m host.plan "{path}" --embed -o "{planned}" '
            f"--kernels microarena --planner {planner} --replace-plan -q",
            f"Planning {os.path.basename(path)} ({planner})",
        ),
        ENV=dict(os.environ, PYTHONPATH=project_dir),
    )
    return planned


def keep_or_plan(path, gen_dir, choice):
    """The model to embed: as it is (keeping a plan it carries) or planned (host.plan)."""
    from host.planning.build_plan import build_plan_step
    from host.tflite.model import ModelError

    try:
        planner, says = build_plan_step(path, choice)
    except (ValueError, ModelError) as e:
        fail(str(e))
    print(f"Offline plan: {says}")
    return plan_model(path, gen_dir, planner) if planner else path


def build_model_sources():
    """Convert the model(s) to C (and the arena size) at build time; nothing is checked in."""
    models = option("model", "").replace(",", " ").split()
    if not models:
        fail("set custom_model = <file.tflite> in platformio.ini (or MICROARENA_MODEL)")
    paths = [m if os.path.isabs(m) else os.path.join(project_dir, m) for m in models]
    for path in paths:
        if not os.path.isfile(path):
            fail(f"model file not found: {path}")
    sys.path.insert(0, app_dir("model"))
    from embed_model import flash_problem

    flash_limit = int(board.get("upload.maximum_size", 0))
    model_limit = int(board.get("upload.maximum_model_size", 0))
    too_big = flash_problem(sum(os.path.getsize(p) for p in paths), flash_limit, model_limit)
    if too_big:
        names = ",".join(os.path.splitext(os.path.basename(p))[0] for p in paths)
        fail(f"model {names} does not fit board {board_id}: {too_big}")
    gen_dir = os.path.join(env.subst("$BUILD_DIR"), "model_src")
    paths = [keep_or_plan(path, gen_dir, option("plan", "none")) for path in paths]
    outputs = [os.path.join(gen_dir, f) for f in ("model_data.c", "model_config.h", "model_ops.h")]
    converter = os.path.join(app_dir("model"), "embed_model.py")
    ram_limit = int(board.get("upload.maximum_ram_size", 0))
    limits = (
        f"--flash-limit {flash_limit} --model-limit {model_limit} "
        f"--ram-limit {ram_limit} --board {board_id}"
    )
    quoted = " ".join(f'"{p}"' for p in paths)
    # Always run: the arena prediction depends on the runtime and host.runtime.arena, not only on
    # the model; embed_model.py leaves unchanged files alone, so nothing recompiles needlessly.
    generated = env.Command(
        outputs,
        paths + [converter],
        env.VerboseAction(
            f'"$PYTHONEXE" "{converter}" --out-dir "{gen_dir}" {limits} {quoted}',
            "Converting model(s) " + ", ".join(os.path.basename(p) for p in paths),
        ),
        ENV=dict(os.environ, PYTHONPATH=project_dir),
    )
    AlwaysBuild(generated)
    # Depend on the generated header from main.c without scanning a file that may not exist yet.
    env.Append(CPPPATH=[gen_dir])
    env.Depends(os.path.join("$BUILD_DIR", "src", "model", "main.o"), outputs[1])
    # The generated file does not exist yet when SCons reads this, so name its object directly.
    model_obj = env.Object(os.path.join("$BUILD_DIR", "model_obj", "model_data.o"), outputs[0])
    env.Append(PIOBUILDFILES=model_obj)
    return outputs[2]


if not testing and app != "user":
    if app not in ("model", "probe", "hello"):
        fail(f"custom_app must be 'model', 'probe' or 'hello', not '{app}'")
    env.Replace(SRC_FILTER=["-<*>", f"+<{app}/*.c>"])  # src_dir is firmware/apps
    if app == "model":
        ops_header = build_model_sources()
        # Only the kernels the model uses (custom_kernels = all keeps every one).
        build_runtime(ops_header if option("kernels", "model") == "model" else None)
    elif app == "probe":
        build_runtime(None)  # any model may arrive over the UART: every kernel

target_elf = env.BuildProgram()
# The memory map lives in the linker scripts: a change to them must relink.
env.Depends(target_elf, ["$LDSCRIPT_PATH", os.path.join(common_dir, "sections.ld")])
# A raw image per memory: a board that keeps the models apart (link.ld's .model section, far
# from the code: mps3-an547's SRAM at 0x01000000) gets them in a second file, since one image
# would span the gap between the two.
target_bin = env.Command(
    os.path.join("$BUILD_DIR", "${PROGNAME}.bin"),
    target_elf,
    env.VerboseAction("$OBJCOPY -O binary -R .model $SOURCES $TARGET", "Building $TARGET"),
)
env.Depends(target_bin, "checkprogsize")
if board.get("upload.maximum_model_size", 0):
    model_bin = env.Command(
        os.path.join("$BUILD_DIR", "${PROGNAME}-model.bin"),
        target_elf,
        env.VerboseAction("$OBJCOPY -O binary -j .model $SOURCES $TARGET", "Building $TARGET"),
    )
    target_bin = [target_bin, model_bin]

AlwaysBuild(env.Alias("size", target_elf, env.VerboseAction("$SIZEPRINTCMD", "Calculating size")))

if emulated:
    timeout = option("emulate_timeout", "60")
    upload_cmd = f'"$PYTHONEXE" -m host.emulate --board {board_id} --timeout {timeout} "$SOURCE"'
    upload = env.Alias(
        "upload",
        target_elf,
        env.VerboseAction(upload_cmd, "Running $SOURCE on QEMU " + board.get("build.qemu_machine")),
    )
else:
    upload = env.Alias(
        "upload",
        target_elf,
        env.VerboseAction(
            f'echo "Error: {board_id} is a real board: flash $SOURCE with a probe '
            '(none here)" && exit 1',
            "Upload",
        ),
    )
env["ENV"]["PYTHONPATH"] = os.pathsep.join([project_dir, platform_tree])
AlwaysBuild(upload)

Default([target_elf, target_bin])
