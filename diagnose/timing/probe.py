"""Can the task's correctness check fail? Run it against trivial candidates (this runs the task's code).

`probe(task)` starts probe_runner.py in a subprocess (the same Python, the task's folder as working
directory, a timeout, output capped), reads the one JSON line it prints and turns it into findings:
every trivial candidate (zeros, an uninitialised buffer, an input passed through, a stale reference
output) that the check accepts is an error; a check that rejects the reference's own output is one too.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from findings import Evidence, Finding

RUNNER = Path(__file__).with_name("probe_runner.py")
MARK = "DIAGNOSE-PROBE-RESULT "
MAX_OUTPUT = 4 * 1024 * 1024


class ProbeError(ValueError):
    """The task could not be probed; the message names the file and says why."""


@dataclass
class ProbeResult:
    task: str
    probes: list
    notes: list
    reference: object
    findings: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"task": self.task, "probes": self.probes, "notes": self.notes, "reference": self.reference,
                "findings": [f.to_json() for f in self.findings]}

    def text(self) -> str:
        lines = [f"{self.task}: the task's check against trivial candidates"]
        for p in self.probes:
            verdict = {True: "ACCEPTED", False: "rejected", None: "not tried"}[p.get("accepted")]
            line = f"  {p['candidate']:<12} {verdict:<9} {p['what']}"
            if p.get("error"):
                line += f" ({p['error']})"
            lines.append(line if len(line) <= 80 else line[:76] + " ...")
        for n in self.notes:
            lines.append(textwrap.fill("note: " + n, 80, subsequent_indent="  "))
        return "\n".join(lines) + "\n"


def probe(task, timeout: float = 120.0, python: str | None = None) -> ProbeResult:
    path = Path(task)
    if not path.is_file():
        raise ProbeError(f"{task}: no such file (give the task's Python file)")
    if path.suffix != ".py":
        raise ProbeError(f"{task}: --probe-check runs Python task files (.py)")
    env = {k: v for k, v in os.environ.items()}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # its own process group, so that a timeout also ends what the task started; output goes to files
    # (read back from their ends) so that a task printing without end cannot fill memory
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        proc = subprocess.Popen([python or sys.executable, str(RUNNER), str(path.resolve())], stdout=out_f,
                                stderr=err_f, stdin=subprocess.DEVNULL, env=env, cwd=str(path.resolve().parent),
                                start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            raise ProbeError(f"{task}: the task did not finish within {timeout:g} s (raise --timeout, or make "
                             "get_inputs() smaller)") from None
        stdout, stderr = _tail(out_f), _tail(err_f)
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith(MARK)), None)
    if line is None:
        err = stderr[-2000:].strip()
        raise ProbeError(f"{task}: the probe printed no result (exit {proc.returncode}): {err[-600:] or 'no output'}")
    doc = json.loads(line[len(MARK):])
    if doc.get("error"):
        raise ProbeError(f"{task}: {doc['error'].strip()}")
    res = ProbeResult(task=str(task), probes=doc.get("probes", []), notes=doc.get("notes", []),
                      reference=doc.get("reference"))
    res.findings = _findings(res)
    return res


def _tail(f, n: int = MAX_OUTPUT) -> str:
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(0, size - n))
    return f.read().decode("utf-8", "replace")


_TITLES = {"zeros": "the task's check accepts an all-zeros output",
           "empty": "the task's check accepts an uninitialised output buffer",
           "passthrough": "the task's check accepts the first input returned unchanged",
           "stale": "the task's check accepts the reference output of other inputs (a cached result)"}


def _findings(res: ProbeResult) -> list[Finding]:
    out = []
    ref = res.reference if isinstance(res.reference, dict) else {}
    facts_ref = {k: ref[k] for k in ("max_abs", "mean_abs", "zero_fraction", "shape") if k in ref}
    for p in res.probes:
        name, acc = p["candidate"], p.get("accepted")
        if name == "reference":
            if acc is False:
                out.append(Finding(id="timing.check-rejects-reference", severity="error", reader="timing",
                                   title="the task's check rejects the reference's own output",
                                   evidence=[Evidence(file=res.task, text="check(reference(*inputs), reference(*inputs))")],
                                   why="A check that fails the reference cannot tell a correct kernel from a wrong one; "
                                   "the comparison or its tolerance is broken" + (f" ({p['error']})" if p.get("error") else ""),
                                   fix="Fix the check so that the reference output passes it.", facts=facts_ref,
                                   confidence=0.95))
            continue
        if acc:
            why = {"zeros": "A kernel that writes nothing (or returns zeros) passes: the tolerance is larger than "
                            "the outputs themselves" + (f" (reference max |x| = {ref['max_abs']:.3g})"
                                                        if "max_abs" in ref else "") + ", or the inputs make the "
                            "expected output zero.",
                   "empty": "A kernel that never writes its output passes when the allocator hands back zeroed "
                            "or stale memory: the check cannot see missing work.",
                   "passthrough": "Returning the input passes: on these inputs the operation is (close to) the "
                                  "identity, e.g. ReLU of positive inputs or a tolerance larger than the change.",
                   "stale": "A kernel that caches one output and returns it for every call passes: get_inputs() "
                            "gives the same or near-identical data each time, or the tolerance is too loose."}[name]
            fix = {"zeros": "Use a relative tolerance suited to the output's scale (atol well below its typical "
                            "magnitude) and inputs whose outputs are not zero; `diagnose numerics` gives tolerances.",
                   "empty": "Fill output buffers with NaN or a sentinel before the candidate runs, and check every "
                            "element.",
                   "passthrough": "Draw inputs that exercise the operation (both signs, the full range) and check "
                                  "with a tolerance below the op's effect.",
                   "stale": "Draw fresh random inputs for each checked call (a new seed), and check more than one."
                   }[name]
            out.append(Finding(id="timing.check-accepts-trivial", severity="error", reader="timing",
                               title=_TITLES[name], evidence=[Evidence(file=res.task, text=p["what"])],
                               why=why, fix=fix, facts={"candidate": name, **facts_ref}, confidence=0.95))
    if not out:
        tried = [p["candidate"] for p in res.probes if p.get("accepted") is False and p["candidate"] != "reference"]
        if tried:
            out.append(Finding(id="timing.check-rejects-trivial", severity="info", reader="timing",
                               title=f"the task's check rejects every trivial candidate tried ({', '.join(tried)})",
                               evidence=[Evidence(file=res.task)], facts={"rejected": tried, **facts_ref},
                               why="The check can fail; this does not show it is tight enough for the task.",
                               confidence=0.9))
    return out


__all__ = ["ProbeError", "ProbeResult", "probe"]
