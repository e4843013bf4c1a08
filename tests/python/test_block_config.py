"""OFM block choice and SHRAM layout (ptec.backends.ethos_u.block_config) against the three
real Vela streams in shared/models (spec ethos-u-npu.md §8): for every CONV, DEPTHWISE,
POOL and ELEMENTWISE operation the OpShape is rebuilt from the registers the op runs on,
then (a) Vela's block with Vela's IB_END/AB_START/IFM2_IB_START/ACC_FORMAT passes
check_block and shram_usage, (b) block_config_for on Vela's block recomputes Vela's
register values, (c) choose_block_config returns a legal, fitting block, and it is
Vela's block (ops Vela split into OFM depth slices are scored on the whole OFM).
Plus unit tests of the refusal, the LUT area and the per-configuration facts.
"""
import dataclasses
import itertools
import os
from collections import Counter

import pytest

from conftest import SHARED, UPSTREAM
from ptec.backends.ethos_u.block_config import (
    BlockConfig, BlockConfigError, OpShape, accumulator_format, block_config_for, check_block,
    choose_block_config, ifm_block, micro_block, shram_usage, vela_part_kernel_first)
from ptec.backends.ethos_u.command_stream import decode_stream, parse_cop, target_name
from ptec.backends.ethos_u.npu_config import CONFIGS, LUT_BYTES, npu_config
from ptec.pte.reader import read_program
from ptec.tflite import read_model

MODELS = os.path.join(SHARED, "models", "ethos-u")
PERSON = os.path.join(MODELS, "tflm", "person_detect_vela.tflite")
KWS = os.path.join(MODELS, "arm", "kws_cnn_small-ethos-u65-256", "model.tflite")
MINIMAL = os.path.join(UPSTREAM, "ethos_u_minimal_example.pte")

COMPUTE = ("CONV", "DEPTHWISE", "POOL", "ELEMENTWISE")
UNARY_MODES = (5, 6, 7)          # LRELU, ABS, CLZ: no IFM2
POOL_REDUCE_SUM = 2

# spec §8.2 op map: person_detect NPU ops (word offsets) that are OFM depth slices of one
# TFLite op; Vela chose one block for the whole op.
PERSON_SLICES = [(432, 453), (496, 512), (553, 575, 596), (630, 654, 670), (703, 725, 746),
                 (775, 798), (830, 852, 873), (902, 926), (958, 980, 1001), (1030, 1053),
                 (1085, 1107, 1128), (1157, 1181), (1213, 1234, 1255), (1294, 1318),
                 (1359, 1381, 1402), (1432, 1456, 1480), (1508, 1529, 1550)]


def _minimal_cop():
    blob = read_program(MINIMAL).backend_delegate_data[0].data
    return blob[64:64 + 908]          # cmd_data payload (spec §8.1)


def _tflite_cop(path):
    g = read_model(path).subgraphs[0]
    (op,) = g.operators
    return g.tensors[op.inputs[0]].data


STREAMS = {"minimal": (MINIMAL, _minimal_cop), "person_detect": (PERSON, lambda: _tflite_cop(PERSON)),
           "kws": (KWS, lambda: _tflite_cop(KWS))}


@dataclasses.dataclass
class VelaOp:
    word: int                   # word offset of the NPU_OP in the stream
    name: str
    op: OpShape
    part_kernel: bool           # KERNEL_STRIDE[2] on a CONV
    scalar: bool                # IFM2_BROADCAST[7]
    block: BlockConfig          # Vela's block and SHRAM registers


def _vela_ops(stream):
    """Every compute op of a stream with its rebuilt OpShape; registers persist across
    operations (spec §3.1), so they are replayed from the start."""
    path, get = STREAMS[stream]
    if not os.path.exists(path):
        pytest.skip(f"{path} not found (set PTEC_SHARED)")
    cop = parse_cop(get())
    cfg = npu_config(target_name(cop.config))
    regs, out = {}, []
    for cmd in decode_stream(cop.stream, cop.product):
        if cmd.name.startswith("NPU_OP_"):
            if cmd.short_name in COMPUTE:
                out.append(_vela_op(cmd, regs))
        elif cmd.cmd1:
            regs[cmd.name] = cmd.payload
        else:
            regs[cmd.name] = cmd.param
    return cfg, out


def _vela_op(cmd, r) -> VelaOp:
    name, mode = cmd.short_name, cmd.param
    kind = {"CONV": "conv", "DEPTHWISE": "depthwise", "POOL": "pool",
            "ELEMENTWISE": "elementwise"}[name]
    if kind == "pool" and mode == POOL_REDUCE_SUM:
        kind = "reduce_sum"
    ifm = (r["IFM_HEIGHT0_M1"] + 1, r["IFM_WIDTH0_M1"] + 1, r["IFM_DEPTH_M1"] + 1)
    ofm = (r["OFM_HEIGHT_M1"] + 1, r["OFM_WIDTH_M1"] + 1, r["OFM_DEPTH_M1"] + 1)
    ifm_bits = 8 << ((r["IFM_PRECISION"] >> 2) & 3)
    ofm_bits = 8 << ((r["OFM_PRECISION"] >> 1) & 3)
    lut = 16 <= (r.get("ACTIVATION", 0) & 0x1F) <= 23
    if kind == "elementwise":      # kernel registers are stale for elementwise ops
        kernel = stride = dilation = (1, 1)
        part_kernel = False
        scalar = bool(r.get("IFM2_BROADCAST", 0) & 0x80)
        has_ifm2 = mode not in UNARY_MODES and not scalar
    else:
        s = r["KERNEL_STRIDE"]     # spec §3.5
        stride = (1 + (((s >> 1) & 1) | ((s >> 9) & 1) << 1), 1 + ((s & 1) | ((s >> 6) & 1) << 1))
        dilation = (1 + ((s >> 4) & 1), 1 + ((s >> 3) & 1))
        kernel = (r["KERNEL_HEIGHT_M1"] // dilation[0] + 1, r["KERNEL_WIDTH_M1"] // dilation[1] + 1)
        part_kernel = kind == "conv" and bool(s & 4)
        scalar = has_ifm2 = False
    op = OpShape(kind, ifm, ofm, kernel, stride, dilation, ifm_bits, ofm_bits, has_ifm2, lut)
    block = BlockConfig(width=r["OFM_BLK_WIDTH_M1"] + 1, height=r["OFM_BLK_HEIGHT_M1"] + 1,
                        depth=r["OFM_BLK_DEPTH_M1"] + 1, ib_end=r["IFM_IB_END"],
                        ab_start=r["AB_START"], ifm2_ib_start=r.get("IFM2_IB_START", 0),
                        acc_format=r.get("ACC_FORMAT", 0))
    return VelaOp(cmd.offset // 4, name, op, part_kernel, scalar, block)


def _whole_op(vops, group):
    """The OpShape of a TFLite op Vela split into OFM depth slices (depthwise: the IFM too)."""
    parts = [vops[w] for w in group]
    depth = sum(p.op.ofm[2] for p in parts)
    op = parts[0].op
    ifm_depth = depth if op.kind == "depthwise" else op.ifm[2]
    return dataclasses.replace(op, ofm=op.ofm[:2] + (depth,), ifm=op.ifm[:2] + (ifm_depth,))


EXPECTED = {  # stream: (accelerator, compute ops, of which elementwise)
    "minimal": ("ethos-u55-128", 6, 6),
    "person_detect": ("ethos-u55-256", 87, 29),
    "kws": ("ethos-u65-256", 37, 29),
}


@pytest.mark.parametrize("stream", sorted(STREAMS))
def test_vela_blocks(stream):
    cfg, vops = _vela_ops(stream)
    name, n_ops, n_ew = EXPECTED[stream]
    assert cfg.name == name
    assert (len(vops), sum(v.op.kind == "elementwise" for v in vops)) == (n_ops, n_ew)
    tally = Counter()
    sliced = {w for g in PERSON_SLICES for w in g} if stream == "person_detect" else set()
    for v in vops:
        where = f"{stream} word {v.word} {v.name} {v.op}"
        b = v.block
        # (a) Vela's block and registers pass the fit check
        assert check_block(cfg, v.op, b, part_kernel=v.part_kernel) is None, where
        use = shram_usage(cfg, v.op, b, part_kernel=v.part_kernel)
        assert use["free"] >= 0 and use["shram"] == cfg.shram_kib * 1024, where
        assert use["output"] + use["ifm"] + use["ifm2"] <= b.ib_end * 1024, where
        assert b.ab_start * 1024 + use["accumulators"] <= use["shram"] - use["lut"], where
        # (b) the registers recomputed for Vela's block equal Vela's
        mine = block_config_for(cfg, v.op, b.height, b.width, b.depth, part_kernel=v.part_kernel)
        assert (mine.ib_end, mine.ab_start, mine.acc_format) == (b.ib_end, b.ab_start, b.acc_format), where
        tally["registers"] += 1
        if v.op.kind == "elementwise":
            # Vela 3.x writes IFM2_IB_START only for a tensor IFM2 (register_command_stream_
            # generator.py); the newer Vela of the minimal .pte writes it for scalars too.
            # Where it is stale it still equals ours: every elementwise block here has the
            # same IFM area, so the value never changes.
            assert mine.ifm2_ib_start == b.ifm2_ib_start, where
            tally["ifm2_ib_start"] += 1
        # (c) our choice is legal and fits, with Vela's weight order and with ptec's
        for pk in {v.part_kernel, False}:
            chosen = choose_block_config(cfg, v.op, part_kernel=pk)
            assert check_block(cfg, v.op, chosen, part_kernel=pk) is None, where
        if v.word in sliced:
            continue               # scored on the whole OFM: test_person_detect_sliced_ops_...
        chosen = choose_block_config(cfg, v.op, part_kernel=v.part_kernel)
        tally["same_block"] += (chosen.height, chosen.width, chosen.depth) == (b.height, b.width, b.depth)
    print(f"{stream}: {len(vops)} ops, registers equal on {tally['registers']}, IFM2_IB_START "
          f"on {tally['ifm2_ib_start']} elementwise, Vela's block chosen for {tally['same_block']} "
          f"of {len(vops) - len(sliced)} unsliced ops")
    assert tally["registers"] == len(vops)
    assert tally["ifm2_ib_start"] == n_ew
    assert tally["same_block"] == len(vops) - len(sliced)


def test_person_detect_sliced_ops_get_vela_block():
    """44 person_detect ops are OFM depth slices of 17 TFLite ops (spec §8.2); scored on
    the whole OFM, as Vela scores them, our choice is Vela's block for each."""
    cfg, vops = _vela_ops("person_detect")
    by_word = {v.word: v for v in vops}
    for group in PERSON_SLICES:
        first = by_word[group[0]]
        blocks = {(by_word[w].block.height, by_word[w].block.width, by_word[w].block.depth)
                  for w in group}
        assert len(blocks) == 1, group
        whole = _whole_op(by_word, group)
        chosen = choose_block_config(cfg, whole, part_kernel=first.part_kernel)
        assert (chosen.height, chosen.width, chosen.depth) in blocks, (group, whole, chosen)
    assert sum(map(len, PERSON_SLICES)) == 44


def test_vela_weight_order_rule_matches_streams():
    """vela_part_kernel_first predicts KERNEL_STRIDE[2] of every CONV except fully
    connected layers (1x1 OFM and kernel), which Vela always runs depth-first."""
    checked = 0
    for stream in STREAMS:
        _, vops = _vela_ops(stream)
        for v in vops:
            if v.op.kind != "conv" or (v.op.ofm[:2] == (1, 1) and v.op.kernel == (1, 1)):
                continue
            assert vela_part_kernel_first(v.op) == v.part_kernel, (stream, v.word, v.op)
            checked += 1
    assert checked > 30


# ---------------------------------------------------------------------------
# Unit tests

U55_256 = npu_config("ethos-u55-256")


def test_op_too_big_is_refused_in_one_line():
    # a 32-bit IFM under an 8x8 window at stride 4: even one micro-block needs an IFM
    # buffer of 12x12 positions x 32 channels x 4 bytes, double-buffered = 48 KiB
    op = OpShape("conv", (64, 64, 64), (15, 15, 64), kernel=(8, 8), stride=(4, 4), ifm_bits=32)
    for cfg in CONFIGS.values():
        with pytest.raises(BlockConfigError) as e:
            choose_block_config(cfg, op)
        msg = str(e.value)
        assert "\n" not in msg and cfg.name in msg and "smallest block" in msg and "IFM" in msg, msg
    assert "2 KiB output + 48 KiB IFM + 16 KiB accumulators = 66 KiB, 46 KiB usable" in msg


def test_bad_op_descriptions_are_refused_in_one_line():
    for op in (OpShape("matmul", (1, 1, 8), (1, 1, 8)),
               OpShape("conv", (4, 4, 0), (4, 4, 8)),
               OpShape("conv", (4, 4, 8), (4, 4, 8), ifm_bits=4),
               OpShape("pool", (4, 4, 8), (4, 4, 8), has_ifm2=True)):
        with pytest.raises(BlockConfigError) as e:
            choose_block_config(U55_256, op)
        assert "\n" not in str(e.value)
    with pytest.raises(BlockConfigError, match="not a multiple of 2"):
        block_config_for(U55_256, OpShape("conv", (8, 8, 8), (8, 8, 8)), 3, 2, 8)


def test_every_encodable_8_and_16_bit_op_fits_its_smallest_block():
    """With strides 1..4 and dilations 1..2 (what KERNEL_STRIDE encodes) every 8- or 16-bit
    operation fits one micro-block on every configuration, LUT or not: the IFM block is at
    most (u - 1) * 4 + 8 square (sub-kernels of 8). So the refusal only meets 32-bit IFMs
    under large windows."""
    for cfg, kind, bits, k, s, d, lut in itertools.product(
            CONFIGS.values(), ("conv", "depthwise", "pool", "reduce_sum", "elementwise"), (8, 16),
            (1, 3, 8, 11), (1, 2, 3, 4), (1, 2), (False, True)):
        for ifm2 in ((False, True) if kind == "elementwise" else (False,)):
            for pk in ((False, True) if kind == "conv" else (False,)):
                op = OpShape(kind, (120, 120, 300), (30, 30, 1 if kind == "reduce_sum" else 300),
                             (k, k), (s, s), (d, d), bits, 8, ifm2, lut)
                b = block_config_for(cfg, op, *micro_block(cfg), part_kernel=pk)
                assert check_block(cfg, op, b, part_kernel=pk) is None, (cfg.name, op)
                if k == 11 and s in (1, 4) and d == 2:
                    b = choose_block_config(cfg, op, part_kernel=pk)
                    assert check_block(cfg, op, b, part_kernel=pk) is None, (cfg.name, op)


def test_lut_area_is_kept_free():
    lut_bank = {name: cfg.lut_address // 1024 for name, cfg in CONFIGS.items()}
    assert lut_bank == {"ethos-u55-32": 14, "ethos-u55-64": 14, "ethos-u55-128": 22,
                        "ethos-u55-256": 46, "ethos-u65-256": 46, "ethos-u65-512": 46}
    ops = [OpShape("conv", (32, 32, 64), (32, 32, 64), (3, 3)),
           OpShape("depthwise", (32, 32, 64), (16, 16, 64), (3, 3), (2, 2)),
           OpShape("pool", (16, 16, 32), (16, 16, 32)),
           OpShape("elementwise", (16, 16, 32), (16, 16, 32), has_ifm2=True),
           OpShape("elementwise", (16, 16, 32), (16, 16, 32))]
    for cfg in CONFIGS.values():
        for op in ops:
            with_lut = dataclasses.replace(op, uses_lut=True)
            b = choose_block_config(cfg, with_lut)
            use = shram_usage(cfg, with_lut, b)
            assert use["lut"] >= LUT_BYTES
            assert b.ib_end * 1024 <= cfg.lut_address and b.ab_start * 1024 <= cfg.lut_address
            assert b.ab_start * 1024 + use["accumulators"] <= cfg.lut_address, (cfg.name, op, b)
            if op.kind == "elementwise":
                assert b.ib_end == b.ab_start == cfg.lut_address // 1024
            # the same layout with LUT banks handed to the accumulators is not LUT-safe
            bad = dataclasses.replace(b, ab_start=b.ab_start + 2)
            if op.kind != "elementwise":
                assert check_block(cfg, with_lut, bad) is not None
            plain = choose_block_config(cfg, op)
            if cfg.shram_kib > 16:       # the LUT's 2 banks are reserved anyway
                assert plain == b, (cfg.name, op)
    # on 16-bank SHRAMs the 2 banks are the LUT's only with a LUT
    cfg = npu_config("ethos-u55-64")
    op = OpShape("conv", (32, 32, 64), (32, 32, 64), (3, 3))
    plain = block_config_for(cfg, op, 2, 2, 8)
    lut = block_config_for(cfg, dataclasses.replace(op, uses_lut=True), 2, 2, 8)
    assert (plain.ab_start, lut.ab_start) == (12, 10)
    assert shram_usage(cfg, op, plain)["lut"] == 0
    assert check_block(cfg, dataclasses.replace(op, uses_lut=True), plain) is not None


def test_layout_arithmetic_by_hand():
    # person_detect's first op (spec §8.2): 3x2 kernel, stride 2x1, IFM 96x48x2,
    # part-kernel-first, block 16x16x8 on u55-256
    op = OpShape("conv", (96, 48, 2), (48, 48, 8), (3, 2), (2, 1))
    assert ifm_block(U55_256, op, 16, 16, 8, part_kernel=True) == (34, 18, 8)
    b = block_config_for(U55_256, op, 16, 16, 8, part_kernel=True)
    # IFM 34*18*8 = 4,896 B -> 5 banks, x2, granule 8 -> 16: IB_END 18.
    # Accumulators 16*16*8*4 = 8,192 B -> 8 banks, x2, granule 16 -> 16: AB_START 46 - 16.
    assert (b.ib_end, b.ab_start, b.acc_format) == (18, 30, 0)
    use = shram_usage(U55_256, op, b, part_kernel=True)
    assert (use["output"], use["ifm"], use["accumulators"], use["lut"], use["free"]) == \
        (2048, 16384, 16384, 2048, 12288)
    assert (use["ifm_block"], use["acc_block"]) == (4896, 8192)
    # depth-first (ptec's weight order) holds 32 IFM channels when the IFM has them
    deep = dataclasses.replace(op, ifm=(96, 48, 64))
    assert ifm_block(U55_256, deep, 16, 16, 8)[2] == 32
    assert ifm_block(U55_256, deep, 16, 16, 8, part_kernel=True)[2] == 16


def test_blocks_are_micro_block_multiples():
    assert {n: micro_block(c) for n, c in CONFIGS.items()} == {
        "ethos-u55-32": (1, 1, 4), "ethos-u55-64": (1, 1, 8), "ethos-u55-128": (1, 2, 8),
        "ethos-u55-256": (2, 2, 8), "ethos-u65-256": (2, 2, 8), "ethos-u65-512": (2, 2, 8)}
    for cfg in CONFIGS.values():
        for ofm in ((1, 1, 1), (1, 7, 3), (5, 5, 20), (33, 65, 129), (96, 96, 40)):
            for kind in ("conv", "depthwise", "pool", "elementwise"):
                op = OpShape(kind, ofm, ofm, (3, 3) if kind != "elementwise" else (1, 1))
                b = choose_block_config(cfg, op)
                assert b.depth % cfg.ofm_ublock_depth == 0 and b.depth <= 128
                assert b.height <= 32 and b.width <= 64
                assert b.depth <= -(-ofm[2] // cfg.ofm_ublock_depth) * cfg.ofm_ublock_depth
                assert check_block(cfg, op, b) is None


def test_accumulator_format():
    assert accumulator_format(OpShape("conv", (8, 8, 8), (8, 8, 8), ifm_bits=16)) == 1
    assert accumulator_format(OpShape("reduce_sum", (8, 8, 8), (8, 8, 1), ifm_bits=16)) == 1
    assert accumulator_format(OpShape("pool", (8, 8, 8), (8, 8, 8), ifm_bits=16)) == 0
    assert accumulator_format(OpShape("conv", (8, 8, 8), (8, 8, 8))) == 0
    op = OpShape("conv", (8, 8, 8), (8, 8, 8), ifm_bits=16)
    b = choose_block_config(U55_256, op)
    assert b.acc_format == 1
    assert "ACC_FORMAT" in check_block(U55_256, op, dataclasses.replace(b, acc_format=0))


def test_inconsistent_registers_are_caught():
    op = OpShape("elementwise", (8, 8, 16), (8, 8, 16), has_ifm2=True)
    b = choose_block_config(U55_256, op)
    assert check_block(U55_256, op, b) is None
    assert "IFM2_IB_START" in check_block(U55_256, op, dataclasses.replace(b, ifm2_ib_start=3))
    conv = OpShape("conv", (16, 16, 64), (16, 16, 64), (3, 3))
    c = choose_block_config(U55_256, conv)
    assert "IB_END" in check_block(U55_256, conv, dataclasses.replace(c, ib_end=c.ib_end - 1))
