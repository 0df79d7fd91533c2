#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/<target>/corpus from the real files in tests/data.

Seeds are small on purpose (a fuzzer runs each one thousands of times): tokenizers are trimmed to
their first few hundred vocabulary entries with the merges that stay consistent, safetensors
files keep a few tensors with tiny shapes, images are a few pixels. JPEG seeds are not written
here (no encoder in the standard library): tests/fuzz/image/corpus holds baseline JPEGs encoded
once with stb_image_write.

Usage: tools/reference/make_fuzz_seeds.py [repo root]
"""
import base64
import hashlib
import json
import struct
import sys
import zlib
from pathlib import Path

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FUZZ = ROOT / "tests" / "fuzz"


def write(target, name, data):
    folder = FUZZ / target / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    (folder / name).write_bytes(data)


def compact(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# --- safetensors and the index ----------------------------------------------------------------
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
               "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "U32": 4, "U64": 8}


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape)] in order; returns the file bytes with zeroed data."""
    header, offset = {}, 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape in tensors:
        n = DTYPE_BYTES[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = compact(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + bytes(offset)


def safetensors_seeds():
    for model in ("tiny-gpt-oss", "tiny-glm5-next"):
        shard = sorted((DATA / "models" / model).glob("model-0000*.safetensors"))[0]
        raw = shard.read_bytes()
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8:8 + n])
        meta = header.pop("__metadata__", None)
        picked = list(header.items())[:6]
        small = [(k, v["dtype"], [min(d, 3) for d in v["shape"]]) for k, v in picked]
        write("safetensors", f"{model}-shard.safetensors", safetensors(small, meta))
        index = json.loads((DATA / "models" / model / "model.safetensors.index.json").read_text())
        weights = dict(list(index["weight_map"].items())[:12])
        write("safetensors", f"{model}.index.json",
              json.dumps({"metadata": index.get("metadata", {}), "weight_map": weights}, indent=2))
    write("safetensors", "every-dtype.safetensors",
          safetensors([(f"t.{d.lower()}", d, [2, 1]) for d in DTYPE_BYTES], {"format": "pt"}))
    write("safetensors", "empty-header.safetensors", safetensors([]))
    write("safetensors", "zero-sized.safetensors", safetensors([("a", "F32", [0, 4]), ("b", "U8", [])]))
    write("safetensors", "index-no-metadata.json", compact({"weight_map": {"a": "model.safetensors"}}))


# --- config.json ------------------------------------------------------------------------------
def config_seeds():
    for path in sorted((DATA / "configs").glob("*.json")):
        write("model_config", path.name, path.read_text())
    for model in sorted((DATA / "models").iterdir()):
        if (model / "config.json").is_file():
            write("model_config", f"{model.name}.config.json", (model / "config.json").read_text())


# --- tokenizer.json ---------------------------------------------------------------------------
SAMPLE = (DATA / "tokenizers" / "corpus.txt").read_text(encoding="utf-8")


def trim_tokenizer(t, keep):
    model = t["model"]
    vocab = {k: v for k, v in model["vocab"].items() if v < keep}
    prefix = model.get("continuing_subword_prefix") or ""
    suffix = model.get("end_of_word_suffix") or ""
    merges = []
    for m in model.get("merges", []):
        a, b = m.split(" ", 1) if isinstance(m, str) else m
        joined = {a + b, a + b[len(prefix):] if prefix and b.startswith(prefix) else a + b}
        if suffix and a.endswith(suffix):
            joined.add(a[: -len(suffix)] + b)
        if a in vocab and b in vocab and any(j in vocab for j in joined):
            merges.append(m)
    model["vocab"] = vocab
    model["merges"] = merges
    return t


def tokenizer_seeds():
    lines = [line for line in SAMPLE.splitlines() if line.strip()]
    for i, model in enumerate(("tiny-gpt-oss", "tiny-glm5-next")):
        text = (DATA / "models" / model / "tokenizer.json").read_bytes()
        write("tokenizer", f"{model}.bin", text + b"\0" + "\n".join(lines[i * 4:i * 4 + 4]).encode())
    for i, path in enumerate(sorted((DATA / "tokenizers").glob("*/tokenizer.json"))):
        t = trim_tokenizer(json.loads(path.read_text(encoding="utf-8")), 400)
        sample = "\n".join(lines[(i * 3) % len(lines):(i * 3) % len(lines) + 3])
        write("tokenizer", f"{path.parent.name}.bin", compact(t).encode() + b"\0" + sample.encode())
    write("tokenizer", "invalid-utf8.bin",
          (DATA / "models" / "tiny-gpt-oss" / "tokenizer.json").read_bytes() + b"\0a\xff\xfe\xc3(b\xe2\x82")


# --- chat templates ---------------------------------------------------------------------------
TEMPLATES = ["openai-gpt-oss-120b.jinja", "GLM-4.7-Flash.jinja", "Qwen3-Coder.jinja",
             "meta-llama-Llama-3.1-8B-Instruct.jinja", "deepseek-ai-DeepSeek-V3.1.jinja", "Kimi-K2-Instruct.jinja",
             "google-gemma-2-2b-it.jinja", "Mistral-Small-3.2-24B-Instruct-2506.jinja"]  # as in fuzz_chat_template.cpp

CONTEXTS = [
    {"messages": [{"role": "user", "content": "Hello"}], "add_generation_prompt": True},
    {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
                  {"role": "assistant", "content": "4", "reasoning_content": "add", "thinking": "add"},
                  {"role": "user", "content": "東京 🗼"}],
     "add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>"},
    {"messages": [{"role": "user", "content": "weather?"},
                  {"role": "assistant", "content": "",
                   "tool_calls": [{"type": "function", "function": {"name": "get", "arguments": {"city": "Oslo"}}}]},
                  {"role": "tool", "content": "{\"t\": 3}"}],
     "tools": [{"type": "function", "function": {"name": "get", "description": "weather",
                                                   "parameters": {"type": "object",
                                                                  "properties": {"city": {"type": "string"}}}}}],
     "add_generation_prompt": False},
]


def chat_template_seeds():
    for path in sorted((DATA / "chat_templates").glob("*.jinja")):
        if path.stat().st_size <= 6000:
            write("chat_template", f"T-{path.stem}", b"T" + path.read_bytes())
    write("chat_template", "T-constructs",
          "T{% macro m(a, b=2) %}{{ a ~ b }}{% endmacro %}{% set ns = namespace(n=0) %}"
          "{% for x in range(3) if x is odd %}{{ m(x) | upper }}{% set ns.n = ns.n + 1 %}{% else %}e{% endfor %}"
          "{{ ns.n }}{{ messages | tojson(indent=2) }}{{ '%s-%d' % ('a', 3) }}{{ [1,2,3][::-1] | join(',') }}"
          "{% filter lower %}ABC{% endfilter %}{{ {'a': 1}.items() | list }}{{ 'x'.split('/') }}"
          "{{ raise_exception('no') if false }}{{ strftime_now('%Y-%m-%d') }}{% call m(1) %}{% endcall %}")
    for i, name in enumerate(TEMPLATES):
        for j, context in enumerate(CONTEXTS):
            write("chat_template", f"M{i}-{j}-{Path(name).stem}", bytes([(i << 1) | 1]) + compact(context).encode())


# --- images -----------------------------------------------------------------------------------
def png(width, height, bit_depth, color_type, rows, extra_chunks=()):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    raw = b"".join(bytes([f % 5]) + row for f, row in enumerate(rows))  # every filter type
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    body = chunk(b"IHDR", ihdr)
    for kind, data in extra_chunks:
        body += chunk(kind, data)
    return b"\x89PNG\r\n\x1a\n" + body + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def image_seeds():
    def rows(w, h, bpp):
        return [bytes((x * 37 + y * 11 + c * 5) & 0xFF for x in range(w) for c in range(bpp)) for y in range(h)]
    write("image", "rgb-8x6.png", png(8, 6, 8, 2, rows(8, 6, 3)))
    write("image", "rgba-5x5.png", png(5, 5, 8, 6, rows(5, 5, 4)))
    write("image", "grey-7x3.png", png(7, 3, 8, 0, rows(7, 3, 1)))
    write("image", "grey-alpha-4x4.png", png(4, 4, 8, 4, rows(4, 4, 2)))
    write("image", "rgb16-3x3.png", png(3, 3, 16, 2, rows(3, 3, 6)))
    write("image", "grey1-16x2.png", png(16, 2, 1, 0, rows(2, 2, 1)))
    write("image", "palette-4x4.png", png(4, 4, 8, 3, [bytes([(x + y) % 4 for x in range(4)]) for y in range(4)],
                                          [(b"PLTE", bytes(range(12))), (b"tRNS", b"\x80")]))
    write("image", "tall-1x90.png", png(1, 90, 8, 2, rows(1, 90, 3)))
    for path in sorted((DATA / "vision").glob("small_*.png")):
        write("image", path.name, path.read_bytes())


# --- history import ---------------------------------------------------------------------------
def history_seeds():
    blob = b"\x89PNG\r\n\x1a\n" + bytes(24)
    sha = hashlib.sha256(blob).hexdigest()
    empty_sha = hashlib.sha256(b"").hexdigest()
    base = "0b6c2d1e-7a9f-4c3b-8e2d-%012d"
    message = {"uuid": base % 11, "parent": None, "role": "user", "content": "What is this? 東京", "reasoning": "",
               "state": "complete", "error": "", "prompt_tokens": 0, "completion_tokens": 0, "ttft_ms": 0,
               "tokens_per_second": 0.0, "model": "", "created_at": 1700000000000,
               "attachments": [{"sha256": sha, "file_name": "a.png", "position": 0},
                               {"sha256": empty_sha, "file_name": "empty", "position": 1}]}
    reply = dict(message, uuid=base % 12, parent=base % 11, role="assistant", content="A tower.",
                 reasoning="look", prompt_tokens=12, completion_tokens=3, ttft_ms=41, tokens_per_second=12.5,
                 model="glm5_next", attachments=[])
    failed = dict(reply, uuid=base % 13, state="error", error="out of memory", content="It is")
    conversation = {"uuid": base % 1, "title": "Trip 🗼", "created_at": 1700000000000, "updated_at": 1700000001000,
                    "model": "glm5_next", "settings": {"temperature": 0.7, "stop": ["</s>"]}, "pinned": True,
                    "archived": False, "messages": [message, reply, failed]}
    empty = {"uuid": base % 2, "title": "", "created_at": 1, "updated_at": 1, "model": "", "settings": {},
             "pinned": False, "archived": True, "messages": []}
    doc = {"format": "day0-history", "version": 1, "exported_at": 1700000002000,
           "conversations": [conversation, empty],
           "blobs": [{"sha256": sha, "mime_type": "image/png", "size": len(blob),
                      "data": base64.b64encode(blob).decode()},
                     {"sha256": empty_sha, "mime_type": "application/octet-stream", "size": 0, "data": ""}]}
    write("history_import", "full.json", json.dumps(doc, ensure_ascii=False, indent=1))
    write("history_import", "empty.json", compact({"format": "day0-history", "version": 1, "exported_at": 0,
                                                   "conversations": [], "blobs": []}))
    write("history_import", "one-message.json",
          compact(dict(doc, conversations=[dict(conversation, messages=[dict(message, attachments=[])])], blobs=[])))


if __name__ == "__main__":
    safetensors_seeds()
    config_seeds()
    tokenizer_seeds()
    chat_template_seeds()
    image_seeds()
    history_seeds()
