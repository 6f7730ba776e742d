"""A dispatcher that lists why each operator refused the inputs (xFormers' "No operator found"):
the reason that applies decides, not the exception line and not one operator's own requirement."""
from diagnose.engine import diagnose_text

HEAD = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(1, 577, 16, 64) (torch.{dt})\n"
        "     attn_bias   : <class 'NoneType'>\n")


def test_bf16_on_an_older_gpu_is_the_dtype():
    d = diagnose_text(HEAD.format(dt="bfloat16") +
                      "`fa2F@v2.6.3` is not supported because:\n"
                      "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
                      "    bf16 is only supported on A100+ GPUs\n"
                      "`cutlassF-pt` is not supported because:\n"
                      "    bf16 is only supported on A100+ GPUs\n")
    assert d.family == "dtype-mismatch" and d.facts.get("dtype") == "bfloat16", (d.signature, d.facts)


def test_a_build_without_cuda_is_the_missing_library_whatever_else_is_listed():
    d = diagnose_text(HEAD.format(dt="float32") +
                      "`flshattF@0.0.0` is not supported because:\n"
                      "    xFormers wasn't build with CUDA support\n"
                      "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
                      "    dtype=torch.float32 (supported: {torch.float16, torch.bfloat16})\n"
                      "    operator wasn't built - see `python -m xformers.info` for more info\n")
    assert d.family == "missing-library", d.signature


def test_one_operators_capability_need_does_not_outrank_another_operators_reason():
    d = diagnose_text(HEAD.format(dt="float16") +
                      "`fa3F@0.0.0` is not supported because:\n"
                      "    requires device with capability > (9, 0) but your GPU has capability (8, 9) (too old)\n"
                      "    operator wasn't built - see `python -m xformers.info` for more info\n"
                      "`cutlassF-pt` is not supported because:\n"
                      "    attn_bias.stride(-2) % 8 != 0 (attn_bias.stride() = (1984032, 248004, 498, 1))\n")
    assert d.family == "shape-stride-mismatch", d.signature
    # alone, the capability reason is the answer
    e = diagnose_text(HEAD.format(dt="float16") + "`fa2F` is not supported because:\n"
                      "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n")
    assert e.family == "arch-mismatch" and e.facts.get("gpu_major") == "7"
