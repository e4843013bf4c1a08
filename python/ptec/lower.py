"""Stage 3: lower a quantized Graph through the backends (ptec.backends).

ptec.partition places every node; this driver walks the graph once, asks the
chosen backend to lower each node (or each run of delegated nodes), and
keeps every node's value in the representation it was made in. Consumers
ask for the one they need: `q` gives int8 (a quantize call when the value is
fp32), `q16` int16 for `--a16` layers, `f` gives fp32 (a dequantize call when
it is int8 or int16). Float inputs get
a quantize and float outputs a dequantize unless int8_io is set. The result
is a ptec.lowered.Lowered; whether the runtime has every kernel it names is
checked by the compiler driver.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from .backends import Backend, DelegateBackend, default_backends
from .backends.cortex_m import kernels as K
from .backends.cortex_m import kernels_a16 as K16
from .backends.cortex_m.lowering_bool import bool_to_float
from .backends.cortex_m.scratch import plan_for_ptec_runtime_only
from .capture_int_casts import narrow_dtype
from .capture_masking_readers import minus_inf_in_int8
from . import capture_integer_states as integer_states
from .ir import Graph, Node, UnsupportedOperator, origin, written
from .lowered import NOT_YET, Act, IOInfo, Lowered, clone_dim_order, layout, new_act
from .lower_constant_outputs import constant_output
from .partition import NO_CODE, Partition
from .pte.fuse_expansion import fuse_expansions
from .pte.program_builder import ProgramBuilder
from .pte.schema import ScalarType, TensorShapeDynamism
from .quant_math import check_requant_shifts

__all__ = ["IOInfo", "Lowered", "LoweringError", "lower"]


# integer values a program computes (argmax, x.long(), x.int()) and their IOInfo dtype
INDEX_TYPES = {ScalarType.LONG: "int64", ScalarType.INT: "int32"}
# program outputs in the model's own dtype, never quantized
EXACT_OUTPUTS = {**INDEX_TYPES, ScalarType.BOOL: "bool"}
# a program input of the example's dtype (capture_input_dtypes)
INPUT_TYPES = {"int64": ScalarType.LONG, "int32": ScalarType.INT, "int16": ScalarType.SHORT,
               "int8": ScalarType.CHAR, "uint8": ScalarType.BYTE, "bool": ScalarType.BOOL}
# outputs torch returns in a 16-bit float or float64 (capture_casts.output_dtype): their program dtype;
# float16 / bfloat16 inputs' too (capture_input_dtypes)
HALF_OUTPUTS = {"float16": ScalarType.HALF, "bfloat16": ScalarType.BFLOAT16, "float64": ScalarType.DOUBLE}


class LoweringError(ValueError):
    pass


class LoweringContext:
    """What a backend's lowering sees: the graph, the builder, the values
    made so far and the placements."""

    def __init__(self, g: Graph, target: str, int8_io: bool, partition: Partition):
        self.g = g
        self.target = target
        self.int8_io = int8_io
        self.b = ProgramBuilder(check_call=check_requant_shifts)
        self.partition = partition
        self.env: Dict[str, Act] = {}
        self.env_f: Dict[str, Act] = {}     # fp32 values that q() replaced in env by their int8 copy
        self.q_copied: Set[str] = set()     # the names of those (env_f also keeps narrow casts' fp32 copies)
        # int16 forms (--a16): made by an a16 layer, or converted for one.
        # Kept apart from env, which q() may overwrite with an int8 copy.
        self.env16: Dict[str, Act] = {}
        # values made on first use: constants (int8 or fp32, by consumer)
        # and transposes a consumer may absorb
        self.deferred: Dict[str, Callable[[], Act]] = {}
        self.pre_transposed: Dict[str, str] = {}   # absorbed transpose -> its input
        self.fallbacks: List[str] = []
        # (input, dim, descending, k, pick, keepdim, rule) -> (values, indices) of one sort/topk/median/mode/cummax
        # call, which a sort node and its sort_indices twin share
        self.ordered: Dict[tuple, tuple] = {}
        self.progress: Optional[Callable[[int, int], None]] = None   # (done, total) per node

    def get(self, name: str) -> Act:
        if name in self.deferred:
            self.env[name] = self.deferred.pop(name)()
        return self.env[name]

    def made(self, name: str) -> Optional[Act]:
        """The value if it is made already, else None: unlike get(), asking
        makes no deferred value (a constant, a transpose a consumer may absorb)."""
        return None if name in self.deferred else self.env.get(name)

    def refuse(self, n: Node, why: str) -> None:
        """Record why the current backend cannot lower n after all (the
        node is handed back to the next backend) and return None."""
        self._handback_reason = why
        return None

    def q(self, name: str) -> Act:
        """The value as int8 on its node's grid."""
        if name in self.deferred and self.g.node(name).op == "constant":
            s, z = self.g.node(name).qparams
            self.deferred.pop(name)
            self.env[name] = self.const_q(name, s, z)
        wide = self.narrow_as_float(name)
        if wide is not None:                 # a float64 cast's float32 copy, quantized for this reader (env keeps
            s, z = self.g.node(name).qparams  # the float64 value itself)
            return K.quantize(self.b, wide, s, z)
        a = self.get(name)
        if a.dtype == ScalarType.CHAR:
            return a
        if a.dtype == ScalarType.SHORT:      # an a16 layer's value, for an int8 consumer
            a = K16.dequantize16(self.b, a)
        if a.dtype in INDEX_TYPES:
            self.index_used_as_number(name)
        boolean = a.dtype == ScalarType.BOOL
        if boolean:                          # a bool read as a number: 0/1, as torch promotes it
            a = bool_to_float(self, a)
        if minus_inf_in_int8(self.g.node(name), self.b.source):     # (capture_masking_readers)
            raise LoweringError(minus_inf_in_int8(self.g.node(name), self.b.source))
        self.refuse_nonfinite(self.g.node(name))
        s, z = self.g.node(name).qparams
        qa = K.quantize(self.b, a, s, z)
        if a.dtype == ScalarType.FLOAT and not boolean:
            self.env_f[name] = a            # fp32 readers after this one keep the unrounded value
            self.q_copied.add(name)
        if not boolean:                      # (a bool keeps its bytes for its bool readers: `(x * m), m.sum()`)
            self.env[name] = qa
        return qa

    def own(self, name: str) -> Act:
        """The value in the dtype its producer made it: an fp32 value (a
        float program input, an fp32 layer's) that an int8 reader's q()
        replaced in env by its int8 copy is its fp32 self. Readers that
        take an fp32 value as it is and anything else as int8 codes (sort,
        argsort, topk, argmax, gather, compares, window max) ask this, so
        what they read does not depend on whether an int8 reader of the
        same value comes before them in the graph; readers of several
        operands ask own_all."""
        a = self.get(name)
        if a.dtype == ScalarType.CHAR and name in self.q_copied:
            return self.env_f[name]
        return a

    def own_all(self, names: Sequence[str]) -> List[Act]:
        """own() of each operand of a reader with several: when that would
        mix an fp32 value with an int8 one (x < x.flip(2): x's own fp32
        value against its flip's int8 move, whose codes are x's int8 copy),
        every operand is read as the graph holds it (get()) instead, so a
        value met together with a move of itself is read on one footing
        (equal elements stay equal)."""
        acts = [self.own(v) for v in names]
        if len({a.dtype for a in acts}) > 1:    # (only own()'s fp32 values can differ from get()'s)
            return [self.get(v) for v in names]
        return acts

    def refuse_nonfinite(self, n: Node) -> None:
        """A value whose calibration samples held NaN or inf that change the
        outputs (quantize.RangeObserver.nonfinite; a program output's always
        do) cannot be int8: its codes would be numbers torch never gave, so
        the model is refused instead. (NaN or inf a later where drops may be
        int8: their garbage codes are dropped too.)"""
        what = n.attrs.get("nonfinite")
        if not what or what.endswith("dropped later") \
                or any(m.op == "unsupported" for m in self.g.nodes):
            return      # (a call ptec cannot run is the refusal: torch.empty_like's NaN is its own)
        what = what.replace(" dropped later", "")
        raise LoweringError(
            f"{origin(n)} gives {what} on the calibration inputs, which an int8 value cannot hold "
            "(log or sqrt of a negative, a division by zero): keep its input inside the function's "
            "domain, or calibrate with the inputs the model will meet")

    def q16(self, name: str) -> Act:
        """The value as int16 on its node's symmetric grid (attrs["scale16"],
        zero point 0): an int8 value is dequantized and quantized again
        (two portable steps, exact to within half an int16 step)."""
        if name in self.env16:
            return self.env16[name]
        a = self.own(name)                   # an fp32 value's own, not an int8 reader's copy of it
        if a.dtype != ScalarType.SHORT:
            f = a if a.dtype == ScalarType.FLOAT else K.dequantize(self.b, a)
            a = K16.quantize16(self.b, f, self.g.node(name).attrs["scale16"])
        self.env16[name] = a
        return a

    def f(self, name: str) -> Act:
        """The value as fp32 (from its int16 form when it has one: the finer grid; an fp32 layer's own
        value when an int8 reader made an int8 copy of it)."""
        a = self.narrow_as_float(name) or self.env_f.get(name) or self.env16.get(name) or self.get(name)
        if a.dtype == ScalarType.FLOAT:
            return a
        if a.dtype in INDEX_TYPES:
            self.index_used_as_number(name)
        if a.dtype == ScalarType.BOOL:
            return bool_to_float(self, a)
        return K16.dequantize16(self.b, a) if a.dtype == ScalarType.SHORT else K.dequantize(self.b, a)

    def narrow_as_float(self, name: str) -> Optional[Act]:
        """A cast value of capture_int_casts read as a number: an int16 /
        uint8 / int8 one is refused (torch computes in its dtype); a float64
        one (`i.double() * 0.5`) is its float32 copy (_to_dim_order_copy),
        as ptec computes every float value. None for any other value."""
        dtype = narrow_dtype(self.g.node(name))
        if dtype is None:
            return None
        if dtype != "float64":
            self.index_used_as_number(name)
        if name not in self.env_f:
            a = self.get(name)
            out = new_act(self.b, ScalarType.FLOAT, a.sizes)
            self.b.call("dim_order_ops::_to_dim_order_copy.out", self=a.value, non_blocking=False, dim_order=None,
                        out=out.value)
            self.env_f[name] = out
        return self.env_f[name]

    def index_used_as_number(self, name: str) -> None:
        """An integer (argmax, x.long(), a bool's .long()) read by a layer
        other than `.float()`, an embedding or a gather: torch computes that
        layer in integers, which ptec has no kernels for, so the model is
        refused rather than given float values."""
        refused = [u for u in self.g.users(name) if u.op == "unsupported" and u.attrs.get("why")]
        if refused:
            # a call capture left unsupported (an index form ptec does not run): its own reason
            raise LoweringError(f"{origin(refused[0])}: {refused[0].attrs['why']}")
        users = [origin(u) for u in self.g.users(name) if u.op not in ("index_to_float", "gather", "embedding")]
        from .capture_indices import INDEX_OPS
        kind = INDEX_TYPES.get(self.get(name).dtype) or narrow_dtype(self.g.node(name))
        what = f"{kind} indices" if self.g.node(name).op in INDEX_OPS else "integers"
        unrun = [u for u in self.g.users(name) if u.op == "unsupported"]
        if unrun:
            # a call ptec has no kernel for in this form (F.ctc_loss's targets, bincount with integer
            # weights): torch takes integers there, so `.float()` would be no advice
            raise LoweringError(f"{origin(unrun[0])} reads the {what} of {written(self.g.node(name))}: ptec has no "
                                f"kernel for it in this form; replace it in the model, or compute it outside ptec")
        raise LoweringError(f"{origin(self.g.node(name))}: its {what} are used by "
                            f"{', '.join(users) or 'a layer'}, which ptec computes only on float values: "
                            f"convert them first with .float()")

    def half_output(self, name: str) -> Act:
        """A model output torch returns as float16 or bfloat16 (x.half(),
        x.bfloat16(): capture_casts): the fp32 value converted by
        _to_dim_order_copy into Half or BFloat16, rounded to nearest even;
        or as float64 (`x.double().exp()`): the fp32 value, exactly, as a
        Double."""
        x = self.f(name)
        out = new_act(self.b, HALF_OUTPUTS[self.g.node(name).attrs["out_dtype"]], x.sizes)
        self.b.call("dim_order_ops::_to_dim_order_copy.out", self=x.value, non_blocking=False, dim_order=None,
                    out=out.value)
        return out

    def const_q(self, name: str, scale: float, zp: int, sizes=None) -> Act:
        """A constant node (reshaped to `sizes`) as an int8 constant on (scale, zp)."""
        value = np.asarray(self.g.node(name).attrs["value"], np.float32)
        if sizes is not None:
            value = value.reshape([int(d) for d in sizes])
        return K.quantized_constant(self.b, value, scale, zp)

    def number(self, name: str) -> Optional[float]:
        """The value of a one-element constant node, else None."""
        node = self.g.node(name)
        if node.op == "constant" and np.asarray(node.attrs["value"]).size == 1:
            return float(np.asarray(node.attrs["value"], np.float64).reshape(-1)[0])
        return None

    def lower_state(self, n: Node) -> Act:
        """A state node: an int8 planned tensor whose initial value (the
        node's init on its grid) the runtime copies in at load and on reset.
        Its lifetime is the whole run (ProgramBuilder.state). An integer /
        bool buffer's: a tensor of its dtype (capture_integer_states)."""
        if n.attrs.get("dtype"):
            return integer_states.lower_state(self, n, INPUT_TYPES)
        if n.attrs.get("fp32_state"):       # computed from itself in fp32 (capture_state_precision)
            init = np.asarray(n.attrs["init"], np.float32).reshape(n.shape)
            v = self.b.state(ScalarType.FLOAT, n.shape, np.ascontiguousarray(init).tobytes())
            return Act(v, [int(d) for d in n.shape], ScalarType.FLOAT)
        s, z = n.qparams
        init = np.asarray(n.attrs["init"], np.float64)
        if len(n.shape) == 4:
            raise LoweringError(f"{origin(n)}: a 4-D state tensor is not supported")
        q = np.clip(np.round(init / s) + z, -128, 127).astype(np.int8).reshape(n.shape)
        v = self.b.state(ScalarType.CHAR, n.shape, q.tobytes())
        return Act(v, [int(d) for d in n.shape], ScalarType.CHAR, s, z)

    def state_source(self, n: Node) -> Tuple[Act, Act]:
        """(value, state) of a state_write: the value as the state keeps it,
        on the state's grid (quantize), its fp32 value for an fp32 state, as
        it is for an integer / bool one."""
        if self.g.node(n.inputs[0]).attrs.get("dtype"):
            return integer_states.state_source(self, n, UnsupportedOperator)
        state = self.state_tensors[n.inputs[0]]
        if self.g.node(n.inputs[0]).attrs.get("fp32_state"):      # the fp32 value as it is
            value = self.f(n.inputs[1])
            if value.sizes != state.sizes:
                raise LoweringError(f"{origin(n)}: the value written into the state is {value.sizes}, "
                                    f"the state {state.sizes}")
            return value, state
        value = self.q(n.inputs[1])
        if (value.scale, value.zp) != (state.scale, state.zp) or value.sizes != state.sizes:
            raise LoweringError(f"{origin(n)}: the value written into the state is not on its "
                                f"int8 grid or shape ({value.sizes} {value.scale} {value.zp} vs "
                                f"{state.sizes} {state.scale} {state.zp})")
        return value, state

    def unaliased(self, a: Act) -> Act:
        """a, or a copy of it when its bytes are a state's (a state's value
        from before its write, or a view of it: `old = self.s; self.s = ...;
        return old`, the delay line `self.x2 = self.x1`): the state writes at
        the end of the run would change it."""
        if not self.b.holds_state(a.value):
            return a
        return clone_dim_order(self.b, a, list(self.b.values[a.value].val.dim_order))

    def on_float_backend(self, name: str) -> bool:
        b = self.partition.backend_of(name)
        return b is not None and b.produces_float

    # -- the walk --------------------------------------------------------------
    def lower_node(self, n: Node) -> None:
        if n.op == "constant":
            value = np.asarray(n.attrs["value"], np.float32)
            self.deferred[n.name] = lambda: Act(self.b.constant(value), list(value.shape),
                                                ScalarType.FLOAT)
            return
        if n.op == "identity":
            self.env[n.name] = self.get(n.inputs[0])
            return
        backend = self.partition.place(n, self)
        while True:
            self._handback_reason = "declined"
            self.b.source = (origin(n), backend.name)    # the chain's stacktrace
            out = backend.lower_node(n, self)
            if out is not None:
                break
            backend = self.partition.hand_back(n, backend, self._handback_reason, self)
        if out is not NOT_YET:
            self.env[n.name] = out
            if out.dtype == ScalarType.SHORT:
                self.env16[n.name] = out

    def lower_delegate(self, backend: DelegateBackend, nodes: List[Node]) -> None:
        inside = {n.name for n in nodes}
        in_names: List[str] = []
        for n in nodes:
            for i in n.inputs:
                if i not in inside and i not in in_names:
                    in_names.append(i)
        out_names = [n.name for n in nodes
                     if n.name in self.g.outputs
                     or any(u.name not in inside for u in self.g.users(n.name))]
        ins = [(name, self.q(name)) for name in in_names]
        outs = []
        for name in out_names:
            node = self.g.node(name)
            outs.append((name, new_act(self.b, ScalarType.CHAR, node.shape, *node.qparams)))
        blob = backend.write_blob(nodes, ins, outs, self)
        self.b.source = (", ".join(origin(n) for n in nodes), backend.name)
        self.b.delegate_call(backend.delegate_id, blob.data,
                             [a.value for _, a in ins] + [a.value for _, a in outs],
                             blob.compile_specs, blob.location)
        for name, a in outs:
            self.env[name] = a

    def run(self) -> Lowered:
        groups = {nodes[0].name: (backend, nodes)
                  for backend, nodes in self.partition.delegate_groups(self)}
        delegated = {n.name for _, nodes in groups.values() for n in nodes}
        inputs, in_values = [], []
        state_writes: List[Node] = []
        self.state_tensors: Dict[str, Act] = {}
        for done, n in enumerate(self.g.nodes, 1):
            if self.progress:
                self.progress(done, len(self.g.nodes))
            self.b.source = None     # lower_node and lower_delegate name what they emit
            if n.op in NO_CODE:
                self.partition.place_no_code(n)
            if n.op == "input" and n.attrs.get("dtype"):
                # token ids (nn.Embedding), integer and bool inputs (capture_input_dtypes): in the
                # model's dtype, never quantized
                a = new_act(self.b, INPUT_TYPES[n.attrs["dtype"]], n.shape)
                inputs.append(IOInfo(n.name, list(n.shape), n.attrs["dtype"], layout(n.shape)))
                in_values.append(a.value)
                self.env[n.name] = a
            elif n.op == "input" and n.attrs.get("in_dtype"):
                # a float16 / bfloat16 input (capture_input_dtypes): taken in its dtype, converted
                # exactly into float32 first, then computed as a float input
                a = new_act(self.b, HALF_OUTPUTS[n.attrs["in_dtype"]], n.shape)
                inputs.append(IOInfo(n.name, list(n.shape), n.attrs["in_dtype"], layout(n.shape)))
                in_values.append(a.value)
                self.env[n.name] = new_act(self.b, ScalarType.FLOAT, n.shape)
                self.b.call("dim_order_ops::_to_dim_order_copy.out", self=a.value, non_blocking=False,
                            dim_order=None, out=self.env[n.name].value)
            elif n.op == "input":
                s, z = n.qparams
                dtype = ScalarType.CHAR if self.int8_io else ScalarType.FLOAT
                a = new_act(self.b, dtype, n.shape, *((s, z) if self.int8_io else ()))
                inputs.append(IOInfo(n.name, list(n.shape), "int8" if self.int8_io else "float32",
                                     layout(n.shape), s, z))
                in_values.append(a.value)
                self.env[n.name] = a
            elif n.op == "state":
                # (kept apart: an int8 reader's q() puts its int8 copy in env)
                self.env[n.name] = self.state_tensors[n.name] = self.lower_state(n)
            elif n.op == "state_write":
                # Its value is the value's; the copy waits until every reader
                # of the state has run (the end of the run).
                self.env[n.name] = self.get(n.inputs[1])
                state_writes.append(n)
            elif n.name in groups:
                self.lower_delegate(*groups[n.name])
                for m in groups[n.name][1]:      # the delegate computes in int8: no NaN or inf kept
                    self.refuse_nonfinite(m)
            elif n.name not in delegated:
                self.lower_node(n)
                if n.name in self.env and self.env[n.name].dtype in (ScalarType.CHAR, ScalarType.SHORT):
                    self.refuse_nonfinite(n)     # computed in int8 (a LUT): no NaN or inf kept
        self.b.source = None
        outputs, out_values = [], []
        for name in self.g.outputs:
            exact = constant_output(self, name)
            if exact is not None:
                # an integer or bool constant the model returns: in its dtype (lower_constant_outputs)
                a = exact[0]
                outputs.append(IOInfo(name, a.sizes, exact[1], layout(a.sizes)))
            elif self.get(name).dtype in EXACT_OUTPUTS:
                # an index the model returns (argmax), a bool (a comparison) or
                # a bool's .int() / .long(): as torch gives it
                a = self.get(name)
                outputs.append(IOInfo(name, a.sizes, EXACT_OUTPUTS[a.dtype], layout(a.sizes)))
            elif narrow_dtype(self.g.node(name)) is not None:
                # an int value's .short() / .byte() / .char() / .double(): its own dtype (capture_int_casts)
                a = self.get(name)
                outputs.append(IOInfo(name, a.sizes, narrow_dtype(self.g.node(name)), layout(a.sizes)))
            elif self.int8_io:
                a = self.q(name)
                outputs.append(IOInfo(name, a.sizes, "int8", layout(a.sizes), a.scale, a.zp))
            elif self.g.node(name).attrs.get("out_dtype"):
                a = self.half_output(name)
                outputs.append(IOInfo(name, a.sizes, self.g.node(name).attrs["out_dtype"], layout(a.sizes)))
            else:
                a = self.f(name)
                outputs.append(IOInfo(name, a.sizes, "float32", layout(a.sizes)))
            a = self.unaliased(a)       # a state's value from before its write: copied before the writes
            out_values.append(a.value)
            outputs[-1].bound = self.b.values[a.value].val.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND
        # The states are written last, after every reader, the outputs too; a
        # value written that is another state's (or its own) from before the
        # writes is copied first (a swap, the delay line `self.x2 = self.x1`).
        copies = []
        for n in state_writes:
            self.b.source = (origin(n), "none")
            value, state = self.state_source(n)
            copies.append((n, self.unaliased(value), state))
        for n, value, state in copies:
            self.b.source = (origin(n), "none")
            self.b.call("aten::view_copy.out", self=value.value, size=list(state.sizes), out=state.value)
        self.b.source = None
        self.b.set_io(in_values, out_values)
        placements = self.partition.in_graph_order()
        refusals = [f"{p.source or p.node}: {p.reason}" for p in placements
                    if self.partition.backend_of(p.node) is not None
                    and self.partition.backend_of(p.node).produces_float]
        unsupported = [origin(n) + (f": {n.attrs['why']}" if n.attrs.get("why") else "")
                       for n in self.g.nodes if n.op == "unsupported"]
        return Lowered(self.b, inputs, outputs, self.target, placements, self.fallbacks, refusals,
                       unsupported)


def lower(q: Graph, target: str = "cortex-m55", int8_io: bool = False,
          backends: Optional[Sequence[Backend]] = None,
          progress: Optional[Callable[[int, int], None]] = None,
          ptec_runtime_only: bool = False, in_place: bool = False,
          fuse_expansion: bool = False) -> Lowered:
    """progress(done, total) is called after each node is placed and lowered.
    ptec_runtime_only: plan no scratch argument for upstream's CMSIS-NN
    kernels (ptec's take theirs from the runtime's scratch region) and call
    those operators by their ptec:: names, which upstream does not have.
    in_place (with ptec_runtime_only): depthwise and pointwise layers whose
    input dies there write over it (python/ptec/pte/in_place.py).
    fuse_expansion (with ptec_runtime_only): each 1x1 expansion and the
    depthwise after it become one call (python/ptec/pte/fuse_expansion.py)."""
    for n in q.nodes:
        if n.qparams is None:
            raise LoweringError(f"node {origin(n)} has no quantization parameters")
    backends = default_backends() if backends is None else list(backends)
    ctx = LoweringContext(q, target, int8_io, Partition(q, backends))
    ctx.progress = progress
    if ptec_runtime_only:
        plan_for_ptec_runtime_only(ctx.b, in_place)
    lowered = ctx.run()
    if fuse_expansion and ptec_runtime_only:
        lowered.builder.fused_expansions = fuse_expansions(lowered.builder)
    return lowered
