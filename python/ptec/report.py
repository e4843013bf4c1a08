"""`ptec report MODEL.pte [--profile RUN] -o report.html`: one self-contained
HTML file (no network) a person reads to see what runs where and what it
costs:

* the memory timeline: every planned tensor as a bar over the instruction
  index, at its offset in its planned buffer, with the peak marked;
* the cost per operator: instructions (or time) per instruction of the
  program from a profile run, next to its multiply-accumulates;
* the placement of each instruction (int8 kernels, fp32 fallback or a
  delegate such as the NPU) with the PyTorch module it came from, which
  `ptec compile` records in the chain's stacktrace;
* the memory the runtime asks for, per region, and the program and RAM
  totals against a board's budget.

The profile is `ptec-run --profile --json run.json`, or the log of the
firmware runner (scripts/run_qemu.sh ... > run.log), whose per-operator
table this reads. The charts are drawn by the page's script from the data
it embeds; tests/python/test_report.py renders it in Chromium."""
from __future__ import annotations

import html
import json
import math
import re
from typing import Dict, List, Optional

from .pte.reader import parse_program
from .pte.schema import DelegateCall, KernelCall, Tensor
from .requirements import requirements

# RAM and program-storage budgets of boards, in bytes: the QEMU boards'
# linker scripts (data RAM; the memory the program is read from), and the
# i.MX93's Cortex-M33 (108 KB SRAM for data; the program in DDR).
BOARDS = {
    "mps3-an547": {"core": "cortex-m55", "ram": 4 * 2**20, "program": 8 * 2**20,
                   "ram_name": "ISRAM", "program_name": "QSPI"},
    "mps2-an505": {"core": "cortex-m33", "ram": 3 * 2**20, "program": 4 * 2**20,
                   "ram_name": "SSRAM2/3 pool", "program_name": "SSRAM1"},
    "mps2-an500": {"core": "cortex-m7", "ram": 3 * 2**20, "program": 4 * 2**20,
                   "ram_name": "SSRAM2/3 pool", "program_name": "SSRAM1"},
    "mps2-an386": {"core": "cortex-m4", "ram": 3 * 2**20, "program": 4 * 2**20,
                   "ram_name": "SSRAM2/3 pool", "program_name": "SSRAM1"},
    "mps2-an385": {"core": "cortex-m3", "ram": 3 * 2**20, "program": 4 * 2**20,
                   "ram_name": "SSRAM2/3 pool", "program_name": "SSRAM1"},
    "imx93-m33": {"core": "cortex-m33", "ram": 108 * 1024, "program": 14 * 2**20,
                  "ram_name": "M33 SRAM", "program_name": "DDR model region"},
}


class ReportError(ValueError):
    """A report that cannot be made; the message is one line."""


def _numel(sizes) -> int:
    return int(math.prod(sizes or [1]))


def _macs(name: str, tensors: List[Optional[Tensor]]) -> int:
    """Multiply-accumulates of one kernel call, from its argument shapes."""
    t = [x for x in tensors if x is not None]
    if len(t) < 2:
        return 0
    out = tensors[-1] if tensors[-1] is not None else t[-1]
    base = name.split("::")[-1].split(".")[0]
    w = tensors[1]
    if w is None:
        return 0
    if "depthwise_conv2d" in base:
        return _numel(out.sizes) * int(w.sizes[1]) * int(w.sizes[2])
    if "conv2d" in base or base == "convolution":
        per_output = _numel(w.sizes) // max(1, int(w.sizes[0]))
        return _numel(out.sizes) * per_output
    if base in ("quantized_linear", "linear"):
        return _numel(out.sizes) * int(w.sizes[-1])
    if base == "quantized_svdf" and tensors[2] is not None:
        # per frame: the feature filter (rows x input_size), the time filter (rows x memory)
        frames = _numel(out.sizes) // max(1, int(out.sizes[-1]))
        return frames * (_numel(w.sizes) + _numel(tensors[2].sizes))
    if "matmul" in base or base == "bmm":
        return _numel(out.sizes) * int(tensors[0].sizes[-1]) if tensors[0] is not None else 0
    return 0


def _placement(op: str, context: str) -> str:
    """Where an instruction runs: the backend `ptec compile` recorded in the
    stacktrace, else (a program from elsewhere) guessed from the operator."""
    if context == "cortex_m":
        return "CPU int8"
    if context == "portable":
        return "CPU fp32 fallback"
    if context:
        return f"NPU ({context})" if "ethos" in context.lower() else f"delegate ({context})"
    if op.startswith(("cortex_m::", "quantized_decomposed::")):
        return "CPU int8"
    return "CPU fp32"


def load_profile(path: str) -> dict:
    """{"unit", "per_instruction": {index: ticks}, "source"} from ptec-run's
    --json file or the firmware runner's log."""
    with open(path, errors="replace") as f:
        text = f.read()
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ReportError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from e
        per = {int(i["index"]): float(i["ticks"]) for i in data.get("instructions", [])}
        if not per:
            raise ReportError(f"{path}: no per-instruction figures (run ptec-run with --profile --json)")
        return {"unit": data.get("unit", "ticks"), "per_instruction": per, "source": "ptec-run"}
    rows = re.findall(r"^  \[\s*(\d+)\] \S+\s+([\d,]+)\s+[\d.]+%$", text, re.M)
    if not rows:
        raise ReportError(f"{path}: neither ptec-run --json output nor a runner log with a "
                          "per-operator profile")
    unit = re.search(r"^(\w+) per operator:", text, re.M)
    return {"unit": unit.group(1) if unit else "instructions",
            "per_instruction": {int(i): float(v.replace(",", "")) for i, v in rows},
            "source": "firmware runner"}


def collect(data: bytes, target: str = "cortex-m55", profile: Optional[dict] = None) -> dict:
    """Everything the page shows, as plain data."""
    program = parse_program(data)
    plan = program.plan()
    values = plan.values or []
    chain = plan.chains[0]
    frames = chain.stacktrace or []
    ops = plan.operators or []
    n = len(chain.instructions or [])
    rows, uses = [], {}
    for i, ins in enumerate(chain.instructions or []):
        call = ins.instr_args
        fl = frames[i].items if i < len(frames) and frames[i].items else []
        module = fl[0].name if fl else ""
        context = fl[0].context if fl else ""
        args = list(getattr(call, "args", None) or [])
        tensors = [values[a].val if 0 <= a < len(values) and isinstance(values[a].val, Tensor) else None
                   for a in args]
        if isinstance(call, KernelCall):
            op = ops[call.op_index]
            name = op.name + (f".{op.overload}" if op.overload else "")
            placed = _placement(name, context)
            macs = _macs(name, tensors)
        elif isinstance(call, DelegateCall):
            d = plan.delegates[call.delegate_index]
            name, placed, macs = f"delegate {d.id}", _placement("", context or d.id), None
        else:
            name, placed, macs = type(call).__name__, "runtime", 0
        for a in args:
            uses.setdefault(a, []).append(i)
        ticks = profile["per_instruction"].get(i) if profile else None
        rows.append({"index": i, "op": name, "placed": placed, "module": module, "macs": macs,
                     "ticks": ticks})
    last = max(n - 1, 0)
    tensors = []
    for v, ev in enumerate(values):
        t = ev.val
        if not isinstance(t, Tensor) or t.allocation_info is None or t.allocation_info.memory_id < 1:
            continue
        seen = uses.get(v, [])
        start = 0 if v in (plan.inputs or []) else (min(seen) if seen else None)
        end = last if v in (plan.outputs or []) else (max(seen) if seen else None)
        if start is None:
            continue
        a = t.allocation_info
        nbytes = t.nbytes
        tensors.append({"value": v, "memory": a.memory_id, "offset": a.memory_offset_low + (a.memory_offset_high << 32),
                        "bytes": nbytes, "start": start, "end": end, "shape": list(t.sizes or [])})
    live = []
    for i in range(n or 1):
        spans: Dict[int, List] = {}
        for t in tensors:
            if t["start"] <= i <= t["end"]:
                spans.setdefault(t["memory"], []).append((t["offset"], t["offset"] + t["bytes"]))
        total = 0
        for s in spans.values():
            end = -1
            for lo, hi in sorted(s):
                total += max(0, hi - max(lo, end))
                end = max(end, hi)
        live.append(total)
    peak = max(range(len(live)), key=live.__getitem__) if live else 0
    req = requirements(program, target=target)
    buffers = [int(x) for x in (plan.non_const_buffer_sizes or [])[1:]]
    return {"instructions": rows, "tensors": tensors, "live": live, "peak_index": peak,
            "peak_bytes": live[peak] if live else 0, "buffers": buffers, "target": target,
            "requirements": req.as_dict(), "program_bytes": len(data),
            "profile_unit": profile["unit"] if profile else None,
            "profile_source": profile["source"] if profile else None}


def _fmt(n) -> str:
    return "—" if n is None else f"{int(round(n)):,}"


def render(d: dict, title: str, board: Optional[str] = None) -> str:
    req = d["requirements"]
    rows = []
    for r in d["instructions"]:
        rows.append(f"<tr><td>{r['index']}</td><td><code>{html.escape(r['op'])}</code></td>"
                    f"<td class='{'npu' if r['placed'].startswith('NPU') else 'fb' if 'fallback' in r['placed'] else 'cpu'}'>"
                    f"{html.escape(r['placed'])}</td><td>{html.escape(r['module'] or '—')}</td>"
                    f"<td class=n>{_fmt(r['macs'])}</td><td class=n>{_fmt(r['ticks'])}</td></tr>")
    regions = [("metadata", req["metadata_bytes"])] + \
        [(f"planned buffer {i + 1}", b) for i, b in enumerate(req["planned_bytes"])] + \
        [("scratch", req["scratch_bytes"]), ("fast scratch", req["fast_scratch_bytes"])]
    reg_rows = "".join(f"<tr><td>{k}</td><td class=n>{v:,}</td></tr>" for k, v in regions)
    budget = ""
    if board:
        b = BOARDS[board]
        ram_pct = 100.0 * req["total_bytes"] / b["ram"]
        prog_pct = 100.0 * d["program_bytes"] / b["program"]
        budget = (f"<p class=budget>On <b>{html.escape(board)}</b> ({b['core']}): RAM "
                  f"{req['total_bytes']:,} of {b['ram']:,} bytes ({b['ram_name']}, {ram_pct:.1f}%); "
                  f"program {d['program_bytes']:,} of {b['program']:,} bytes ({b['program_name']}, "
                  f"{prog_pct:.1f}%), plus the runtime's code (<code>make size</code>).</p>")
    counts: Dict[str, int] = {}
    for r in d["instructions"]:
        counts[r["placed"]] = counts.get(r["placed"], 0) + 1
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    unit = d["profile_unit"] or "instructions"
    cost_note = (f"{unit} per program instruction (kernel or delegate call), from the {d['profile_source']} profile" if d["profile_unit"]
                 else "no profile given (--profile run.json from ptec-run --profile --json, or a "
                      "firmware runner log): multiply-accumulates only")
    data = json.dumps(d).replace("</", "<\\/")
    return _PAGE.format(title=html.escape(title), target=html.escape(d["target"]), summary=html.escape(summary),
                        rows="".join(rows), reg_rows=reg_rows, total=f"{req['total_bytes']:,}",
                        program=f"{d['program_bytes']:,}", budget=budget, data=data,
                        peak=f"{d['peak_bytes']:,}", peak_index=d["peak_index"], cost_note=html.escape(cost_note),
                        unit=html.escape(unit))


def write_report(pte_path: str, out_path: str, profile_path: Optional[str] = None,
                 target: str = "cortex-m55", board: Optional[str] = None, open_file=open,
                 placement_path: Optional[str] = None) -> dict:
    """placement_path: the text `compile --placement` wrote for an Ethos-U
    program; the page then shows where each operator inside the delegates
    runs, and why."""
    with open(pte_path, "rb") as f:
        data = f.read()
    if board is not None and board not in BOARDS:
        raise ReportError(f"--board {board}: not one of {', '.join(BOARDS)}")
    profile = load_profile(profile_path) if profile_path else None
    d = collect(data, target, profile)
    if profile and max(profile["per_instruction"], default=-1) >= len(d["instructions"]):
        raise ReportError(f"{profile_path}: the profile has more instructions than {pte_path} "
                          "(a run of another program?)")
    page = render(d, pte_path, board)
    if placement_path:
        try:
            with open(placement_path) as f:
                text = f.read()
        except OSError as e:
            raise ReportError(f"--placement {placement_path}: cannot read: {e.strerror or e}") from None
        section = ("<h2>Ethos-U placement</h2>\n<p class=note>Every operator of the model: on the "
                   "NPU (which delegate) or on the CPU, and why; from <code>compile --placement</code>."
                   "</p>\n<pre>" + html.escape(text) + "</pre>\n")
        page = page.replace("<h2>Memory the runtime asks for</h2>", section
                            + "<h2>Memory the runtime asks for</h2>", 1)
    with open_file(out_path, "w") as f:
        f.write(page)
    return d


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ptec report: {title}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }}
h1 {{ font-size: 20px; }} h2 {{ font-size: 16px; margin-top: 28px; }}
table {{ border-collapse: collapse; }} td, th {{ border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; }}
td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.cpu {{ color: #1f5fa8; }} td.fb {{ color: #b35c00; }} td.npu {{ color: #237a2f; }}
svg text {{ font: 11px system-ui, sans-serif; }} .note {{ color: #666; }}
</style></head>
<body data-charts="pending">
<h1>ptec report: {title}</h1>
<p>Build: <b>{target}</b>. Placement: {summary}. The runtime asks for <b>{total}</b> bytes of RAM;
the program is {program} bytes.</p>
{budget}
<h2>Memory timeline</h2>
<p class=note>Each planned tensor as a bar from the instruction that first uses it to the last, at its
offset in its planned buffer. Peak: {peak} bytes live at instruction {peak_index} (red line).</p>
<div id="timeline"></div>
<h2>Cost per operator</h2>
<p class=note>{cost_note}. Multiply-accumulates from the argument shapes (NPU delegates: —).</p>
<div id="cost"></div>
<h2>Placement</h2>
<table><tr><th>#</th><th>operator</th><th>runs on</th><th>PyTorch module</th><th>MACs</th><th>{unit}</th></tr>
{rows}</table>
<h2>Memory the runtime asks for</h2>
<table><tr><th>region</th><th>bytes</th></tr>{reg_rows}
<tr><td><b>total</b> (one buffer, 16-byte aligned regions)</td><td class=n><b>{total}</b></td></tr></table>
<script type="application/json" id="data">{data}</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const NS = "http://www.w3.org/2000/svg";
function el(tag, attrs, parent, text) {{
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}}
function svg(host, w, h) {{ return el("svg", {{width: w, height: h, viewBox: `0 0 ${{w}} ${{h}}`}}, host); }}
const colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"];
function timeline() {{
  const host = document.getElementById("timeline");
  const n = Math.max(1, D.instructions.length), W = 1100, left = 60, plotW = W - left - 20;
  let drawn = 0;
  D.buffers.forEach((size, b) => {{
    const mem = b + 1, H = 220, top = 24, plotH = H - top - 30;
    const s = svg(host, W, H);
    s.classList.add("timeline-panel");
    el("text", {{x: 4, y: 14}}, s, `planned buffer ${{mem}}: ${{size.toLocaleString()}} bytes`);
    const x = i => left + plotW * i / n, y = off => top + plotH * off / Math.max(1, size);
    D.tensors.filter(t => t.memory === mem).forEach((t, k) => {{
      const r = el("rect", {{x: x(t.start), y: y(t.offset), width: Math.max(2, x(t.end + 1) - x(t.start)),
        height: Math.max(1, y(t.offset + t.bytes) - y(t.offset)), fill: colors[k % colors.length],
        "fill-opacity": 0.75, class: "tensor"}}, s);
      el("title", {{}}, r, `value ${{t.value}} [${{t.shape}}]: ${{t.bytes.toLocaleString()}} B at ${{t.offset}}, instructions ${{t.start}}..${{t.end}}`);
      drawn++;
    }});
    el("line", {{x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH, stroke: "#888"}}, s);
    el("text", {{x: left, y: H - 6}}, s, "instruction index →");
    el("text", {{x: 4, y: top + 10}}, s, "offset 0");
    const px = x(D.peak_index + 0.5);
    el("line", {{x1: px, y1: top, x2: px, y2: top + plotH, stroke: "#d00", "stroke-width": 2, class: "peak"}}, s);
    el("text", {{x: px + 4, y: top + 12, fill: "#d00"}}, s, `peak ${{D.peak_bytes.toLocaleString()}} B`);
  }});
  return drawn;
}}
function cost() {{
  const host = document.getElementById("cost");
  const rows = D.instructions, W = 1100, rowH = 16, left = 330, H = 30 + rows.length * rowH;
  const s = svg(host, W, H);
  const maxT = Math.max(1, ...rows.map(r => r.ticks || 0)), maxM = Math.max(1, ...rows.map(r => r.macs || 0));
  const half = (W - left - 20) / 2;
  el("text", {{x: left, y: 14}}, s, D.profile_unit ? `${{D.profile_unit}}` : "no profile");
  el("text", {{x: left + half + 10, y: 14}}, s, "multiply-accumulates");
  let bars = 0;
  rows.forEach((r, i) => {{
    const yy = 24 + i * rowH;
    const op = r.op.split("::").pop().split(".")[0];
    el("text", {{x: 4, y: yy + 11}}, s, `${{r.index}} ${{op.slice(0, 26)}}  ${{(r.module || "").slice(0, 22)}}`);
    if (r.ticks) {{ el("rect", {{x: left, y: yy + 2, width: Math.max(1, (half - 10) * r.ticks / maxT), height: rowH - 4,
      fill: "#4e79a7", class: "cost"}}, s); bars++; }}
    if (r.macs) {{ el("rect", {{x: left + half + 10, y: yy + 2, width: Math.max(1, (half - 10) * r.macs / maxM),
      height: rowH - 4, fill: "#59a14f", class: "macs"}}, s); bars++; }}
  }});
  return bars;
}}
const t = timeline(), c = cost();
document.body.dataset.charts = "drawn";
document.body.dataset.tensors = String(t);
document.body.dataset.bars = String(c);
</script>
</body></html>
"""
