"""TensorRT's messages by family (signatures/data/*.toml) and its ErrorCode table (codes.toml)."""
from diagnose.engine import diagnose_text


def test_no_tactic_for_a_node_is_an_autotune_failure_whatever_the_wrapper_wording():
    for text in (
        "[TRT] [E] 10: [optimizer.cpp::computeCosts::2011] Error Code 10: Internal Error (Could not find any implementation for node MatMul_7.)\n"
        "[TRT] [E] 2: [builder.cpp::buildSerializedNetwork::609] Error Code 2: Internal Error (Assertion enginePtr != nullptr failed. )\n",
        "[TensorRT] ERROR: Internal error: could not find any implementation for node (Unnamed Layer* 3) [Convolution], try increasing the workspace size with IBuilder::setMaxWorkspaceSize()\n"
        "[TensorRT] ERROR: Network must have at least one output\n",
    ):
        d = diagnose_text(text)
        assert (d.family, d.signature) == ("autotune-failure", "autotune-failure.tensorrt.no-implementation"), (d.family, d.signature)
        assert d.root.line == 1


def test_a_skipped_tactic_alone_is_not_a_failure():
    d = diagnose_text("[TRT] [W] Skipping tactic 3 due to insufficient memory on requested size of 8589934592 detected for tactic 3.\n"
                      "[TRT] [I] Engine generation completed in 41.2 seconds.\n")
    assert d.family == "none", (d.family, d.signature)


def test_an_engine_from_another_tensorrt_version_is_a_library_version_mismatch():
    d = diagnose_text("[E] [TRT] 1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: Serialization (Serialization assertion "
                      "stdVersionRead == serializationVersion failed.Version tag does not match. Note: Current Version: 236, Serialized Engine Version: 239)\n"
                      "[E] [TRT] 4: [runtime.cpp::deserializeCudaEngine::66] Error Code 4: Internal Error (Engine deserialization failed.)\n")
    assert (d.family, d.origin) == ("driver-mismatch", "environment"), (d.family, d.signature)
    assert d.facts.get("engine_version") == "239" and d.facts.get("runtime_version") == "236", d.facts
    assert d.facts.get("file_line") == "stdArchiveReader.cpp::StdArchiveReader::40", d.facts


def test_an_engine_built_for_another_gpu_is_not_a_version_mismatch():
    d = diagnose_text("[TensorRT] ERROR: INVALID_CONFIG: The engine plan file is generated on an incompatible device, expecting compute 8.6 got compute 7.5, please rebuild.\n")
    assert d.family != "driver-mismatch", d.signature


def test_error_code_5_is_a_failed_allocation_and_other_codes_name_no_family():
    d = diagnose_text("[E] [TRT] 5: [resourceAllocator.cpp::allocate::41] Error Code 5: Internal Error (failed to allocate 4 GiB)\n")
    assert (d.family, d.signature) == ("oom", "oom.code.tensorrt"), (d.family, d.signature)
    assert d.facts.get("trt_code") == 5, d.facts
    d = diagnose_text("[E] [TRT] 3: [network.cpp::addInput::1502] Error Code 3: API Usage Error (Parameter check failed at: optimizer/api/network.cpp::addInput::1502)\n")
    assert d.family == "unknown", (d.family, d.signature)
