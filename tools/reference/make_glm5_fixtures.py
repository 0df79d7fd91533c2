#!/usr/bin/env python3
"""Reference tensors for Day0's glm5_next (GLM-5.3-Flash) text forward pass, from transformers.

Fixtures (the default; run where torch + transformers >= 5.17 are installed, CUDA if present):
    python3 make_glm5_fixtures.py [--out ROOT]
  1. builds tiny random glm5_next checkpoints (every parameter randomised, 1/sqrt(fan_in) for
     matrices, rounded to bf16, saved by transformers' save_pretrained):
       ROOT/tests/data/models/tiny-glm5-<name>/
     and, for one of them, the same weights with MXFP4 experts (layout below):
       ROOT/tests/data/models/tiny-glm5-hc4-mxfp4/
  2. for each, and for the committed tests/data/models/tiny-glm5-next, writes
       ROOT/tests/data/reference/glm5_next/<model-folder-name>.safetensors
     (tensors: TENSOR_DOC below, also in each file's metadata).

Any glm5_next checkpoint (to check Day0 with `day0-cli verify`):
    python3 make_glm5_fixtures.py --model DIR --tokens 1,2,3 --out FILE.safetensors [--new-tokens 32]

The reference is transformers' Glm5NextForConditionalGeneration in float32 (bf16 values widened,
exact), TF32 off, eager attention and eager experts, run by CACHED TOKEN-BY-TOKEN DECODING: row t
is what the model computes for token t with the cache of tokens < t. transformers' full-sequence
prefill of this model is not a sound reference (its fallback chunked KDA loses precision under
strong gates, a prefill is not prefix-consistent, and shared indexer layers differ between its
prefill and decode); the script measures how far prefix prefills disagree with the decode rows and
records it in the metadata ("prefill_vs_decode").

MXFP4 expert layout for glm5_next (defined by Day0; transformers has no MXFP4 loader for this
family, so the reference gets the dequantized values):
  model.language_model.layers.N.mlp.experts.gate_up_proj_blocks [E, 2I, H/32, 16] u8
  model.language_model.layers.N.mlp.experts.gate_up_proj_scales [E, 2I, H/32]     u8 (E8M0)
      rows [0, I) are expert e's gate_proj.weight, rows [I, 2I) its up_proj.weight (the order of
      transformers' fused Glm5NextTextExperts.gate_up_proj [E, 2I, H]; halves, not interleaved)
  model.language_model.layers.N.mlp.experts.down_proj_blocks    [E, H, I/32, 16] u8
  model.language_model.layers.N.mlp.experts.down_proj_scales    [E, H, I/32]     u8
  low nibble = even element; config.json gains quantization_config {quant_method: mxfp4, ...}.
  Quantization: OCP MX rule, as Day0's formats/mxfp4 (shared exponent floor(log2(amax)) - 2,
  E2M1 round-to-nearest-even, saturating at 6, the sign kept for values that round to zero).
"""

import argparse
import copy
import json
import math
import re
import shutil
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import make_tiny_checkpoints as tiny  # noqa: E402  (offline environment, torch)
import torch  # noqa: E402

T0 = time.time()
SUMMARY = {}
PROMPT_SEED = 20261130
NEW_TOKENS = 32
EXISTING = "tiny-glm5-next"  # committed by make_tiny_checkpoints.py; read, never rewritten here

VISION = {"depth": 1, "hidden_size": 32, "num_heads": 2, "intermediate_size": 64,
          "projection_intermediate_size": 96, "patch_size": 14, "spatial_merge_size": 2,
          "temporal_patch_size": 2, "dtype": "bfloat16"}

D = "deepseek_sparse_attention"
K = "linear_attention"

# name -> text_config overrides on top of BASE_TEXT, plus generator settings.
SPECS = {
    # hc_mult 2, k-pools of 16, index_topk 16 over 128 tokens, n_group 4, the softplus forget gate,
    # a shared indexer right after a full one, dense MLP at both ends.
    "tiny-glm5-hc2-kpool16": {
        "seed": 501, "T": 128, "greedy_prompt": 64,
        "text": {"hc_mult": 2, "index_kpool": 16, "index_topk": 16,
                 "layer_types": [D, K, D, D, K], "indexer_types": ["full", "full", "full", "shared", "full"],
                 "mlp_layer_types": ["dense", "sparse", "sparse", "sparse", "dense"],
                 "n_routed_experts": 8, "num_experts_per_tok": 3, "n_group": 4, "topk_group": 2,
                 "routed_scaling_factor": 2.5, "linear_lower_bound": None, "hc_sinkhorn_iters": 20,
                 "rms_norm_eps": 1e-5},
    },
    # hc_mult 3, k-pools of 4, index_topk 8 over 64 tokens, two full->shared pairs, strong KDA gates
    # (close to the -5 per token the lower bound allows), attention biases, no top-k
    # renormalisation, active SwiGLU clamps, a large hc_eps and few Sinkhorn iterations.
    "tiny-glm5-hc3": {
        "seed": 502, "T": 64, "greedy_prompt": 32, "strong_gates": True, "expert_gain": 4.0,
        "text": {"hc_mult": 3, "index_kpool": 4, "index_topk": 8,
                 "layer_types": [K, D, D, K, D, D], "indexer_types": ["full", "full", "shared", "full", "full", "shared"],
                 "mlp_layer_types": ["sparse", "dense", "sparse", "sparse", "sparse", "sparse"],
                 "n_routed_experts": 8, "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1,
                 "norm_topk_prob": False, "routed_scaling_factor": 1.0, "swiglu_limit": 1.5,
                 "attention_bias": True, "hc_eps": 1e-3, "hc_sinkhorn_iters": 3, "rms_norm_eps": 1e-6,
                 "linear_lower_bound": -5.0},
    },
    # hc_mult 4, n_group 2; saved with bf16 experts and again with MXFP4 experts.
    "tiny-glm5-hc4": {
        "seed": 503, "T": 64, "greedy_prompt": 32, "mxfp4_twin": "tiny-glm5-hc4-mxfp4", "expert_gain": 2.0,
        "text": {"hc_mult": 4, "index_kpool": 4, "index_topk": 8,
                 "layer_types": [D, K, K, D, D], "indexer_types": ["full"] * 5,
                 "mlp_layer_types": ["dense", "sparse", "sparse", "sparse", "sparse"],
                 "n_routed_experts": 8, "num_experts_per_tok": 2, "n_group": 2, "topk_group": 1,
                 "routed_scaling_factor": 1.5, "swiglu_limit": 2.0, "hc_sinkhorn_iters": 7,
                 "rms_norm_eps": 1e-5, "linear_lower_bound": -5.0},
    },
}

BASE_TEXT = {
    "vocab_size": 256, "hidden_size": 64, "intermediate_size": 96, "moe_intermediate_size": 32,
    "num_attention_heads": 4, "num_key_value_heads": 4, "n_shared_experts": 1,
    "kv_lora_rank": 32, "q_lora_rank": 32, "qk_rope_head_dim": 0, "qk_nope_head_dim": 16,
    "v_head_dim": 16, "qk_head_dim": 16, "head_dim": 0, "index_head_dim": 16, "index_n_heads": 4,
    "index_kpool_always_select_tail": True, "linear_head_dim": 16, "linear_num_heads": 4,
    "linear_conv_kernel_dim": 4, "hc_eps": 1e-6, "norm_topk_prob": True, "swiglu_limit": 10.0,
    "attention_bias": False, "pad_token_id": 250, "eos_token_id": None, "bos_token_id": None,
    "tie_word_embeddings": False, "max_position_embeddings": 4096, "dtype": "bfloat16",
}

TENSOR_DOC = {
    "input_ids": "I32 [T]: prompt token ids (position t = index t).",
    "logits": "F32 [T,V]: row t = lm_head logits after feeding token t alone with the cache of tokens < t.",
    "hidden.embed": "F32 [T,H]: embed_tokens(input_ids), decode path.",
    "hidden.<l>": "F32 [T,hc*H]: the hc_mult residual streams after decoder layer l (stream-major), decode path.",
    "hidden.final_norm": "F32 [T,H]: norm(mean over the streams of hidden.<L-1>), the input of lm_head.",
    "attn.<l>.out": "F32 [T,H]: self_attn output of layer l (KDA or MLA, after o_proj), decode path.",
    "router.<l>.topk": "I32 [T,k]: selected expert ids, ascending, decode path.",
    "router.<l>.weights": "F32 [T,k]: routing weights (after norm_topk_prob and routed_scaling_factor) "
                          "in the order of router.<l>.topk.",
    "router.<l>.logits": "F32 [T,E]: the router's logits (gate weight times the gate's input, fp32), decode path.",
    "indexer.<l>.topk": "I32 [T,index_topk+kpool-1]: raw token positions the DSA layer attends "
                        "(selected complete pools, then the incomplete tail), -1 padded, decode path; "
                        "for a shared layer, the selection it received from the layer before.",
    "kda.<l>.state": "F32 [1,heads*d_k*d_v]: KDA layer l's recurrent state after the last prompt token, decode path.",
    "greedy_prompt": "I32 [P]: prompt of the greedy run (first P ids of input_ids).",
    "greedy_ids": "I32 [N]: greedy tokens, decoded token by token with the cache.",
    "greedy_top2_gap": "F32 [N]: top-1 minus top-2 logit at each greedy step.",
}


def log(*args):
    print(f"[{time.time() - T0:7.1f}s]", *args, flush=True)


def record(key, value):
    SUMMARY[key] = value
    log(f"RESULT {key} = {json.dumps(value, default=str)[:3000]}")


def rel_l2_rows(a, b):
    a = a.double().reshape(a.shape[0], -1)
    b = b.double().reshape(b.shape[0], -1)
    return ((a - b).norm(dim=-1) / b.norm(dim=-1).clamp_min(1e-300)).cpu()


# ----------------------------------------------------------------------------------------------
# MXFP4 (bit-exact with Day0's formats/mxfp4.cpp mxfp4_quantize)
# ----------------------------------------------------------------------------------------------

FP4 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=torch.float64)


def mxfp4_quantize(w):
    """w [..., K] float -> blocks u8 [..., K/32, 16], scales u8 [..., K/32], dequantized f32 [..., K]."""
    *lead, n = w.shape
    assert n % 32 == 0, n
    x = w.detach().float().double().reshape(*lead, n // 32, 32)
    amax = x.abs().amax(-1)
    _, ex = torch.frexp(amax.float())  # amax = m * 2^ex, m in [0.5, 1): floor(log2 amax) = ex - 1
    biased = torch.where(amax > 0, ex.long() - 1 + 127, torch.zeros_like(ex, dtype=torch.long))
    scale = (biased - 2).clamp(min=0, max=254)
    v = x * torch.pow(2.0, -(scale - 127).double())[..., None]
    d = (v.abs()[..., None] - FP4).abs()
    dmin = d.amin(-1, keepdim=True)
    pref = torch.tensor([2, 1, 2, 1, 2, 1, 2, 1], dtype=torch.long)  # ties -> even code
    code = ((d == dmin).long() * pref).argmax(-1)
    code = code | (torch.signbit(v).long() << 3)
    packed = (code[..., 0::2] | (code[..., 1::2] << 4)).to(torch.uint8).contiguous()
    scales = scale.to(torch.uint8).contiguous()
    return packed, scales, mxfp4_dequantize(packed, scales)


def mxfp4_dequantize(blocks, scales):
    lo = (blocks & 0x0F).long()
    hi = (blocks >> 4).long()
    codes = torch.stack([lo, hi], dim=-1).reshape(*blocks.shape[:-1], 32)
    mag = FP4[codes & 7]
    val = torch.where((codes & 8) != 0, -mag, mag) * torch.pow(2.0, scales.double() - 127)[..., None]
    return val.reshape(*blocks.shape[:-2], blocks.shape[-2] * 32).float()


# ----------------------------------------------------------------------------------------------
# building checkpoints
# ----------------------------------------------------------------------------------------------

def config_dict(spec):
    full = json.loads((REPO / "tests/data/configs/glm-5.3-flash-shape.config.json").read_text())
    d = copy.deepcopy(full)
    t = d["text_config"]
    t.update(copy.deepcopy(BASE_TEXT))
    t.update(copy.deepcopy(spec["text"]))
    t["num_hidden_layers"] = len(t["layer_types"])
    v = d["vision_config"]
    v.update(copy.deepcopy(VISION))
    v["out_hidden_size"] = t["hidden_size"]
    vocab = t["vocab_size"]
    for i, k in enumerate(("image_token_id", "video_token_id", "image_start_token_id", "image_end_token_id",
                           "video_start_token_id", "video_end_token_id")):
        d[k] = vocab - 1 - i
    d["architectures"] = ["Glm5NextForConditionalGeneration"]
    d["dtype"] = "bfloat16"
    d["tie_word_embeddings"] = False
    return d


def kda_modules(model):
    return [(n, m) for n, m in model.named_modules() if type(m).__name__ == "Glm5NextTextForgetGate"]


def build(name, spec, out_models):
    import transformers

    d = config_dict(spec)
    cfg = transformers.Glm5NextConfig.from_dict(copy.deepcopy(d))
    t = cfg.text_config
    log(f"{name}: layer_types={t.layer_types} indexer_types={t.indexer_types} mlp={t.mlp_layer_types} "
        f"lower_bound={t.linear_lower_bound}")
    torch.manual_seed(spec["seed"])
    gen = torch.Generator().manual_seed(spec["seed"])
    model = tiny.build_from_config(transformers.Glm5NextForConditionalGeneration, cfg, name).float().eval()
    tiny.randomize_(model, gen, t.hidden_size, t.moe_intermediate_size, name)
    with torch.no_grad():
        gain = spec.get("expert_gain", 1.0)
        for pname, p in model.named_parameters():
            if ".mlp.experts." in pname and pname.endswith("gate_up_proj"):
                p.mul_(gain)  # a power of two: bf16-exact; makes the swiglu clamps trigger
        if spec.get("strong_gates"):
            # g = lower_bound * sigmoid(exp(A_log) * (f + dt_bias)): large A_log and dt_bias push the
            # per-token log-decay to the -5 the bound allows.
            for _, m in kda_modules(model):
                m.A_log.copy_((2.0 + 0.25 * torch.randn(m.A_log.shape, generator=gen)).to(torch.bfloat16).float())
                m.dt_bias.copy_((4.0 + 0.5 * torch.randn(m.dt_bias.shape, generator=gen)).to(torch.bfloat16).float())
    folder = out_models / name
    if folder.exists():
        shutil.rmtree(folder)
    built = {k: v.detach().float().clone() for k, v in model.state_dict().items()}
    model_bf = copy.deepcopy(model).to(torch.bfloat16)
    for c in (model_bf.config, model_bf.config.text_config, model_bf.config.vision_config):
        c.dtype = torch.bfloat16
    model_bf.save_pretrained(str(folder))
    record(f"{name}.files", {f.name: f.stat().st_size for f in sorted(folder.iterdir())})
    del model_bf
    return folder, built


def read_safetensors(folder):
    from safetensors.torch import load_file

    out = {}
    for f in sorted(folder.glob("*.safetensors")):
        out.update(load_file(str(f)))
    return out


def write_mxfp4_twin(src, dst, n_layers):
    """Copies src to dst with every layer's per-expert tensors replaced by stacked MXFP4 blocks."""
    from safetensors.torch import save_file

    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    tensors = read_safetensors(src)
    out, deq = {}, {}
    pat = re.compile(r"^(.*\.mlp\.experts)\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight$")
    groups = {}
    for k, v in tensors.items():
        m = pat.match(k)
        if m:
            groups.setdefault(m.group(1), {})[(int(m.group(2)), m.group(3))] = v
        else:
            out[k] = v
    for prefix, g in sorted(groups.items()):
        E = 1 + max(e for e, _ in g)
        gate_up = torch.stack([torch.cat([g[(e, "gate_proj")], g[(e, "up_proj")]], 0) for e in range(E)])
        down = torch.stack([g[(e, "down_proj")] for e in range(E)])
        for pname, w in (("gate_up_proj", gate_up), ("down_proj", down)):
            blocks, scales, dq = mxfp4_quantize(w.float())
            out[f"{prefix}.{pname}_blocks"] = blocks
            out[f"{prefix}.{pname}_scales"] = scales
            deq[f"{prefix}.{pname}"] = dq
    save_file({k: v.contiguous() for k, v in sorted(out.items())}, str(dst / "model.safetensors"),
              metadata={"format": "pt"})
    cfg = json.loads((src / "config.json").read_text())
    keep = sorted({k.rsplit(".", 1)[0] for k in out if not k.endswith(("_blocks", "_scales"))})
    cfg["quantization_config"] = {"quant_method": "mxfp4", "modules_to_not_convert": keep}
    tiny.write_json(dst / "config.json", cfg)
    if (src / "generation_config.json").exists():
        shutil.copy2(src / "generation_config.json", dst / "generation_config.json")
    record(f"{dst.name}.files", {f.name: f.stat().st_size for f in sorted(dst.iterdir())})
    return deq


def load_hf(folder, dev):
    import transformers

    model = transformers.Glm5NextForConditionalGeneration.from_pretrained(
        str(folder), dtype=torch.float32, attn_implementation="eager", experts_implementation="eager")
    return model.float().to(dev).eval()


def set_dequantized_experts(model, deq):
    """Puts the dequantized MXFP4 experts ([E, 2I, H] halves gate|up, [E, H, I]) into the fused parameters."""
    params = dict(model.named_parameters())
    n = 0
    for key, val in deq.items():
        # checkpoint prefix model.language_model.layers.N.mlp.experts -> the module's parameter name
        cands = [p for p in params if p.endswith(key.split("model.language_model.", 1)[1])]
        assert len(cands) == 1, (key, cands)
        p = params[cands[0]]
        assert tuple(p.shape) == tuple(val.shape), (key, tuple(p.shape), tuple(val.shape))
        with torch.no_grad():
            p.copy_(val.to(p.device))
        n += 1
    return n


def check_fused_layout(model, folder):
    """The fused gate_up_proj [E, 2I, H] must be cat(gate_proj, up_proj) per expert: the MXFP4 layout relies on it."""
    tensors = read_safetensors(folder)
    params = dict(model.named_parameters())
    checked = 0
    for pname, p in params.items():
        if not pname.endswith("mlp.experts.gate_up_proj"):
            continue
        prefix = "model.language_model." + pname.split("language_model.", 1)[1].rsplit(".gate_up_proj", 1)[0]
        inter = p.shape[1] // 2
        for e in range(p.shape[0]):
            g = tensors[f"{prefix}.{e}.gate_proj.weight"].float()
            u = tensors[f"{prefix}.{e}.up_proj.weight"].float()
            assert torch.equal(p[e, :inter].cpu(), g) and torch.equal(p[e, inter:].cpu(), u), (pname, e)
            checked += 1
    return checked


# ----------------------------------------------------------------------------------------------
# the reference: cached token-by-token decoding
# ----------------------------------------------------------------------------------------------

class Capture:
    def __init__(self, model):
        self.rows = {}
        self.handles = []
        lm = model.model.language_model
        cfg = lm.config
        self._hook(lm.embed_tokens, "hidden.embed", lambda o: o)
        for i, layer in enumerate(lm.layers):
            self._hook(layer, f"hidden.{i}", lambda o: o[0] if isinstance(o, (tuple, list)) else o)
            self._hook(layer.self_attn, f"attn.{i}.out", lambda o: o[0] if isinstance(o, (tuple, list)) else o)
            if hasattr(layer.mlp, "gate"):
                self.handles.append(layer.mlp.gate.register_forward_hook(self._router(i)))
            if cfg.layer_types[i] == "deepseek_sparse_attention":
                if layer.self_attn.indexer is not None:
                    self._hook(layer.self_attn.indexer, f"indexer.{i}.topk", lambda o: o, ints=True)
                else:
                    self.handles.append(layer.self_attn.register_forward_hook(self._shared(i), with_kwargs=True))
        self._hook(lm.norm, "hidden.final_norm", lambda o: o)

    def _add(self, key, t):
        self.rows.setdefault(key, []).append(t)

    def _hook(self, module, key, pick, ints=False):
        def fn(_m, _i, out):
            t = pick(out).detach()
            t = t.reshape(-1, t.shape[-2] * t.shape[-1]) if (t.dim() == 4) else t.reshape(-1, t.shape[-1])
            self._add(key, t.to(torch.int32).cpu() if ints else t.float().cpu())
        self.handles.append(module.register_forward_hook(fn))

    def _router(self, i):
        def fn(m, inputs, out):
            _, weights, idx = out
            order = idx.argsort(dim=-1)
            self._add(f"router.{i}.topk", idx.gather(-1, order).to(torch.int32).cpu())
            self._add(f"router.{i}.weights", weights.gather(-1, order).float().cpu())
            # The logits behind the choice (W x on the gate's own input, in fp32), so that a
            # differing choice can be shown to sit on a tie.
            x = inputs[0].reshape(-1, inputs[0].shape[-1]).float()
            self._add(f"router.{i}.logits", torch.nn.functional.linear(x, m.weight.float()).cpu())
        return fn

    def _shared(self, i):
        def fn(_m, _args, kwargs, _out):
            t = kwargs["prev_topk_indices"]
            self._add(f"indexer.{i}.topk", t.detach().reshape(-1, t.shape[-1]).to(torch.int32).cpu())
        return fn

    def take(self):
        out = {k: torch.cat(v, 0) for k, v in self.rows.items()}
        self.rows = {}
        return out

    def remove(self):
        for h in self.handles:
            h.remove()


def decode(model, ids, dev, cap=None):
    """Feeds ids one at a time with the cache; returns logits [T, V] (and the cache)."""
    cache, rows = None, []
    with torch.no_grad():
        for t in range(ids.numel()):
            out = model(input_ids=ids[t:t + 1][None].to(dev), past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            rows.append(out.logits[0, -1].float().cpu())
    return torch.stack(rows), cache


def kda_states(model, cache):
    """The recurrent state [heads, d_k, d_v] of every KDA layer in the cache, one row each."""
    out = {}
    for i, t in enumerate(model.model.language_model.config.layer_types):
        if t != "linear_attention":
            continue
        try:
            st = cache.layers[i].recurrent_states[0]  # as Glm5NextTextLinearAttention reads it
            out[f"kda.{i}.state"] = st.detach().float().reshape(1, -1).cpu()
        except Exception as e:  # noqa: BLE001
            log(f"no KDA state for layer {i}: {type(e).__name__}: {e}")
    return out


def reference(model, ids, dev, greedy_prompt, n_new):
    res, figs = {}, {}
    cap = Capture(model)
    try:
        logits, cache = decode(model, ids, dev)
        res.update(cap.take())
    finally:
        cap.remove()
    res.update(kda_states(model, cache))
    res["logits"] = logits
    res["input_ids"] = ids.to(torch.int32)

    # greedy continuation, token by token with the cache
    prompt = ids[:greedy_prompt]
    cache = None
    new, gaps = [], []
    with torch.no_grad():
        last = None
        for t in range(prompt.numel()):
            out = model(input_ids=prompt[t:t + 1][None].to(dev), past_key_values=cache, use_cache=True)
            cache, last = out.past_key_values, out.logits[0, -1].float()
        for _ in range(n_new):
            top2 = last.topk(2)
            nxt = int(top2.indices[0])
            gaps.append(float(top2.values[0] - top2.values[1]))
            new.append(nxt)
            out = model(input_ids=torch.tensor([[nxt]], device=dev), past_key_values=cache, use_cache=True)
            cache, last = out.past_key_values, out.logits[0, -1].float()
    res["greedy_prompt"] = prompt.to(torch.int32)
    res["greedy_ids"] = torch.tensor(new, dtype=torch.int32)
    res["greedy_top2_gap"] = torch.tensor(gaps, dtype=torch.float32)
    figs["greedy_min_top2_gap"] = min(gaps) if gaps else None

    # how far transformers' own prefills are from the decode rows
    pf = {}
    with torch.no_grad():
        for n in sorted({ids.numel(), ids.numel() // 2, 16}):
            try:
                out = model(input_ids=ids[:n][None].to(dev), use_cache=False)
            except Exception as e:  # noqa: BLE001
                pf[f"prefix_{n}"] = f"prefill failed: {type(e).__name__}: {e}"
                continue
            r = rel_l2_rows(out.logits[0].float().cpu(), logits[:n])
            pf[f"prefix_{n}"] = {"max_rel_l2": float(r.max()), "median_rel_l2": float(r.median()),
                                 "first_row_over_1e-4": int((r > 1e-4).nonzero()[0]) if bool((r > 1e-4).any()) else None}
    figs["prefill_vs_decode"] = pf

    # statistics that show the fixture exercises what it claims
    sel = {}
    for k, v in res.items():
        if k.startswith("indexer."):
            valid = (v >= 0).sum(-1)
            sel[k] = {"width": int(v.shape[-1]), "max_selected": int(valid.max()),
                      "rows_dropping_tokens": int((valid < torch.arange(1, v.shape[0] + 1)).sum())}
    figs["indexer_selection"] = sel
    return res, figs


def kda_gate_stats(model):
    stats = {}
    for name, m in kda_modules(model):
        lb = m.safe_gate_lower_bound
        stats[name] = {"A_log_max": float(m.A_log.max()), "dt_bias_mean": float(m.dt_bias.mean()), "lower_bound": lb}
    return stats


def write_reference(path, name, model, res, figs, source):
    import transformers
    from safetensors.torch import save_file

    tensors = {}
    for key, t in res.items():
        t = t.detach().cpu().contiguous()
        tensors[key] = t.to(torch.int32) if not t.is_floating_point() else t.to(torch.float32)
    doc = {k: TENSOR_DOC[re.sub(r"\.\d+(\.|$)", r".<l>\1", k)] for k in sorted(tensors)}
    meta = {
        "model": name, "source": source, "T": int(res["input_ids"].numel()),
        "config": model.config.text_config.to_dict(),
        "versions": {"transformers": transformers.__version__, "torch": torch.__version__},
        "device": torch.cuda.get_device_name(0) if next(model.parameters()).is_cuda else "cpu",
        "precision": "float32 (bf16 checkpoint values widened exactly; MXFP4 experts dequantized), TF32 off, "
                     "eager attention and experts, cached token-by-token decoding",
        "figures": figs, "tensors": doc,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={"format": "pt", "reference": json.dumps(meta, default=str)})
    log(f"wrote {path} ({path.stat().st_size} bytes, {len(tensors)} tensors)")
    return path.stat().st_size


def prompt_for(vocab, T, idx):
    gen = torch.Generator().manual_seed(PROMPT_SEED + idx)
    return torch.randint(0, vocab - 16, (T,), generator=gen)


def run_fixtures(args):
    import transformers

    out_root = Path(args.out) if args.out else REPO
    out_models = out_root / "tests" / "data" / "models"
    ref_dir = out_root / "tests" / "data" / "reference" / "glm5_next"
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tiny.strict_fp32()
    log(f"torch {torch.__version__} transformers {transformers.__version__} device {dev}")
    status = {}
    jobs = []  # (name, folder, T, greedy_prompt, dequantized experts or None, built state or None)
    for name, spec in SPECS.items():
        try:
            folder, built = build(name, spec, out_models)
            jobs.append((name, folder, spec["T"], spec["greedy_prompt"], None, built))
            if spec.get("mxfp4_twin"):
                twin = out_models / spec["mxfp4_twin"]
                deq = write_mxfp4_twin(folder, twin, len(spec["text"]["layer_types"]))
                jobs.append((twin.name, folder, spec["T"], spec["greedy_prompt"], deq, None))
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            status[name] = f"FAILED to build: {type(e).__name__}: {e}"
    jobs.append((EXISTING, REPO / "tests/data/models" / EXISTING, 64, 32, None, None))

    for idx, (name, folder, T, gp, deq, built) in enumerate(jobs):
        try:
            model = load_hf(folder, dev)
            figs = {"kda_gates": kda_gate_stats(model)}
            if built is not None:
                sd = model.state_dict()
                diff = max(float((sd[k].float().cpu() - v).abs().max()) for k, v in built.items() if k in sd)
                missing = [k for k in built if k not in sd]
                figs["reload_vs_built_max_abs"] = diff
                assert diff == 0.0 and not missing, (diff, missing[:5])
            figs["fused_gate_up_checked_experts"] = check_fused_layout(model, folder)
            if deq is not None:
                figs["mxfp4_expert_tensors_set"] = set_dequantized_experts(model, deq)
            vocab = model.config.text_config.vocab_size
            ids = prompt_for(vocab, T, idx)
            res, f2 = reference(model, ids, dev, gp, args.new_tokens)
            figs.update(f2)
            record(f"{name}.figures", figs)
            size = write_reference(ref_dir / f"{name}.safetensors", name, model, res, figs,
                                   f"tests/data/models/{name}")
            status[name] = f"ok ({size} bytes)"
            del model
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            status[name] = f"FAILED: {type(e).__name__}: {e}"
    record("status", status)
    tiny.write_json(out_root / "glm5_fixtures_summary.json", SUMMARY)
    return 0 if all(v.startswith("ok") for v in status.values()) else 1


def run_model(args):
    dev = torch.device("cuda" if torch.cuda.is_available() and args.device != "cpu" else "cpu")
    tiny.strict_fp32()
    ids = torch.tensor([int(t) for t in args.tokens.split(",") if t.strip()], dtype=torch.long)
    if ids.numel() == 0:
        raise SystemExit("--tokens is empty")
    folder = Path(args.model)
    cfg = json.loads((folder / "config.json").read_text())
    if cfg.get("model_type") != "glm5_next":
        raise SystemExit(f"{folder}/config.json has model_type {cfg.get('model_type')!r}; this tool handles glm5_next")
    if "quantization_config" in cfg:
        raise SystemExit("MXFP4 glm5_next folders have no transformers loader: give the bf16 checkpoint")
    model = load_hf(folder, dev)
    res, figs = reference(model, ids, dev, max(1, ids.numel() // 2), args.new_tokens)
    write_reference(Path(args.out), folder.resolve().name, model, res, figs, str(folder.resolve()))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="glm5_next checkpoint folder (omit to build the test fixtures)")
    ap.add_argument("--tokens", help="comma-separated prompt token ids (with --model)")
    ap.add_argument("--out", help="output file (with --model) or root folder for the fixtures (default: the repo)")
    ap.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    ap.add_argument("--new-tokens", type=int, default=NEW_TOKENS)
    args = ap.parse_args()
    if args.model:
        if not args.tokens or not args.out:
            ap.error("--model needs --tokens and --out")
        return run_model(args)
    return run_fixtures(args)


if __name__ == "__main__":
    sys.exit(main())
