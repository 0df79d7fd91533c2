#!/usr/bin/env python3
"""Build the tokenizer fixtures of Day0's tokenizer tests with Hugging Face `tokenizers`.

Runs where `tokenizers` (0.23) is installed; no network. It trains small BPE tokenizers with
tokenizers' own BpeTrainer on the committed multilingual corpus, then records what tokenizers
itself answers for every corpus line and for seeded random strings: the ids with and without
special tokens and the decodes (with and without skip_special_tokens), and the decodes of random
id sequences (some ending inside a UTF-8 character). Day0's tests compare against these files.

Inputs:
  tests/data/tokenizers/corpus.txt   one sample per line. Escapes: \\\\ (backslash), \\n, \\r, \\t,
                                     \\xNN (one raw byte, so lines can hold invalid UTF-8).
                                     tokenizers takes a Python str: a sample's bytes are decoded
                                     with errors="replace" (each maximal invalid subpart becomes
                                     U+FFFD), which is exactly what Day0 does with raw bytes.
Outputs (under --out, mirroring the repository):
  tests/data/tokenizers/<name>/tokenizer.json, expected.json   for each test tokenizer:
      bytelevel_gpt2   NFC + ByteLevel(add_prefix_space, GPT-2 regex) BPE
      o200k            Split(o200k regex) + ByteLevel BPE with ignore_merges (gpt-oss style)
      glm              Split(GLM-4 regex) + ByteLevel BPE (GLM-4/GLM-5 style)
      llama_legacy     Prepend+Replace normalizer, byte_fallback + fuse_unk BPE (Llama 2 style)
      metaspace_first  NFKC+Lowercase, Digits + Metaspace(prepend_scheme first), byte_fallback
      words_suffix     NFD/StripAccents/Lowercase/Replace/Strip, Whitespace + Punctuation + Digits,
                       end_of_word_suffix, unk, BertProcessing, no decoder
      words_prefix     BertPreTokenizer, CharDelimiterSplit, Split behaviours, WhitespaceSplit,
                       continuing_subword_prefix, fuse_unk, Replace/Strip/Fuse decoders
  tests/data/models/tiny-gpt-oss/{tokenizer.json,tokenizer_config.json,special_tokens_map.json}
  tests/data/models/tiny-glm5-next/{tokenizer.json,tokenizer_config.json,special_tokens_map.json}
  tests/data/tokenizers/tiny-gpt-oss.expected.json, tiny-glm5-next.expected.json

Usage: python3 tools/reference/make_tokenizer_fixtures.py --repo . --out OUTDIR
"""

import argparse
import json
import random
import sys
from pathlib import Path

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

# tiktoken's o200k_base pattern (gpt-oss's tokenizer.json Split pre-tokenizer).
O200K_PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])
# GLM-4's pattern (THUDM glm-4-9b tokenization_chatglm.py `pat_str`), which the GLM-4.5 and later
# tokenizer.json files carry as their Split pre-tokenizer. It differs from Qwen2's only in
# \p{N}{1,3} where Qwen2 has \p{N}.
GLM_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

HARMONY_SPECIALS = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|startoftext|>",
                    "<|endoftext|>", "<|call|>", "<|return|>", "<|endofprompt|>"]
# GLM-4.5/4.6 special tokens in id order (151329 + offset); the tiny model puts them at 324 + offset.
GLM_SPECIALS = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
                "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>",
                "<|end_of_video|>", "<|begin_of_audio|>", "<|end_of_audio|>", "<|begin_of_transcription|>",
                "<|end_of_transcription|>", "<|code_prefix|>", "<|code_middle|>", "<|code_suffix|>", "<think>",
                "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<arg_key>",
                "</arg_key>", "<arg_value>", "</arg_value>", "/nothink", "<|begin_of_box|>", "<|end_of_box|>",
                "<|image|>", "<|video|>"]
# Tags the model writes as text: decoding with skip_special_tokens keeps them.
GLM_TEXT_TAGS = {"<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>",
                 "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "/nothink"}


def unescape(line: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(line):
        c = line[i]
        if c != 0x5C:
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(line):
            raise ValueError(f"dangling backslash in {line!r}")
        e = chr(line[i + 1])
        if e == "x":
            out.append(int(line[i + 2:i + 4].decode("ascii"), 16))
            i += 4
            continue
        out.append({"\\": 0x5C, "n": 0x0A, "r": 0x0D, "t": 0x09}[e])
        i += 2
    return bytes(out)


def read_corpus(path: Path) -> list:
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [unescape(line) for line in lines]


def as_text(sample: bytes) -> str:
    return sample.decode("utf-8", errors="replace")


def random_samples(seed: int, count: int, extra_atoms: list) -> list:
    """Seeded random byte strings built from pieces that stress pre-tokenizers and added tokens."""
    atoms = [s.encode() for s in [
        "a", "Z", "the", "The", " the", "HTTP", "Server", "é", "e\u0301", "中", "文字", "の", "カタ", "ｶ", "한국",
        "ب", "ـ", "\u064e", "1", "12", "1234", "٣", "²", "Ⅻ", "½", " ", "  ", "   ", "\t", "\n", "\r\n", "\r",
        "\u00a0", "\u3000", "\u180e", "\u200b", "\u2028", "\u0085", "\ufeff", "'s", "'S", "'ll", "'\u017f", "'",
        "-", "!", "?", "...", ".", ",", "/", "//", "\\", "😀", "👍🏽", "👨‍👩‍👧", "🇯🇵", "❤️", "\ufffd", "İ",
        "ß", "Σ", "ς", "ǅ", "ﬁ", "ＡＢ", "①", "▁", "<", ">", "|", "<|", "|>", "\u0301", "\u200d",
    ]] + [s.encode() for s in extra_atoms] + [b"\xff", b"\xc3", b"\xe2\x82", b"\x80", b"\xed\xa0\x80", b"\xf0\x9f"]
    rng = random.Random(seed)
    return [b"".join(rng.choice(atoms) for _ in range(rng.randint(1, 24))) for _ in range(count)]


def train(pre_tokenizer, normalizer, vocab_size, texts, byte_level, limit_alphabet=None):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    kwargs = dict(vocab_size=vocab_size, show_progress=False)
    if byte_level:
        kwargs["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    if limit_alphabet is not None:
        kwargs["limit_alphabet"] = limit_alphabet
    tok.train_from_iterator(texts, trainers.BpeTrainer(**kwargs))
    return tok


def with_byte_fallback_vocab(trained: Tokenizer, **bpe_options) -> Tokenizer:
    """Llama layout: <unk> <s> </s>, the 256 <0xNN> byte tokens, then the trained tokens."""
    model = json.loads(trained.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = 3 + b
    for token, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1]):
        if token not in vocab:
            vocab[token] = len(vocab)
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return Tokenizer(models.BPE(vocab=vocab, merges=merges, **bpe_options))


def build_test_tokenizers(train_texts):
    result = {}

    # GPT-2 style, with a Unicode normalizer and added tokens of every flag.
    tok = train(pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True), normalizers.NFC(), 2500,
                train_texts, True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False),
                            AddedToken("<|im_start|>", special=True, normalized=False, rstrip=True),
                            AddedToken("<|im_end|>", special=True, normalized=False, lstrip=True)])
    tok.add_tokens([AddedToken("[USER]", lstrip=True, rstrip=True, normalized=False, special=False),
                    AddedToken("@@", single_word=True, normalized=False, special=False),
                    AddedToken("café", normalized=True, special=False),
                    AddedToken("hello world", normalized=True, special=False)])
    eot = tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=True),
        processors.TemplateProcessing(single="<|endoftext|> $A", pair="<|endoftext|> $A <|endoftext|> $B:1",
                                      special_tokens=[("<|endoftext|>", eot)])])
    result["bytelevel_gpt2"] = tok

    # gpt-oss style: o200k Split regex, then ByteLevel without its own regex; ignore_merges.
    tok = train(pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(O200K_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)]), None, 3000,
        train_texts, True)
    spec = json.loads(tok.to_str())
    spec["model"]["ignore_merges"] = True
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in HARMONY_SPECIALS])
    tok.add_tokens([AddedToken("[USER]", rstrip=True, normalized=False, special=False),
                    AddedToken("@@", single_word=True, lstrip=True, normalized=False, special=False),
                    AddedToken("hello world", normalized=True, special=False)])
    sot = tok.token_to_id("<|startoftext|>")
    tok.post_processor = processors.TemplateProcessing(single="<|startoftext|> $A",
                                                       pair="<|startoftext|> $A $B:1",
                                                       special_tokens=[("<|startoftext|>", sot)])
    result["o200k"] = tok

    # GLM style: the GLM-4 Split regex, then ByteLevel.
    tok = train(pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(GLM_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)]), None, 3000,
        train_texts, True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=t not in GLM_TEXT_TAGS, normalized=False)
                            for t in GLM_SPECIALS])
    tok.add_tokens([AddedToken("[USER]", lstrip=True, normalized=False, special=False),
                    AddedToken("@@", single_word=True, rstrip=True, normalized=False, special=False)])
    ids = [tok.token_to_id(t) for t in ("[gMASK]", "<sop>")]
    tok.post_processor = processors.TemplateProcessing(
        single="[gMASK] <sop> $A", pair="[gMASK] <sop> $A $B:1",
        special_tokens=[("[gMASK]", ids[0]), ("<sop>", ids[1])])
    result["glm"] = tok

    # Llama 2 style: the normalizer writes the metaspaces, byte_fallback, fuse_unk.
    trained = train(pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True), None, 2200,
                    train_texts, False, limit_alphabet=120)
    tok = with_byte_fallback_vocab(trained, unk_token="<unk>", byte_fallback=True, fuse_unk=True)
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(content=" ", left=1, right=0)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<unk>", "<s>", "</s>")])
    tok.add_tokens([AddedToken("[INST]", special=False, normalized=False, rstrip=True),
                    AddedToken("[/INST]", special=False, normalized=False, lstrip=True),
                    AddedToken("@@", single_word=True, normalized=False, special=False),
                    AddedToken("hello", normalized=True, special=False)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B:1",
                                                       special_tokens=[("<s>", 1)])
    result["llama_legacy"] = tok

    # Metaspace pre-tokenizer with prepend_scheme "first", individual digits, NFKC + Lowercase.
    pre = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                   pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)])
    norm = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    trained = train(pre, norm, 2200, train_texts, False, limit_alphabet=150)
    tok = with_byte_fallback_vocab(trained, unk_token="<unk>", byte_fallback=True, fuse_unk=False)
    tok.normalizer = norm
    tok.pre_tokenizer = pre
    tok.decoder = decoders.Sequence([decoders.Metaspace(replacement="▁", prepend_scheme="first"),
                                     decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<unk>", "<s>", "</s>")])
    tok.add_tokens([AddedToken("Hello World", normalized=True, special=False),
                    AddedToken("[USER]", lstrip=True, normalized=False, special=False),
                    AddedToken("@@", single_word=True, normalized=True, special=False)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                                       special_tokens=[("<s>", 1), ("</s>", 2)])
    result["metaspace_first"] = tok

    # Word-level pre-tokenizers, a subword suffix, an unk token and no decoder (ids joined by spaces).
    pre = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation(behavior="contiguous"),
                                   pre_tokenizers.Digits(individual_digits=False)])
    norm = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase(),
                                 normalizers.Replace(Regex(r"\s{2,}"), " "), normalizers.Strip()])
    tok = Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
    tok.normalizer = norm
    tok.pre_tokenizer = pre
    tok.train_from_iterator(train_texts, trainers.BpeTrainer(vocab_size=1500, limit_alphabet=80, show_progress=False,
                                                             special_tokens=["[UNK]"], end_of_word_suffix="</w>"))
    tok.add_special_tokens([AddedToken("[CLS]", special=True, normalized=False),
                            AddedToken("[SEP]", special=True, normalized=False)])
    tok.add_tokens([AddedToken("hello world", normalized=True, special=False, single_word=True)])
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    result["words_suffix"] = tok

    pre = pre_tokenizers.Sequence([pre_tokenizers.BertPreTokenizer(), pre_tokenizers.CharDelimiterSplit("-"),
                                   pre_tokenizers.Split("o", behavior="merged_with_previous"),
                                   pre_tokenizers.Split(Regex(r"[aeiu]"), behavior="merged_with_next", invert=True),
                                   pre_tokenizers.WhitespaceSplit()])
    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##", fuse_unk=True))
    tok.pre_tokenizer = pre
    tok.train_from_iterator(train_texts, trainers.BpeTrainer(vocab_size=1500, limit_alphabet=100,
                                                             show_progress=False, special_tokens=["[UNK]"],
                                                             continuing_subword_prefix="##"))
    # Strip's right count stays 0: tokenizers 0.23 panics when it exceeds a token's length.
    tok.decoder = decoders.Sequence([decoders.Replace("##", ""), decoders.Strip(content="x", left=2, right=0),
                                     decoders.Fuse(), decoders.Replace("ab", "X"),
                                     decoders.Strip(content=" ", left=1, right=0)])
    tok.add_special_tokens([AddedToken("<s>", special=True, normalized=False)])
    tok.post_processor = processors.RobertaProcessing(("<s>", tok.token_to_id("<s>")),
                                                      ("<s>", tok.token_to_id("<s>")))
    result["words_prefix"] = tok
    return result


def added_token_json(token_id, content, special):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def build_tiny_gpt_oss(train_texts, repo: Path):
    config = json.loads((repo / "tests/data/models/tiny-gpt-oss/config.json").read_text())
    vocab_size = config["vocab_size"]
    first_special = vocab_size - len(HARMONY_SPECIALS)
    tok = train(pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(O200K_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)]), None,
        first_special, train_texts, True)
    spec = json.loads(tok.to_str())
    assert len(spec["model"]["vocab"]) == first_special, len(spec["model"]["vocab"])
    spec["model"]["ignore_merges"] = True
    spec["added_tokens"] = [added_token_json(first_special + i, t, True) for i, t in enumerate(HARMONY_SPECIALS)]
    spec["decoder"] = json.loads(decoders.ByteLevel().__getstate__())
    spec["post_processor"] = json.loads(processors.ByteLevel(trim_offsets=False).__getstate__())
    tok = Tokenizer.from_str(json.dumps(spec))
    expect = {"<|endoftext|>": config["pad_token_id"], "<|return|>": config["eos_token_id"]}
    for content, want in expect.items():
        assert tok.token_to_id(content) == want, (content, tok.token_to_id(content), want)
    assert tok.get_vocab_size(with_added_tokens=True) == vocab_size
    cfg = {
        "added_tokens_decoder": {str(first_special + i): {k: v for k, v in added_token_json(
            first_special + i, t, True).items() if k != "id"} for i, t in enumerate(HARMONY_SPECIALS)},
        "bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>",
        "clean_up_tokenization_spaces": False, "model_input_names": ["input_ids", "attention_mask"],
        "model_max_length": 131072, "tokenizer_class": "PreTrainedTokenizerFast",
    }
    smap = {"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>"}
    return tok, cfg, smap


def build_tiny_glm(train_texts, repo: Path):
    config = json.loads((repo / "tests/data/models/tiny-glm5-next/config.json").read_text())
    vocab_size = config["text_config"]["vocab_size"]
    pad_id = config["text_config"]["pad_token_id"]
    first_special = pad_id  # <|endoftext|> is GLM's pad (and eos) token
    after = vocab_size - first_special - len(GLM_SPECIALS)
    tok = train(pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(GLM_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)]), None,
        first_special + after, train_texts, True)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    assert len(vocab) == first_special + after, len(vocab)
    # Trained tokens past the special block move behind it; the specials sit in the model vocab too,
    # so tokenizers keeps their ids (as GLM's own files do for ids it has no room to append).
    for token, token_id in list(vocab.items()):
        if token_id >= first_special:
            vocab[token] = token_id + len(GLM_SPECIALS)
    for i, t in enumerate(GLM_SPECIALS):
        vocab[t] = first_special + i
    spec["added_tokens"] = [added_token_json(first_special + i, t, t not in GLM_TEXT_TAGS)
                            for i, t in enumerate(GLM_SPECIALS)]
    spec["decoder"] = json.loads(decoders.ByteLevel().__getstate__())
    spec["post_processor"] = json.loads(processors.ByteLevel(trim_offsets=False).__getstate__())
    tok = Tokenizer.from_str(json.dumps(spec))
    expect = {"<|endoftext|>": pad_id, "<|image|>": config["image_token_id"],
              "<|begin_of_image|>": config["image_start_token_id"], "<|end_of_image|>": config["image_end_token_id"],
              "<|video|>": config["video_token_id"], "<|begin_of_video|>": config["video_start_token_id"],
              "<|end_of_video|>": config["video_end_token_id"]}
    for content, want in expect.items():
        assert tok.token_to_id(content) == want, (content, tok.token_to_id(content), want)
    assert max(vocab.values()) == vocab_size - 1 and len(set(vocab.values())) == vocab_size
    cfg = {
        "added_tokens_decoder": {str(first_special + i): {k: v for k, v in added_token_json(
            first_special + i, t, t not in GLM_TEXT_TAGS).items() if k != "id"} for i, t in enumerate(GLM_SPECIALS)},
        "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
        "additional_special_tokens": [t for t in GLM_SPECIALS if t not in GLM_TEXT_TAGS],
        "clean_up_tokenization_spaces": False, "do_lower_case": False, "model_input_names": ["input_ids",
                                                                                            "attention_mask"],
        "model_max_length": 1048576, "padding_side": "left", "remove_space": False,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    smap = {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
            "additional_special_tokens": cfg["additional_special_tokens"]}
    return tok, cfg, smap


def decode_cases(tok: Tokenizer, samples: list, seed: int) -> list:
    """Random id sequences, including ones cut inside a multi-byte character."""
    rng = random.Random(seed)
    n = tok.get_vocab_size(with_added_tokens=True)
    seqs = []
    for _ in range(60):
        seqs.append([rng.randrange(0, n + 3) for _ in range(rng.randint(1, 40))])
    for sample in samples[:200]:
        ids = tok.encode(as_text(sample), add_special_tokens=False).ids
        if len(ids) > 1:
            seqs.append(ids[:rng.randint(1, len(ids) - 1)])
    byte_ids = [i for i in (tok.token_to_id(f"<0x{b:02X}>") for b in range(0x80, 0x100)) if i is not None]
    if byte_ids:
        for _ in range(20):
            seqs.append([rng.choice(byte_ids + [rng.randrange(0, n)]) for _ in range(rng.randint(1, 8))])
    return [{"ids": s, "decoded": tok.decode(s, skip_special_tokens=False),
             "decoded_skip": tok.decode(s, skip_special_tokens=True)} for s in seqs]


def expected(tok: Tokenizer, name: str, samples: list, seed: int) -> dict:
    cases = []
    for sample in samples:
        text = as_text(sample)
        ids = tok.encode(text, add_special_tokens=True).ids
        plain = tok.encode(text, add_special_tokens=False).ids
        cases.append({"input_hex": sample.hex(), "ids": ids, "ids_plain": plain,
                      "decoded": tok.decode(ids, skip_special_tokens=False),
                      "decoded_skip": tok.decode(ids, skip_special_tokens=True)})
    return {"tokenizer": name, "tokenizers_version": tokenizers.__version__, "cases": cases,
            "decode_cases": decode_cases(tok, samples, seed)}


def write_json(path: Path, value, compact=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        if compact:
            json.dump(value, f, ensure_ascii=False, separators=(",", ":"))
        else:
            json.dump(value, f, ensure_ascii=False, indent=2)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", default=".", help="repository root (reads the corpus and model configs)")
    ap.add_argument("--out", required=True, help="output root; files land under tests/data/...")
    args = ap.parse_args()
    repo, out = Path(args.repo), Path(args.out)
    print(f"tokenizers {tokenizers.__version__}, python {sys.version.split()[0]}", flush=True)

    corpus = read_corpus(repo / "tests/data/tokenizers/corpus.txt")
    train_texts = [as_text(s) for s in corpus]
    extra = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "[USER]", "@@", "café", "hello world", "Hello World",
             "<s>", "</s>", "<unk>", "[INST]", "[/INST]", "<|start|>", "<|message|>", "[gMASK]", "<|image|>",
             "<think>"]
    samples = corpus + [b""] + random_samples(1234, 300, extra)
    data = out / "tests/data"

    for name, tok in build_test_tokenizers(train_texts).items():
        (data / "tokenizers" / name).mkdir(parents=True, exist_ok=True)
        tok.save(str(data / "tokenizers" / name / "tokenizer.json"))
        exp = expected(tok, name, samples, seed=len(name))
        write_json(data / "tokenizers" / name / "expected.json", exp, compact=True)
        print(f"{name}: vocab {tok.get_vocab_size(True)}, {len(exp['cases'])} cases, "
              f"{len(exp['decode_cases'])} decode cases", flush=True)

    for folder, builder in (("tiny-gpt-oss", build_tiny_gpt_oss), ("tiny-glm5-next", build_tiny_glm)):
        tok, cfg, smap = builder(train_texts, repo)
        (data / "models" / folder).mkdir(parents=True, exist_ok=True)
        tok.save(str(data / "models" / folder / "tokenizer.json"))
        write_json(data / "models" / folder / "tokenizer_config.json", cfg)
        write_json(data / "models" / folder / "special_tokens_map.json", smap)
        exp = expected(tok, folder, samples, seed=len(folder))
        write_json(data / "tokenizers" / f"{folder}.expected.json", exp, compact=True)
        print(f"{folder}: vocab {tok.get_vocab_size(True)}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main()
