"""Independent check of a .pte memory plan: recompute tensor lifetimes from
the instructions of a program read back from bytes, and verify that tensors
alive at the same time never share bytes."""
from ptec.pte import KernelCall, Tensor, TensorList


def storage_key(t: Tensor):
    return (t.allocation_info.memory_id, t.allocation_info.offset)


def check_plan(program) -> None:
    plan = program.plan()
    values = plan.values
    arena = plan.non_const_buffer_sizes[1] if len(plan.non_const_buffer_sizes) > 1 else 0
    n = len(plan.chains[0].instructions)
    # group values by storage (views share offset with the same base)
    first, last, size = {}, {}, {}

    def touch(v, t):
        val = values[v].val
        if not isinstance(val, Tensor) or val.allocation_info is None:
            return
        assert val.allocation_info.memory_id == 1
        assert val.allocation_info.offset + val.nbytes <= arena, (v, val)
        assert val.allocation_info.offset % 16 == 0
        k = storage_key(val) + (v,)
        first[k] = min(first.get(k, t), t)
        last[k] = max(last.get(k, t), t)
        size[k] = val.nbytes

    for t, ins in enumerate(plan.chains[0].instructions):
        call = ins.instr_args
        assert isinstance(call, KernelCall)
        for a in call.args:
            val = values[a].val
            if isinstance(val, TensorList):
                for i in val.items:
                    touch(i, t)
            else:
                touch(a, t)
    for v in plan.inputs:
        touch(v, -1)
    for v in plan.outputs:
        touch(v, n)
    keys = list(first)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if a[:2] == b[:2] or size[a] == 0 or size[b] == 0:
                continue                      # same storage (a view) or empty
            if first[a] <= last[b] and first[b] <= last[a]:
                oa, ob = a[1], b[1]
                assert oa + size[a] <= ob or ob + size[b] <= oa, (
                    f"v{a[2]} [{oa},{oa + size[a]}) and v{b[2]} [{ob},{ob + size[b]}) overlap "
                    f"while both live")
