from signatures import facts


def test_bytes():
    assert facts.parse_bytes("2.00 GiB") == 2 * 1024**3
    assert facts.parse_bytes("0x10000 bytes") == 65536
    assert facts.parse_bytes("0x10000") == 65536
    assert facts.parse_bytes("262144") == 262144
    assert facts.parse_bytes("20.00 MiB") == 20 * 1024**2
    assert facts.parse_bytes("48KB") == 48000
    assert facts.parse_bytes("21.95G") == round(21.95 * 1024**3) and facts.parse_bytes("64.0K") == 65536
    assert facts.parse_bytes("1,024 bytes") == 1024
    assert facts.parse_bytes("lots") is None


def test_cc_shapes_dtypes_devices():
    assert facts.parse_cc("sm_90a") == "9.0a"
    assert facts.parse_cc("compute_86") == "8.6"
    assert facts.parse_cc("8.0") == "8.0"
    assert facts.parse_cc("120") == "12.0"
    assert facts.parse_shape("torch.Size([4, 5])") == [4, 5]
    assert facts.parse_shape("18240x71") == [18240, 71]
    assert facts.parse_dtype("c10::Half") == "float16"
    assert facts.parse_dtype("torch.bfloat16") == "bfloat16"
    assert facts.parse_dtype("Float") == "float32"
    assert facts.parse_device("device(type='cuda', index=0)") == "cuda:0"


def test_typed_by_group_name():
    assert facts.normalise("requested_bytes", "2.00 GiB") == 2 * 1024**3
    assert facts.normalise("device_cc", "sm_86") == "8.6"
    assert facts.normalise("line", "42") == 42
    assert facts.normalise("kernel", " my_kernel ") == "my_kernel"
    assert facts.render("limit_bytes", 232448) == "227 KiB"
    assert facts.render("requested_bytes", 2426656522) == "2.26 GiB" and facts.render("x_bytes", 512) == "512 B"
    assert facts.render("arch", "9.0") == "sm_90"
