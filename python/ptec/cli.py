"""Command line: `python3 -m ptec inspect FILE.pte`, `python3 -m ptec compile
MODEL ...`, `python3 -m ptec import-tflite MODEL.tflite -o MODEL.pte` and
`python3 -m ptec evaluate [MODEL ...]`.

The error contract (docs/aot.md): a mistake in the command, a model file or
its data exits with status 2 and one line on stderr that names the problem
and what to do; no traceback unless --debug; no output file left behind.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import traceback
import warnings

from .backends.ethos_u.npu_config import DEFAULT_FAST_SCRATCH, MEMORY_MODES, NPU_TARGETS
from .targets import CORES


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line, like every other ptec error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def one_line(e: BaseException) -> str:
    """The exception as one line. ptec's own errors are written for the user;
    anything else (a bug, or a library's error) is named by its type."""
    text = " ".join(str(e).split())
    if type(e).__module__.split(".")[0] == "ptec":
        return text
    return (f"{type(e).__name__}: {text} (--debug shows the traceback)" if text
            else f"{type(e).__name__} (--debug shows the traceback)")


def _inspect(args) -> int:
    from .pte.inspect import describe
    from .pte.reader import parse_program, read_header
    status = 0
    for path in args.files:
        kind = ".pte"
        try:
            with open(path, "rb") as f:
                data = f.read()
            if data[4:8] == b"TFL3" and not args.json:
                kind = ".tflite"
                from .tflite.describe import describe_model
                from .tflite.reader import parse_model
                print(describe_model(parse_model(data), path, len(data), args.commands))
                continue
            header = read_header(data)
            program = parse_program(data)
            if args.requirements:
                from .requirements import describe as describe_requirements, requirements
                names = [plan.name for plan in program.execution_plan or []]
                method = args.method or ("forward" if "forward" in names or not names else names[0])
                r = requirements(program, method, args.target, args.fast_scratch)
                if args.json:
                    import json
                    text = json.dumps({"file": path, "method": method, **r.as_dict()})
                else:
                    text = f"{path}:\n" + describe_requirements(r, method)
            elif args.json:
                import json
                from .pte.jsonview import to_flatc_json
                text = json.dumps(to_flatc_json(program), indent=2)
            else:
                text = describe(program, header, path)
                from .backends.ethos_u.inspect import describe_delegates
                extra = describe_delegates(program, commands=args.commands)
                if extra:
                    text += "\n" + extra
        except OSError as e:
            if args.debug:
                traceback.print_exc()
            print(f"ptec inspect: error: {path}: cannot read: {e.strerror or e}", file=sys.stderr)
            status = 2
            continue
        except Exception as e:     # noqa: BLE001 - a hostile file must not end in a traceback
            if args.debug:
                traceback.print_exc()
            print(f"ptec inspect: error: {path}: not a valid {kind}: {one_line(e)}", file=sys.stderr)
            status = 2
            continue
        print(text)
    return status


class CliError(ValueError):
    """A bad command line; the message is one line."""


def _calib_option(value: str):
    """--calib N (samples from the model's calibration data) or --calib DIR."""
    if os.path.isdir(value):
        return value
    try:
        n = int(value)
    except ValueError:
        raise CliError(f"--calib {value!r}: not a number of samples and not a directory "
                       "(give e.g. --calib 32 or --calib calib_dir/)") from None
    if n < 1:
        raise CliError(f"--calib {n}: needs at least 1 sample (e.g. --calib 32)")
    return n


def _compile(args) -> int:
    """Checks everything it can before importing torch and compiling, so that
    a typo costs a fraction of a second."""
    from .output_files import OutputFiles
    if args.list:
        from .models import ZOO
        for name, e in ZOO.items():
            print(f"{name:20s} {e.description}")
        return 0
    if not args.output:
        raise CliError("-o/--output is required (e.g. -o model.pte)")
    if args.observer == "percentile" and not 50.0 < args.percentile <= 100.0:
        raise CliError(f"--percentile {args.percentile:g}: must be above 50 and at most 100 "
                       "(e.g. 99.99)")
    calib_option = _calib_option(args.calib)
    if args.target in NPU_TARGETS and args.stateful:
        raise CliError("--stateful is for the Cortex-M kernels: state tensors are not placed on the "
                       "Ethos-U yet (drop --stateful, or give a cortex-m --target)")
    if args.target in NPU_TARGETS and args.w4:
        raise CliError("--w4 is for the Cortex-M kernels: the Ethos-U compiler stores 8-bit weights "
                       "(drop --w4, or give a cortex-m --target)")
    if args.target in NPU_TARGETS and (args.a16 or args.a16_layers is not None):
        raise CliError("--a16 is for the Cortex-M kernels: the Ethos-U compiler runs int8 activations "
                       "(drop --a16, or give a cortex-m --target)")
    if args.a16 and args.a16_layers is not None:
        raise CliError("--a16 (every layer) and --a16-layers (some layers): give one of them")
    if args.a16_layers is not None and not [p for p in args.a16_layers.split(",") if p.strip()]:
        raise CliError("--a16-layers takes module paths, e.g. --a16-layers features.3,classifier")
    if args.target not in NPU_TARGETS and (args.cpu or args.placement or args.fast_scratch is not None):
        raise CliError(f"--cpu, --placement and --fast-scratch go with an Ethos-U --target (one of "
                       f"{', '.join(NPU_TARGETS)}), not {args.target}")
    if args.fast_scratch is not None and args.memory_mode != "Dedicated_Sram":
        raise CliError("--fast-scratch sizes the Dedicated_Sram fast scratch: add "
                       "--memory-mode Dedicated_Sram")
    if args.header and not re.fullmatch(r"[A-Za-z0-9_.$]+", args.section):
        raise CliError(f"--section {args.section!r}: not a linker section name (letters, "
                       "digits, '_', '.', '$'; e.g. .ptec_model)")

    def log(msg):       # stdout: stderr carries nothing but an error
        print(f"[ptec] {msg}", flush=True)

    def show_warning(message, category, filename, lineno, file=None, line=None):
        log(f"{category.__name__}: {' '.join(str(message).split())}")
    warnings.showwarning = show_warning
    with OutputFiles() as out:
        out.claim(args.output, "-o")
        if args.header:
            from .emit import c_array_path
            out.claim(args.header, "--header")
            out.claim(c_array_path(args.header), "--header")
        if args.kernel_list:
            out.claim(args.kernel_list, "--kernel-list")
        if args.placement:
            out.claim(args.placement, "--placement")
        wrote = _compile_into(args, calib_option, out, log)
    for w in wrote:         # only now are they in place
        log(f"wrote {w}")
    return 0


def _a16_choice(args):
    """--a16: every layer (True); --a16-layers a,b: those module paths."""
    if args.a16:
        return True
    if args.a16_layers is None:
        return None
    return [p.strip() for p in args.a16_layers.split(",") if p.strip()]


def _compile_into(args, calib_option, out, log):
    import torch
    from . import emit
    from .calibration import check_samples, load_directory
    from .compiler import CompileError, compile_model
    from .models import load_model
    from .quantize import QuantConfig
    torch.manual_seed(args.seed)
    # the NPU first: a configuration it refuses is reported before any model work
    backends, npu = None, None
    if args.target in NPU_TARGETS:
        from .backends.cortex_m import CortexMBackend
        from .backends.ethos_u.backend import EthosUBackend
        from .backends.portable import PortableBackend
        npu = EthosUBackend(args.target, args.memory_mode,
                            DEFAULT_FAST_SCRATCH if args.fast_scratch is None else args.fast_scratch)
        args.target = args.cpu or npu.cfg.default_cpu
        backends = [npu, CortexMBackend(), PortableBackend()]
        log(f"Ethos-U {npu.cfg.name} ({args.memory_mode}) beside a {args.target}")
    model = load_model(args.model)
    log(f"model {model.name}: inputs {[tuple(x.shape) for x in model.example_inputs]}")
    if isinstance(calib_option, str):
        calib = load_directory(calib_option, model.example_inputs)
    else:
        calib = check_samples(model.calibration(calib_option, args.seed), model.example_inputs,
                              lambda i: f"sample {i} of the model's calibration data")
    log(f"calibrating on {len(calib)} samples ({args.observer})")
    if not isinstance(calib_option, str) and model.calibration_is_noise:
        log("note: calibrating on random inputs (the model has no calibration_data method and "
            "--calib names no folder): int8 ranges from noise, poor accuracy on real data; "
            "see examples/my_model.py")
    cfg = QuantConfig(observer=args.observer, percentile=args.percentile)
    res = compile_model(model.module, model.example_inputs, calib, args.target, args.int8_io,
                        cfg, name=model.name, log=log, backends=backends, w4=args.w4,
                        int8_layernorm=args.int8_layernorm, a16=_a16_choice(args),
                        stateful=args.stateful, unrolled_lstm=args.unrolled_lstm,
                        ptec_runtime_only=args.ptec_runtime_only, in_place=args.in_place,
                        random_seed=args.seed, fuse_expansion=args.fuse_expansion)
    with out.open(args.output, "wb") as f:
        f.write(res.data)
    if npu is not None:
        from .backends.ethos_u.npu_report import network_summary, placement_table
        for line in network_summary(res, npu, args.target):
            log(line)
        if args.placement:
            with out.open(args.placement, "w") as f:
                f.write("\n".join(network_summary(res, npu, args.target) + [""]
                                  + placement_table(res, npu)) + "\n")
    for io in res.lowered.inputs:
        q = f" scale {io.scale:.9g} zero_point {io.zero_point}" if io.scale is not None else ""
        log(f"input  {io.name}: {io.dtype} {io.sizes} dim_order {io.dim_order}{q}")
    for io in res.lowered.outputs:
        q = f" scale {io.scale:.9g} zero_point {io.zero_point}" if io.scale is not None else ""
        log(f"output {io.name}: {io.dtype} {io.sizes}{q}"
            + (" at most: each run sets its length" if io.bound else ""))
    from .pte.reader import parse_program
    from .requirements import RequirementsError, requirements
    try:
        need = requirements(parse_program(res.data), target=args.target)
        ram = (f"; loading needs {need.total_bytes} bytes of RAM: activations {sum(need.planned_bytes)}, "
               f"metadata {need.metadata_bytes}, scratch {need.scratch_bytes}")
    except RequirementsError as e:      # the summary only: the program itself is fine
        ram = f"; RAM not computed: {e}"
    wrote = [f"{args.output} ({len(res.data)} bytes, target {args.target}{ram})"]
    if args.placement:
        wrote.append(f"{args.placement} (placement of every operator)")
    if args.kernel_list:
        from .ops import kernel_list_def
        try:
            text = kernel_list_def(res.lowered.operators)
        except KeyError as e:
            raise CompileError(f"--kernel-list: {e.args[0]} (python/ptec/operators.json "
                               "lists the kernels ptec has)") from e
        with out.open(args.kernel_list, "w") as f:
            f.write(text)
        wrote.append(f"{args.kernel_list} ({len(set(res.lowered.operators))} kernels)")
    if args.header:
        c_path = emit.write_c_array(res.data, args.header, section=args.section, open_file=out.open)
        wrote.append(f"{args.header} and {c_path}")
    return wrote


def _evaluate(args) -> int:
    from .evaluate import evaluate_cli
    return evaluate_cli(args)


def _import_tflite(args) -> int:
    """A .tflite as a .pte: a Vela model on the EthosU delegate, any other
    on the cortex_m operators (docs/tflite-import.md)."""
    from .output_files import OutputFiles
    from .tflite import import_tflite, is_vela_model, read_model
    model = read_model(args.model)
    with OutputFiles() as out:
        out.claim(args.output, "-o")
        data = import_tflite(model, target=args.target)
        fast = 0
        if is_vela_model(model):
            from .backends.ethos_u.vela_import import fast_scratch_bytes
            fast = fast_scratch_bytes(model)
        with out.open(args.output, "wb") as f:
            f.write(data)
    print(f"wrote {args.output} ({len(data)} bytes)")
    if fast:
        print(f"note: the command stream uses the NPU's fast scratch (region 2): build "
              f"with PTEC_ETHOSU_FAST_SCRATCH_BYTES >= {fast}")
    return 0


def _report(args) -> int:
    """The HTML report of a program (ptec.report)."""
    from .output_files import OutputFiles
    from .report import write_report
    with OutputFiles() as out:
        out.claim(args.output, "-o")
        write_report(args.program, args.output, args.profile, args.target, args.board, open_file=out.open,
                     placement_path=args.placement)
    print(f"wrote {args.output}")
    return 0


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python3 -m ptec")
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true",
                        help="on an error, also print the Python traceback")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    p = sub.add_parser("inspect", parents=[common],
                       help="print the contents of .pte files (and of .tflite models)")
    p.add_argument("files", nargs="+")
    p.add_argument("--json", action="store_true",
                   help="print the program as flatc --json --defaults-json would")
    p.add_argument("--commands", action="store_true",
                   help="also list every command of an Ethos-U delegate's command stream")
    p.add_argument("--requirements", action="store_true",
                   help="print the exact bytes per memory region the runtime will ask for "
                        "(with --json: as JSON)")
    p.add_argument("--target", default="cortex-m55", choices=("host",) + tuple(CORES),
                   help="the build --requirements is for: a core, or host (64-bit); default cortex-m55")
    p.add_argument("--method", help="the method --requirements is for (default forward, else the first)")
    p.add_argument("--fast-scratch", type=int, default=0, metavar="BYTES",
                   help="the build's PTEC_ETHOSU_FAST_SCRATCH_BYTES, for --requirements (default 0)")
    p.set_defaults(func=_inspect)
    e = sub.add_parser("evaluate", parents=[common],
                       help="compile zoo models and check them on the C runtime: "
                            "bit-exactness, cosine similarity to float, memory, accuracy")
    e.add_argument("models", nargs="*",
                   help="zoo names or path/to/model.py:factory (default: the whole zoo)")
    e.add_argument("--inputs", type=int, default=20, help="inputs per model (default 20)")
    e.add_argument("--target", default="cortex-m55", choices=CORES)
    e.add_argument("--ptec-run", help="the host runtime CLI (default: build/host/tools/ptec-run/ptec-run)")
    e.set_defaults(func=_evaluate)
    c = sub.add_parser("compile", parents=[common], help="compile a PyTorch model to an int8 .pte")
    c.add_argument("model", help="zoo name (see --list) or path/to/file.py:factory")
    c.add_argument("--calib", default="32",
                   help="calibration: a number of samples, or a directory with one sample per "
                        ".npy (numpy.save), .npz (numpy.savez, one array per input) or .bin "
                        "(raw float32) file")
    c.add_argument("--target", default="cortex-m55", choices=tuple(CORES) + NPU_TARGETS,
                   help="a Cortex-M core, or an Ethos-U NPU (its operators run on the NPU, "
                        "the rest on --cpu); default cortex-m55")
    c.add_argument("--cpu", choices=CORES,
                   help="with an Ethos-U --target: the core beside it (default cortex-m55 "
                        "for a U55, cortex-m33 for a U65, as on the i.MX93)")
    c.add_argument("--memory-mode", default="Shared_Sram", choices=MEMORY_MODES,
                   help="with an Ethos-U --target: Vela's memory mode (default Shared_Sram)")
    c.add_argument("--fast-scratch", type=int, metavar="BYTES",
                   help="with --memory-mode Dedicated_Sram: the fast scratch the NPU's weights "
                        f"are copied into (default {DEFAULT_FAST_SCRATCH}, Vela's 384 KiB)")
    c.add_argument("--placement", metavar="FILE.txt",
                   help="with an Ethos-U --target: also write the placement of every operator")
    c.add_argument("-o", "--output", required=False)
    c.add_argument("--header", help="also write the program as a C array (FILE.h + FILE.c)")
    c.add_argument("--section", default=".ptec_model",
                   help="linker section of the --header array (default .ptec_model, which "
                        "the board linker scripts place in flash)")
    c.add_argument("--kernel-list", metavar="FILE.def",
                   help="also write a PTEC_KERNEL_LIST selecting only this program's kernels")
    c.add_argument("--int8-io", action="store_true",
                   help="int8 inputs and outputs (no quantize/dequantize at the edges)")
    c.add_argument("--w4", action="store_true",
                   help="4-bit weights for linear and conv layers (CMSIS-NN's s4 kernels; half the "
                        "weight bytes; the program then runs on ptec's runtime only)")
    c.add_argument("--a16", action="store_true",
                   help="16-bit activations with 8-bit weights (CMSIS-NN's s16 kernels) for every layer "
                        "that has an int16 kernel; the program then runs on ptec's runtime only")
    c.add_argument("--a16-layers", metavar="PATHS",
                   help="16-bit activations only for the layers under these comma-separated module paths "
                        "(e.g. features.3,classifier); the others stay int8")
    c.add_argument("--int8-layernorm", action="store_true",
                   help="nn.LayerNorm in int8 with ptec's integer kernel instead of fp32 (the program "
                        "then runs on ptec's runtime only)")
    c.add_argument("--stateful", action="store_true",
                   help="nn.GRU / nn.LSTM keep their hidden (and cell) state from one execute to the "
                        "next, in planned memory with an initial value of zero (the .pte's mutable "
                        "data): stream a long sequence in chunks; ptec_method_reset_state restarts")
    c.add_argument("--unrolled-lstm", action="store_true",
                   help="nn.LSTM unrolled over its steps into upstream's int8 operators, every state int8 (with "
                        "--stateful its kept h and c float32, its hidden steps fp32) "
                        "(by default each layer is one ptec::quantized_lstm, CMSIS-NN's LSTM numerics with an "
                        "int16 cell, which runs on ptec's runtime only)")
    c.add_argument("--ptec-runtime-only", action="store_true",
                   help="plan no scratch for upstream's CMSIS-NN kernels (ptec's kernels use the runtime's "
                        "scratch region): less planned memory, e.g. the DS-CNN on the M55; convolutions, "
                        "average pools and batch matmuls are then called by their ptec:: names, so the program "
                        "runs on ptec's runtime only")
    c.add_argument("--in-place", action="store_true",
                   help="with --ptec-runtime-only (implied): a depthwise or 1x1 layer whose input dies there "
                        "writes its output over it, e.g. the DS-CNN in about half its activations' liveness "
                        "bound, for about 10%% more instructions")
    c.add_argument("--fuse-expansion", action="store_true",
                   help="with --ptec-runtime-only (implied): a 1x1 expansion and the depthwise after it (an "
                        "inverted-residual block) run as one call that expands a few rows at a time, so the "
                        "expanded tensor is never planned, e.g. MobileNet-V2")
    c.add_argument("--observer", default="minmax", choices=["minmax", "percentile"],
                   help="activation range observer")
    c.add_argument("--percentile", type=float, default=99.99)
    c.add_argument("--seed", type=int, default=0,
                   help="seeds the calibration's random inputs and the streams of the layers that draw random "
                        "numbers on the device (random dropout, FractionalMaxPool without samples)")
    c.add_argument("--list", action="store_true", help="list the model zoo and exit")
    c.set_defaults(func=_compile)
    r = sub.add_parser("report", parents=[common],
                       help="write one self-contained HTML page: memory timeline, cost per operator, "
                            "placement with PyTorch module names, memory per region")
    r.add_argument("program", help="the .pte")
    r.add_argument("-o", "--output", required=True, help="the .html to write")
    r.add_argument("--profile", help="ptec-run --profile --json output, or a firmware runner log")
    r.add_argument("--placement", metavar="FILE.txt",
                   help="the placement `compile --target ethos-u... --placement` wrote: shown on the page")
    r.add_argument("--target", default="cortex-m55", choices=("host",) + tuple(CORES),
                   help="the build whose memory requirements to show (default cortex-m55)")
    from .report import BOARDS
    r.add_argument("--board", choices=sorted(BOARDS),
                   help="compare the RAM and program bytes with this board's budget")
    r.set_defaults(func=_report)
    t = sub.add_parser("import-tflite", parents=[common],
                       help="convert a .tflite (int8, or Vela-compiled) to a .pte")
    t.add_argument("model", help="path/to/model.tflite")
    t.add_argument("-o", "--output", required=True)
    t.add_argument("--target", default="cortex-m55", choices=CORES,
                   help="the ISA the scratch buffers are sized for (int8 models)")
    t.set_defaults(func=_import_tflite)
    return ap


def _terminated(signum, frame):
    raise SystemExit(128 + signum)      # unwinds, so OutputFiles removes its temporaries


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print(f"ptec {args.cmd}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:     # noqa: BLE001 - the contract: one line, exit 2
        if args.debug:
            traceback.print_exc()
        print(f"ptec {args.cmd}: error: {one_line(e)}", file=sys.stderr)
        return 2
