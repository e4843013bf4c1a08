"""The Ethos-U command-stream linter (python/ptec/backends/ethos_u/stream_lint.py,
docs/ethos-u-lint.md).

Oracles: the three real Vela streams in shared/models must lint clean (the linter must not
reject what Vela emits and the hardware runs), and the BLOCKDEP values the linter
recomputes must equal the ones Vela programmed. Then, for every rule, a copy of a real
stream with one change (a register, a dropped wait, a raised BLOCKDEP, a misaligned base,
no STOP, ...) must be flagged with that rule.
"""
import os
import re
import struct

import pytest

from conftest import ROOT, SHARED, UPSTREAM
from ptec.backends.ethos_u.blob import read_blob
from ptec.backends.ethos_u.command_stream import (CMD0_REGISTERS, CMD1_REGISTERS, OPERATIONS,
                                                  decode_stream, parse_cop)
from ptec.backends.ethos_u.stream_lint import (RULES, LintIssue, blockdep_report, lint_cop,
                                               lint_stream)
from ptec.pte.reader import read_program
from ptec.tflite import read_model

MODELS = os.path.join(SHARED, "models", "ethos-u")
PERSON = os.path.join(MODELS, "tflm", "person_detect_vela.tflite")
KWS = os.path.join(MODELS, "arm", "kws_cnn_small-ethos-u65-256", "model.tflite")
MINIMAL = os.path.join(UPSTREAM, "ethos_u_minimal_example.pte")
DOC = os.path.join(ROOT, "docs", "ethos-u-lint.md")


def _tflite(path):
    """COP1 payload and region sizes of a Vela .tflite's ethos-u operator: region 0 = flash,
    1 = scratch (holds the I/O, models/ethos-u/README.md), 2 = fast scratch."""
    g = read_model(path).subgraphs[0]
    (op,) = g.operators
    cop, flash, scratch, fast = (g.tensors[i] for i in op.inputs[:4])
    return bytes(cop.data), {0: len(flash.data), 1: scratch.numel, 2: fast.numel}


def _pte(path):
    blob = read_blob(read_program(path).backend_delegate_data[0].data)
    return blob.cmd_data, {0: len(blob.weight_data), 1: blob.scratch_size}


STREAMS = {  # name: (loader, path, accelerator)
    "person": (_tflite, PERSON, "ethos-u55-256"),
    "kws": (_tflite, KWS, "ethos-u65-256"),
    "minimal": (_pte, MINIMAL, "ethos-u55-128"),
}


def load(name):
    loader, path, accel = STREAMS[name]
    if not os.path.exists(path):
        pytest.skip(f"{path} not found (set PTEC_SHARED)")
    cop, sizes = loader(path)
    return cop, sizes, accel


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_real_vela_streams_lint_clean(name):
    cop, sizes, accel = load(name)
    issues = lint_cop(cop, accel, sizes)
    assert issues == [], "\n".join(f"{i.command_index} @0x{i.offset:x} {i.rule}: {i.message}"
                                   for i in issues[:20])
    # the stream alone, and without region sizes, too
    assert lint_stream(parse_cop(cop).stream, accel) == []


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_blockdep_recomputation_equals_vela(name):
    """Vela programs min(calc_blockdep, 3) on every block operation; the linter's own
    recomputation must give the same value everywhere, including the 0, 1 and 2 cases."""
    cop, _, accel = load(name)
    report = blockdep_report(parse_cop(cop).stream, accel)
    assert report, "no block operations"
    assert [(i, have) for i, have, _ in report] == [(i, safe) for i, _, safe in report]
    if name == "person":
        assert {have for _, have, _ in report} == {0, 1, 2, 3}


def test_rules_documented():
    with open(DOC) as f:
        text = f.read()
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", text, re.M))
    assert documented == set(RULES)


# --------------------------------------------------------------------------
# Mutations

NAME_TO_OP = {v: k for k, v in OPERATIONS.items()}
NAME_TO_CMD0 = {v: k for k, v in CMD0_REGISTERS.items()}
NAME_TO_CMD1 = {v: k for k, v in CMD1_REGISTERS.items()}


class Stream:
    """A mutable copy of a real stream, addressed by decoded commands."""

    def __init__(self, name):
        cop, self.sizes, self.accel = load(name)
        self.cop = cop
        self.product = parse_cop(cop).product
        self.words = list(parse_cop(cop).stream)

    @property
    def cmds(self):
        return decode_stream(self.words, self.product)

    def find(self, pred, nth=0):
        hits = [c for c in self.cmds if pred(c)]
        return hits[nth]

    def op(self, summary_prefix, nth=0):
        return self.find(lambda c: c.summary.startswith(summary_prefix), nth)

    def last_write(self, name, before):
        return [c for c in self.cmds[:before.index] if c.name == name][-1]

    def set_param(self, cmd, param):
        w = self.words[cmd.offset // 4]
        self.words[cmd.offset // 4] = (w & 0xFFFF) | (param & 0xFFFF) << 16

    def set_payload(self, cmd, payload):
        self.words[cmd.offset // 4 + 1] = payload & 0xFFFFFFFF

    def delete(self, cmd):
        n = 2 if cmd.cmd1 else 1
        del self.words[cmd.offset // 4:cmd.offset // 4 + n]

    def insert_before(self, cmd, words):
        i = cmd.offset // 4
        self.words[i:i] = words

    def lint(self, sizes=True):
        return lint_stream(self.words, self.accel, self.sizes if sizes else None)


def cmd0(name, param):
    return [NAME_TO_CMD0[name] | (param & 0xFFFF) << 16]


def cmd1(name, payload, param=0):
    return [NAME_TO_CMD1[name] | 0x4000 | param << 16, payload]


def rules(issues):
    return {i.rule for i in issues}


def first_conv(s):
    return s.op("CONV")


def m_reg_unset(s):
    s.delete(s.find(lambda c: c.name == "IFM_ZERO_POINT"))


def m_stride(s):
    ks = s.last_write("KERNEL_STRIDE", first_conv(s))
    s.set_param(ks, ks.param | 0x41)                # (stride_x - 1) = 3


def m_dilation(s):
    pool = s.op("POOL AVERAGE")
    s.insert_before(pool, cmd0("KERNEL_STRIDE", s.last_write("KERNEL_STRIDE", pool).param | 8))


def m_kernel(s):
    s.set_param(s.last_write("KERNEL_HEIGHT_M1", first_conv(s)), 70)


def m_pad(s):
    dw = s.op("DEPTHWISE")
    s.set_param(s.last_write("IFM_PAD_TOP", dw), 3)     # 3x3 kernel


def m_depth(s):
    s.set_param(s.find(lambda c: c.name == "IFM_DEPTH_M1"), 1)   # minimal: 1 -> 2 channels


def m_zero_point(s):
    s.set_param(s.last_write("OFM_ZERO_POINT", first_conv(s)), 200)   # s8 OFM


def m_clamp(s):
    s.set_param(s.last_write("ACTIVATION_MAX", first_conv(s)), 300)


def m_activation(s):
    s.set_param(s.last_write("ACTIVATION", first_conv(s)), 5)


def m_round(s):
    p = s.last_write("OFM_PRECISION", first_conv(s))
    s.set_param(p, p.param | 0xC000)


def m_precision(s):
    p = s.last_write("IFM_PRECISION", first_conv(s))
    s.set_param(p, (p.param & ~0xC0) | 2 << 6)       # format 2


def m_mode(s):
    s.set_param(s.op("POOL MAX"), 3)


def m_broadcast(s):
    b = s.find(lambda c: c.name == "IFM2_BROADCAST")
    s.set_param(b, b.param | 1)                      # scalar + broadcast H


def m_acc_format(s):
    s.set_param(s.last_write("ACC_FORMAT", first_conv(s)), 1)   # I40 on an 8-bit IFM


def m_ofm_block(s):
    s.set_param(s.last_write("OFM_BLK_WIDTH_M1", first_conv(s)), 16)   # 17 wide


def m_parallel_mode(s):
    s.set_param(s.find(lambda c: c.name == "PARALLEL_MODE"), 1)   # on u65-256


def m_shram_fit(s):
    s.set_param(s.last_write("IFM_IB_END", first_conv(s)), 17)


def m_shram_lut(s):
    lut_op = s.find(lambda c: c.summary.startswith("ELEMENTWISE") and " act LUT" in c.summary)
    s.insert_before(lut_op, cmd0("IFM_IB_END", 48) + cmd0("AB_START", 48))


def m_shram_vela(s):
    s.set_param(s.last_write("AB_START", first_conv(s)), 28)     # Vela: 30, still fits


def m_weights_align(s):
    w = s.last_write("WEIGHT_BASE", first_conv(s))
    s.set_payload(w, w.payload + 8)


def m_weights_length(s):
    w = s.last_write("WEIGHT_LENGTH", first_conv(s))
    s.set_payload(w, w.payload + 8)


def m_scale_length(s):
    w = s.last_write("SCALE_LENGTH", first_conv(s))
    s.set_payload(w, w.payload + 16)


def m_weights_bounds(s):
    # the last CONV reads its weights in place from region 0 (spec §8.2: op 28)
    conv = s.op("CONV", -1)
    assert "weights r0@" in conv.summary
    s.set_payload(s.last_write("WEIGHT_BASE", conv), s.sizes[0] + 0x100 & ~0xF)


def m_fm_align(s):
    b = s.last_write("OFM_BASE0", first_conv(s))
    s.set_payload(b, b.payload + 8)                  # NHCWB16 OFM


def m_fm_strides(s):
    st = s.last_write("OFM_STRIDE_C", first_conv(s))
    s.set_payload(st, st.payload + 8)


def m_fm_bounds(s):
    s.set_payload(s.last_write("OFM_BASE0", first_conv(s)), s.sizes[1] - 0x100)


def m_dma_form(s):
    s.set_payload(s.find(lambda c: c.name == "DMA0_LEN"), 0)


def m_dma_shram(s):
    lut_dma = s.find(lambda c: c.summary.startswith("DMA") and "SHRAM@" in c.summary)
    s.insert_before(lut_dma, cmd1("DMA0_DST", 0xB000))


def m_dma_bounds(s):
    s.set_payload(s.find(lambda c: c.name == "DMA0_SRC"), s.sizes[0] + 0x100 & ~0xF)


def m_dma_wait(s):
    s.delete(s.find(lambda c: c.name == "NPU_OP_DMA_WAIT"))


def m_kernel_wait(s):
    s.delete(s.find(lambda c: c.name == "NPU_OP_KERNEL_WAIT"))


def m_blockdep(s):
    report = blockdep_report(s.words, s.accel)
    index = next(i for i, have, safe in report if safe < 3)
    s.insert_before(s.cmds[index], cmd0("BLOCKDEP", 3))


def m_lut_range(s):
    lut_op = s.find(lambda c: " act LUT" in c.summary)
    s.insert_before(lut_op, cmd0("ACTIVATION", 0x3011))   # table 1 of a 1 KiB int32 LUT


def m_lut_missing(s):
    s.delete(s.find(lambda c: c.summary.startswith("DMA") and "SHRAM@" in c.summary))


def m_reserved_bits(s):
    a = s.last_write("ACTIVATION", first_conv(s))
    s.set_param(a, a.param | 0x20)


def m_structure_opcode(s):
    r = s.find(lambda c: c.name == "IFM_UPSCALE")
    s.words[r.offset // 4] = (s.words[r.offset // 4] & ~0x3FF) | 0x10E


def m_structure_opcode_product(s):
    s.words[0:0] = cmd0("PARALLEL_MODE", 0)          # a U65 register in a U55 stream


def m_structure_control(s):
    r = s.find(lambda c: c.name == "IFM_UPSCALE")
    s.words[r.offset // 4] |= 1 << 11


def m_stop_missing(s):
    del s.words[-1]


def m_stop_param(s):
    s.words[-1] = 0x00010000


def m_trailing(s):
    s.words.append(0x00000005)


def m_truncated(s):
    s.words[-1:] = [NAME_TO_CMD1["WEIGHT_BASE"] | 0x4000]


MUTATIONS = [  # (rule, stream, mutation)
    ("reg-unset", "person", m_reg_unset),
    ("range-stride", "person", m_stride),
    ("range-dilation", "person", m_dilation),
    ("range-kernel", "person", m_kernel),
    ("range-pad", "person", m_pad),
    ("range-depth", "minimal", m_depth),
    ("range-zero-point", "person", m_zero_point),
    ("range-clamp", "person", m_clamp),
    ("range-activation", "person", m_activation),
    ("range-round", "person", m_round),
    ("range-precision", "person", m_precision),
    ("range-mode", "kws", m_mode),
    ("range-broadcast", "minimal", m_broadcast),
    ("range-acc-format", "person", m_acc_format),
    ("ofm-block", "person", m_ofm_block),
    ("parallel-mode", "kws", m_parallel_mode),
    ("shram-fit", "person", m_shram_fit),
    ("shram-lut", "person", m_shram_lut),
    ("shram-vela", "person", m_shram_vela),
    ("weights-align", "person", m_weights_align),
    ("weights-length", "person", m_weights_length),
    ("scale-length", "person", m_scale_length),
    ("weights-bounds", "person", m_weights_bounds),
    ("fm-align", "person", m_fm_align),
    ("fm-strides", "person", m_fm_strides),
    ("fm-bounds", "person", m_fm_bounds),
    ("dma-form", "person", m_dma_form),
    ("dma-shram", "kws", m_dma_shram),
    ("dma-bounds", "person", m_dma_bounds),
    ("dep-dma-wait", "person", m_dma_wait),
    ("dep-kernel-wait", "person", m_kernel_wait),
    ("dep-blockdep", "person", m_blockdep),
    ("lut-range", "person", m_lut_range),
    ("lut-missing", "person", m_lut_missing),
    ("reserved-bits", "person", m_reserved_bits),
    ("structure-opcode", "minimal", m_structure_opcode),
    ("structure-opcode", "person", m_structure_opcode_product),
    ("structure-control", "kws", m_structure_control),
    ("structure-stop", "person", m_stop_missing),
    ("structure-stop", "minimal", m_stop_param),
    ("structure-trailing", "kws", m_trailing),
    ("structure-truncated", "minimal", m_truncated),
]


@pytest.mark.parametrize("rule,name,mutate", MUTATIONS,
                         ids=[f"{r}-{n}-{m.__name__[2:]}" for r, n, m in MUTATIONS])
def test_mutation_is_flagged(rule, name, mutate):
    s = Stream(name)
    mutate(s)
    issues = s.lint()
    assert rule in rules(issues), [(i.rule, i.message) for i in issues]
    for i in issues:
        assert isinstance(i, LintIssue) and "\n" not in i.message and i.message


def test_every_rule_has_a_mutation():
    covered = {r for r, _, _ in MUTATIONS} | {"cop-format", "cop-config", "cop-align",
                                              "structure-size"}
    assert covered == set(RULES)


def test_bounds_need_region_sizes():
    s = Stream("person")
    m_fm_bounds(s)
    assert "fm-bounds" in rules(s.lint())
    assert "fm-bounds" not in rules(s.lint(sizes=False))


def test_missing_region_size_is_flagged():
    cop, sizes, accel = load("person")
    issues = lint_cop(cop, accel, {1: sizes[1]})     # no size for region 0 (flash)
    assert {"dma-bounds", "weights-bounds"} <= rules(issues)
    assert all("region 0" in i.message for i in issues)


# --------------------------------------------------------------------------
# COP1 framing

def _cop_words(cop):
    return list(struct.unpack("<%dI" % (len(cop) // 4), cop))


def test_cop_format():
    cop, sizes, accel = load("person")
    issues = lint_cop(b"COP2" + cop[4:], accel, sizes)
    assert [i.rule for i in issues] == ["cop-format"] and issues[0].command_index == -1


def test_cop_config():
    cop, sizes, accel = load("person")
    words = _cop_words(cop)
    assert words[2] == 0x3008
    words[2] = 0x1807                                  # a u55-128 config word
    issues = lint_cop(struct.pack("<%dI" % len(words), *words), accel, sizes)
    assert [(i.rule, i.offset) for i in issues] == [("cop-config", 8)]


def test_cop_align():
    cop, sizes, accel = load("minimal")
    words = _cop_words(cop)
    assert words[4:7] == [5, 5, 5]                     # the three NOPs before the stream
    del words[4]
    issues = lint_cop(struct.pack("<%dI" % len(words), *words), accel, sizes)
    assert [(i.rule, i.offset) for i in issues] == [("cop-align", 28)]


def test_structure_size():
    words = [0xFFFF0000] + [0] * ((1 << 22) - 1)      # STOP, then 16 MiB of padding
    assert {"structure-size", "structure-trailing"} <= rules(lint_stream(words,
                                                                         "ethos-u55-256"))


def test_unknown_accelerator():
    with pytest.raises(ValueError):
        lint_stream([0xFFFF0000], "ethos-u55-512")


def test_randomly_corrupted_streams_give_findings_never_a_crash():
    """Hostile input: 3,000 seeded corruptions of the real COP payloads
    (flipped bits, overwritten words, cuts, appended garbage, a wrong
    accelerator) are answered with findings (LintIssue, one line each) or a
    one-line CommandStreamError or ValueError; never another exception."""
    import random
    from ptec.backends.ethos_u.command_stream import CommandStreamError
    rnd = random.Random(12)
    accels = ["ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256",
              "ethos-u65-512"]
    bases = [load(name) for name in STREAMS]
    findings = 0
    for k in range(3000):
        cop, regions, accel = bases[k % len(bases)]
        data = bytearray(cop)
        kind = k % 5
        for _ in range(rnd.randint(1, 8)):
            if kind == 0:
                data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
            elif kind == 1:
                at = rnd.randrange(0, len(data) - 3) & ~3
                data[at:at + 4] = struct.pack("<I", rnd.getrandbits(32))
        if kind == 2:
            data = data[:rnd.randrange(len(data))]
        elif kind == 3:
            data += bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 64)))
        elif kind == 4:
            accel = rnd.choice(accels)
        try:
            issues = lint_cop(bytes(data), accel, regions if rnd.random() < 0.5 else None)
        except (CommandStreamError, ValueError) as e:
            assert "\n" not in str(e)
            continue
        for issue in issues:
            assert isinstance(issue, LintIssue) and "\n" not in issue.message
        findings += bool(issues)
    assert findings > 1000      # most corruptions are caught
