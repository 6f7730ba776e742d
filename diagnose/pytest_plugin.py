"""pytest plugin (entry point `pytest11`): off unless enabled with `-p diagnose` or `diagnose = true` in the ini.

When on, a failing test gets a "diagnose" report section: the signature diagnosis of its exception text
(family, root line, fix), and for a failing torch.testing.assert_close / numpy.testing.assert_allclose
the numerics reading of the two tensors it compared (kept by wrapping those functions while the test runs).
"""
from __future__ import annotations

import sys

import pytest

SECTION = "diagnose"


def pytest_addoption(parser):
    parser.addini("diagnose", "add a diagnose diagnosis to failing tests' reports", type="bool", default=False)


def _enabled(config) -> bool:
    plugins = getattr(config.option, "plugins", None) or []
    if any(p == "diagnose" or p == "diagnose.pytest_plugin" for p in plugins):
        return True
    try:
        return bool(config.getini("diagnose"))
    except ValueError:
        return False


def pytest_configure(config):
    if _enabled(config) and not config.pluginmanager.has_plugin("diagnose-session"):
        config.pluginmanager.register(DiagnosePlugin(), "diagnose-session")


# (module, attribute, kind) of the comparison functions whose arguments are kept
TARGETS = (("torch.testing", "assert_close", "torch"), ("numpy.testing", "assert_allclose", "numpy"))


class DiagnosePlugin:
    def __init__(self):
        self.last: dict | None = None      # the last compared pair of the running test

    def _wrap(self, original, kind):
        plugin = self

        def wrapper(actual, expected, *args, **kwargs):
            __tracebackhide__ = True
            plugin.last = {"kind": kind, "actual": actual, "expected": expected, "args": args, "kwargs": kwargs}
            return original(actual, expected, *args, **kwargs)

        wrapper.__wrapped__ = original
        wrapper.__name__ = getattr(original, "__name__", "assert_close")
        wrapper.__doc__ = getattr(original, "__doc__", None)
        return wrapper

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        """Wrap the comparison functions for the duration of the test (module attributes and names the
        test module imported with `from ... import`); imports nothing new, so no torch import cost."""
        self.last = None
        undo = []
        for modname, attr, kind in TARGETS:
            mod = sys.modules.get(modname)
            if mod is None and modname.split(".")[0] in sys.modules:
                # numpy 2 loads numpy.testing lazily, on first use inside the test: load it now (the
                # parent is imported already, so this costs little and imports no new framework)
                import importlib

                try:
                    mod = importlib.import_module(modname)
                except ImportError:
                    mod = None
            original = getattr(mod, attr, None) if mod else None
            if original is None:
                continue
            wrapped = self._wrap(original, kind)
            undo.append((mod, attr, original))
            setattr(mod, attr, wrapped)
            test_mod = getattr(item, "module", None)
            if test_mod is not None:
                for name, value in list(vars(test_mod).items()):
                    if value is original:
                        undo.append((test_mod, name, original))
                        setattr(test_mod, name, wrapped)
        try:
            yield
        finally:
            for obj, name, original in reversed(undo):
                setattr(obj, name, original)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        if call.when == "call" and call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception):
            try:
                text, props = reading_for(call.excinfo.value, self.last)
            except Exception as e:  # never turn a test report into an internal error
                text, props = f"diagnose could not read this failure: {type(e).__name__}: {e}", {}
            if text:
                item.add_report_section("call", SECTION, text)
                item.user_properties.append(("diagnose", props))
        yield
        if call.when == "call":
            self.last = None


def reading_for(exc: BaseException, last: dict | None) -> tuple[str, dict]:
    """The report text and a JSON-able summary for one failed test's exception."""
    from diagnose.engine import diagnose_text
    from diagnose.numerics import parse_mismatch_text, tolerance_reading

    message = f"{type(exc).__module__}.{type(exc).__name__}: {exc}" if type(exc).__module__ != "builtins" \
        else f"{type(exc).__name__}: {exc}"
    lines, props = [], {}
    d = diagnose_text(message, path="<test failure>")
    if d.family not in ("none", "unknown"):
        props.update({"family": d.family, "origin": d.origin, "signature": d.signature})
        lines.append(f"family: {d.family} (origin {d.origin}, signature {d.signature}, confidence {d.confidence})")
        if d.root:
            lines.append(f"root: {d.root.text.strip()}")
        if d.fix:
            lines.append(f"fix: {d.fix}")
    parsed = parse_mismatch_text(str(exc))
    have_tensors = last is not None and isinstance(exc, AssertionError)
    for extra in (d.env + d.notes if d.family not in ("none", "unknown") else []):
        if not (have_tensors and extra.startswith("numerics:")):   # the tensors give a fuller reading below
            lines.append(extra)
    if last is not None and isinstance(exc, AssertionError):
        reading = _numerics(last)
        if reading is not None:
            props["numerics"] = {"verdict": reading.verdict, "decided_by": reading.decided_by,
                                 "findings": reading.patterns}
            if "family" not in props:
                props.update({"family": reading.family, "origin": reading.origin})
                lines.append(f"family: {reading.family} (origin {reading.origin})")
            lines.append(f"numerics verdict: {reading.verdict}: {reading.decided_by}")
            for f, name in zip(reading.findings, reading.patterns):
                lines.append(f"  {name} ({f.origin or f.severity}): {f.title}")
            m = reading.measures
            lines.append(f"  max |out-ref| {m['abs_max']:.4g} at {m['abs_max_index']}, max {m['ulp_max']:.4g} ULP "
                         f"of {m['dtype']}, ‖out-ref‖/‖ref‖ {m['norm_ratio']:.3g}, NaN out/ref "
                         f"{m['out_nan']}/{m['ref_nan']}")
            lines.append(f"  recommended: {reading.recommended.explanation}")
            return "\n".join(lines), props
    if parsed.get("mismatched_count") is not None or parsed.get("max_abs_diff") is not None:
        props["mismatch"] = parsed
        reading_text = tolerance_reading(parsed)
        if reading_text and not any(line == "numerics: " + reading_text for line in lines):
            lines.append("numerics: " + reading_text)
    return "\n".join(lines), props


def _as_array(x):
    """A tensor or array -> (float64 numpy array, dtype name); None when it is not numeric."""
    import numpy as np

    mod = type(x).__module__
    if mod.startswith("torch"):
        import torch

        if isinstance(x, torch.Tensor):
            name = str(x.dtype).replace("torch.", "")
            if x.is_complex():
                return None
            return x.detach().to("cpu").to(torch.float64).numpy(), name
        return None
    try:
        a = np.asarray(x)
    except Exception:
        return None
    if a.dtype.kind not in "fiub":
        return None
    return a.astype(np.float64), (a.dtype.name if a.dtype.kind == "f" else "float64")


def _numerics(last: dict):
    from diagnose.numerics import FORMATS, NumericsError, TORCH_DEFAULTS, analyse

    a, e = _as_array(last["actual"]), _as_array(last["expected"])
    if a is None or e is None:
        return None
    (out, out_dtype), (ref, ref_dtype) = a, e
    if out_dtype not in FORMATS:
        out_dtype = "float64"
    if ref_dtype not in FORMATS:
        ref_dtype = "float64"
    kw = dict(last["kwargs"])
    args = last["args"]
    source = "the test's"
    if last["kind"] == "numpy":        # assert_allclose(actual, desired, rtol=1e-7, atol=0)
        rtol = kw.get("rtol", args[0] if len(args) > 0 else 1e-7)
        atol = kw.get("atol", args[1] if len(args) > 1 else 0.0)
    else:                              # assert_close: both given, or dtype defaults
        rtol, atol = kw.get("rtol"), kw.get("atol")
        if rtol is None or atol is None:
            source = "assert_close's default"
            tol = [TORCH_DEFAULTS.get(d, (0.0, 0.0)) for d in (out_dtype, ref_dtype)]
            rtol, atol = max(t[0] for t in tol), max(t[1] for t in tol)
    if out.shape != ref.shape:
        try:
            import numpy as np

            ref = np.broadcast_to(ref, out.shape)
        except ValueError:
            return None
    try:
        return analyse(out, ref, out_dtype, ref_dtype, atol=float(atol), rtol=float(rtol), tol_source=source)
    except NumericsError:
        return None
