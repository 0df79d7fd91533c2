#!/usr/bin/env python3
"""Reference tensors for Day0's gpt-oss forward pass, computed with Hugging Face transformers.

Two modes.

Fixtures (the default; run on a machine with torch + transformers >= 5.17, CUDA if present):
    python3 make_gpt_oss_fixtures.py [--out ROOT]
  1. builds two more tiny random gpt-oss checkpoints in the released MXFP4 layout (parameters
     randomised and rounded to bf16, experts quantized to MXFP4), with non-square shapes:
       ROOT/tests/data/models/tiny-gpt-oss-wide/   2 shards + model.safetensors.index.json
       ROOT/tests/data/models/tiny-gpt-oss-full/   one model.safetensors, no index
  2. for those two and the committed tests/data/models/tiny-gpt-oss, writes
       ROOT/tests/data/reference/gpt-oss/<model-folder-name>.safetensors
     (tensor list and meaning: TENSOR_DOC below; also stored in each file's metadata).
  3. checks every reference against an independent float64 re-implementation of the gpt-oss
     forward pass that reads the checkpoint files directly (MXFP4 decoded here, not by
     transformers), and runs that re-implementation with one deliberate bug at a time to show
     which bugs each fixture detects. Figures go to the metadata and ROOT/gpt_oss_fixtures_summary.json.

Any gpt-oss checkpoint (e.g. a real gpt-oss-20b, to check Day0 with `day0-cli verify`):
    python3 make_gpt_oss_fixtures.py --model DIR --tokens 1,2,3 --out FILE.safetensors
        [--new-tokens 32] [--greedy-prompt-len 8] [--device auto|cuda|cpu] [--independent-check]
  writes the same tensors for the given tokens. The model runs in float32 (weights loaded as
  bf16, MXFP4 experts dequantized, then widened: exact), TF32 off, eager attention.

The reference is transformers' own GptOssForCausalLM: loaded with
Mxfp4Config(dequantize=True), .float(), attn_implementation="eager".
"""

import argparse
import copy
import json
import math
import re
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import make_tiny_checkpoints as tiny  # noqa: E402  (sets the offline environment, imports torch)
import numpy as np  # noqa: E402
import torch  # noqa: E402

T0 = time.time()
SUMMARY = {}

PROMPT_LEN = 40
GREEDY_PROMPT_LEN = 8
GREEDY_NEW_TOKENS = 32
PROMPT_SEED = 20260311
# Keep prompts clear of the special ids placed at the top of each tiny vocabulary.
PROMPT_VOCAB_MARGIN = 16
SWIGLU_ALPHA = 1.702
# transformers' eager GptOssExperts hard-codes this (config.swiglu_limit is read only by the
# MXFP4 kernel path); every config here keeps swiglu_limit at the same 7.0.
SWIGLU_LIMIT = 7.0

# name -> how to build it. "base" is the full-size config the tiny one is cut from.
SPECS = {
    "tiny-gpt-oss-wide": {
        "base": "gpt-oss-20b-shape",
        "seed": 20260312,
        "shards": 2,
        # Experts' gate_up weights get this extra gain (a power of two: bf16-exact) so that the
        # SwiGLU clamps (gate <= 7, -7 <= up <= 7) really trigger; see clamp statistics.
        "gate_up_gain": 4.0,
        "overrides": {
            "num_hidden_layers": 3,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
            "sliding_window": 5,
            "num_local_experts": 16,
            "num_experts_per_tok": 4,
            "vocab_size": 320,
            "hidden_size": 96,
            "intermediate_size": 64,
            "head_dim": 24,
            "num_attention_heads": 6,
            "num_key_value_heads": 2,
            # a large eps makes a hard-coded 1e-5 visible in the outputs
            "rms_norm_eps": 0.02,
            "max_position_embeddings": 16384,
            "rope_parameters": {
                "rope_type": "yarn",
                "rope_theta": 20000.0,
                "factor": 8.0,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "original_max_position_embeddings": 2048,
                "truncate": False,
            },
            "pad_token_id": 316,
            "eos_token_id": 318,
        },
    },
    "tiny-gpt-oss-full": {
        "base": "gpt-oss-120b-shape",
        "seed": 20260313,
        "shards": 1,
        "gate_up_gain": 4.0,
        "overrides": {
            "num_hidden_layers": 2,
            "layer_types": ["full_attention", "full_attention"],
            # unused by full layers: an engine that applies it anyway fails this fixture
            "sliding_window": 4,
            "num_local_experts": 4,
            "num_experts_per_tok": 1,
            "vocab_size": 512,
            "hidden_size": 128,
            "intermediate_size": 96,
            "head_dim": 32,
            "num_attention_heads": 3,
            "num_key_value_heads": 1,
            "pad_token_id": 508,
            "eos_token_id": 510,
        },
    },
}
COMMON_OVERRIDES = {
    "architectures": ["GptOssForCausalLM"],
    "swiglu_limit": SWIGLU_LIMIT,
    "bos_token_id": None,
    "tie_word_embeddings": False,
}
EXISTING = "tiny-gpt-oss"  # committed by make_tiny_checkpoints.py; read, never rewritten here

TENSOR_DOC = {
    "input_ids": "I32 [T]: prompt token ids (position t = index t, positions start at 0).",
    "logits": "F32 [T,V]: decode path. Row t = lm_head logits after feeding token t alone with "
              "transformers' DynamicCache holding tokens < t (token-by-token, position t).",
    "logits_prefill": "F32 [T,V]: logits of one forward over all T tokens (no cache).",
    "hidden.embed": "F32 [T,H]: model.embed_tokens(input_ids) (no scaling), prefill.",
    "hidden.<l>": "F32 [T,H]: output of decoder layer l (residual stream after the layer: "
                  "h = x + attn(input_layernorm(x)); out = h + moe(post_attention_layernorm(h))), prefill.",
    "hidden.final_norm": "F32 [T,H]: model.norm(hidden.<L-1>), the input of lm_head, prefill.",
    "attn.<l>.out": "F32 [T,H]: self_attn output of layer l after o_proj (incl. its bias), before the "
                    "residual add, prefill.",
    "router.<l>.logits": "F32 [T,E]: router logits of layer l = post_attention_layernorm(h) @ W^T + b, prefill.",
    "router.<l>.topk": "I32 [T,k]: expert ids of torch.topk(router logits, k) in the order returned "
                       "(descending logit), prefill.",
    "router.<l>.weights": "F32 [T,k]: routing weights applied to the expert outputs: softmax over the k "
                          "selected logits only, same order as router.<l>.topk, prefill.",
    "rope.inv_freq": "F32 [head_dim/2]: transformers' rotary inverse frequencies (YaRN-adjusted); "
                     "cos and sin are multiplied by metadata rope_attention_scaling.",
    "greedy_prompt": "I32 [P]: prompt of the greedy run (the first P ids of input_ids).",
    "greedy_ids": "I32 [N]: the N new tokens of model.generate(greedy_prompt, do_sample=False), EOS "
                  "disabled, i.e. transformers' cached decode path.",
    "greedy_top2_gap": "F32 [N]: at each greedy step, top-1 minus top-2 logit (small = near-tie).",
}


def log(*args):
    print(f"[{time.time() - T0:7.1f}s]", *args, flush=True)


def record(key, value):
    SUMMARY[key] = value
    log(f"RESULT {key} = {json.dumps(value, default=str)[:3000]}")


def rel_l2_rows(a, b):
    """Per-row ||a - b|| / ||b|| over the last axis, float64. a, b: [T, D]."""
    a = a.double().reshape(a.shape[0], -1)
    b = b.double().reshape(b.shape[0], -1)
    return ((a - b).norm(dim=-1) / b.norm(dim=-1).clamp_min(1e-300)).cpu()


def pick_device(name):
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


# ----------------------------------------------------------------------------------------------
# building the tiny checkpoints
# ----------------------------------------------------------------------------------------------

def build_checkpoint(name, spec, out_models, configs_dir):
    import transformers
    from safetensors.torch import save_file

    full = json.loads((configs_dir / f"{spec['base']}.config.json").read_text())
    d = copy.deepcopy(full)
    d.pop("quantization_config", None)
    d.update(copy.deepcopy(COMMON_OVERRIDES))
    d.update(copy.deepcopy(spec["overrides"]))
    cfg = transformers.GptOssConfig.from_dict(d)
    H, I, E = cfg.hidden_size, cfg.intermediate_size, cfg.num_local_experts
    assert H % 32 == 0 and I % 32 == 0, (H, I)
    log(f"{name}: config overrides {json.dumps(spec['overrides'])}")

    torch.manual_seed(spec["seed"])
    gen = torch.Generator().manual_seed(spec["seed"])
    model = tiny.build_from_config(transformers.GptOssForCausalLM, cfg, name).float().eval()
    tiny.randomize_(model, gen, H, I, name)
    gain = spec.get("gate_up_gain", 1.0)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("mlp.experts.gate_up_proj"):
                p.mul_(gain)

    ckpt = {}
    for pname, t in model.state_dict().items():
        if pname.endswith("mlp.experts.gate_up_proj") or pname.endswith("mlp.experts.down_proj"):
            # the module parameter is [E, in, out] (used as x @ W); the checkpoint is [E, out, in/32, 16]
            out_dim = 2 * I if pname.endswith("gate_up_proj") else H
            assert t.shape[0] == E and t.shape[2] == out_dim, (pname, tuple(t.shape))
            w_out_in = t.transpose(1, 2).float().cpu()
            blocks, scales, deq = tiny.mxfp4_quantize(w_out_in)
            assert torch.equal(tiny.mxfp4_dequantize_reference(blocks, scales), deq), pname
            ckpt[pname + "_blocks"] = blocks
            ckpt[pname + "_scales"] = scales
        else:
            ckpt[pname] = t.detach().to(torch.bfloat16).contiguous().cpu()

    folder = out_models / name
    if folder.exists():
        for f in folder.iterdir():
            f.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    cdict = cfg.to_dict()
    cdict["architectures"] = ["GptOssForCausalLM"]
    cdict["dtype"] = "bfloat16"
    cdict["quantization_config"] = copy.deepcopy(tiny.GPT_OSS_QCFG)
    for k in ("_attn_implementation_autoset", "_experts_implementation", "_attn_implementation"):
        cdict.pop(k, None)
    tiny.write_json(folder / "config.json", cdict)
    transformers.GenerationConfig.from_model_config(cfg).save_pretrained(str(folder))

    names = sorted(ckpt)
    if spec["shards"] == 1:
        save_file({n: ckpt[n] for n in names}, str(folder / "model.safetensors"), metadata={"format": "pt"})
    else:
        def shard_of(n):
            return 1 if n.startswith("model.embed_tokens") or ".layers.0." in n or ".layers.1." in n else 2

        weight_map, total = {}, 0
        for i in (1, 2):
            fname = f"model-{i:05d}-of-00002.safetensors"
            part = {n: ckpt[n] for n in names if shard_of(n) == i}
            save_file(part, str(folder / fname), metadata={"format": "pt"})
            for n, t in part.items():
                weight_map[n] = fname
                total += t.numel() * t.element_size()
        tiny.write_json(folder / "model.safetensors.index.json",
                        {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    sizes = {f.name: f.stat().st_size for f in sorted(folder.iterdir())}
    record(f"{name}.files", sizes)
    assert sum(sizes.values()) < 1.5 * 1024 * 1024, sizes

    # the in-memory model now holds exactly the values the checkpoint stores
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("mlp.experts.gate_up_proj") or pname.endswith("mlp.experts.down_proj"):
                deq = tiny.mxfp4_dequantize_reference(ckpt[pname + "_blocks"], ckpt[pname + "_scales"])
                p.copy_(deq.transpose(1, 2))
            else:
                p.copy_(ckpt[pname].float())
    return folder, {k: v.detach().clone() for k, v in model.state_dict().items()}


# ----------------------------------------------------------------------------------------------
# transformers reference
# ----------------------------------------------------------------------------------------------

def load_hf_model(folder, dev):
    """GptOssForCausalLM in float32 with dequantized MXFP4 experts, eager attention and experts."""
    import transformers

    qc = transformers.Mxfp4Config(dequantize=True)
    attempts = []
    for impl in ({"attn_implementation": "eager", "experts_implementation": "eager"},
                 {"attn_implementation": "eager"}):
        attempts.append(dict(impl, device_map=str(dev)))
        attempts.append(dict(impl))
    last = None
    for kw in attempts:
        try:
            model = transformers.GptOssForCausalLM.from_pretrained(
                str(folder), dtype=torch.bfloat16, quantization_config=qc, **kw)
            log(f"loaded {folder} with {kw}")
            # bf16 -> f32 is exact: the reference runs on exactly the stored (dequantized) values
            return model.float().to(dev).eval(), kw
        except Exception as e:  # noqa: BLE001
            last = e
            log(f"from_pretrained({kw}) failed: {type(e).__name__}: {e}")
    raise last


class Capture:
    """Forward hooks on embed_tokens, every decoder layer, its self_attn and router, and the final norm."""

    def __init__(self, model):
        self.out = {}
        self.handles = []
        inner = model.model
        self._hook(inner.embed_tokens, "hidden.embed")
        for i, layer in enumerate(inner.layers):
            self._hook(layer, f"hidden.{i}")
            self._hook(layer.self_attn, f"attn.{i}.out")
            self._hook(layer.mlp.router, f"router.{i}", router=True)
        self._hook(inner.norm, "hidden.final_norm")

    def _hook(self, module, key, router=False):
        def fn(_mod, _inp, output):
            if router:
                logits, scores, idx = output
                self.out[f"{key}.logits"] = logits.detach().float().reshape(-1, logits.shape[-1]).cpu()
                self.out[f"{key}.weights"] = scores.detach().float().reshape(-1, scores.shape[-1]).cpu()
                self.out[f"{key}.topk"] = idx.detach().to(torch.int32).reshape(-1, idx.shape[-1]).cpu()
                return
            t = output[0] if isinstance(output, (tuple, list)) else output  # attention: (out, weights)
            self.out[key] = t.detach().float()[0].cpu()  # drop the batch axis: [T, H]

        self.handles.append(module.register_forward_hook(fn))

    def remove(self):
        for h in self.handles:
            h.remove()


def hf_reference(model, ids, dev, n_new, greedy_len):
    """All reference tensors for one prompt. ids: LongTensor [T]."""
    cfg = model.config
    L = cfg.num_hidden_layers
    T = ids.numel()
    x = ids[None].to(dev)
    res, figs = {}, {}
    with torch.no_grad():
        cap = Capture(model)
        try:
            out = model(input_ids=x, use_cache=False, output_hidden_states=True)
        finally:
            cap.remove()
        res["logits_prefill"] = out.logits.float()[0].cpu()
        res.update(cap.out)
        # which layer outputs output_hidden_states reports (documented for users of that API)
        hs = [h.float()[0].cpu() for h in out.hidden_states] if out.hidden_states is not None else []
        mapping = []
        for h in hs:
            cands = ["hidden.embed"] + [f"hidden.{i}" for i in range(L)] + ["hidden.final_norm"]
            match = [c for c in cands if c in res and res[c].shape == h.shape and torch.equal(res[c], h)]
            mapping.append(match)
        figs["output_hidden_states_entries"] = mapping

        # decode path: one token at a time through transformers' cache
        pkv, rows = None, []
        for t in range(T):
            o = model(input_ids=x[:, t:t + 1], past_key_values=pkv, use_cache=True)
            pkv = o.past_key_values
            rows.append(o.logits.float()[0, -1].cpu())
        res["logits"] = torch.stack(rows)
        dis = rel_l2_rows(res["logits"], res["logits_prefill"])
        figs["decode_vs_prefill_rel_l2_per_row"] = [float(v) for v in dis]
        figs["decode_vs_prefill_rel_l2_max"] = float(dis.max())
        figs["decode_vs_prefill_argmax_agree"] = int(
            (res["logits"].argmax(-1) == res["logits_prefill"].argmax(-1)).sum())
        figs["cache_class"] = type(pkv).__name__
        try:
            figs["cache_layers"] = [type(lay).__name__ for lay in pkv.layers]
        except Exception:  # noqa: BLE001
            pass

        # router: smallest gap between the k-th and (k+1)-th logit (near-ties flip under bf16)
        k = cfg.num_experts_per_tok
        gaps = []
        for i in range(L):
            srt = res[f"router.{i}.logits"].sort(dim=-1, descending=True).values
            if srt.shape[-1] > k:
                gaps.append(float((srt[:, k - 1] - srt[:, k]).min()))
        figs["router_min_gap_kth_vs_next"] = gaps

        rot = model.model.rotary_emb
        res["rope.inv_freq"] = rot.inv_freq.detach().float().cpu()
        figs["rope_attention_scaling"] = float(rot.attention_scaling)

    if n_new > 0:
        figs.update(greedy(model, ids[:greedy_len], dev, n_new, res))
    return res, figs


def greedy(model, prompt, dev, n_new, res):
    import transformers

    # EOS disabled everywhere so that exactly n_new tokens come out of plain greedy decoding
    saved = (model.config.eos_token_id, model.generation_config.eos_token_id)
    model.config.eos_token_id = None
    model.generation_config.eos_token_id = None
    pad = model.config.pad_token_id if model.config.pad_token_id is not None else 0
    gc = transformers.GenerationConfig(do_sample=False, max_new_tokens=n_new, min_new_tokens=n_new,
                                       eos_token_id=None, pad_token_id=pad, bos_token_id=None,
                                       temperature=None, top_p=None, top_k=None,
                                       output_scores=True, return_dict_in_generate=True)
    x = prompt[None].to(dev)
    try:
        with torch.no_grad():
            g = model.generate(input_ids=x, attention_mask=torch.ones_like(x), generation_config=gc)
    finally:
        model.config.eos_token_id, model.generation_config.eos_token_id = saved
    seq = g.sequences[0].cpu()
    new = seq[prompt.numel():]
    assert new.numel() == n_new, f"generate produced {new.numel()} tokens, wanted {n_new}"
    scores = torch.stack([s[0].float().cpu() for s in g.scores])
    top2 = scores.topk(2, dim=-1).values
    res["greedy_prompt"] = prompt.to(torch.int32).clone()
    res["greedy_ids"] = new.to(torch.int32).clone()
    res["greedy_top2_gap"] = (top2[:, 0] - top2[:, 1]).contiguous()
    figs = {"greedy_scores_argmax_is_token": int((scores.argmax(-1) == new).sum())}
    # teacher-forced prefill over prompt + generated tokens: each new token must be its argmax
    with torch.no_grad():
        full = model(input_ids=seq[None].to(dev), use_cache=False).logits.float()[0].cpu()
    p = prompt.numel()
    tf = full[p - 1:p - 1 + n_new]
    figs["greedy_prefill_argmax_agree"] = int((tf.argmax(-1) == new).sum())
    figs["greedy_min_top2_gap"] = float(res["greedy_top2_gap"].min())
    eos = model.config.eos_token_id
    eos_list = eos if isinstance(eos, list) else ([eos] if eos is not None else [])
    figs["greedy_contains_config_eos"] = any(int(t) in eos_list for t in new)
    return figs


# ----------------------------------------------------------------------------------------------
# independent float64 forward pass, straight from the checkpoint files
# ----------------------------------------------------------------------------------------------

class CheckpointReader:
    """Tensors by name from model.safetensors or the shards of model.safetensors.index.json."""

    def __init__(self, folder):
        from safetensors import safe_open

        folder = Path(folder)
        idx = folder / "model.safetensors.index.json"
        if idx.exists():
            wm = json.loads(idx.read_text())["weight_map"]
        else:
            with safe_open(str(folder / "model.safetensors"), framework="pt") as fh:
                wm = {k: "model.safetensors" for k in fh.keys()}
        self.where = wm
        self.files = {f: safe_open(str(folder / f), framework="pt") for f in sorted(set(wm.values()))}

    def get(self, name):
        return self.files[self.where[name]].get_tensor(name)


FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def decode_mxfp4(blocks, scales):
    """blocks u8 [R, G, 16], scales u8 [R, G] -> float64 [R, G*32]; low nibble = even element."""
    lut = torch.tensor(FP4_VALUES, dtype=torch.float64, device=blocks.device)
    b = blocks.long()
    vals = torch.stack([lut[b & 0x0F], lut[b >> 4]], dim=-1).reshape(*b.shape[:-1], 32)
    vals = vals * torch.exp2(scales.double() - 127.0)[..., None]
    return vals.reshape(b.shape[0], -1)


def yarn_inv_freq(rp, head_dim, truncate_flip=False):
    """float64 RoPE inverse frequencies [head_dim/2] and the cos/sin scale, from rope_parameters."""
    base = float(rp["rope_theta"])
    dim = head_dim
    exps = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    pos_freqs = base ** exps
    if rp.get("rope_type", "default") == "default":
        return 1.0 / pos_freqs, 1.0
    assert rp["rope_type"] == "yarn", rp
    factor = float(rp["factor"])
    orig = float(rp["original_max_position_embeddings"])
    scale = rp.get("attention_factor")
    if scale is None:
        scale = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    beta_fast = rp.get("beta_fast") or 32
    beta_slow = rp.get("beta_slow") or 1

    def corr_dim(n_rot):
        return dim * math.log(orig / (n_rot * 2 * math.pi)) / (2 * math.log(base))

    low, high = corr_dim(beta_fast), corr_dim(beta_slow)
    truncate = rp.get("truncate", True)
    if truncate_flip:
        truncate = not truncate
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    inv = (1.0 / pos_freqs) * (1 - ramp) + (1.0 / (factor * pos_freqs)) * ramp
    return inv, float(scale)


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope_rotate(x, cos, sin, interleaved_pairs=False):
    """x [T, heads, D]; cos/sin [T, D/2]. Pairs (i, i + D/2) (transformers) or (2i, 2i+1)."""
    c, s = cos[:, None, :], sin[:, None, :]
    if interleaved_pairs:
        a, b = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = a * c - b * s
        out[..., 1::2] = b * c + a * s
        return out
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * c - b * s, b * c + a * s], dim=-1)


def independent_forward(reader, cfg, ids, dev, bug=None):
    """float64 gpt-oss forward over ids [T] (prefill, causal). bug: None or one of BUGS.

    Returns per-layer tensors named like the reference file, plus clamp statistics."""
    g = lambda n: reader.get(n).to(dev).double()  # noqa: E731
    nH, nKV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D, L, k = cfg["head_dim"], cfg["num_hidden_layers"], cfg["num_experts_per_tok"]
    eps = 1e-5 if bug == "rms_eps_1e-5" else cfg["rms_norm_eps"]
    T = ids.numel()
    out, stats = {}, {"gate_gt_limit": 0, "up_gt_limit": 0, "up_lt_minus_limit": 0, "pairs": 0}

    x = g("model.embed_tokens.weight")[ids.to(dev)]
    out["hidden.embed"] = x
    inv, scale = yarn_inv_freq(cfg["rope_parameters"], D, truncate_flip=(bug == "yarn_truncate_flipped"))
    if bug == "no_yarn_attention_scaling":
        scale = 1.0
    if bug == "plain_rope_no_yarn":
        inv = 1.0 / (float(cfg["rope_parameters"]["rope_theta"]) ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = (ang.cos() * scale).to(dev), (ang.sin() * scale).to(dev)
    qi = torch.arange(T, device=dev)[:, None]
    kj = torch.arange(T, device=dev)[None, :]
    for li in range(L):
        p = f"model.layers.{li}."
        # ---- attention
        h = rms_norm(x, g(p + "input_layernorm.weight"), eps)
        q = (h @ g(p + "self_attn.q_proj.weight").T + g(p + "self_attn.q_proj.bias")).reshape(T, nH, D)
        kk = (h @ g(p + "self_attn.k_proj.weight").T + g(p + "self_attn.k_proj.bias")).reshape(T, nKV, D)
        v = (h @ g(p + "self_attn.v_proj.weight").T + g(p + "self_attn.v_proj.bias")).reshape(T, nKV, D)
        inter = bug == "rope_interleaved_pairs"
        q, kk = rope_rotate(q, cos, sin, inter), rope_rotate(kk, cos, sin, inter)
        rep = nH // nKV
        kh = kk.repeat_interleave(rep, dim=1)  # query head j reads kv head j // rep
        vh = v.repeat_interleave(rep, dim=1)
        if bug == "gqa_kv_head_modulo":
            kh = kk[:, torch.arange(nH, device=dev) % nKV]
            vh = v[:, torch.arange(nH, device=dev) % nKV]
        s = torch.einsum("qhd,khd->hqk", q, kh) * D ** -0.5
        visible = kj <= qi
        sliding = cfg["layer_types"][li] == "sliding_attention" or bug == "sliding_on_all_layers"
        if sliding:
            w = cfg["sliding_window"] + {"sliding_window_plus_1": 1, "sliding_window_minus_1": -1}.get(bug, 0)
            visible = visible & (kj > qi - w)  # keys i-W+1 .. i: W keys including the query's own
        s = s.masked_fill(~visible[None], float("-inf"))
        sinks = g(p + "self_attn.sinks")
        if bug == "no_sinks":
            sinks = torch.full_like(sinks, float("-inf"))
        sk = torch.cat([s, sinks[:, None, None].expand(nH, T, 1)], dim=-1)
        prob = torch.softmax(sk, dim=-1)[..., :T]
        o = torch.einsum("hqk,khd->qhd", prob, vh).reshape(T, nH * D)
        attn = o @ g(p + "self_attn.o_proj.weight").T + g(p + "self_attn.o_proj.bias")
        out[f"attn.{li}.out"] = attn
        x = x + attn
        # ---- mixture of experts
        h = rms_norm(x, g(p + "post_attention_layernorm.weight"), eps)
        logits = h @ g(p + "mlp.router.weight").T + g(p + "mlp.router.bias")
        top_v, top_i = torch.topk(logits, k, dim=-1)
        wts = torch.softmax(top_v, dim=-1)
        if bug == "router_softmax_over_all_experts":
            wts = torch.softmax(logits, dim=-1).gather(-1, top_i)
        out[f"router.{li}.logits"], out[f"router.{li}.topk"], out[f"router.{li}.weights"] = logits, top_i, wts
        gu_blocks, gu_scales = reader.get(p + "mlp.experts.gate_up_proj_blocks"), reader.get(p + "mlp.experts.gate_up_proj_scales")
        dn_blocks, dn_scales = reader.get(p + "mlp.experts.down_proj_blocks"), reader.get(p + "mlp.experts.down_proj_scales")
        gu_bias, dn_bias = g(p + "mlp.experts.gate_up_proj_bias"), g(p + "mlp.experts.down_proj_bias")
        moe = torch.zeros_like(x)
        for e in sorted(set(top_i.flatten().tolist())):
            tok, slot = (top_i == e).nonzero(as_tuple=True)
            w_gu = decode_mxfp4(gu_blocks[e].to(dev), gu_scales[e].to(dev))  # [2I, H]
            w_dn = decode_mxfp4(dn_blocks[e].to(dev), dn_scales[e].to(dev))  # [H, I]
            gu = h[tok] @ w_gu.T + gu_bias[e]  # [n, 2I], gate/up interleaved
            if bug == "gate_up_halves_not_interleaved":
                half = gu.shape[-1] // 2
                gate, up = gu[:, :half], gu[:, half:]
            else:
                gate, up = gu[:, 0::2], gu[:, 1::2]
            stats["pairs"] += gate.numel()
            stats["gate_gt_limit"] += int((gate > SWIGLU_LIMIT).sum())
            stats["up_gt_limit"] += int((up > SWIGLU_LIMIT).sum())
            stats["up_lt_minus_limit"] += int((up < -SWIGLU_LIMIT).sum())
            if bug != "no_swiglu_clamp":
                gate = gate.clamp(max=SWIGLU_LIMIT)
                up = up.clamp(min=-SWIGLU_LIMIT, max=SWIGLU_LIMIT)
            act = (up + 1) * gate * torch.sigmoid(SWIGLU_ALPHA * gate)
            if bug == "swiglu_without_up_plus_1":
                act = up * gate * torch.sigmoid(SWIGLU_ALPHA * gate)
            y = act @ w_dn.T + dn_bias[e]
            moe.index_add_(0, tok, y * wts[tok, slot][:, None])
        x = x + moe
        out[f"hidden.{li}"] = x
    x = rms_norm(x, g("model.norm.weight"), eps)
    out["hidden.final_norm"] = x
    out["logits_prefill"] = x @ g("lm_head.weight").T
    out["rope.inv_freq"] = inv
    stats["rope_attention_scaling"] = scale
    return out, stats


BUGS = [
    "sliding_window_plus_1",
    "sliding_window_minus_1",
    "sliding_on_all_layers",
    "no_yarn_attention_scaling",
    "yarn_truncate_flipped",
    "plain_rope_no_yarn",
    "rope_interleaved_pairs",
    "gqa_kv_head_modulo",
    "no_sinks",
    "router_softmax_over_all_experts",
    "gate_up_halves_not_interleaved",
    "no_swiglu_clamp",
    "swiglu_without_up_plus_1",
    "rms_eps_1e-5",
]


def config_dict(model):
    c = model.config
    return {
        "hidden_size": c.hidden_size,
        "intermediate_size": c.intermediate_size,
        "num_hidden_layers": c.num_hidden_layers,
        "num_attention_heads": c.num_attention_heads,
        "num_key_value_heads": c.num_key_value_heads,
        "head_dim": c.head_dim,
        "num_local_experts": c.num_local_experts,
        "num_experts_per_tok": c.num_experts_per_tok,
        "vocab_size": c.vocab_size,
        "sliding_window": c.sliding_window,
        "layer_types": list(c.layer_types),
        "rms_norm_eps": c.rms_norm_eps,
        "rope_parameters": dict(c.rope_parameters),
        "swiglu_limit_config": getattr(c, "swiglu_limit", None),
        "attention_bias": c.attention_bias,
        "tie_word_embeddings": c.tie_word_embeddings,
        "pad_token_id": c.pad_token_id,
        "eos_token_id": c.eos_token_id,
    }


def independent_check(folder, model, res, dev, with_bugs):
    """Compare the transformers reference with the float64 re-implementation (and its bugged variants)."""
    cfg = config_dict(model)
    reader = CheckpointReader(folder)
    ids = res["input_ids"].long()
    ind, stats = independent_forward(reader, cfg, ids, dev)
    figs = {"clamp_stats": stats}
    per = {}
    for key, ref in res.items():
        if key in ind and ref.is_floating_point() and ref.dim() == 2:
            per[key] = float(rel_l2_rows(ind[key].cpu(), ref).max())
    figs["rel_l2_max_per_tensor"] = per
    figs["rel_l2_max_any"] = max(per.values())
    agree, total = 0, 0
    for li in range(cfg["num_hidden_layers"]):
        a, b = ind[f"router.{li}.topk"].cpu().to(torch.int32), res[f"router.{li}.topk"]
        agree += int((a == b).all(-1).sum())
        total += a.shape[0]
    figs["router_topk_rows_agree"] = f"{agree}/{total}"
    figs["inv_freq_max_rel_diff"] = float(((ind["rope.inv_freq"].cpu() - res["rope.inv_freq"].double()).abs()
                                           / ind["rope.inv_freq"].cpu().abs()).max())
    if with_bugs:
        detect = {}
        for bug in BUGS:
            bo, _ = independent_forward(reader, cfg, ids, dev, bug=bug)
            first = None
            for key in ["hidden.embed"] + [f"hidden.{i}" for i in range(cfg["num_hidden_layers"])]:
                if float(rel_l2_rows(bo[key].cpu(), res[key]).max()) > 1e-3:
                    first = key
                    break
            detect[bug] = {"logits_rel_l2_max": float(rel_l2_rows(bo["logits_prefill"].cpu(), res["logits_prefill"]).max()),
                           "first_layer_over_1e-3": first}
        figs["bug_detection"] = detect
    return figs


# ----------------------------------------------------------------------------------------------
# writing a reference file
# ----------------------------------------------------------------------------------------------

def write_reference(path, name, model, res, figs, n_new, source):
    import safetensors
    import transformers
    from safetensors.torch import save_file

    tensors = {}
    for key, t in res.items():
        t = t.detach().cpu().contiguous()
        tensors[key] = t.to(torch.int32) if not t.is_floating_point() else t.to(torch.float32)
    T = int(res["input_ids"].numel())
    doc = {key: TENSOR_DOC[re.sub(r"\.\d+(\.|$)", r".<l>\1", key)] for key in sorted(tensors)}
    meta = {
        "model": name,
        "source": source,
        "config": config_dict(model),
        "T": T,
        "N": n_new,
        "versions": {"transformers": transformers.__version__, "torch": torch.__version__,
                     "safetensors": safetensors.__version__, "numpy": np.__version__},
        "device": torch.cuda.get_device_name(0) if next(model.parameters()).is_cuda else "cpu",
        "precision": "float32 weights and activations (bf16 checkpoint values widened exactly; MXFP4 "
                     "experts dequantized), TF32 off, attn_implementation=eager",
        "conventions": {
            "sliding_window": "query i attends keys j with i - W < j <= i (W keys including its own)",
            "rope": "pairs (i, i + head_dim/2); cos/sin scaled by rope_attention_scaling",
            "relative_l2": "per row ||a - b|| / ||b||",
        },
        "figures": figs,
        "tensors": doc,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={"format": "pt", "reference": json.dumps(meta, default=str)})
    log(f"wrote {path} ({path.stat().st_size} bytes, {len(tensors)} tensors)")
    return path.stat().st_size


def reference_for(folder, name, ids, dev, n_new, greedy_len, out_file, independent, with_bugs, source,
                  expected_state=None):
    model, load_kw = load_hf_model(folder, dev)
    figs = {"load_kwargs": {k: str(v) for k, v in load_kw.items()}}
    if expected_state is not None:
        lsd = model.state_dict()
        diff = max(float((lsd[k].float().cpu() - v.float()).abs().max()) for k, v in expected_state.items())
        figs["reload_vs_built_weights_max_abs_diff"] = diff
        assert diff == 0.0, f"{name}: reloaded weights differ from the built ones by {diff}"
    res, f2 = hf_reference(model, ids, dev, n_new, greedy_len)
    figs.update(f2)
    res["input_ids"] = ids.to(torch.int32).clone()
    if independent:
        try:
            figs["independent_fp64"] = independent_check(folder, model, res, dev, with_bugs)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            figs["independent_fp64"] = f"FAILED: {type(e).__name__}: {e}"
    size = write_reference(out_file, name, model, res, figs, n_new, source)
    record(name, {"file_bytes": size, **{k: v for k, v in figs.items() if k != "decode_vs_prefill_rel_l2_per_row"}})
    del model
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return size


def copy_sources(dst):
    import shutil

    import transformers

    root = Path(transformers.__file__).parent
    for rel in ("modeling_rope_utils.py", "masking_utils.py", "cache_utils.py", "utils/output_capturing.py",
                "integrations/eager_paged.py", "integrations/sdpa_attention.py"):
        if (root / rel).exists():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, dst / rel)


def run_fixtures(args):
    import transformers

    out_root = Path(args.out) if args.out else REPO
    out_models = out_root / "tests" / "data" / "models"
    ref_dir = out_root / "tests" / "data" / "reference" / "gpt-oss"
    dev = pick_device(args.device)
    tiny.strict_fp32()
    log(f"torch {torch.__version__} transformers {transformers.__version__} device {dev}")
    if args.copy_sources:
        copy_sources(Path(args.copy_sources))

    folders = {EXISTING: REPO / "tests" / "data" / "models" / EXISTING}
    built = {}
    for name, spec in SPECS.items():
        folders[name], built[name] = build_checkpoint(name, spec, out_models, REPO / "tests" / "data" / "configs")

    status = {}
    for idx, (name, folder) in enumerate(folders.items()):
        try:
            vocab = json.loads((folder / "config.json").read_text())["vocab_size"]
            gen = torch.Generator().manual_seed(PROMPT_SEED + idx)
            ids = torch.randint(0, vocab - PROMPT_VOCAB_MARGIN, (PROMPT_LEN,), generator=gen)
            record(f"{name}.prompt", ids.tolist())
            size = reference_for(folder, name, ids, dev, GREEDY_NEW_TOKENS, GREEDY_PROMPT_LEN,
                                 ref_dir / f"{name}.safetensors", independent=True, with_bugs=True,
                                 source=f"tests/data/models/{name}", expected_state=built.get(name))
            assert size < 1024 * 1024, size
            status[name] = "ok"
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            status[name] = f"FAILED: {type(e).__name__}: {e}"
    record("status", status)
    tiny.write_json(out_root / "gpt_oss_fixtures_summary.json", SUMMARY)
    return 0 if all(v == "ok" for v in status.values()) else 1


def run_model(args):
    dev = pick_device(args.device)
    tiny.strict_fp32()
    ids = torch.tensor([int(t) for t in args.tokens.split(",") if t.strip()], dtype=torch.long)
    if ids.numel() == 0:
        raise SystemExit("--tokens is empty")
    folder = Path(args.model)
    cfg_path = folder / "config.json"
    if not cfg_path.is_file():
        raise SystemExit(f"{cfg_path} not found: --model must be a Hugging Face checkpoint folder")
    cfg = json.loads(cfg_path.read_text())
    if cfg.get("model_type") != "gpt_oss":
        raise SystemExit(f"{cfg_path} has model_type {cfg.get('model_type')!r}, this tool handles gpt_oss only")
    bad = [int(t) for t in ids if not 0 <= int(t) < cfg["vocab_size"]]
    if bad:
        raise SystemExit(f"token ids {bad[:8]} are outside the vocabulary [0, {cfg['vocab_size']})")
    greedy_len = min(args.greedy_prompt_len, ids.numel()) if args.greedy_prompt_len > 0 else ids.numel()
    reference_for(folder, folder.resolve().name, ids, dev, args.new_tokens, greedy_len, Path(args.out),
                  independent=args.independent_check, with_bugs=False, source=str(folder.resolve()))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="gpt-oss checkpoint folder (omit to build the test fixtures)")
    ap.add_argument("--tokens", help="comma-separated prompt token ids (with --model)")
    ap.add_argument("--out", help="output file (with --model) or root folder for the fixtures (default: the repo)")
    ap.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    ap.add_argument("--new-tokens", type=int, default=GREEDY_NEW_TOKENS, help="greedy tokens to generate (0: none)")
    ap.add_argument("--greedy-prompt-len", type=int, default=GREEDY_PROMPT_LEN,
                    help="greedy prompt = the first P ids of --tokens (0: all)")
    ap.add_argument("--independent-check", action="store_true",
                    help="also compare with the float64 re-implementation (with --model)")
    ap.add_argument("--copy-sources", help="copy the transformers sources this relies on into this folder")
    args = ap.parse_args()
    if args.model:
        if not args.tokens or not args.out:
            ap.error("--model needs --tokens and --out")
        return run_model(args)
    return run_fixtures(args)


if __name__ == "__main__":
    sys.exit(main())
