#!/usr/bin/env python3
"""Trains Day0's demo models: a tiny gpt-oss (MXFP4 experts) and a tiny glm5_next (DSA, KDA, mHC,
MoE) that write English, from the Python standard library's docstrings.

Run where torch and transformers >= 5.17 are installed (a GPU makes it minutes, not hours):

    python3 train.py tokenizer --corpus corpus.jsonl.xz --out WORK
    python3 train.py model --family gpt-oss   --corpus corpus.jsonl.xz --out WORK [--steps N]
    python3 train.py model --family glm5_next --corpus corpus.jsonl.xz --out WORK [--steps N]

`tokenizer` trains one byte-level BPE on the training split (WORK/tokenizer-base.json); `model`
builds each family's tokenizer from it (its own special tokens and chat template), the chat
samples, trains, and writes WORK/<family>/ exactly as transformers saves it; for gpt-oss the
experts are then quantised to the released MXFP4 layout (the last quarter of the steps trains
through that quantisation). Each run prints and writes WORK/<family>/training.json: seed, steps,
data, held-out perplexity of the shipped weights, and sample replies.

Everything is seeded (--seed); the same corpus, steps and versions give the same files.
The corpus comes from corpus.py (the docstrings of Python's standard library, PSF License v2).
"""

import argparse
import copy
import json
import lzma
import math
import random
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VOCAB = 3072  # BPE vocabulary before the special tokens
SEQ = 256  # training window in tokens

SYSTEM_PROMPTS = ["You are a helpful assistant.", "You are a helpful assistant. Answer briefly.",
                  "Answer questions about Python.", "You are Day0, a local assistant."]

# What the first word of a docstring's first sentence becomes in a "How do I ..." question.
HOW_VERBS = {"return": "get", "returns": "get", "get": "get", "gets": "get", "read": "read", "reads": "read",
             "write": "write", "writes": "write", "open": "open", "opens": "open", "create": "create",
             "creates": "create", "remove": "remove", "removes": "remove", "delete": "delete", "deletes": "delete",
             "set": "set", "sets": "set", "convert": "convert", "converts": "convert", "make": "make",
             "makes": "make", "send": "send", "sends": "send", "close": "close", "closes": "close", "start": "start",
             "starts": "start", "stop": "stop", "stops": "stop", "parse": "parse", "parses": "parse",
             "copy": "copy", "copies": "copy", "add": "add", "adds": "add", "find": "find", "finds": "find",
             "check": "check", "checks": "check", "format": "format", "formats": "format", "load": "load",
             "loads": "load", "save": "save", "saves": "save", "compute": "compute", "computes": "compute",
             "encode": "encode", "encodes": "encode", "decode": "decode", "decodes": "decode", "split": "split",
             "splits": "split", "join": "join", "joins": "join", "change": "change", "changes": "change",
             "print": "print", "prints": "print", "run": "run", "runs": "run", "wait": "wait", "waits": "wait",
             "test": "test", "tests": "test", "list": "list", "lists": "list", "update": "update",
             "updates": "update", "insert": "insert", "inserts": "insert", "search": "search",
             "searches": "search", "sort": "sort", "sorts": "sort", "compare": "compare", "compares": "compare",
             "generate": "generate", "generates": "generate", "build": "build", "builds": "build",
             "register": "register", "registers": "register", "install": "install", "installs": "install",
             "extract": "extract", "extracts": "extract", "replace": "replace", "replaces": "replace",
             "count": "count", "counts": "count", "connect": "connect", "connects": "connect"}


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')}]", *a, flush=True)


def read_corpus(path):
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def held_out_part(module):
    """The corpus' held-out split is halved: 'validation' picks nothing here, 'test' is reported."""
    import zlib

    return "test" if zlib.crc32(("test:" + module).encode()) % 2 == 0 else "validation"


def raw_text(e):
    title = f"The {e['name']} module" if e["kind"] == "module" else e["name"]
    return f"{title}\n\n{e['doc']}"


def first_sentence(doc):
    s = doc.split("\n", 1)[0]
    m = re.match(r"(.+?[.!?])(\s|$)", s)
    return (m.group(1) if m else s).strip()


def answer_text(e, rng, limit=700):
    paragraphs = e["doc"].split("\n")
    out = ""
    for p in paragraphs[:3]:
        if out and len(out) + len(p) > limit:
            break
        out = (out + "\n\n" + p) if out else p
    if len(out) > limit:
        cut = out.rfind(". ", 0, limit)
        out = out[: cut + 1] if cut > limit // 3 else out[:limit].rsplit(" ", 1)[0] + "."
    short = e["name"].rsplit(".", 1)[-1]
    r = rng.random()
    if e["kind"] in ("function", "constructor") and r < 0.3:
        call = f"`{e['name']}()`" if e["kind"] == "function" else f"`{e['name']}(...)`"
        out = f"Use {call}. {out}" if r < 0.2 else f"{short} in {e['module']}: {out}"
    return out


def questions(e):
    name, kind, module = e["name"], e["kind"], e["module"]
    short = name.rsplit(".", 1)[-1]
    qs = []
    if kind == "module":
        qs += [f"What is the {name} module?", f"What does the {name} module do?", f"Tell me about {name}.",
               f"What is {name} for in Python?"]
    elif kind == "class":
        qs += [f"What is {name}?", f"What is the {short} class?", f"Tell me about {short} in {module}."]
    elif kind == "constructor":
        qs += [f"How do I create a {short}?", f"How do I make a {name}?"]
    else:
        qs += [f"What does {name} do?", f"How do I use {short}?", f"Explain {name}.",
               f"What is {short} in {module} for?"]
    words = first_sentence(e["doc"]).rstrip(".!?").split(" ")
    verb = HOW_VERBS.get(words[0].lower()) if words else None
    if verb and 2 <= len(words) <= 14:
        rest = " ".join(words[1:])
        rest = rest[0].lower() + rest[1:] if rest[:1].isupper() and rest[1:2].islower() else rest
        qs += [f"How do I {verb} {rest}?", f"How do I {verb} {rest} in Python?", f"How can I {verb} {rest}?"]
    return qs


# ---------------------------------------------------------------------------------------------
# tokenizer
# ---------------------------------------------------------------------------------------------

def reference_tool(name):
    """A module of tools/reference (the fixture tools): the special tokens and pre-tokenizer split
    of each family, and the MXFP4 writer, are defined there once."""
    import importlib

    if str(REPO / "tools/reference") not in sys.path:
        sys.path.insert(0, str(REPO / "tools/reference"))
    return importlib.import_module(name)


def train_tokenizer(args):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    corpus = [e for e in read_corpus(args.corpus) if e["split"] == "train"]
    rng = random.Random(args.seed)
    texts = [raw_text(e) for e in corpus] + [q for e in corpus for q in questions(e)[:2]]
    texts += [answer_text(e, rng) for e in corpus]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        # gpt-oss's o200k split (letters with their case, 1-3 digit numbers, punctuation runs, newlines)
        pre_tokenizers.Split(Regex(reference_tool("make_tokenizer_fixtures").O200K_PATTERN), behavior="isolated",
                             invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(texts, trainer)
    args.out.mkdir(parents=True, exist_ok=True)
    tok.save(str(args.out / "tokenizer-base.json"))
    sample = "How do I read a file in Python? Open the file and return a stream."
    log(f"tokenizer: {tok.get_vocab_size()} tokens; {sample!r} -> {len(tok.encode(sample).ids)} tokens")


def family_tokenizer(args, family):
    import transformers
    from tokenizers import Tokenizer

    tokfix = reference_tool("make_tokenizer_fixtures")
    tok = Tokenizer.from_file(str(args.out / "tokenizer-base.json"))
    if family == "gpt-oss":
        tok.add_special_tokens(tokfix.HARMONY_SPECIALS)
        template = (REPO / "resources/demo-model/chat_template.jinja").read_text()
        kw = {"eos_token": "<|return|>", "pad_token": "<|endoftext|>"}
    else:
        tok.add_special_tokens(tokfix.GLM_SPECIALS)
        template = (REPO / "tests/data/chat_templates/GLM-4.7-Flash.jinja").read_text()
        kw = {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}
    cls = getattr(transformers, "PreTrainedTokenizerFast", None) or getattr(transformers, "TokenizersBackend")
    hf = cls(tokenizer_object=tok, **kw)
    hf.chat_template = template
    return hf


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------

def chat_sample(hf, family, turns, rng):
    """turns: [(question, answer), ...]; the last answer is the one written after the prompt."""
    messages = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": rng.choice(SYSTEM_PROMPTS)})
    for q, a in turns[:-1]:
        messages += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    messages.append({"role": "user", "content": turns[-1][0]})
    answer = turns[-1][1]
    if family == "gpt-oss":
        prompt = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return prompt + "<|channel|>final<|message|>" + answer + "<|return|>"
    thinking = rng.random() < 0.7  # the template's default opens <think>; the reply closes it at once
    prompt = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=thinking)
    return prompt + ("</think>" if thinking else "") + answer + "<|user|>"


def build_data(hf, family, corpus, rng):
    train = [e for e in corpus if e["split"] == "train"]
    docs = [raw_text(e) + "<|endoftext|>" for e in train]
    chats = []
    for e in train:
        qs = questions(e)
        rng.shuffle(qs)
        for q in qs[:3]:
            turns = [(q, answer_text(e, rng))]
            if rng.random() < 0.2:
                other = rng.choice(train)
                turns.insert(0, (rng.choice(questions(other)), answer_text(other, rng)))
            chats.append(chat_sample(hf, family, turns, rng))
    held = [e for e in corpus if e["split"] == "held_out"]
    test = [raw_text(e) + "<|endoftext|>" for e in held if held_out_part(e["module"]) == "test"]
    validation = [raw_text(e) + "<|endoftext|>" for e in held if held_out_part(e["module"]) == "validation"]
    return docs, chats, test, validation


def add_residual_dropout(model, p):
    """Dropout on what each decoder layer's attention and MLP blocks add to the residual stream
    (transformers' gpt_oss and glm5_next have none of their own): the corpus is small."""
    import torch

    hooked = []

    def hook(mod, inp, out):
        if not mod.training:
            return out
        if isinstance(out, tuple):
            return (torch.nn.functional.dropout(out[0], p, True),) + tuple(out[1:])
        return torch.nn.functional.dropout(out, p, True)

    for layer in model.modules():
        if not type(layer).__name__.endswith("DecoderLayer"):
            continue
        for name, child in layer.named_children():
            if re.search(r"Attention|MLP|Mo[Ee]|DeltaNet", type(child).__name__):
                child.register_forward_hook(hook)
                hooked.append(f"{name}:{type(child).__name__}")
    return sorted(set(hooked))


def encode_all(hf, texts):
    enc = hf.backend_tokenizer if hasattr(hf, "backend_tokenizer") else hf._tokenizer
    return [e.ids for e in enc.encode_batch(texts, add_special_tokens=False)]


# ---------------------------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------------------------

def padded_vocab(n):
    return (n + 63) // 64 * 64


def gpt_oss_config(hf):
    import transformers

    d = json.loads((REPO / "tests/data/models/tiny-gpt-oss/config.json").read_text())
    d.pop("quantization_config", None)
    ids = hf.convert_tokens_to_ids
    d.update({
        "num_hidden_layers": 4, "num_local_experts": 8, "num_experts_per_tok": 2,
        "vocab_size": padded_vocab(len(hf)), "hidden_size": 256, "intermediate_size": 384, "head_dim": 64,
        "num_attention_heads": 4, "num_key_value_heads": 2, "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 2,
        "pad_token_id": ids("<|endoftext|>"), "eos_token_id": [ids("<|return|>"), ids("<|endoftext|>"), ids("<|call|>")],
        "bos_token_id": None, "tie_word_embeddings": False, "output_router_logits": True,
        "router_aux_loss_coef": 0.01,
    })
    return transformers.GptOssConfig.from_dict(d)


def glm_config(hf):
    import transformers

    d = json.loads((REPO / "tests/data/models/tiny-glm5-next/config.json").read_text())
    ids = hf.convert_tokens_to_ids
    H = 192
    layer_types = ["linear_attention", "deepseek_sparse_attention"] * 2
    d["text_config"].update({
        "vocab_size": padded_vocab(len(hf)), "hidden_size": H, "intermediate_size": 512,
        "moe_intermediate_size": 128, "num_hidden_layers": len(layer_types), "num_attention_heads": 4,
        "num_key_value_heads": 4, "n_shared_experts": 1, "n_routed_experts": 8, "num_experts_per_tok": 2,
        "n_group": 1, "topk_group": 1, "kv_lora_rank": 64, "q_lora_rank": 96, "qk_rope_head_dim": 0,
        "qk_nope_head_dim": 48, "v_head_dim": 48, "qk_head_dim": 48, "head_dim": 0,
        "mlp_layer_types": ["dense"] + ["sparse"] * (len(layer_types) - 1), "layer_types": layer_types,
        "indexer_types": ["full"] * len(layer_types),
        # 256 tokens (64 pools of 4): a training window is attended whole, so training sees the same
        # attention as decoding; the indexer gets no gradient and starts to choose past 256 tokens
        "index_topk": 256, "index_head_dim": 32, "index_n_heads": 4, "index_kpool": 4,
        "linear_head_dim": 48, "linear_num_heads": 4, "hc_mult": 4,
        "pad_token_id": ids("<|endoftext|>"),
        "eos_token_id": [ids("<|endoftext|>"), ids("<|user|>"), ids("<|observation|>")],
    })
    d["vision_config"].update({"out_hidden_size": H})
    for key, token in (("image_token_id", "<|image|>"), ("video_token_id", "<|video|>"),
                       ("image_start_token_id", "<|begin_of_image|>"), ("image_end_token_id", "<|end_of_image|>"),
                       ("video_start_token_id", "<|begin_of_video|>"), ("video_end_token_id", "<|end_of_video|>")):
        d[key] = ids(token)
    return transformers.Glm5NextConfig.from_dict(d)


def build_model(family, cfg):
    import torch
    import transformers

    cls = transformers.GptOssForCausalLM if family == "gpt-oss" else transformers.Glm5NextForConditionalGeneration
    for kw in ({"attn_implementation": "eager", "experts_implementation": "eager"}, {"attn_implementation": "eager"}):
        try:
            return cls._from_config(copy.deepcopy(cfg), **kw).float()
        except (TypeError, ValueError) as e:
            log(f"_from_config({kw}) failed: {e}")
    raise RuntimeError("cannot build the model")


class FakeMxfp4:
    """Straight-through MXFP4 rounding of an expert tensor whose blocks of 32 run along `dim`."""

    def __init__(self, dim):
        self.dim = dim

    def __call__(self, w):
        import torch

        x = w.transpose(self.dim, -1)
        shape = x.shape
        b = x.reshape(*shape[:-1], shape[-1] // 32, 32)
        amax = b.abs().amax(-1, keepdim=True).clamp_min(1e-30)
        scale = torch.exp2(torch.ceil(torch.log2(amax / 6.0)))
        v = (b / scale).abs()
        grid = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], device=w.device, dtype=w.dtype)
        q = grid[(v[..., None] - grid).abs().argmin(-1)] * torch.sign(b) * scale
        q = q.reshape(shape).transpose(self.dim, -1)
        return w + (q - w).detach()


def expert_in_dims(model, cfg):
    """Parameter name -> the dim along which MXFP4 blocks run (the input dimension)."""
    H, I = cfg.hidden_size, cfg.intermediate_size
    out = {}
    for name, p in model.named_parameters():
        if name.endswith("mlp.experts.gate_up_proj"):
            out[name] = 1 if p.shape[1] == H and p.shape[2] == 2 * I else 2
        elif name.endswith("mlp.experts.down_proj"):
            out[name] = 1 if p.shape[1] == I and p.shape[2] == H else 2
    return out


# ---------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------

def batches(seqs, batch, seed):
    """Endless batches of [batch, SEQ+1] windows over the shuffled, concatenated sequences."""
    import torch

    epoch = 0
    while True:
        order = list(range(len(seqs)))
        random.Random(seed * 1000 + epoch).shuffle(order)
        stream = torch.tensor([t for i in order for t in seqs[i]], dtype=torch.long)
        n = (stream.numel() - 1) // SEQ
        windows = torch.stack([stream[i * SEQ: i * SEQ + SEQ + 1] for i in range(n)])
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed + epoch))
        for i in range(0, n - batch + 1, batch):
            yield windows[perm[i:i + batch]], epoch
        epoch += 1


def nll(model, seqs, dev):
    """Mean negative log-likelihood per token and per character over the held-out texts."""
    import torch

    stream = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for i in range(0, stream.numel() - 1, SEQ):
            x = stream[i:i + SEQ + 1]
            if x.numel() < 2:
                break
            logits = model(input_ids=x[None, :-1].to(dev), use_cache=False).logits.float()
            loss = torch.nn.functional.cross_entropy(logits[0], x[1:].to(dev), reduction="sum")
            total += float(loss)
            count += x.numel() - 1
    return total / count, count


def generate(model, hf, family, dev, prompts):
    import torch

    out = []
    rng = random.Random(0)
    for p, sample in prompts:
        messages = [{"role": "user", "content": p}]
        kw = {} if family == "gpt-oss" else {"enable_thinking": False}
        text = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **kw)
        ids = torch.tensor([encode_all(hf, [text])[0]], device=dev)
        torch.manual_seed(rng.randrange(1 << 30))
        with torch.no_grad():
            g = model.generate(ids, max_new_tokens=120, do_sample=sample, temperature=0.7, top_p=0.95,
                               pad_token_id=model.config.get_text_config().pad_token_id)
        reply = hf.decode(g[0, ids.shape[1]:].tolist(), skip_special_tokens=False)
        out.append({"prompt": p, "sampled": sample, "reply": reply})
        log(f"  {'sampled' if sample else 'greedy '} {p!r} -> {reply!r}")
    return out


def save_gpt_oss(model, cfg, hf, folder):
    """The released gpt-oss layout: bf16 everything, experts as MXFP4 blocks + E8M0 scales."""
    import torch
    from safetensors.torch import save_file

    tiny = reference_tool("make_tiny_checkpoints")

    dims = expert_in_dims(model, cfg)
    tensors, deq = {}, {}
    for name, t in model.state_dict().items():
        if name in dims:
            w_out_in = (t.transpose(1, 2) if dims[name] == 1 else t).float().cpu()  # [E, out, in]
            blocks, scales, dq = tiny.mxfp4_quantize(w_out_in)
            tensors[name + "_blocks"], tensors[name + "_scales"] = blocks, scales
            deq[name] = (dq.transpose(1, 2) if dims[name] == 1 else dq).contiguous()
        else:
            tensors[name] = t.detach().to(torch.bfloat16).cpu().contiguous()
    folder.mkdir(parents=True, exist_ok=True)
    save_file(dict(sorted(tensors.items())), str(folder / "model.safetensors"), metadata={"format": "pt"})
    c = cfg.to_dict()
    c["architectures"] = ["GptOssForCausalLM"]
    c["dtype"] = "bfloat16"
    c["output_router_logits"] = False
    c["quantization_config"] = copy.deepcopy(tiny.GPT_OSS_QCFG)
    for k in ("_attn_implementation_autoset", "_experts_implementation", "_attn_implementation"):
        c.pop(k, None)
    (folder / "config.json").write_text(json.dumps(c, indent=2, sort_keys=False) + "\n")
    import transformers

    transformers.GenerationConfig.from_model_config(cfg).save_pretrained(str(folder))
    hf.save_pretrained(str(folder))
    return deq


def load_saved(family, folder, dev):
    import torch
    import transformers

    if family == "gpt-oss":
        m = transformers.GptOssForCausalLM.from_pretrained(
            str(folder), dtype=torch.bfloat16, attn_implementation="eager",
            quantization_config=transformers.Mxfp4Config(dequantize=True))
    else:
        m = transformers.Glm5NextForConditionalGeneration.from_pretrained(
            str(folder), dtype=torch.bfloat16, attn_implementation="eager")
    return m.float().to(dev).eval()


def train_model(args):
    import torch
    import torch.nn.utils.parametrize as parametrize

    family = args.family
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    hf = family_tokenizer(args, family)
    corpus = read_corpus(args.corpus)
    docs, chats, test, validation = build_data(hf, family, corpus, rng)
    seqs = encode_all(hf, docs) + encode_all(hf, chats)
    test_ids = encode_all(hf, test)
    val_ids = encode_all(hf, validation)
    test_chars = sum(len(t) for t in test)
    n_tokens = sum(map(len, seqs))
    log(f"{family}: {len(docs)} documents + {len(chats)} chat samples = {n_tokens} tokens; "
        f"held-out test {sum(map(len, test_ids))} tokens ({test_chars} characters)")
    log("example chat sample:\n" + chats[0][:1500])

    cfg = gpt_oss_config(hf) if family == "gpt-oss" else glm_config(hf)
    model = build_model(family, cfg).to(dev)
    params = sum(p.numel() for p in model.parameters())
    log(f"{family}: {params / 1e6:.2f}M parameters")
    log(f"residual dropout {args.dropout} on", add_residual_dropout(model, args.dropout))

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "embed" not in n]
    other = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "embed" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    warmup = max(1, args.steps // 20)

    def lr_at(step):
        if step < warmup:
            return args.lr * (step + 1) / warmup
        t = (step - warmup) / max(1, args.steps - warmup)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))

    # gpt-oss trains its last 40% through the MXFP4 rounding it ships with; the weights kept are
    # those of the evaluation (every 100 steps, from then on) with the lowest validation loss
    qat_from = args.steps - args.steps * 2 // 5 if family == "gpt-oss" else 0
    dims = expert_in_dims(model, cfg.get_text_config()) if family == "gpt-oss" else {}
    best = (float("inf"), -1, None)
    val_curve = []
    t0 = time.time()
    it = batches(seqs, args.batch, args.seed)
    losses = []
    step = 0
    for step in range(args.steps):
        if step == qat_from and dims:
            for name, dim in dims.items():
                mod_name, pname = name.rsplit(".", 1)
                mod = model.get_submodule(mod_name)

                class Q(torch.nn.Module):
                    def __init__(self, d):
                        super().__init__()
                        self.f = FakeMxfp4(d)

                    def forward(self, w):
                        return self.f(w)

                parametrize.register_parametrization(mod, pname, Q(dim))
            log(f"step {step}: training through MXFP4 rounding of {len(dims)} expert tensors")
        xb, epoch = next(it)
        xb = xb.to(dev)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        model.train()
        with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            # transformers shifts the labels itself: window t predicts token t + 1
            out = model(input_ids=xb, labels=xb, use_cache=False)
        loss = out.loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if step % 100 == 0 or step == args.steps - 1:
            log(f"{family} step {step} epoch {epoch} loss {sum(losses[-50:]) / len(losses[-50:]):.3f} "
                f"lr {lr_at(step):.2e} {(time.time() - t0) / (step + 1) * 1000:.0f} ms/step")
        if (step + 1) % 100 == 0 or step == args.steps - 1:
            v, _ = nll(model, val_ids, dev)
            val_curve.append([step + 1, round(v, 4)])
            if step >= qat_from and v < best[0]:
                best = (v, step + 1, {k: t.detach().to("cpu", copy=True) for k, t in model.state_dict().items()})
            log(f"{family} step {step + 1}: validation NLL {v:.4f} (best {best[0]:.4f} at {best[1]})")
        if args.max_minutes and time.time() - t0 > args.max_minutes * 60:
            log(f"stopping at step {step}: past --max-minutes {args.max_minutes}")
            break
    train_seconds = time.time() - t0
    steps_done = step + 1
    if best[2] is not None:
        model.load_state_dict(best[2])
        log(f"keeping the weights of step {best[1]} (validation NLL {best[0]:.4f})")
    if dims:
        for name in dims:
            mod_name, pname = name.rsplit(".", 1)
            parametrize.remove_parametrizations(model.get_submodule(mod_name), pname, leave_parametrized=False)

    folder = args.out / family
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    trained_nll, n_test = nll(model, test_ids, dev)
    if family == "gpt-oss":
        save_gpt_oss(model, cfg, hf, folder)
    else:
        cfg.get_text_config().output_router_logits = False
        mb = copy.deepcopy(model).to(torch.bfloat16)
        for c in (mb.config, mb.config.text_config, mb.config.vision_config):
            c.dtype = torch.bfloat16
        mb.save_pretrained(str(folder))
        hf.save_pretrained(str(folder))
        del mb
    shipped = load_saved(family, folder, dev)
    shipped_nll, _ = nll(shipped, test_ids, dev)
    log(f"{family}: held-out NLL {trained_nll:.4f} (fp32 trained) -> {shipped_nll:.4f} (shipped weights), "
        f"perplexity {math.exp(shipped_nll):.2f} over {n_test} tokens")
    prompts = [("How do I read a file in Python?", False), ("How do I read a file in Python?", True),
               ("What does the json module do?", False), ("How do I sort a list?", True),
               ("What is a socket?", False)]
    samples = generate(shipped, hf, family, dev, prompts)
    files = {f.name: f.stat().st_size for f in sorted(folder.iterdir())}
    report = {
        "family": family, "seed": args.seed, "steps": steps_done, "kept_step": best[1],
        "validation_curve": val_curve, "dropout": args.dropout, "batch": args.batch, "seq": SEQ, "lr": args.lr,
        "parameters": params, "train_tokens_per_epoch": n_tokens, "documents": len(docs), "chat_samples": len(chats),
        "train_seconds": round(train_seconds, 1), "final_train_loss": sum(losses[-50:]) / len(losses[-50:]),
        "held_out_test": {"tokens": n_test, "characters": test_chars, "nll_fp32": trained_nll,
                          "nll_shipped": shipped_nll, "perplexity_shipped": math.exp(shipped_nll),
                          "bits_per_character": shipped_nll * n_test / test_chars / math.log(2)},
        "vocab_size": cfg.get_text_config().vocab_size, "tokenizer_tokens": len(hf), "files": files,
        "bytes": sum(files.values()), "samples": samples,
        "versions": {"torch": torch.__version__, "transformers": __import__("transformers").__version__},
    }
    (folder / "training.json").write_text(json.dumps(report, indent=2) + "\n")
    log(f"{family}: wrote {folder} ({report['bytes'] / 1e6:.2f} MB)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stage", choices=["tokenizer", "model"])
    ap.add_argument("--family", choices=["gpt-oss", "glm5_next"])
    ap.add_argument("--corpus", type=Path, default=HERE / "corpus.jsonl.xz")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--max-minutes", type=float, default=0.0, help="stop early past this (0: never)")
    args = ap.parse_args()
    if args.stage == "tokenizer":
        train_tokenizer(args)
    else:
        if not args.family:
            ap.error("model needs --family")
        train_model(args)


if __name__ == "__main__":
    main()
