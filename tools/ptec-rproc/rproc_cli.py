"""ptec-rproc's commands (usage in the ptec-rproc script)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import remote_wire as wire
import rproc_checks
from rproc_elf import Elf, ElfError, PT_LOAD
from sim_session import RemoteError, SimSession, Timeout, board_map


class UsageError(Exception):
    pass


def read_npy(path):
    import numpy as np
    return np.load(path, allow_pickle=False)


def input_bytes(path, tensor):
    """The stored bytes of one input from a .npy (logical shape, converted
    to the tensor's dtype check and dim order) or a raw file."""
    if not path.endswith(".npy"):
        with open(path, "rb") as f:
            raw = f.read()
        if len(raw) != tensor["nbytes"]:
            raise UsageError("%s: %d bytes, the input takes %d" % (path, len(raw), tensor["nbytes"]))
        return raw
    import numpy as np
    array = read_npy(path)
    name, descr, _size = wire.DTYPES.get(tensor["dtype"], ("?", None, 0))
    if descr is None or array.dtype != np.dtype(descr):
        raise UsageError("%s: dtype %s, the input is %s" % (path, array.dtype, name))
    if list(array.shape) != list(tensor["sizes"]) and array.size * array.itemsize == tensor["nbytes"]:
        array = array.reshape(tensor["sizes"])
    if list(array.shape) != list(tensor["sizes"]):
        raise UsageError("%s: shape %s, the input is %s" % (path, list(array.shape), tensor["sizes"]))
    order = tensor["dim_order"]
    return np.ascontiguousarray(array.transpose(order) if order else array).tobytes()


def cmd_check(args):
    with open(args.elf, "rb") as f:
        elf = Elf(f.read())
    record = board_map(elf) if elf.section(".ptec_board_info") else {}
    board = rproc_checks.SIM if record.get("qemu_machine") else rproc_checks.IMX93
    print("ptec-rproc: %s as %s" % (args.elf, "the QEMU simulation (AN505 map)" if board is rproc_checks.SIM
                                    else "the i.MX93 M33 (imx_rproc's address table)"))
    table = rproc_checks.check_resource_table(elf, board)
    v = table.vdev
    print("  resource table: version 1, %d entries, %d bytes: ok (Linux's checks: header, reserved "
          "bytes, offsets, vdev size and reserved bytes, vring count, sizes and alignment)"
          % (len(table.entries), len(table.raw)))
    print("  vdev: RPMsg, features 0x%x (name service), vrings %s"
          % (v["dfeatures"], ", ".join("0x%08x x%d align 0x%x" % (r["da"], r["num"], r["align"])
                                       for r in v["vrings"])))
    if table.trace:
        print("  trace buffer: 0x%08x, %d bytes, \"%s\": inside the board's memory"
              % (table.trace["da"], table.trace["len"], table.trace["name"]))
    loads = rproc_checks.check_segments(elf, board)
    for s in loads:
        print("  PT_LOAD paddr 0x%08x filesz %6d memsz %6d: inside the address table" % (s.paddr, s.filesz,
                                                                                       s.memsz))
    sp, reset = rproc_checks.check_vectors(elf, board)
    print("  vectors at 0x%08x: initial SP 0x%08x (data memory), reset 0x%08x (Thumb, in the image)"
          % (elf.section(".vectors").addr, sp, reset))
    code = sum(s.filesz for s in loads if s.paddr in board.code_starts or s.paddr < board.data_range[0])
    print("ptec-rproc: all checks passed")
    return 0


def host_outputs(ptec_run, model, raws, workdir):
    os.makedirs(workdir, exist_ok=True)
    args = [ptec_run, model]
    for i, raw in enumerate(raws):
        path = os.path.join(workdir, "in%d.bin" % i)
        with open(path, "wb") as f:
            f.write(raw)
        args += ["--input", path]
    out_dir = os.path.join(workdir, "out")
    os.makedirs(out_dir, exist_ok=True)
    got = subprocess.run(args + ["--output-dir", out_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if got.returncode != 0:
        raise UsageError("ptec-run failed: %s" % got.stdout.decode(errors="replace").strip().splitlines()[-1:])
    outs = []
    i = 0
    while os.path.exists(os.path.join(out_dir, "output%d.bin" % i)):
        with open(os.path.join(out_dir, "output%d.bin" % i), "rb") as f:
            outs.append(f.read())
        i += 1
    return outs


def cmd_run(args):
    with open(args.model, "rb") as f:
        model = f.read()
    runs = []
    if args.batch:
        def number_first(n):
            stem = os.path.splitext(n)[0]
            return (0, int(stem), n) if stem.isdigit() else (1, 0, n)
        names = sorted((n for n in os.listdir(args.batch) if n.endswith((".npy", ".bin"))), key=number_first)
        if not names:
            raise UsageError("--batch %s: no .npy or .bin files" % args.batch)
        runs = [[os.path.join(args.batch, n)] for n in names]
    elif args.input:
        runs = [args.input]
    report = {"elf": args.elf, "model": args.model, "runs": []}
    failures = 0
    with SimSession(args.elf, timeout_s=args.timeout, console=args.console) as s:
        name, addr, _ = s.announce
        print("ptec-rproc: firmware up on QEMU; channel \"%s\" at endpoint %d" % (name, addr))
        s.place_model(model)
        print("ptec-rproc: wrote %s (%d bytes) at 0x%08x, as dd would" % (args.model, len(model),
                                                                          s.map["rproc_model"]))
        info = s.load(len(model))
        mem = s.requirements()
        report["info"], report["memory"] = info, mem
        print("  model: method %s, %d instructions, %d inputs, %d outputs, board %s"
              % (info["method"], info["instructions"], info["inputs"], info["outputs"], info["board"]))
        planned = sum(mem["planned%d" % i] for i in range(min(mem["planned_count"], 4)))
        print("  memory: metadata %d B (pool %d), planned %d B (pool %d), scratch %d B (pool %d), "
              "inputs staged %d B (pool %d)" % (mem["metadata_bytes"], mem["metadata_pool"], planned,
                                                mem["planned_pool"], mem["scratch_bytes"], mem["scratch_pool"],
                                                mem["io_bytes"], mem["io_pool"]))
        if not runs:
            runs = [[None] * info["inputs"]]
        with tempfile.TemporaryDirectory(prefix="ptec-rproc-") as work:
            for k, files in enumerate(runs):
                if len(files) != info["inputs"]:
                    raise UsageError("%d input files for a method with %d inputs" % (len(files), info["inputs"]))
                raws = [bytes(t["nbytes"]) if path is None else input_bytes(path, t)
                        for path, t in zip(files, info["input_tensors"])]
                for i, raw in enumerate(raws):
                    s.set_input(i, raw)
                result = s.run(profile=args.profile and k == 0)
                outs = [s.output(i, t["nbytes"]) for i, t in enumerate(info["output_tensors"])]
                line = "  run %d: label %d, %d %s" % (k, result["label"], result["cost"], info["tick_unit"])
                entry = {"inputs": files, "label": result["label"], "cost": result["cost"],
                         "outputs": [o.hex() for o in outs]}
                if args.ptec_run:
                    host = host_outputs(args.ptec_run, args.model, raws, os.path.join(work, str(k)))
                    same = host == outs
                    entry["host_identical"] = same
                    line += ", outputs %s host" % ("byte-identical to" if same else "DIFFER from")
                    failures += 0 if same else 1
                if len(runs) <= 20 or k < 10:
                    print(line)
                elif k == 10:
                    print("  ... (%d runs in all; every one in --json)" % len(runs))
                if args.profile and k == 0:
                    ops = s.profile(info["instructions"])
                    entry["profile"] = ops
                    for i, (op, ticks) in enumerate(ops):
                        print("    [%3d] %-40s %10d" % (i, op, ticks))
                report["runs"].append(entry)
        report["stats"] = s.stats()
    costs = [r["cost"] for r in report["runs"]]
    print("ptec-rproc: %d runs, %s per run: min %d, mean %d, max %d%s" % (
        len(costs), info["tick_unit"], min(costs), sum(costs) // len(costs), max(costs),
        "; outputs byte-identical to the host in every run" if args.ptec_run and not failures else ""))
    st = report["stats"]
    print("ptec-rproc: firmware served %d requests with %d replies (%d errors), stack never touched %d B"
          % (st["requests"], st["replies"], st["error_replies"], st["stack_unused"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    if failures:
        print("ptec-rproc: %d of %d runs differ from the host" % (failures, len(runs)))
        return 1
    return 0


def main(argv):
    parser = argparse.ArgumentParser(prog="ptec-rproc", add_help=True)
    sub = parser.add_subparsers(dest="command")
    c = sub.add_parser("check", help="remoteproc's static checks of a firmware ELF")
    c.add_argument("elf")
    r = sub.add_parser("run", help="boot the simulation's ELF on QEMU and run a model over RPMsg")
    r.add_argument("elf")
    r.add_argument("--model", required=True)
    r.add_argument("--input", action="append", default=[])
    r.add_argument("--batch")
    r.add_argument("--ptec-run")
    r.add_argument("--profile", action="store_true")
    r.add_argument("--json")
    r.add_argument("--console")
    r.add_argument("--timeout", type=float, default=60.0)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.command is None:
        parser.print_usage()
        return 2
    try:
        return cmd_check(args) if args.command == "check" else cmd_run(args)
    except (rproc_checks.CheckError, ElfError) as e:
        print("ptec-rproc: %s: %s" % (args.elf, e), file=sys.stderr)
        return 1
    except RemoteError as e:
        print("ptec-rproc: the firmware refused: %s" % e, file=sys.stderr)
        return 1
    except Timeout as e:
        print("ptec-rproc: %s" % e, file=sys.stderr)
        return 1
    except (UsageError, OSError, ValueError) as e:
        print("ptec-rproc: %s" % e, file=sys.stderr)
        return 2
