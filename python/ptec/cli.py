"""Command line: `python3 -m ptec inspect FILE.pte` and
`python3 -m ptec compile MODEL ...`."""
from __future__ import annotations

import argparse
import sys


def _inspect(args) -> int:
    from .pte.inspect import describe
    from .pte.reader import PteError, parse_program, read_header
    status = 0
    for path in args.files:
        with open(path, "rb") as f:
            data = f.read()
        try:
            header = read_header(data)
            program = parse_program(data)
        except PteError as e:
            print(f"{path}: {e}", file=sys.stderr)
            status = 1
            continue
        if args.json:
            import json
            from .pte.jsonview import to_flatc_json
            print(json.dumps(to_flatc_json(program), indent=2))
        else:
            print(describe(program, header, path))
    return status


def _compile(args) -> int:
    from .compiler import CompileError, compile_cli
    try:
        return compile_cli(args)
    except CompileError as e:
        print(f"ptec compile: error: {e}", file=sys.stderr)
        return 2


def _evaluate(args) -> int:
    from .evaluate import evaluate_cli
    return evaluate_cli(args)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m ptec")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("inspect", help="print the contents of .pte files")
    p.add_argument("files", nargs="+")
    p.add_argument("--json", action="store_true",
                   help="print the program as flatc --json --defaults-json would")
    p.set_defaults(func=_inspect)
    e = sub.add_parser("evaluate", help="compile zoo models and check them on the C runtime: "
                                        "bit-exactness, cosine similarity to float, memory, accuracy")
    e.add_argument("models", nargs="*", help="zoo names (default: the whole zoo)")
    e.add_argument("--inputs", type=int, default=20, help="inputs per model (default 20)")
    e.add_argument("--target", default="cortex-m55", choices=["cortex-m55", "cortex-m33"])
    e.add_argument("--ptec-run", help="the host runtime CLI (default: build/host/tools/ptec-run/ptec-run)")
    e.set_defaults(func=_evaluate)
    c = sub.add_parser("compile", help="compile a PyTorch model to an int8 .pte")
    c.add_argument("model", help="zoo name (see --list) or path/to/file.py:factory")
    c.add_argument("--calib", default="32",
                   help="calibration: a number of samples, or a directory of .npy/.bin files")
    c.add_argument("--target", default="cortex-m55", choices=["cortex-m55", "cortex-m33"])
    c.add_argument("-o", "--output", required=False)
    c.add_argument("--header", help="also write the program as a C array (FILE.h + FILE.c)")
    c.add_argument("--section", default=".ptec_model",
                   help="linker section of the --header array (default .ptec_model, which "
                        "the board linker scripts place in flash)")
    c.add_argument("--kernel-list", metavar="FILE.def",
                   help="also write a PTEC_KERNEL_LIST selecting only this program's kernels")
    c.add_argument("--int8-io", action="store_true",
                   help="int8 inputs and outputs (no quantize/dequantize at the edges)")
    c.add_argument("--observer", default="minmax", choices=["minmax", "percentile"],
                   help="activation range observer")
    c.add_argument("--percentile", type=float, default=99.99)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--list", action="store_true", help="list the model zoo and exit")
    c.set_defaults(func=_compile)
    args = ap.parse_args(argv)
    return args.func(args)
