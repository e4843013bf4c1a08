"""Hand-built cortex_m test programs (ptec.backends.cortex_m)."""
import numpy as np
import pytest

from flatc_util import assert_same, flatc_json, have_flatc
from ptec import quant_math as qm
from ptec.ops import SIGNATURES
from ptec.pte import KernelCall, Null, parse_program, serialize_program
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.pte.jsonview import to_flatc_json


def test_quantize_multiplier_formula():
    assert qm.quantize_multiplier(0.0) == (0, 0)
    assert qm.quantize_multiplier(0.5) == (1 << 30, 0)
    assert qm.quantize_multiplier(1.0) == (1 << 30, 1)
    assert qm.quantize_multiplier(0.75) == (1610612736, 0)
    # rounding up to 2^31 renormalises
    assert qm.quantize_multiplier(1.0 - 2.0 ** -40) == (1 << 30, 1)
    m, s = qm.quantize_multiplier(0.0123)
    assert (1 << 30) <= m < (1 << 31) and abs(m * 2.0 ** (s - 31) - 0.0123) < 1e-11


def test_softmax_params():
    mult, shift, diff_min = qm.softmax_params(0.1)
    assert (1 << 30) <= mult < (1 << 31)
    assert abs(mult * 2.0 ** (shift - 31) / (0.1 * 2 ** 26) - 1) < 1e-9
    assert diff_min == -int(np.floor(31 * 2 ** 26 / 2.0 ** shift))


def _calls(program):
    plan = program.plan()
    for ins in plan.chains[0].instructions:
        call = ins.instr_args
        assert isinstance(call, KernelCall)
        yield plan.operators[call.op_index].key, call.args, plan


def _int_list(plan, v):
    return [plan.values[i].val.int_val for i in plan.values[v].val.items]


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_ds_cnn_program(target, tmp_path):
    program, info = ds_cnn_program(seed=1, target=target)
    data = serialize_program(program)
    back = parse_program(data)
    assert back == program
    keys = [k for k, _, _ in _calls(back)]
    assert keys == (["cortex_m::quantize_per_tensor.out", "cortex_m::quantized_depthwise_conv2d.out"]
                    + ["cortex_m::quantized_depthwise_conv2d.out",
                       "cortex_m::quantized_conv2d.out"] * 4
                    + ["cortex_m::quantized_avg_pool2d.out", "cortex_m::quantized_linear.out",
                       "cortex_m::dequantize_per_tensor.out"])
    for key, args, plan in _calls(back):
        assert len(args) == len(SIGNATURES[key]) + 1 and args[-1] == args[-2]
        names = [n for n, _ in SIGNATURES[key]]
        a = dict(zip(names, args))
        val = lambda n: plan.values[a[n]].val  # noqa: E731
        if key == "cortex_m::quantized_depthwise_conv2d.out" and val("depth_multiplier").int_val == 64:
            assert val("weight").sizes == [1, 10, 4, 64]
            assert _int_list(plan, a["stride"]) == [2, 2]
            assert _int_list(plan, a["padding"]) == [5, 1]
            assert val("out").sizes == [1, 64, 25, 5]
            assert list(val("out").dim_order) == [0, 2, 3, 1]
        if "conv2d" in key:
            m = np.frombuffer(back.constant_bytes(val("requantize_multipliers")), "<i4")
            s = np.frombuffer(back.constant_bytes(val("requantize_shifts")), "<i4")
            assert m.shape == (64,) and ((m >= 1 << 30) & (m < 2 ** 31 - 0)).all()
            assert ((s >= -31) & (s <= 30)).all()
            assert val("input_offset").int_val in (-3, 128)
            scratch = val("scratch")
            assert scratch.scalar_type == 0 and scratch.allocation_info is not None
        if key == "cortex_m::quantized_linear.out":
            assert len(_int_list(plan, a["requantize_multipliers"])) == 1
            if target == "cortex-m55":
                assert isinstance(val("bias"), Null) and val("kernel_sum").sizes == [1, 12]
            else:
                assert isinstance(val("kernel_sum"), Null) and val("bias").sizes == [12]
            # the input is an alias of the pool output: same arena offset
        if key == "cortex_m::quantized_avg_pool2d.out":
            assert val("scratch").sizes == [256 if target == "cortex-m33" else 0]
    plan = back.plan()
    mp = info["memory_plan"]
    assert plan.non_const_buffer_sizes[1] >= mp.lower_bound
    assert mp.arena_bytes <= 1.25 * mp.lower_bound


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_ds_cnn_program_agrees_with_flatc(target, tmp_path):
    """flatc's reading of the file is an oracle that shares no code with ptec's reader."""
    if not have_flatc():
        pytest.skip("flatc not installed (scripts/setup.sh installs flatbuffers-compiler)")
    program, _ = ds_cnn_program(seed=1, target=target)
    p = tmp_path / "dscnn.pte"
    p.write_bytes(serialize_program(program))
    assert_same(to_flatc_json(parse_program(p.read_bytes())), flatc_json(str(p)))


def test_linear_kernel_sum_matches_bias_form():
    """kernel_sum[o] = input_offset * sum_i w[o,i] + bias[o] (cortex-m-ops.md §3.8)."""
    p55, _ = ds_cnn_program(seed=3, target="cortex-m55")
    p33, _ = ds_cnn_program(seed=3, target="cortex-m33")

    def linear_args(p):
        for key, args, plan in _calls(p):
            if key.endswith("quantized_linear.out"):
                return dict(zip([n for n, _ in SIGNATURES[key]], args)), plan
    a55, plan55 = linear_args(p55)
    a33, plan33 = linear_args(p33)
    w = np.frombuffer(p33.constant_bytes(plan33.values[a33["weights"]].val), np.int8).reshape(12, 64)
    bias = np.frombuffer(p33.constant_bytes(plan33.values[a33["bias"]].val), "<i4")
    ksum = np.frombuffer(p55.constant_bytes(plan55.values[a55["kernel_sum"]].val), "<i4")
    off = plan33.values[a33["input_offset"]].val.int_val
    assert (ksum == off * w.astype(np.int64).sum(1) + bias).all()


def test_tiny_requant_scale_becomes_zero_multiplier():
    assert qm.requant_multiplier(2.0 ** -40) == (0, 0)
    m, s = qm.requant_multiplier(2.0 ** -31)
    assert s == -30 and m == 1 << 30
    mults, shifts = qm.per_channel_multipliers([0.5, 2.0 ** -50])
    assert mults.tolist() == [1 << 30, 0] and shifts.tolist() == [0, 0]
