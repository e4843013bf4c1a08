"""ptec's Ethos-U compiler on the zoo and on torchvision MobileNet-V2 1.0
(224x224, random weights: placement, sizes and the estimate do not depend
on the values, except the compressed weight bytes): per network and NPU,
the operators on the NPU and the CPU, the MACs on the NPU, the flash
(weights, scales, tables and command data), the largest SRAM work area and
ptec's NPU cycle estimate (python/ptec/backends/ethos_u/perf.py; the method
is in docs/ethos-u.md). Prints `figure KEY VALUE` lines for bench/run_all.sh.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

from ptec.backends.cortex_m import CortexMBackend  # noqa: E402
from ptec.backends.ethos_u.backend import EthosUBackend  # noqa: E402
from ptec.backends.ethos_u.npu_report import node_macs  # noqa: E402
from ptec.backends.portable import PortableBackend  # noqa: E402
from ptec.compiler import compile_model  # noqa: E402
from ptec.models import load_model  # noqa: E402

NPUS = ("ethos-u55-128", "ethos-u65-256")
ZOO = ("ds_cnn", "mobilenet_v1_025", "resnet8", "fc_autoencoder", "mobilenet_v2_035", "digits_cnn",
       "tiny_attention")


def networks():
    for name in ZOO:
        m = load_model(name)
        yield name, m.module, m.example_inputs, m.calibration(8)
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(width_mult=1.0).eval()
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 224, 224, generator=g),) for _ in range(2)]
    yield "tv_mobilenet_v2", model, list(calib[0]), calib


def main():
    print(f"{'network':<18s} {'npu':<14s} {'NPU ops':>8s} {'CPU ops':>8s} {'MACs':>12s} {'on NPU':>7s} "
          f"{'flash B':>10s} {'SRAM B':>10s} {'est. cycles':>12s}")
    for name, module, example, calib in networks():
        # MobileNet-V2 1.0 also on the U55-256, where Vela's published estimate is
        for accel in NPUS + (("ethos-u55-256",) if name == "tv_mobilenet_v2" else ()):
            npu = EthosUBackend(accel)
            cpu = npu.cfg.default_cpu
            res = compile_model(module, example, calib, target=cpu, int8_io=True,
                                backends=[npu, CortexMBackend(), PortableBackend()])
            g = res.graph
            placed = [p for p in res.lowered.placements if p.backend != "none"]
            on_npu = [p for p in placed if p.backend == npu.name]
            macs = sum(node_macs(g, g.node(p.node)) for p in placed)
            npu_macs = sum(node_macs(g, g.node(p.node)) for p in on_npu)
            flash = sum(d["flash"] + d["cop"] for d in npu.delegates)
            sram = max((d["sram"] for d in npu.delegates), default=0)
            cycles = sum(p.cycles for p in npu.placements)
            pct = 100.0 * npu_macs / macs if macs else 0.0
            print(f"{name:<18s} {accel:<14s} {len(on_npu):>8d} {len(placed) - len(on_npu):>8d} "
                  f"{macs:>12,} {pct:>6.1f}% {flash:>10,} {sram:>10,} {cycles:>12,}")
            key = f"npu.{name}.{accel}"
            for what, value in (("npu_ops", len(on_npu)), ("cpu_ops", len(placed) - len(on_npu)),
                                ("macs", macs), ("npu_macs", npu_macs), ("flash", flash),
                                ("sram", sram), ("cycles_estimate", cycles)):
                print(f"figure {key}.{what} {value}")


if __name__ == "__main__":
    main()
