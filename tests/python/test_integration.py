"""ptec inside a user's build (docs/integration.md): examples/hello, the
README's C program, built out of tree against the installed package
(find_package and pkg-config), as a CMake subproject and from the `make dist`
source drop with a plain Makefile, on the host and on the emulated
Cortex-M55; each prints what the numpy reference interpreter computes for
its input, and the RAM it reserved is what ptec.requirements gives for that
build. Also the Zephyr module's structure. Skipped (a failure under
PTEC_STRICT) when cmake, the cross compiler or QEMU is missing."""
import os
import shutil
import subprocess

import numpy as np
import pytest
import yaml

from conftest import ROOT
from ptec.compiler import compile_model
from ptec.emit import write_c_array
from ptec.interpreter import run_program
from ptec.models import load_model
from ptec.pte import parse_program
from ptec.requirements import requirements

HELLO = os.path.join(ROOT, "examples", "hello")
TOOLCHAIN = os.path.join(ROOT, "cmake", "arm-none-eabi.cmake")
CROSS = ["-DCMAKE_TOOLCHAIN_FILE=" + TOOLCHAIN, "-DTARGET_CPU=cortex-m55", "-DCMAKE_BUILD_TYPE=MinSizeRel"]


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(cmd)}:\n{r.stdout[-3000:]}"
    return r.stdout


def need(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip("missing " + ", ".join(missing))


def image():
    """main.c's input: an 8x8 "1", a vertical stroke."""
    x = np.zeros((1, 1, 8, 8), np.float32)
    x[0, 0, 1:7, 4] = 16.0
    x[0, 0, 1:7, 3] = 8.0
    return x


def fixed(v):
    """main.c's print_fixed, in float32 as the C does it."""
    v = np.float32(v)
    half = np.float32(-0.5) if v < 0 else np.float32(0.5)
    milli = int(np.float32(v * np.float32(1000.0)) + half)
    return f"{'-' if milli < 0 else ''}{abs(milli) // 1000}.{abs(milli) % 1000:03d}"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("model")
    m = load_model("digits_cnn")
    res = compile_model(m.module, m.example_inputs, m.calibration(8))
    write_c_array(res.data, str(d / "model.h"))
    program = parse_program(res.data)
    scores = run_program(program, [image()])[0].ravel()
    text = "scores: " + " ".join(fixed(s) for s in scores) + f"\nclass {int(np.argmax(scores))}, "
    return d, program, text


def expected(model, target):
    _, program, text = model
    return text + f"{requirements(program, target=target).total_bytes} bytes of RAM\n"


@pytest.fixture(scope="module")
def installs(tmp_path_factory):
    """{build: (build dir, install prefix)}, built once each, on first use."""
    root = tmp_path_factory.mktemp("installs")
    made = {}

    def get(kind):
        if kind not in made:
            need("cmake")
            b, prefix = root / f"b-{kind}", root / f"prefix-{kind}"
            extra = CROSS if kind == "cortex-m55" else ["-DCMAKE_BUILD_TYPE=Release"]
            run(["cmake", "-S", ROOT, "-B", str(b), "-DPTEC_BUILD_HOST_TOOLS=OFF", "-DPTEC_BUILD_TESTS=OFF",
                 "-DPTEC_BUILD_FIRMWARE=OFF", f"-DCMAKE_INSTALL_PREFIX={prefix}",
                 f"-DPTEC_DIST_DIR={root / ('dist-' + kind)}"] + extra)
            run(["cmake", "--build", str(b), "-j2"])
            run(["cmake", "--install", str(b)])
            made[kind] = (b, prefix)
        return made[kind]
    return get


def on_board(elf):
    need("qemu-system-arm", "arm-none-eabi-gcc")
    return run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", "cortex-m55", "--elf", str(elf),
                "--timeout", "60"])


def test_find_package_host(tmp_path, model, installs):
    _, prefix = installs("host")
    b = tmp_path / "b"
    run(["cmake", "-S", HELLO, "-B", str(b), f"-DMODEL_DIR={model[0]}", f"-DCMAKE_PREFIX_PATH={prefix}"])
    run(["cmake", "--build", str(b)])
    assert run([str(b / "hello")]) == expected(model, "host")


def test_pkg_config_makefile_host(tmp_path, model, installs):
    need("pkg-config", "make")
    _, prefix = installs("host")
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    run(["make", "-s", "-C", HELLO, f"MODEL_DIR={model[0]}", f"OUT={tmp_path}"], env=env)
    assert run([str(tmp_path / "hello")]) == expected(model, "host")


def test_add_subdirectory_builds_only_the_libraries(tmp_path, model):
    need("cmake")
    b = tmp_path / "b"
    run(["cmake", "-S", HELLO, "-B", str(b), f"-DMODEL_DIR={model[0]}", f"-DPTEC_SOURCE_DIR={ROOT}"])
    targets = [line[4:] for line in run(["cmake", "--build", str(b), "--target", "help"]).splitlines()
               if line.startswith("... ")]
    assert "hello" in targets and "ptec_runtime" in targets, targets
    assert not [t for t in targets if t.startswith(("ptec-run", "ptec_runner", "test_", "ptec_smoke", "bench"))], \
        targets
    run(["cmake", "--build", str(b), "-j2"])
    assert run([str(b / "hello")]) == expected(model, "host")


def test_source_drop_makefile_host(tmp_path, model, installs):
    need("make")
    b, _ = installs("host")
    run(["cmake", "--build", str(b), "--target", "ptec_dist"])
    drop = next((b.parent / "dist-host").iterdir())
    for f in ["ptec.mk", "ptec.cmake", "files.txt", "config/ptec_user_config.h", "include/ptec/ptec.h"]:
        assert (drop / f).exists(), f
    run(["make", "-s", "-j2", "-C", HELLO, f"PTEC_DIST={drop}", f"MODEL_DIR={model[0]}", f"OUT={tmp_path}"])
    assert run([str(tmp_path / "hello")]) == expected(model, "host")


def test_find_package_cortex_m55(tmp_path, model, installs):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    _, prefix = installs("cortex-m55")
    b = tmp_path / "b"
    run(["cmake", "-S", HELLO, "-B", str(b), f"-DMODEL_DIR={model[0]}", f"-DCMAKE_PREFIX_PATH={prefix}"] + CROSS)
    run(["cmake", "--build", str(b)])
    assert on_board(b / "hello.elf").endswith(expected(model, "cortex-m55"))


def test_source_drop_makefile_cortex_m55(tmp_path, model, installs):
    need("arm-none-eabi-gcc", "qemu-system-arm", "make")
    b, _ = installs("cortex-m55")
    run(["cmake", "--build", str(b), "--target", "ptec_dist"])
    drop = next((b.parent / "dist-cortex-m55").iterdir())
    run(["make", "-s", "-j2", "-C", HELLO, f"PTEC_DIST={drop}", f"MODEL_DIR={model[0]}", f"OUT={tmp_path}",
         "CC=arm-none-eabi-gcc"])
    assert on_board(tmp_path / "hello").endswith(expected(model, "cortex-m55"))


def test_zephyr_module_structure(tmp_path, installs):
    """No Zephyr here: module.yml names files that exist, every CONFIG_ the
    CMake file reads is a Kconfig symbol, and the CMake file, run with
    stand-ins for Zephyr's functions, compiles the same library sources as
    ptec's own build (its source drop's list)."""
    need("cmake")
    z = os.path.join(ROOT, "zephyr")
    with open(os.path.join(z, "module.yml")) as f:
        module = yaml.safe_load(f)
    assert module["name"] == "ptec"
    assert os.path.isfile(os.path.join(ROOT, module["build"]["cmake"], "CMakeLists.txt"))
    kconfig_path = os.path.join(ROOT, module["build"]["kconfig"])
    with open(kconfig_path) as f:
        kconfig = f.read()
    symbols = set(__import__("re").findall(r"^(?:config|choice) (\w+)", kconfig, __import__("re").M))
    with open(os.path.join(z, "CMakeLists.txt")) as f:
        used = set(__import__("re").findall(r"CONFIG_(\w+)", f.read()))
    assert used - {"NEWLIB_LIBC"} <= symbols, used - symbols
    stub = tmp_path / "stub.cmake"
    out = tmp_path / "sources.txt"
    stub.write_text(
        f'set(CONFIG_PTEC y)\nset(CONFIG_PTEC_KERNEL_VARIANT_CORE y)\nset(CONFIG_PTEC_ERROR_MESSAGES y)\n'
        f'set(CONFIG_PTEC_KERNEL_LIST "")\nset(ZEPHYR_CURRENT_MODULE_DIR "{ROOT}")\n'
        'foreach(f zephyr_library_named zephyr_include_directories zephyr_library_include_directories '
        'zephyr_library_compile_definitions zephyr_library_link_libraries_ifdef)\n'
        '  cmake_language(EVAL CODE "function(${f})\\nendfunction()")\nendforeach()\n'
        f'function(zephyr_library_sources)\n  file(APPEND "{out}" "$<SEMICOLON>${{ARGN}}")\nendfunction()\n'
        .replace("$<SEMICOLON>", ";") +
        f'include("{z}/CMakeLists.txt")\n')
    run(["cmake", "-P", str(stub)])
    zephyr_sources = {os.path.relpath(p, ROOT) for p in out.read_text().split(";") if p}
    b, _ = installs("host")
    run(["cmake", "--build", str(b), "--target", "ptec_dist"])
    drop = next((b.parent / "dist-host").iterdir())
    drop_sources = set((drop / "files.txt").read_text().split()) - {"boards/host/host_platform.c"}
    assert zephyr_sources == drop_sources, (zephyr_sources ^ drop_sources)


def test_header_sizes_are_exact_on_the_board(tmp_path, model, installs):
    """examples/hello sizes its one buffer with the header's
    MODEL_PTE_TOTAL_BYTES: it loads on the M55 (above); with the same macro
    one byte smaller the load fails, naming the shortfall."""
    need("arm-none-eabi-gcc", "qemu-system-arm")
    _, prefix = installs("cortex-m55")
    short = tmp_path / "model"
    short.mkdir()
    header = (model[0] / "model.h").read_text()
    total = "#define MODEL_PTE_TOTAL_BYTES ("
    assert total in header
    (short / "model.h").write_text(header.replace(total, "#define MODEL_PTE_TOTAL_BYTES (-1 + ", 1))
    shutil.copy(model[0] / "model.c", short / "model.c")
    b = tmp_path / "b"
    run(["cmake", "-S", HELLO, "-B", str(b), f"-DMODEL_DIR={short}", f"-DCMAKE_PREFIX_PATH={prefix}"] + CROSS)
    run(["cmake", "--build", str(b)])
    r = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", "cortex-m55", "--elf",
                        str(b / "hello.elf"), "--timeout", "60"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    assert r.returncode == 1 and "short by 1" in r.stdout, r.stdout
