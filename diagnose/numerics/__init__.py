"""Why a kernel's numbers differ from a reference: the noise floor and error model, the structure above
it, a baseline, the task's tolerance, and a verdict, as `findings.Finding`s.

Pure functions of arrays (numpy only; torch and safetensors are used when present, never required).
The CLI (`diagnose numerics`), the pytest plugin and `annotate_diagnosis` (assert_close text in a log)
all read through the same code, so a reviewer gets one reading whatever the entry point.

    formats     float formats, bit patterns, rounding, ULPs (the dtype table is findings/dtypes.py)
    io          reading .npy (memory-mapped) / .npz / .pt / .safetensors
    tolerances  framework defaults per dtype (data/defaults.toml), the error model, recommended tolerance
    measures    the chunked pass: noise floor, measures, what stands above the floor
    patterns    the structure above the floor, named and located
    asserttext  assert_close / assert_allclose messages
    verdict     analyse(): the reading and its verdict
"""
from diagnose.numerics.asserttext import annotate_diagnosis, parse_mismatch_text, tolerance_reading
from diagnose.numerics.formats import (FORMATS, Format, NumericsError, bf16_round_bits, decode_bits, encode_bits, fmt,
                                       round_to, ulp, ulp_distance, ulp_error)
from diagnose.numerics.io import Loaded, load_tensor
from diagnose.numerics.patterns import FAMILY, TILES, pattern
from diagnose.numerics.tolerances import (DEFAULTS, TORCH_DEFAULTS, Model, Tolerance, default_tolerance,
                                          defaults_text, effective_bits, explain, plausible_models,
                                          recommend_tolerance, torch_default_reading)
from diagnose.numerics.verdict import Reading, analyse

__all__ = ["FAMILY", "FORMATS", "DEFAULTS", "TILES", "TORCH_DEFAULTS", "Format", "Loaded", "Model", "NumericsError",
           "Reading", "Tolerance", "analyse", "annotate_diagnosis", "bf16_round_bits", "decode_bits",
           "default_tolerance", "defaults_text", "effective_bits", "encode_bits", "explain", "fmt", "load_tensor",
           "parse_mismatch_text", "pattern", "plausible_models", "recommend_tolerance", "round_to",
           "tolerance_reading", "torch_default_reading", "ulp", "ulp_distance", "ulp_error"]
