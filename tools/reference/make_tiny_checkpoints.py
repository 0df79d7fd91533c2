#!/usr/bin/env python3
"""Generate tiny random reference checkpoints and full-size shape dumps for Day0 tests.

Runs on a machine with torch + transformers (>= 5.17, which ships `gpt_oss` and `glm5_next`)
+ safetensors + numpy. No network access is needed.

Outputs (under --out):
  tests_data/models/tiny-gpt-oss/        tiny random gpt-oss in the released MXFP4 layout,
                                         2 safetensors shards + model.safetensors.index.json
  tests_data/models/tiny-glm5-next/      tiny random glm5_next (text + vision) saved by
                                         transformers' save_pretrained in bf16, >= 2 shards
  tests_data/models/reference-shapes/    <config-stem>.shapes.json for the full-size configs
                                         (meta device) and tiny-*.shapes.json
  reference_outputs/                     input ids / pixel values / float32 logits of the
                                         tiny models (for numeric tests; not for the repo)
  hf_sources/                            transformers sources for reading (not for the repo)
  summary.json                           every verification number

Every learned parameter is randomised (HF init leaves routers, gates, mHC, biases, norms at
0 / 1, which hides bugs), rounded to bf16-representable values, and the logits are checked
finite on a 40-token random prompt.

Usage: python3 make_tiny_checkpoints.py --out OUTDIR [--configs DIR] [--seed N]
"""

import argparse
import copy
import inspect
import json
import math
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("USE_HUB_KERNELS", "0")

import numpy as np  # noqa: E402
import torch  # noqa: E402

SUMMARY = {}
T0 = time.time()


def log(*args):
    print(f"[{time.time() - T0:7.1f}s]", *args, flush=True)


def section(name):
    print("\n" + "=" * 100 + f"\n== {name}\n" + "=" * 100, flush=True)


def record(key, value):
    SUMMARY[key] = value
    log(f"RESULT {key} = {json.dumps(value, default=str)[:2000]}")


# ----------------------------------------------------------------------------------------------
# generic helpers
# ----------------------------------------------------------------------------------------------

def strict_fp32():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        torch.set_float32_matmul_precision("highest")
    except Exception:
        pass
    try:
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    except Exception:
        pass


def device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build_from_config(cls, cfg, tag):
    """cls._from_config with eager attention / eager experts when the API accepts it."""
    attempts = [
        {"attn_implementation": "eager", "experts_implementation": "eager"},
        {"attn_implementation": "eager"},
        {},
    ]
    last = None
    for kw in attempts:
        try:
            m = cls._from_config(copy.deepcopy(cfg), **kw)
            log(f"{tag}: built {cls.__name__}._from_config(**{kw})")
            record(f"{tag}.from_config_kwargs", kw)
            return m
        except Exception as e:  # noqa: BLE001
            last = e
            log(f"{tag}: _from_config(**{kw}) failed: {type(e).__name__}: {e}")
    raise last


def load_pretrained(cls, path, tag, **extra):
    attempts = [
        {"attn_implementation": "eager", "experts_implementation": "eager"},
        {"attn_implementation": "eager"},
    ]
    last = None
    for kw in attempts:
        try:
            m, info = cls.from_pretrained(str(path), dtype=torch.bfloat16, output_loading_info=True, **kw, **extra)
            log(f"{tag}: loaded {cls.__name__}.from_pretrained(**{kw}, {list(extra)})")
            info = {k: sorted(map(str, v)) if isinstance(v, (set, list)) else str(v) for k, v in info.items()}
            record(f"{tag}.loading_info", info)
            return m
        except Exception as e:  # noqa: BLE001
            last = e
            log(f"{tag}: from_pretrained(**{kw}) failed: {type(e).__name__}: {e}")
            traceback.print_exc()
    raise last


def module_of(model, name):
    mod = model
    for part in name.split(".")[:-1]:
        mod = getattr(mod, part)
    return mod


def randomize_(model, gen, hidden, moe_inter, tag):
    """Fill every learned parameter / persistent learned buffer with random values."""
    sd_keys = set(model.state_dict().keys())
    buffers = dict(model.named_buffers())
    params = dict(model.named_parameters())
    persistent_buffers = sorted(k for k in buffers if k in sd_keys)
    log(f"{tag}: {len(params)} parameters, persistent buffers: {persistent_buffers}")
    counts = {}

    def rn(shape):
        return torch.randn(shape, generator=gen, dtype=torch.float32)

    def fill(name, t, is_buffer=False):
        leaf = name.split(".")[-1]
        mod = module_of(model, name)
        mcls = type(mod).__name__
        shape = tuple(t.shape)
        if is_buffer:
            if leaf == "e_score_correction_bias":
                val, kind = 0.05 * rn(shape), "router_bias_buffer"
            else:
                return "skipped_buffer"
        elif "Norm" in mcls or "norm" in leaf.lower():
            if leaf == "weight":
                val, kind = 1.0 + 0.1 * rn(shape), "norm_weight"
            else:
                val, kind = 0.1 * rn(shape), "norm_bias"
        elif leaf == "e_score_correction_bias":
            val, kind = 0.05 * rn(shape), "router_bias"
        elif leaf == "bias" or leaf.endswith("_bias") and leaf != "dt_bias":
            val, kind = 0.1 * rn(shape), "bias"
        elif leaf == "sinks":
            val, kind = rn(shape), "sinks"
        elif leaf == "A_log":
            val, kind = 0.5 * rn(shape), "A_log"
        elif leaf == "dt_bias":
            val, kind = 0.5 * rn(shape), "dt_bias"
        elif leaf == "index_kpool_compress_ape":
            val, kind = 0.5 * rn(shape), "kpool_ape"
        elif "HyperConnection" in mcls and leaf == "base":
            val, kind = 0.5 * rn(shape), "hc_base"
        elif "HyperConnection" in mcls and leaf == "scale":
            val, kind = 1.0 + 0.3 * rn(shape), "hc_scale"
        elif "embed_tokens" in name or isinstance(mod, torch.nn.Embedding):
            val, kind = rn(shape), "embedding"
        elif len(shape) <= 1:
            val, kind = 0.1 * rn(shape), "bias_or_vector"
        elif len(shape) == 3 and leaf in ("gate_up_proj", "down_proj"):
            # stacked experts; find the fan-in from the known output size
            out_dim = 2 * moe_inter if leaf == "gate_up_proj" else hidden
            a, b = shape[1], shape[2]
            fan_in = a if b == out_dim else b
            val, kind = rn(shape) / math.sqrt(fan_in), f"experts(fan_in={fan_in})"
        else:
            fan_in = int(np.prod(shape[1:]))
            val, kind = rn(shape) / math.sqrt(fan_in), "matrix"
        with torch.no_grad():
            t.copy_(val.to(t.dtype))
        return kind

    report = {}
    for name, p in params.items():
        if not p.is_floating_point():
            report[name] = "non_float_skipped"
            continue
        report[name] = fill(name, p.data)
    for name in persistent_buffers:
        b = buffers[name]
        if b.is_floating_point():
            report[name] = fill(name, b, is_buffer=True)
    # round everything to bf16-representable values (checkpoints are stored in bf16)
    with torch.no_grad():
        for _, p in params.items():
            if p.is_floating_point():
                p.data.copy_(p.data.to(torch.bfloat16).to(p.dtype))
        for name in persistent_buffers:
            b = buffers[name]
            if b.is_floating_point():
                b.copy_(b.to(torch.bfloat16).to(b.dtype))
    for v in report.values():
        counts[v] = counts.get(v, 0) + 1
    record(f"{tag}.randomized_kinds", counts)
    for name, kind in report.items():
        print(f"    init {name:90s} {kind}")
    return report


def tensor_table_from_safetensors(folder):
    from safetensors import safe_open

    out = {}
    per_file = {}
    for f in sorted(Path(folder).glob("*.safetensors")):
        with safe_open(str(f), framework="pt") as fh:
            names = list(fh.keys())
            per_file[f.name] = len(names)
            for n in names:
                sl = fh.get_slice(n)
                out[n] = {"dtype": sl.get_dtype(), "shape": list(sl.get_shape())}
    return dict(sorted(out.items())), per_file


def describe_logits(x):
    x = x.float()
    return {
        "finite": bool(torch.isfinite(x).all().item()),
        "mean": float(x.mean()),
        "std": float(x.std()),
        "absmax": float(x.abs().max()),
        "shape": list(x.shape),
    }


def meta_shapes(cls, cfg, tag):
    with torch.device("meta"):
        try:
            model = cls._from_config(copy.deepcopy(cfg))
        except TypeError:
            model = cls(copy.deepcopy(cfg))
    sd = model.state_dict()
    tensors = {k: list(v.shape) for k, v in sd.items()}
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        total += p.numel()
    log(f"{tag}: {len(tensors)} tensors, {total} params ({total / 1e9:.3f} B)")
    return model, tensors, total


def hf_save_names(model, tag):
    """Names/shapes transformers' save_pretrained would write (reverse weight conversion), or None."""
    try:
        from transformers.core_model_loading import revert_weight_conversion
    except Exception as e:  # noqa: BLE001
        log(f"{tag}: no revert_weight_conversion ({e})")
        return None
    try:
        sd = revert_weight_conversion(model, model.state_dict())
        return {k: list(v.shape) for k, v in sorted(sd.items())}
    except Exception as e:  # noqa: BLE001
        log(f"{tag}: revert_weight_conversion failed: {type(e).__name__}: {e}")
        traceback.print_exc()
        return None


def compact_checkpoint_tensors(rev, dtype="BF16"):
    """Split save names into plain tensors and per-expert patterns
    ("...layers.{layer}.mlp.experts.{expert}.gate_proj.weight"), so that a 288-expert x 42-layer
    listing stays small. Lossless: every pattern covers the full layers x experts product."""
    import re

    pat = re.compile(r"^(.*\.layers\.)(\d+)(\.mlp\.experts\.)(\d+)(\..+)$")
    plain, groups = {}, {}
    for k, shape in rev.items():
        m = pat.match(k)
        if not m:
            plain[k] = {"dtype": dtype, "shape": shape}
            continue
        key = m.group(1) + "{layer}" + m.group(3) + "{expert}" + m.group(5)
        g = groups.setdefault(key, {"shape": shape, "layers": set(), "experts": set(), "n": 0})
        if g["shape"] != shape:
            raise ValueError(f"expert shapes differ for {key}")
        g["layers"].add(int(m.group(2)))
        g["experts"].add(int(m.group(4)))
        g["n"] += 1
    experts = {}
    for key, g in sorted(groups.items()):
        ne = len(g["experts"])
        if g["n"] != len(g["layers"]) * ne or sorted(g["experts"]) != list(range(ne)):
            raise ValueError(f"incomplete expert grid for {key}")
        experts[key] = {"dtype": dtype, "shape": g["shape"], "layers": sorted(g["layers"]), "num_experts": ne}
    total = len(plain) + sum(len(v["layers"]) * v["num_experts"] for v in experts.values())
    assert total == len(rev)
    return dict(sorted(plain.items())), experts


def write_json(path, obj):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, default=str)
        f.write("\n")
    log(f"wrote {path} ({path.stat().st_size} bytes)")


# ----------------------------------------------------------------------------------------------
# MXFP4
# ----------------------------------------------------------------------------------------------

FP4_GRID = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=torch.float64)


def mxfp4_quantize(w):
    """w [..., K] (K % 32 == 0) -> blocks uint8 [..., K/32, 16], scales uint8 [..., K/32],
    dequantized float32 [..., K].  Low nibble = even element; E8M0 scale with bias 127,
    exponent chosen so that the block max fits E2M1's max (6); round to nearest, ties to even
    code (even mantissa)."""
    *lead, K = w.shape
    assert K % 32 == 0, K
    x = w.detach().double().reshape(*lead, K // 32, 32)
    amax = x.abs().amax(-1)
    e = torch.ceil(torch.log2(amax / 6.0))
    e = torch.where(amax > 0, e, torch.zeros_like(e)).clamp(-127, 127)
    v = x / torch.pow(2.0, e)[..., None]
    assert float(v.abs().max()) <= 6.0
    d = (v.abs()[..., None] - FP4_GRID).abs()
    dmin = d.amin(-1, keepdim=True)
    cand = (d == dmin).long()
    pref = torch.tensor([2, 1, 2, 1, 2, 1, 2, 1], dtype=torch.long)  # ties -> even code
    code = (cand * pref).argmax(-1)
    neg = (v < 0) & (code != 0)
    deq = FP4_GRID[code] * torch.where(neg, -1.0, 1.0) * torch.pow(2.0, e)[..., None]
    code = code | (neg.long() << 3)
    packed = (code[..., 0::2] | (code[..., 1::2] << 4)).to(torch.uint8)
    scales = (e + 127).to(torch.uint8)
    return packed.contiguous(), scales.contiguous(), deq.reshape(*lead, K).float()


def mxfp4_dequantize_reference(blocks, scales):
    """Independent numpy decode (for a self-check)."""
    lut = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float64)
    b = blocks.numpy()
    lo = lut[b & 0x0F]
    hi = lut[b >> 4]
    vals = np.stack([lo, hi], axis=-1).reshape(*b.shape[:-1], 32)
    vals = vals * np.exp2(scales.numpy().astype(np.float64) - 127.0)[..., None]
    return torch.from_numpy(vals.reshape(*b.shape[:-2], -1)).float()


# ----------------------------------------------------------------------------------------------
# gpt-oss
# ----------------------------------------------------------------------------------------------

GPT_OSS_QCFG = {
    "quant_method": "mxfp4",
    "modules_to_not_convert": [
        "model.layers.*.self_attn",
        "model.layers.*.mlp.router",
        "model.embed_tokens",
        "lm_head",
    ],
}


def gpt_oss_tiny_dict(full):
    d = copy.deepcopy(full)
    d.pop("quantization_config", None)
    d.update(
        {
            "architectures": ["GptOssForCausalLM"],
            "num_hidden_layers": 4,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "vocab_size": 384,
            "hidden_size": 64,
            "intermediate_size": 64,
            "head_dim": 16,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "sliding_window": 8,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
            "swiglu_limit": 7.0,
            "pad_token_id": 380,
            "eos_token_id": 382,
            "bos_token_id": None,
            "tie_word_embeddings": False,
        }
    )
    return d


def gpt_oss_checkpoint_layout(tensors, hidden, inter):
    """module tensor shapes -> released MXFP4 checkpoint names / dtypes / shapes."""
    out = {}
    for name, shape in tensors.items():
        if name.endswith("mlp.experts.gate_up_proj"):
            E = shape[0]
            out[name + "_blocks"] = {"dtype": "U8", "shape": [E, 2 * inter, hidden // 32, 16]}
            out[name + "_scales"] = {"dtype": "U8", "shape": [E, 2 * inter, hidden // 32]}
        elif name.endswith("mlp.experts.down_proj"):
            E = shape[0]
            out[name + "_blocks"] = {"dtype": "U8", "shape": [E, hidden, inter // 32, 16]}
            out[name + "_scales"] = {"dtype": "U8", "shape": [E, hidden, inter // 32]}
        else:
            out[name] = {"dtype": "BF16", "shape": list(shape)}
    return dict(sorted(out.items()))


def make_tiny_gpt_oss(args, out_models, ref_dir, configs):
    import transformers
    from safetensors.torch import save_file

    section("tiny gpt-oss")
    full = json.loads((configs / "gpt-oss-20b-shape.config.json").read_text())
    d = gpt_oss_tiny_dict(full)
    cfg = transformers.GptOssConfig.from_dict(d)
    log("GptOssConfig signature:", inspect.signature(transformers.GptOssConfig))
    log("tiny gpt-oss config used:\n" + cfg.to_json_string(use_diff=False))
    H, I, E = cfg.hidden_size, cfg.intermediate_size, cfg.num_local_experts
    assert H % 32 == 0 and I % 32 == 0

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    model = build_from_config(transformers.GptOssForCausalLM, cfg, "gpt_oss")
    model = model.float().eval()
    randomize_(model, gen, H, I, "gpt_oss")

    # quantize experts and replace the in-memory weights with their dequantized values
    sd = model.state_dict()
    ckpt = {}
    deq_params = {}
    gu_shape = next(tuple(v.shape) for k, v in sd.items() if k.endswith("mlp.experts.gate_up_proj"))
    if gu_shape[2] == 2 * I:
        layout = "E_in_out"  # parameter is [E, in, out] and used as x @ W (released blocks are [E, out, in/32, 16])
    elif gu_shape[1] == 2 * I:
        layout = "E_out_in"
    else:
        raise RuntimeError(f"cannot determine expert layout from gate_up_proj {gu_shape}")
    record("gpt_oss.expert_param_layout", {"gate_up_proj": list(gu_shape), "layout": layout})
    for name, t in sd.items():
        if name.endswith("mlp.experts.gate_up_proj") or name.endswith("mlp.experts.down_proj"):
            w_out_in = t.transpose(1, 2) if layout == "E_in_out" else t  # [E, out, in]
            blocks, scales, deq = mxfp4_quantize(w_out_in.float().cpu())
            ref = mxfp4_dequantize_reference(blocks, scales)
            assert torch.equal(ref, deq), f"self-check decode mismatch for {name}"
            new_param = deq.transpose(1, 2).contiguous() if layout == "E_in_out" else deq
            deq_params[name] = new_param.clone()
            ckpt[name + "_blocks"] = blocks
            ckpt[name + "_scales"] = scales
            err = (deq - w_out_in.float().cpu()).abs().max().item()
            log(f"  {name}: param {tuple(t.shape)} -> blocks {tuple(blocks.shape)} scales {tuple(scales.shape)} "
                f"(scale bytes {int(scales.min())}..{int(scales.max())}, max quant err {err:.4g})")
        else:
            ckpt[name] = t.detach().to(torch.bfloat16).contiguous().cpu()
    with torch.no_grad():
        for name, v in deq_params.items():
            p = dict(model.named_parameters())[name]
            p.data.copy_(v.to(p.dtype))
    # also check that every dequantized value is bf16-exact
    for name, v in deq_params.items():
        assert torch.equal(v, v.to(torch.bfloat16).float()), name

    # ---- write the folder: config.json, generation_config.json, 2 shards + index
    folder = out_models / "tiny-gpt-oss"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    cdict = cfg.to_dict()
    cdict["architectures"] = ["GptOssForCausalLM"]
    cdict["dtype"] = "bfloat16"
    cdict["quantization_config"] = copy.deepcopy(GPT_OSS_QCFG)
    for k in ("_attn_implementation_autoset", "_experts_implementation", "_attn_implementation"):
        cdict.pop(k, None)
    write_json(folder / "config.json", cdict)
    try:
        gc = transformers.GenerationConfig.from_model_config(cfg)
        gc.save_pretrained(str(folder))
        log("generation_config.json:", (folder / "generation_config.json").read_text())
    except Exception as e:  # noqa: BLE001
        log(f"generation_config not written: {e}")

    names = sorted(ckpt)

    def shard_of(n):
        if n.startswith("model.embed_tokens") or ".layers.0." in n or ".layers.1." in n:
            return 1
        return 2

    shards = {1: {}, 2: {}}
    for n in names:
        shards[shard_of(n)][n] = ckpt[n]
    weight_map = {}
    total = 0
    for i in (1, 2):
        fname = f"model-{i:05d}-of-00002.safetensors"
        save_file(shards[i], str(folder / fname), metadata={"format": "pt"})
        for n, t in shards[i].items():
            weight_map[n] = fname
            total += t.numel() * t.element_size()
        log(f"wrote {fname}: {len(shards[i])} tensors, {(folder / fname).stat().st_size} bytes")
    write_json(folder / "model.safetensors.index.json",
               {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})

    # ---- prompt + in-memory float32 logits
    dev = device()
    strict_fp32()
    g2 = torch.Generator().manual_seed(args.seed + 1)
    ids = torch.randint(0, 370, (1, 40), generator=g2)
    model = model.to(dev).eval()
    with torch.no_grad():
        logits_mem = model(input_ids=ids.to(dev), use_cache=False).logits.float().cpu()
    record("gpt_oss.in_memory_logits", describe_logits(logits_mem))

    # bf16 forward (informative)
    try:
        mb = copy.deepcopy(model).to(torch.bfloat16)
        with torch.no_grad():
            lb = mb(input_ids=ids.to(dev), use_cache=False).logits.float().cpu()
        record("gpt_oss.bf16_forward_vs_fp32_maxdiff", float((lb - logits_mem).abs().max()))
        del mb
    except Exception as e:  # noqa: BLE001
        log(f"bf16 forward failed: {e}")

    # ---- transformers' own decoder on our blocks/scales
    try:
        from transformers.integrations.mxfp4 import convert_moe_packed_tensors

        mx = 0.0
        for name, v in deq_params.items():
            tdq = convert_moe_packed_tensors(ckpt[name + "_blocks"], ckpt[name + "_scales"]).float().cpu()
            mx = max(mx, float((tdq - v).abs().max())) if tdq.shape == v.shape else float("inf")
            if tdq.shape != v.shape:
                log(f"shape mismatch convert_moe_packed_tensors {tuple(tdq.shape)} vs {tuple(v.shape)}")
        record("gpt_oss.convert_moe_packed_tensors_vs_ours_maxdiff", mx)
    except Exception as e:  # noqa: BLE001
        log(f"convert_moe_packed_tensors check failed: {type(e).__name__}: {e}")

    # ---- reload through transformers with MXFP4 dequantization and compare
    try:
        qc = transformers.Mxfp4Config(dequantize=True)
        loaded = load_pretrained(transformers.GptOssForCausalLM, folder, "gpt_oss.reload", quantization_config=qc)
        loaded = loaded.float().to(dev).eval()
        lsd = loaded.state_dict()
        msd = model.state_dict()
        diffs = {}
        for name in msd:
            if name not in lsd:
                diffs[name] = "missing_in_loaded"
                continue
            a, b = msd[name].float().cpu(), lsd[name].float().cpu()
            diffs[name] = float((a - b).abs().max()) if a.shape == b.shape else f"shape {list(a.shape)} vs {list(b.shape)}"
        extra = sorted(set(lsd) - set(msd))
        expert_diff = max((v for k, v in diffs.items() if "experts" in k and isinstance(v, float)), default=None)
        all_diff = max((v for v in diffs.values() if isinstance(v, float)), default=None)
        bad = {k: v for k, v in diffs.items() if not isinstance(v, float)}
        record("gpt_oss.reload_expert_weights_maxabsdiff", expert_diff)
        record("gpt_oss.reload_all_weights_maxabsdiff", all_diff)
        record("gpt_oss.reload_problems", {"bad": bad, "extra_in_loaded": extra})
        with torch.no_grad():
            logits_loaded = loaded(input_ids=ids.to(dev), use_cache=False).logits.float().cpu()
        record("gpt_oss.reload_logits_maxabsdiff_fp32_notf32", float((logits_loaded - logits_mem).abs().max()))
        record("gpt_oss.reload_logits", describe_logits(logits_loaded))
        del loaded
    except Exception as e:  # noqa: BLE001
        log(f"gpt-oss reload FAILED: {type(e).__name__}: {e}")
        traceback.print_exc()
        record("gpt_oss.reload_error", f"{type(e).__name__}: {e}")

    # ---- incremental decode consistency + reference outputs
    ref = {"input_ids": ids.clone(), "logits": logits_mem.clone()}
    try:
        with torch.no_grad():
            out = model(input_ids=ids[:, :32].to(dev), use_cache=True)
            pkv = out.past_key_values
            steps = [out.logits[:, -1:].float().cpu()]
            for t in range(32, 40):
                o = model(input_ids=ids[:, t:t + 1].to(dev), past_key_values=pkv, use_cache=True)
                pkv = o.past_key_values
                steps.append(o.logits.float().cpu())
        inc = torch.cat(steps[1:], dim=1)
        record("gpt_oss.incremental_decode_vs_prefill_maxabsdiff", float((inc - logits_mem[:, 32:40]).abs().max()))
        gen_ids = model.generate(ids[:, :32].to(dev), max_new_tokens=8, do_sample=False,
                                 pad_token_id=cfg.pad_token_id, eos_token_id=None)
        ref["greedy_prompt32_new8"] = gen_ids.cpu()
        record("gpt_oss.greedy_tokens", gen_ids[0, 32:].tolist())
    except Exception as e:  # noqa: BLE001
        log(f"gpt-oss incremental decode check failed: {type(e).__name__}: {e}")
        traceback.print_exc()
    from safetensors.torch import save_file as sf

    ref_dir.mkdir(parents=True, exist_ok=True)
    sf({k: v.contiguous() for k, v in ref.items()}, str(ref_dir / "tiny-gpt-oss.reference.safetensors"))

    # ---- shapes json for the tiny model
    tensors = {k: list(v.shape) for k, v in model.state_dict().items()}
    ck, per_file = tensor_table_from_safetensors(folder)
    record("gpt_oss.tiny_shards", per_file)
    write_json(out_models / "reference-shapes" / "tiny-gpt-oss.shapes.json", {
        "model_type": cfg.model_type,
        "class": "GptOssForCausalLM",
        "tensors": dict(sorted(tensors.items())),
        "checkpoint_tensors": ck,
        "total_params": int(sum(p.numel() for p in model.parameters())),
    })
    record("gpt_oss.tiny_config", cdict)


# ----------------------------------------------------------------------------------------------
# glm5_next
# ----------------------------------------------------------------------------------------------

def glm5_tiny_dict(full):
    d = copy.deepcopy(full)
    real_vocab = d["text_config"]["vocab_size"]
    vocab = 384

    def remap(tok):
        return None if tok is None else tok - real_vocab + vocab

    t = d["text_config"]
    layer_types = [
        "linear_attention",
        "deepseek_sparse_attention",
        "deepseek_sparse_attention",
        "linear_attention",
        "deepseek_sparse_attention",
        "linear_attention",
    ]
    # "shared" must directly follow a "full" DSA layer (the top-k indices are handed from one
    # decoder layer to the next; KDA layers hand on None).
    indexer_types = ["full", "full", "shared", "full", "full", "full"]
    t.update(
        {
            "vocab_size": vocab,
            "hidden_size": 64,
            "intermediate_size": 128,
            "moe_intermediate_size": 32,
            "num_hidden_layers": len(layer_types),
            "num_attention_heads": 4,
            "num_key_value_heads": 4,
            "n_shared_experts": 1,
            "n_routed_experts": 16,
            "num_experts_per_tok": 4,
            "n_group": 2,
            "topk_group": 1,
            "kv_lora_rank": 32,
            "q_lora_rank": 32,
            "qk_rope_head_dim": 0,
            "qk_nope_head_dim": 16,
            "v_head_dim": 16,
            "qk_head_dim": 16,
            "head_dim": 0,
            "mlp_layer_types": ["dense"] + ["sparse"] * (len(layer_types) - 1),
            "layer_types": layer_types,
            "indexer_types": indexer_types,
            "index_topk": 8,
            "index_head_dim": 16,
            "index_n_heads": 4,
            "index_kpool": 4,
            "index_kpool_always_select_tail": True,
            "linear_head_dim": 16,
            "linear_num_heads": 4,
            "hc_mult": 4,
            "pad_token_id": remap(t.get("pad_token_id")),
            "dtype": "bfloat16",
        }
    )
    v = d["vision_config"]
    v.update(
        {
            "depth": 2,
            "hidden_size": 32,
            "num_heads": 2,
            "intermediate_size": 64,
            "out_hidden_size": 64,  # == text hidden_size: merger output is scattered into the text embeddings
            "projection_intermediate_size": 160,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "dtype": "bfloat16",
        }
    )
    for k in ("image_token_id", "video_token_id", "image_start_token_id", "image_end_token_id",
              "video_start_token_id", "video_end_token_id"):
        d[k] = remap(d[k])
        assert 0 <= d[k] < vocab
    d["architectures"] = ["Glm5NextForConditionalGeneration"]
    d["dtype"] = "bfloat16"
    return d


def glm5_introspect():
    import transformers

    section("glm5_next API introspection")
    pkg = Path(transformers.__file__).parent / "models" / "glm5_next"
    log("transformers", transformers.__version__, "at", Path(transformers.__file__).parent)
    log("glm5_next files:", sorted(p.name for p in pkg.iterdir()))
    for cname in ("Glm5NextConfig", "Glm5NextTextConfig", "Glm5NextVisionConfig"):
        c = getattr(transformers, cname, None)
        if c is None:
            try:
                from transformers.models.glm5_next import configuration_glm5_next as cm
                c = getattr(cm, cname, None)
            except Exception:
                c = None
        if c is not None:
            try:
                log(f"{cname} signature: {inspect.signature(c)}")
            except Exception as e:  # noqa: BLE001
                log(f"{cname}: no signature ({e})")
    src = (pkg / "modeling_glm5_next.py").read_text()
    lines = src.splitlines()
    log("modeling_glm5_next.py classes / indexer_types mentions:")
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("class ") or "indexer_types" in s or '"shared"' in s or "skip_topk" in s:
            print(f"    {i + 1:5d}: {line}")
    record("glm5.modeling_lines", len(lines))


def make_tiny_glm5(args, out_models, ref_dir, configs):
    import transformers
    from safetensors.torch import save_file as sf

    section("tiny glm5_next")
    full = json.loads((configs / "glm-5.3-flash-shape.config.json").read_text())
    cls = getattr(transformers, "Glm5NextForConditionalGeneration")
    ccls = getattr(transformers, "Glm5NextConfig")
    d = glm5_tiny_dict(full)

    def try_build(dd, tag):
        cfg = ccls.from_dict(copy.deepcopy(dd))
        t = cfg.text_config
        log(f"{tag}: text layer_types={t.layer_types} indexer_types={t.indexer_types} "
            f"mlp_layer_types={t.mlp_layer_types} qk_head_dim={getattr(t, 'qk_head_dim', None)}")
        torch.manual_seed(args.seed)
        gen = torch.Generator().manual_seed(args.seed)
        model = build_from_config(cls, cfg, tag).float().eval()
        randomize_(model, gen, t.hidden_size, t.moe_intermediate_size, tag)
        return cfg, model

    cfg, model = try_build(d, "glm5")
    log("tiny glm5_next config used:\n" + cfg.to_json_string(use_diff=False))
    log("model structure:\n" + str(model))

    dev = device()
    strict_fp32()
    model = model.to(dev).eval()
    vocab = cfg.text_config.vocab_size
    g2 = torch.Generator().manual_seed(args.seed + 2)
    ids = torch.randint(0, 300, (1, 40), generator=g2)

    # indexer hook: how many keys each query keeps (proves long prompts really drop pools)
    captured = {}

    def add_hooks(m):
        hs = []
        for name, mod in m.named_modules():
            if type(mod).__name__.endswith("Indexer"):
                def hook(mod_, inp, out, name=name):
                    if torch.is_tensor(out):
                        captured[name] = out.detach().cpu()
                hs.append(mod.register_forward_hook(hook))
        return hs

    hooks = add_hooks(model)
    try:
        with torch.no_grad():
            logits_mem = model(input_ids=ids.to(dev), use_cache=False).logits.float().cpu()
    except Exception as e:  # noqa: BLE001
        log(f"forward with shared indexer FAILED ({type(e).__name__}: {e}); retrying with all-full indexer_types")
        traceback.print_exc()
        record("glm5.shared_indexer_error", f"{type(e).__name__}: {e}")
        for h in hooks:
            h.remove()
        d["text_config"]["indexer_types"] = ["full"] * len(d["text_config"]["layer_types"])
        cfg, model = try_build(d, "glm5_fullidx")
        model = model.to(dev).eval()
        hooks = add_hooks(model)
        with torch.no_grad():
            logits_mem = model(input_ids=ids.to(dev), use_cache=False).logits.float().cpu()
    for h in hooks:
        h.remove()
    record("glm5.in_memory_logits_text", describe_logits(logits_mem))
    sel = {}
    for name, out in captured.items():
        valid = (out >= 0).sum(-1)[0]  # [S]
        sel[name] = {"shape": list(out.shape), "kept_per_query": valid.tolist()}
    record("glm5.indexer_selection", sel)

    # multimodal prompt: 16 patches (grid 1x4x4) -> 4 merged image tokens
    vc = cfg.vision_config
    mm = None
    try:
        n_t, n_h, n_w = 1, 4, 4
        patch_dim = vc.in_channels * vc.temporal_patch_size * vc.patch_size * vc.patch_size
        g3 = torch.Generator().manual_seed(args.seed + 3)
        pixel_values = torch.randn(n_t * n_h * n_w, patch_dim, generator=g3)
        grid = torch.tensor([[n_t, n_h, n_w]])
        n_img = n_t * n_h * n_w // (vc.spatial_merge_size ** 2)
        ids_mm = torch.cat([
            ids[:, :10],
            torch.tensor([[cfg.image_start_token_id] + [cfg.image_token_id] * n_img + [cfg.image_end_token_id]]),
            ids[:, 10:40 - 2 - n_img],
        ], dim=1)
        assert ids_mm.shape[1] == 40
        with torch.no_grad():
            logits_mm = model(input_ids=ids_mm.to(dev), pixel_values=pixel_values.to(dev),
                              image_grid_thw=grid.to(dev), use_cache=False).logits.float().cpu()
            feats = model.model.get_image_features(pixel_values.to(dev), grid.to(dev))
            po = feats.pooler_output if hasattr(feats, "pooler_output") else feats
            po = torch.cat(list(po), 0) if isinstance(po, (list, tuple)) else po
        record("glm5.in_memory_logits_image", describe_logits(logits_mm))
        record("glm5.image_features_shape", list(po.shape))
        record("glm5.image_logits_differ_from_text_only", float((logits_mm - logits_mem).abs().max()))
        mm = {"input_ids_mm": ids_mm, "pixel_values": pixel_values, "image_grid_thw": grid,
              "logits_mm": logits_mm, "image_features": po.float().cpu()}
    except Exception as e:  # noqa: BLE001
        log(f"glm5 image forward FAILED: {type(e).__name__}: {e}")
        traceback.print_exc()
        record("glm5.image_forward_error", f"{type(e).__name__}: {e}")

    # incremental decode consistency (KDA recurrent + DSA indexer cache paths)
    ref = {"input_ids": ids.clone(), "logits": logits_mem.clone()}
    try:
        with torch.no_grad():
            out = model(input_ids=ids[:, :32].to(dev), use_cache=True)
            pkv = out.past_key_values
            steps = []
            for t in range(32, 40):
                o = model(input_ids=ids[:, t:t + 1].to(dev), past_key_values=pkv, use_cache=True)
                pkv = o.past_key_values
                steps.append(o.logits.float().cpu())
        inc = torch.cat(steps, dim=1)
        record("glm5.incremental_decode_vs_prefill_maxabsdiff", float((inc - logits_mem[:, 32:40]).abs().max()))
        gen_ids = model.generate(ids[:, :32].to(dev), max_new_tokens=8, do_sample=False,
                                 pad_token_id=cfg.text_config.pad_token_id, eos_token_id=None)
        ref["greedy_prompt32_new8"] = gen_ids.cpu()
        record("glm5.greedy_tokens", gen_ids[0, 32:].tolist())
    except Exception as e:  # noqa: BLE001
        log(f"glm5 incremental decode check failed: {type(e).__name__}: {e}")
        traceback.print_exc()
    if mm is not None:
        ref.update(mm)

    # ---- save in bf16 with transformers, >= 2 shards
    folder = out_models / "tiny-glm5-next"
    if folder.exists():
        shutil.rmtree(folder)
    module_tensors = {k: list(v.shape) for k, v in model.state_dict().items()}
    total_params = int(sum(p.numel() for p in model.parameters()))
    model_bf = model.to(torch.bfloat16)
    for c in (model_bf.config, model_bf.config.text_config, model_bf.config.vision_config):
        try:
            c.dtype = torch.bfloat16
        except Exception as e:  # noqa: BLE001
            log(f"could not set dtype on {type(c).__name__}: {e}")
    total_bytes = sum(p.numel() * p.element_size() for p in model_bf.state_dict().values())
    shard = int(total_bytes * 0.55)
    log(f"state dict {total_bytes} bytes; max_shard_size={shard}")
    model_bf.save_pretrained(str(folder), max_shard_size=shard)
    log("saved files:", sorted((p.name, p.stat().st_size) for p in folder.iterdir()))
    saved_cfg = json.loads((folder / "config.json").read_text())
    record("glm5.saved_config_dtype", {"top": saved_cfg.get("dtype", saved_cfg.get("torch_dtype")),
                                       "text": saved_cfg.get("text_config", {}).get("dtype"),
                                       "vision": saved_cfg.get("vision_config", {}).get("dtype")})
    if saved_cfg.get("dtype") != "bfloat16":
        saved_cfg["dtype"] = "bfloat16"
        write_json(folder / "config.json", saved_cfg)
    ck, per_file = tensor_table_from_safetensors(folder)
    record("glm5.tiny_shards", per_file)
    dtypes = {}
    for v in ck.values():
        dtypes[v["dtype"]] = dtypes.get(v["dtype"], 0) + 1
    record("glm5.saved_dtypes", dtypes)
    try:
        rev = hf_save_names(model_bf, "glm5.tiny")
        if rev is not None:
            same = rev == {k: v["shape"] for k, v in ck.items()}
            record("glm5.revert_weight_conversion_matches_saved_files", same)
            if not same:
                record("glm5.revert_vs_saved_diff", {"only_revert": sorted(set(rev) - set(ck))[:50],
                                                     "only_saved": sorted(set(ck) - set(rev))[:50]})
    except Exception as e:  # noqa: BLE001
        log(f"revert check failed: {e}")
    only_module = sorted(set(module_tensors) - set(ck))
    only_ckpt = sorted(set(ck) - set(module_tensors))
    record("glm5.module_vs_checkpoint_names", {"only_in_module_state_dict": only_module,
                                               "only_in_checkpoint": only_ckpt})
    write_json(out_models / "reference-shapes" / "tiny-glm5-next.shapes.json", {
        "model_type": cfg.model_type,
        "class": cls.__name__,
        "tensors": {k: v["shape"] for k, v in ck.items()},
        "checkpoint_tensors": ck,
        "module_tensors": dict(sorted(module_tensors.items())),
        "total_params": total_params,
    })
    record("glm5.tiny_config", saved_cfg)

    ref_dir.mkdir(parents=True, exist_ok=True)
    sf({k: v.contiguous() for k, v in ref.items()}, str(ref_dir / "tiny-glm5-next.reference.safetensors"))

    # ---- reload with transformers and compare
    try:
        model_f = model_bf.float()  # bf16 -> f32 is exact, same values as before
        loaded = load_pretrained(cls, folder, "glm5.reload").float().to(dev).eval()
        lsd, msd = loaded.state_dict(), model_f.state_dict()
        diffs = {}
        for k in msd:
            if k not in lsd:
                diffs[k] = "missing_in_loaded"
            elif lsd[k].shape != msd[k].shape:
                diffs[k] = "shape"
            else:
                diffs[k] = float((lsd[k].float() - msd[k].float()).abs().max())
        record("glm5.reload_all_weights_maxabsdiff", max((v for v in diffs.values() if isinstance(v, float)), default=None))
        record("glm5.reload_problems", {k: v for k, v in diffs.items() if not isinstance(v, float)})
        with torch.no_grad():
            lt = loaded(input_ids=ids.to(dev), use_cache=False).logits.float().cpu()
        record("glm5.reload_logits_text_maxabsdiff", float((lt - logits_mem).abs().max()))
        if mm is not None:
            with torch.no_grad():
                lm = loaded(input_ids=mm["input_ids_mm"].to(dev), pixel_values=mm["pixel_values"].to(dev),
                            image_grid_thw=mm["image_grid_thw"].to(dev), use_cache=False).logits.float().cpu()
            record("glm5.reload_logits_image_maxabsdiff", float((lm - mm["logits_mm"]).abs().max()))
        # dtypes transformers keeps in fp32 after a bf16 load
        import re

        fp32_kept = sorted({re.sub(r"\.\d+\.", ".N.", k) for k, v in
                            load_pretrained(cls, folder, "glm5.reload_bf16").state_dict().items()
                            if v.dtype == torch.float32})
        record("glm5.params_kept_fp32_on_bf16_load", fp32_kept)
    except Exception as e:  # noqa: BLE001
        log(f"glm5 reload FAILED: {type(e).__name__}: {e}")
        traceback.print_exc()
        record("glm5.reload_error", f"{type(e).__name__}: {e}")


# ----------------------------------------------------------------------------------------------
# full-size shapes (meta device)
# ----------------------------------------------------------------------------------------------

def full_shapes(out_models, configs):
    import transformers

    section("full-size shapes on the meta device")
    for stem in ("gpt-oss-20b-shape", "gpt-oss-120b-shape", "glm-5.3-flash-shape"):
        try:
            d = json.loads((configs / f"{stem}.config.json").read_text())
            if d["model_type"] == "gpt_oss":
                d.pop("quantization_config", None)
                cfg = transformers.GptOssConfig.from_dict(d)
                cls = transformers.GptOssForCausalLM
            else:
                cfg = transformers.Glm5NextConfig.from_dict(d)
                cls = transformers.Glm5NextForConditionalGeneration
            model, tensors, total = meta_shapes(cls, cfg, stem)
            obj = {"model_type": cfg.model_type, "class": cls.__name__,
                   "tensors": dict(sorted(tensors.items())), "total_params": int(total)}
            if cfg.model_type == "gpt_oss":
                obj["checkpoint_tensors"] = gpt_oss_checkpoint_layout(tensors, cfg.hidden_size, cfg.intermediate_size)
                nbytes = 0
                for v in obj["checkpoint_tensors"].values():
                    nbytes += int(np.prod(v["shape"])) * (1 if v["dtype"] == "U8" else 2)
                obj["checkpoint_total_size_bytes"] = nbytes
                record(f"shapes.{stem}.checkpoint_bytes", nbytes)
            rev = hf_save_names(model, stem)
            if rev is not None:
                changed = rev != tensors
                record(f"shapes.{stem}.save_names_differ_from_module_names", changed)
                if changed and cfg.model_type != "gpt_oss":
                    plain, experts = compact_checkpoint_tensors(rev)
                    obj["checkpoint_tensors_note"] = (
                        "names/shapes as transformers save_pretrained writes them (revert_weight_conversion on "
                        "the meta model; the tiny glm5_next checkpoint written by save_pretrained matches this "
                        "naming); dtype assumed BF16. Routed-expert tensors are listed once per pattern in "
                        "checkpoint_expert_tensors: substitute {layer} from 'layers' and {expert} in "
                        "0..num_experts-1.")
                    obj["num_checkpoint_tensors"] = len(rev)
                    obj["checkpoint_tensors"] = plain
                    obj["checkpoint_expert_tensors"] = experts
                    record(f"shapes.{stem}.num_checkpoint_tensors", len(rev))
                    record(f"shapes.{stem}.checkpoint_expert_patterns", experts)
            if cfg.model_type != "gpt_oss":
                t = cfg.text_config
                v = cfg.vision_config
                record(f"shapes.{stem}.vision_out_vs_text_hidden",
                       {"vision.out_hidden_size": v.out_hidden_size, "text.hidden_size": t.hidden_size})
            write_json(out_models / "reference-shapes" / f"{stem}.shapes.json", obj)
            record(f"shapes.{stem}.total_params", int(total))
            record(f"shapes.{stem}.num_tensors", len(tensors))
            del model
        except Exception as e:  # noqa: BLE001
            log(f"shapes for {stem} FAILED: {type(e).__name__}: {e}")
            traceback.print_exc()
            record(f"shapes.{stem}.error", f"{type(e).__name__}: {e}")


def copy_sources(out):
    import transformers

    section("transformers sources")
    root = Path(transformers.__file__).parent
    dst = out / "hf_sources" / "transformers"
    picks = []
    for sub in ("models/gpt_oss", "models/glm5_next"):
        picks += sorted((root / sub).glob("*.py"))
    for f in ("integrations/mxfp4.py", "quantizers/quantizer_mxfp4.py", "integrations/moe.py"):
        if (root / f).exists():
            picks.append(root / f)
    for p in picks:
        rel = p.relative_to(root)
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, dst / rel)
    (out / "hf_sources" / "VERSION").write_text(f"transformers {transformers.__version__}\ntorch {torch.__version__}\n")
    record("sources", [str(p.relative_to(root)) for p in picks])


def main():
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", default=str(here.parent.parent / "tests" / "data" / "configs"))
    ap.add_argument("--seed", type=int, default=20260101)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    out_models = out / "tests_data" / "models"
    ref_dir = out / "reference_outputs"
    configs = Path(args.configs)

    import transformers
    import safetensors

    log(f"python {sys.version.split()[0]} torch {torch.__version__} transformers {transformers.__version__} "
        f"safetensors {safetensors.__version__} numpy {np.__version__} cuda {torch.cuda.is_available()}")
    if torch.cuda.is_available():
        log("device:", torch.cuda.get_device_name(0))
    record("versions", {"torch": torch.__version__, "transformers": transformers.__version__,
                        "safetensors": safetensors.__version__, "numpy": np.__version__})

    steps = [
        ("sources", lambda: copy_sources(out)),
        ("glm5_introspect", glm5_introspect),
        ("tiny_gpt_oss", lambda: make_tiny_gpt_oss(args, out_models, ref_dir, configs)),
        ("tiny_glm5", lambda: make_tiny_glm5(args, out_models, ref_dir, configs)),
        ("full_shapes", lambda: full_shapes(out_models, configs)),
    ]
    status = {}
    for name, fn in steps:
        try:
            fn()
            status[name] = "ok"
        except Exception as e:  # noqa: BLE001
            status[name] = f"FAILED: {type(e).__name__}: {e}"
            log(f"STEP {name} FAILED")
            traceback.print_exc()
        write_json(out / "summary.json", {"status": status, **SUMMARY})
    section("files")
    for f in sorted(out.rglob("*")):
        if f.is_file() and "hf_sources" not in f.parts:
            print(f"    {f.stat().st_size:10d}  {f.relative_to(out)}")
    section("done")
    print(json.dumps(status, indent=2))


if __name__ == "__main__":
    main()
