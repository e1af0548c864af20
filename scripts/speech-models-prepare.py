"""Writes what sherpa-onnx needs beside the extracted speech models (called by scripts/speech-models.sh).

Given the cache directory being built, it writes:
- moonshine-base-en/tokens.txt from tokenizer.bin. tokenizer.bin is a sequence of entries, one per
  token id in order: one length byte, then the token's bytes (SentencePiece pieces, "\u2581" for a
  word boundary, raw-byte fallbacks for ids 3-258). sherpa-onnx reads one line per token: the base64
  of its bytes, a space, its id. The pinned file holds 32000 entries, each shorter than 128 bytes; a
  file that is not exactly that shape is refused rather than guessed at.
- piper-joe-medium/tokens.txt from the .onnx.json phoneme_id_map: one line per symbol, "symbol id".
- piper-joe-medium/en_US-joe-medium.onnx: the shipped model with ONNX metadata_props appended. A
  serialized ModelProto is a protobuf message, and protobuf merges a repeated field's entries
  wherever they appear, so appending field 14 (StringStringEntryProto {key=1, value=2}) entries at
  the end adds them without rewriting the 63 MB of weights. The file as shipped has none.
Standard library only.
"""

import base64
import json
import sys
from pathlib import Path

PIPER_METADATA = {
    "model_type": "vits",
    "comment": "piper",
    "language": "English",
    "voice": "en-us",
    "has_espeak": "1",
    "n_speakers": "1",
    "sample_rate": "22050",
}


def moonshine_tokens(tokenizer: bytes) -> str:
    lines = []
    i = 0
    while i < len(tokenizer):
        length = tokenizer[i]
        i += 1
        if length == 0 or length >= 128 or i + length > len(tokenizer):
            raise SystemExit(f"tokenizer.bin: unexpected entry length {length} at byte {i - 1}")
        piece = tokenizer[i : i + length]
        i += length
        lines.append(f"{base64.b64encode(piece).decode('ascii')} {len(lines)}\n")
    if len(lines) != 32000:
        raise SystemExit(f"tokenizer.bin: expected 32000 tokens, found {len(lines)}")
    return "".join(lines)


def piper_tokens(config: dict) -> str:
    lines = []
    for symbol, ids in config["phoneme_id_map"].items():
        if len(ids) != 1:
            raise SystemExit(f"phoneme_id_map: symbol {symbol!r} maps to {ids}, expected one id")
        lines.append(f"{symbol} {ids[0]}\n")
    return "".join(lines)


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def length_delimited(field: int, payload: bytes) -> bytes:
    return varint((field << 3) | 2) + varint(len(payload)) + payload


def metadata_props(entries: dict) -> bytes:
    out = b""
    for key, value in entries.items():
        entry = length_delimited(1, key.encode()) + length_delimited(2, value.encode())
        out += length_delimited(14, entry)
    return out


def main() -> None:
    root = Path(sys.argv[1])
    moonshine = root / "moonshine-base-en"
    piper = root / "piper-joe-medium"
    (moonshine / "tokens.txt").write_text(moonshine_tokens((moonshine / "tokenizer.bin").read_bytes()), encoding="utf-8")
    config = json.loads((piper / "en_US-joe-medium.onnx.json").read_text(encoding="utf-8"))
    if config["audio"]["sample_rate"] != int(PIPER_METADATA["sample_rate"]):
        raise SystemExit(f"en_US-joe-medium.onnx.json: sample rate {config['audio']['sample_rate']}, expected {PIPER_METADATA['sample_rate']}")
    (piper / "tokens.txt").write_text(piper_tokens(config), encoding="utf-8")
    shipped = (piper / "en_US-joe-medium.as-shipped.onnx").read_bytes()
    (piper / "en_US-joe-medium.onnx").write_bytes(shipped + metadata_props(PIPER_METADATA))


if __name__ == "__main__":
    main()
