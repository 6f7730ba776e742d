"""Nsight Compute exports: `ncu --csv --page details` / `--page raw` (with the ==PROF== lines ncu prints
around them and locale-formatted numbers), and `.ncu-rep` files through NVIDIA's `ncu_report` module.

The CSV layout is the one `ncu --csv` documents (Nsight Compute CLI docs, "--csv" and "--page"): details
has one row per (kernel, section, metric) with "ID", "Kernel Name", "Section Name", "Metric Name",
"Metric Unit", "Metric Value" (and, with rules, "Rule Name", "Rule Type", "Rule Description",
"Estimated Speedup"); raw has one row per kernel with one column per metric and a units row under the header.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from diagnose.profile.model import Kernel, Profile, ProfileError

# details-page metric names (section, metric) -> canonical key
DETAILS = {
    "Duration": "duration", "Elapsed Cycles": "elapsed_cycles",
    "Compute (SM) Throughput": "sm_pct", "Memory Throughput": "mem_pct", "DRAM Throughput": "dram_pct",
    "L1/TEX Cache Throughput": "l1_pct", "L2 Cache Throughput": "l2_pct",
    "Achieved Occupancy": "achieved_occupancy_pct", "Theoretical Occupancy": "theoretical_occupancy_pct",
    "Block Limit Registers": "limit_registers", "Block Limit Shared Mem": "limit_smem",
    "Block Limit Warps": "limit_warps", "Block Limit SM": "limit_blocks",
    "Registers Per Thread": "registers", "Block Size": "block_size", "Grid Size": "grid_size",
    "Static Shared Memory Per Block": "smem_static", "Dynamic Shared Memory Per Block": "smem_dynamic",
    "Waves Per SM": "waves",
}
# raw-page metric names -> canonical key
RAW = {
    "gpu__time_duration.sum": "duration",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_pct",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "mem_pct",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct",
    "l1tex__throughput.avg.pct_of_peak_sustained_active": "l1_pct",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": "l2_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical_occupancy_pct",
    "launch__occupancy_limit_registers": "limit_registers", "launch__occupancy_limit_shared_mem": "limit_smem",
    "launch__occupancy_limit_warps": "limit_warps", "launch__occupancy_limit_blocks": "limit_blocks",
    "launch__registers_per_thread": "registers", "launch__block_size": "block_size", "launch__grid_size": "grid_size",
    "dram__bytes_read.sum": "dram_read_bytes", "dram__bytes_write.sum": "dram_write_bytes",
    "dram__bytes.sum": "dram_bytes",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "smem_conflicts_ld",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "smem_conflicts_st",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "smem_wavefronts_ld",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "smem_wavefronts_st",
    "l1tex__t_requests_pipe_lsu_mem_shared_op_ld.sum": "smem_requests_ld",
    "l1tex__t_requests_pipe_lsu_mem_shared_op_st.sum": "smem_requests_st",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "gld_sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "gld_requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "gst_sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "gst_requests",
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": "fadd", "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": "fmul",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": "ffma",
    "sm__sass_thread_inst_executed_op_hadd_pred_on.sum": "hadd", "sm__sass_thread_inst_executed_op_hmul_pred_on.sum": "hmul",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum": "hfma",
    "sm__sass_thread_inst_executed_op_dadd_pred_on.sum": "dadd", "sm__sass_thread_inst_executed_op_dmul_pred_on.sum": "dmul",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum": "dfma",
    "sm__inst_executed_pipe_tensor.sum": "tensor_inst",
}
_STALL = re.compile(r"smsp__average_warps?_(?:issue_stalled|latency_issue_stalled)_(\w+?)_per_issue_active\.ratio|"
                    r"smsp__pcsamp_warps_issue_stalled_(\w+)$")
# unit -> factor to the canonical unit (time: ns, bytes: B, rates: as printed)
_TIME = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6, "second": 1e9, "s": 1e9}
_BYTES = {"byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12, "kibyte": 1024.0,
          "mibyte": 1024.0 ** 2, "gibyte": 1024.0 ** 3}


_COMMA_DECIMAL = re.compile(r"^-?\d+,\d{1,2}$|^-?\d+,\d{4,}$|^-?\d{1,3}(\.\d{3})+(,\d+)?$|^-?\d{1,3}(\.\d{3}){2,}$")


def decimal_comma(cells) -> bool:
    """Whether a file's numbers use a decimal comma (a German/French locale): decided once per file, since
    '262.144' alone could be either."""
    return any(_COMMA_DECIMAL.match(str(c).strip().rstrip("%")) for c in cells)


def number(text, comma: bool | None = None) -> float | None:
    """'1,234.5' / '1.234,5' / '12.3%' / 'n/a' -> float or None (ncu prints the locale's separators).
    `comma`: the file's locale uses a decimal comma (None: guess from this cell alone)."""
    s = str(text).strip().rstrip("%").replace("\u202f", "").replace(" ", "")
    if not s or s.lower() in ("n/a", "nan", "-", "(!)"):
        return None
    if comma is None:
        comma = bool(_COMMA_DECIMAL.match(s))
    if comma:
        s = s.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s) or re.fullmatch(r"-?\d+(\.\d+)?", s):
        s = s.replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


def scale(value: float, unit: str, key: str) -> float:
    u = (unit or "").strip().lower()
    if key == "duration" or u in _TIME:
        return value * _TIME.get(u, 1.0)
    if u in _BYTES:
        return value * _BYTES[u]
    return value


def _csv_body(text: str, path: str) -> tuple[list[str], list[list[str]], int]:
    """The CSV table inside ncu's output (program output and ==PROF== lines around it), and the line it starts on."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"') or l.startswith("ID,")), None)
    if start is None:
        if any(l.startswith("==PROF==") for l in lines):
            raise ProfileError(f"{path}: ncu output with no CSV table: was it run with --csv (and did it profile "
                               "any kernel? look for '==PROF== Profiling' lines)")
        raise ProfileError(f"{path}: not an Nsight Compute CSV export (no \"ID\" header row); export one with "
                           "`ncu --csv --page details` or `--page raw`")
    body = [l for l in lines[start:] if l.strip() and not l.startswith("==PROF==") and not l.startswith("==ERROR==")]
    rows = list(csv.reader(io.StringIO("\n".join(body))))
    return rows[0], rows[1:], start + 1


def read_csv(path) -> Profile:
    p = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ProfileError(f"{p}: cannot read ({e.strerror})") from None
    errors = [l for l in text.splitlines() if l.startswith("==ERROR==")]
    header, rows, first = _csv_body(text, p)
    col = {h: i for i, h in enumerate(header)}
    prof = Profile(p, "ncu")
    prof.notes += [e.replace("==ERROR==", "ncu error:").strip() for e in errors]
    if "Metric Name" in col:
        _details(prof, header, rows, col, first)
    else:
        _raw(prof, header, rows, col, first)
    if not prof.kernels:
        raise ProfileError(f"{p}: the CSV has a header but no kernel rows (truncated, or nothing was profiled)")
    return prof


def _need(col, names, path, page):
    miss = [n for n in names if n not in col]
    if miss:
        raise ProfileError(f"{path}: the {page} CSV lacks column(s) {', '.join(miss)}: export it with "
                           f"`ncu --csv --page {page}` (the file may be truncated or from another tool)")


def _details(prof: Profile, header, rows, col, first):
    _need(col, ("ID", "Kernel Name", "Metric Name", "Metric Value"), prof.file, "details")
    by_id: dict[str, Kernel] = {}
    comma = decimal_comma(r[col["Metric Value"]] for r in rows if len(r) > col["Metric Value"])
    for n, r in enumerate(rows, first + 1):
        if len(r) < len(header):
            raise ProfileError(f"{prof.file}:{n}: row has {len(r)} of {len(header)} columns: the export is truncated")
        kid = r[col["ID"]]
        k = by_id.get(kid)
        if k is None:
            k = by_id[kid] = Kernel(r[col["Kernel Name"]], prof.file, n, "ncu",
                                    device=r[col["Device"]] if "Device" in col else None)
            for name, key in (("Block Size", "block_size"), ("Grid Size", "grid_size")):
                if name in col:
                    k.metrics.setdefault(key + "_text", r[col[name]])
        rule = r[col["Rule Name"]] if "Rule Name" in col else ""
        if rule:
            k.rules.append({"name": rule, "type": r[col.get("Rule Type", 0)] if "Rule Type" in col else "",
                            "message": r[col["Rule Description"]] if "Rule Description" in col else "",
                            "speedup": number(r[col["Estimated Speedup"]], comma) if "Estimated Speedup" in col else None,
                            "section": r[col["Section Name"]] if "Section Name" in col else ""})
            continue
        metric = r[col["Metric Name"]]
        key = DETAILS.get(metric)
        if metric == "Memory Throughput" and "Metric Unit" in col and "/" in r[col["Metric Unit"]]:
            key = "mem_bandwidth"          # Memory Workload Analysis prints it in bytes/second
        v = number(r[col["Metric Value"]], comma)
        if key and v is not None:
            k.metrics[key] = scale(v, r[col["Metric Unit"]] if "Metric Unit" in col else "", key)
        m = _STALL.match(metric)
        if m and v is not None:
            k.stalls[m[1] or m[2]] = v
    prof.kernels = list(by_id.values())


def _raw(prof: Profile, header, rows, col, first):
    _need(col, ("ID", "Kernel Name"), prof.file, "raw")
    units = rows[0] if rows and (not rows[0][col["ID"]].strip() or number(rows[0][col["ID"]]) is None) else None
    data = rows[1:] if units else rows
    metric_cols = [i for h, i in col.items() if h in RAW or _STALL.match(h)]
    comma = decimal_comma(r[i] for r in data for i in metric_cols if i < len(r))
    for n, r in enumerate(data, first + (2 if units else 1)):
        if len(r) < len(header):
            raise ProfileError(f"{prof.file}:{n}: row has {len(r)} of {len(header)} columns: the export is truncated")
        k = Kernel(r[col["Kernel Name"]], prof.file, n, "ncu", device=r[col["Device"]] if "Device" in col else None)
        for h, i in col.items():
            key = RAW.get(h)
            m = _STALL.match(h)
            v = number(r[i], comma)
            if v is None:
                continue
            if key:
                k.metrics[key] = scale(v, units[i] if units else "", key)
            elif m:
                k.stalls[m[1] or m[2]] = v
        prof.kernels.append(k)


def read_report(path) -> Profile:
    """A .ncu-rep through NVIDIA's ncu_report module (optional extra `profile`), rule results included."""
    p = str(path)
    try:
        import ncu_report
    except ImportError:
        raise ProfileError(f"{p}: reading .ncu-rep files needs NVIDIA's ncu_report module: "
                           "pip install 'gpu-diagnose[profile]' (or export CSV: ncu --import FILE --csv --page raw)") from None
    ctx = ncu_report.load_report(p)
    prof = Profile(p, "ncu")
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            a = rng.action_by_idx(ai)
            k = Kernel(a.name(), p, None, "ncu")
            for name in a.metric_names():
                met = a.metric_by_name(name)
                key = RAW.get(name)
                sm = _STALL.match(name)
                if not key and not sm:
                    continue
                try:
                    v = float(met.as_double())
                except Exception:
                    continue
                if key:
                    k.metrics[key] = scale(v, met.unit() if hasattr(met, "unit") else "", key)
                else:
                    k.stalls[sm[1] or sm[2]] = v
            try:
                for rr in a.rule_results_as_dicts():
                    msg = rr.get("rule_message") or {}
                    k.rules.append({"name": rr.get("name") or rr.get("rule_identifier", ""),
                                    "type": str(msg.get("type", "")), "message": msg.get("message", ""),
                                    "speedup": (rr.get("speedup_estimation") or {}).get("speedup"),
                                    "section": rr.get("section_identifier", "")})
            except Exception:
                pass
            prof.kernels.append(k)
    if not prof.kernels:
        raise ProfileError(f"{p}: no kernel in this report (not an Nsight Compute report, or an empty one)")
    return prof
