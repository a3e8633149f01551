#!/usr/bin/env python3
"""Writes fixture.safetensors for rt's safetensors tests.

Run from this directory: python3 make_fixture.py
It uses only the standard library (struct, json) and follows the format
as the Hugging Face safetensors library writes it: an 8-byte little-endian
header length, the JSON header padded with spaces to a multiple of 8, then
the tensors' little-endian bytes. The values are exact in every dtype used,
so the Go test can recompute them (see safetensors_test.go).
"""
import json
import struct


def f32(vals):
    return struct.pack("<%df" % len(vals), *vals)


def f64(vals):
    return struct.pack("<%dd" % len(vals), *vals)


def bf16(vals):
    # bfloat16 is the upper half of a float32 (the values are exact).
    return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:] for v in vals)


def f16(vals):
    return struct.pack("<%de" % len(vals), *vals)


tensors = [
    # name, dtype, shape, bytes
    ("fc.weight", "F32", [3, 2], f32([i * 0.25 - 0.5 for i in range(6)])),
    ("conv.weight", "F32", [4, 2, 3, 3],
     f32([oc * 1000 + ic * 100 + kh * 10 + kw
          for oc in range(4) for ic in range(2) for kh in range(3) for kw in range(3)])),
    ("fc.bias", "BF16", [3], bf16([1.0, -2.5, 0.15625])),
    ("half", "F16", [2], f16([0.5, -1.25])),
    ("w64", "F64", [2, 2], f64([1e-300, 2.0, 3.0, 4.0])),
]

header = {"__metadata__": {"format": "pt", "producer": "make_fixture.py"}}
offset = 0
data = b""
for name, dtype, shape, raw in tensors:
    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
    offset += len(raw)
    data += raw
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open("fixture.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)))
    f.write(h)
    f.write(data)
