#!/usr/bin/env python3
"""Reference tensors for Day0's glm5_next (GLM-5.3-Flash) image path, from transformers.

    python3 make_glm5_vision_fixtures.py [--out ROOT] [--model DIR]

Writes, under ROOT (default: the repository):
  tests/data/vision/<name>.png                      the test images (lossless, 8-bit RGB)
  tests/data/reference/glm5_vision/<case>.safetensors
for the committed tiny checkpoint tests/data/models/tiny-glm5-next (its vision tower is random).

Cases
  one_image      an aligned 112x140 image (8x10 patches, 20 tokens, no resize) inside a prompt
  two_images     112x140 and 112x112 (16 tokens) in one prompt, text between them
  resized_image  a 75x130 image (resized: antialiased bicubic, padded) inside a prompt
  pixels_*       preprocessing only: pixel_values, image_grid_thw, min_max_image_tokens (the
                 processor settings used), canvas_hw, content_hw and
                 resized_content ([3, h, w], torch's float32 antialiased bicubic, clamped and
                 rounded: the resize stage alone), with the processor overrides in the metadata

Tensors of an image case (k = image index):
  prompt_ids          I32 [P]    the prompt with ONE image token per image (as given to
                                 `day0-cli logits --tokens ... --image ...`)
  input_ids           I32 [T]    the prompt with each image token expanded to the image's tokens
  pixel_values.k      F32 [patches, 3*2*14*14]   the processor's output
  image_grid_thw.k    I32 [3]
  vision.k.patch_embed / vision.k.block.<i> / vision.k.post_norm   F32 [patches, D]
  vision.k.downsample F32 [tokens, out_hidden]   (Conv2d output, before the merger)
  vision.k.merger     F32 [tokens, out_hidden]   the image features put into the prompt
  inputs_embeds       F32 [T, H]  text embeddings with the image features at the image tokens
  logits              F32 [T, V]  row t: logits after feeding inputs_embeds[t] with the cache of < t
  greedy_ids          I32 [N]     greedy continuation after the whole prompt (token ids fed back)
  greedy_top2_gap     F32 [N]

The reference runs in float32 (bf16 checkpoint values widened exactly), TF32 off, eager attention
and experts, by CACHED DECODING of the merged input embeddings one position at a time (see
/VERIFY.md: transformers' glm5_next prefill is not a sound reference). The metadata records how
far a one-shot prefill of the same embeddings disagrees ("prefill_vs_decode").
"""

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import make_tiny_checkpoints as tiny  # noqa: E402
import torch  # noqa: E402

T0 = time.time()
SUMMARY = {}
NEW_TOKENS = 24
MODEL = "tiny-glm5-next"

# name -> (height, width, seed)
IMAGES = {
    "aligned_112x140": (112, 140, 1),
    "aligned_112x112": (112, 112, 2),
    "odd_75x130": (75, 130, 3),
    "small_56x84": (56, 84, 4),
    "large_300x200": (300, 200, 5),
}

PIXEL_CASES = {
    # upscaled into a 112x140 canvas (content 93x140), padded
    "pixels_upscale_56x84": ("small_56x84", {}),
    # downscaled to fit 64 tokens
    "pixels_downscale_300x200_max64": ("large_300x200", {"max_image_tokens": 64}),
    "pixels_odd_75x130": ("odd_75x130", {}),
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


def make_image(h, w, seed):
    """Smooth colour fields plus noise and a few hard edges: exercises resampling everywhere."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.zeros((h, w, 3))
    for c in range(3):
        fy, fx, ph = rng.uniform(0.02, 0.2), rng.uniform(0.02, 0.2), rng.uniform(0, 6.28)
        img[..., c] = 128 + 90 * np.sin(fy * y + fx * x + ph)
    img[(x // 17 + y // 23) % 3 == 0] *= 0.5
    img += rng.normal(0, 12, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def write_images(out_root):
    from PIL import Image

    folder = out_root / "tests" / "data" / "vision"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, (h, w, seed) in IMAGES.items():
        p = folder / f"{name}.png"
        Image.fromarray(make_image(h, w, seed), "RGB").save(p, optimize=False)
        paths[name] = p
    record("images", {k: str(v.relative_to(out_root)) for k, v in paths.items()})
    return paths


def processor_for(folder):
    """The torchvision-backed processor (the one Day0 mirrors); the PIL one only if that fails."""
    import transformers

    kwargs = {}
    pre = folder / "preprocessor_config.json"
    if pre.exists():
        kwargs = {k: v for k, v in json.loads(pre.read_text()).items()
                  if k in ("min_image_tokens", "max_image_tokens", "patch_size", "temporal_patch_size", "merge_size")}
    try:
        proc = transformers.Glm5NextImageProcessor(**kwargs)
    except Exception as e:  # noqa: BLE001
        log(f"Glm5NextImageProcessor unavailable ({type(e).__name__}: {e}); using the PIL backend")
        proc = transformers.Glm5NextImageProcessorPil(**kwargs)
    record("processor_class", type(proc).__name__)
    return proc


def torch_resize(path, h, w):
    """The content resize alone, as torchvision does it for uint8: float32 antialiased bicubic,
    clamp, round. [3, h, w] float holding integers."""
    import numpy as np
    from PIL import Image

    x = torch.from_numpy(np.asarray(Image.open(path).convert("RGB"))).permute(2, 0, 1).float()[None]
    y = torch.nn.functional.interpolate(x, size=(h, w), mode="bicubic", antialias=True, align_corners=False)
    return y.clamp(0, 255).round()[0]


def preprocess(proc, path, overrides):
    from PIL import Image

    img = Image.open(path).convert("RGB")
    out = proc(images=[img], return_tensors="pt", **overrides)
    return out["pixel_values"].float(), out["image_grid_thw"][0]


class VisionCapture:
    def __init__(self, visual):
        self.out, self.handles = {}, []
        self.handles.append(visual.patch_embed.register_forward_hook(self._hook("patch_embed")))
        for i, b in enumerate(visual.blocks):
            self.handles.append(b.register_forward_hook(self._hook(f"block.{i}")))
        self.handles.append(visual.post_layernorm.register_forward_hook(self._hook("post_norm")))
        self.handles.append(visual.downsample.register_forward_hook(self._hook("downsample")))
        self.handles.append(visual.merger.register_forward_hook(self._hook("merger")))

    def _hook(self, key):
        def fn(_m, _i, out):
            t = out[0] if isinstance(out, tuple) else out
            t = t.detach().float().cpu()
            self.out[key] = t.reshape(-1, t.shape[1]) if key == "downsample" else t.reshape(t.shape[0], -1)
        return fn

    def remove(self):
        for h in self.handles:
            h.remove()


def image_features(model, pv, grid, dev):
    cap = VisionCapture(model.model.visual)
    try:
        with torch.no_grad():
            feats = model.model.get_image_features(pv.to(dev), grid[None].to(dev)).pooler_output
    finally:
        cap.remove()
    feats = torch.cat(list(feats), 0).float().cpu()
    assert torch.equal(feats, cap.out["merger"]), "merger hook differs from get_image_features"
    return feats, cap.out


def run_case(model, proc, cfg, dev, prompt, images, paths):
    """prompt: ids with one image token per image; images: names in order."""
    img_tok = cfg["image_token_id"]
    res, figs = {}, {}
    feats_all, counts = [], []
    for k, name in enumerate(images):
        pv, grid = preprocess(proc, paths[name], {})
        feats, dumps = image_features(model, pv, grid, dev)
        res[f"pixel_values.{k}"] = pv
        res[f"image_grid_thw.{k}"] = grid.to(torch.int32)
        for key, v in dumps.items():
            res[f"vision.{k}.{key}"] = v
        feats_all.append(feats)
        counts.append(feats.shape[0])
    expanded = []
    it = iter(counts)
    for t in prompt:
        expanded.extend([img_tok] * next(it) if t == img_tok else [t])
    ids = torch.tensor(expanded, dtype=torch.long)
    with torch.no_grad():
        emb = model.model.language_model.embed_tokens(ids[None].to(dev))[0].float()
        mask = (ids == img_tok).to(dev)
        emb[mask] = torch.cat(feats_all, 0).to(dev)
        cache, rows = None, []
        for t in range(ids.numel()):
            out = model(inputs_embeds=emb[t:t + 1][None], past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            rows.append(out.logits[0, -1].float().cpu())
        logits = torch.stack(rows)
        new, gaps = [], []
        last = logits[-1]
        for _ in range(NEW_TOKENS):
            top2 = last.topk(2)
            nxt = int(top2.indices[0])
            gaps.append(float(top2.values[0] - top2.values[1]))
            new.append(nxt)
            out = model(input_ids=torch.tensor([[nxt]], device=dev), past_key_values=cache, use_cache=True)
            cache, last = out.past_key_values, out.logits[0, -1].float().cpu()
        try:
            pre = model(inputs_embeds=emb[None], use_cache=False).logits[0].float().cpu()
            r = rel_l2_rows(pre, logits)
            figs["prefill_vs_decode"] = {"max_rel_l2": float(r.max()), "median_rel_l2": float(r.median())}
        except Exception as e:  # noqa: BLE001
            figs["prefill_vs_decode"] = f"prefill failed: {type(e).__name__}: {e}"
        # The processor's own expansion of the prompt must agree with ours (when it can be asked).
    res["prompt_ids"] = torch.tensor(prompt, dtype=torch.int32)
    res["input_ids"] = ids.to(torch.int32)
    res["inputs_embeds"] = emb.cpu()
    res["logits"] = logits
    res["greedy_ids"] = torch.tensor(new, dtype=torch.int32)
    res["greedy_top2_gap"] = torch.tensor(gaps, dtype=torch.float32)
    figs["image_tokens"] = counts
    figs["greedy_min_top2_gap"] = min(gaps)
    return res, figs


def save(path, res, meta):
    import transformers
    from safetensors.torch import save_file

    tensors = {}
    for k, t in res.items():
        t = t.detach().cpu().contiguous()
        tensors[k] = t.to(torch.int32) if not t.is_floating_point() else t.to(torch.float32)
    meta = dict(meta)
    meta["versions"] = {"transformers": transformers.__version__, "torch": torch.__version__}
    meta["precision"] = ("float32 (bf16 checkpoint values widened exactly), TF32 off, eager attention and experts, "
                         "merged input embeddings fed one position at a time with the cache")
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={"format": "pt", "reference": json.dumps(meta, default=str)})
    log(f"wrote {path} ({path.stat().st_size} bytes, {len(tensors)} tensors)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="root folder for the outputs (default: the repo)")
    ap.add_argument("--model", default=str(REPO / "tests/data/models" / MODEL))
    args = ap.parse_args()
    import transformers

    out_root = Path(args.out) if args.out else REPO
    ref_dir = out_root / "tests" / "data" / "reference" / "glm5_vision"
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tiny.strict_fp32()
    log(f"torch {torch.__version__} transformers {transformers.__version__} device {dev}")
    folder = Path(args.model)
    cfg = json.loads((folder / "config.json").read_text())
    model = transformers.Glm5NextForConditionalGeneration.from_pretrained(
        str(folder), dtype=torch.float32, attn_implementation="eager", experts_implementation="eager")
    model = model.float().to(dev).eval()
    proc = processor_for(folder)
    record("processor", {k: getattr(proc, k, None) for k in (
        "patch_size", "temporal_patch_size", "merge_size", "min_image_tokens", "max_image_tokens",
        "image_mean", "image_std", "rescale_factor", "resample")})
    paths = write_images(out_root)
    status = {}

    for name, (img, overrides) in PIXEL_CASES.items():
        try:
            pv, grid = preprocess(proc, paths[img], overrides)
            h, w, _ = IMAGES[img]
            res = {"pixel_values": pv, "image_grid_thw": grid.to(torch.int32)}
            # The content size the processor computes (its resize() formula), for the resize stage alone.
            import transformers.models.glm5_next.image_processing_glm5_next as ipm
            mn = overrides.get("min_image_tokens", proc.min_image_tokens)
            mx = overrides.get("max_image_tokens", proc.max_image_tokens)
            th, tw = ipm.smart_resize(num_frames=2, height=h, width=w, temporal_factor=2, factor=28,
                                      min_pixels=mn, max_pixels=mx)
            scale = min(th / h, tw / w)
            if 2 * h * w >= 2 * 28 * 28 * mn:
                scale = min(1.0, scale)
            ch, cw = max(1, min(th, int(scale * h // 1))), max(1, min(tw, int(scale * w // 1)))
            res["min_max_image_tokens"] = torch.tensor([mn, mx], dtype=torch.int32)
            res["canvas_hw"] = torch.tensor([th, tw], dtype=torch.int32)
            res["content_hw"] = torch.tensor([ch, cw], dtype=torch.int32)
            res["resized_content"] = torch_resize(paths[img], ch, cw)
            save(ref_dir / f"{name}.safetensors", res,
                 {"case": name, "image": f"tests/data/vision/{img}.png", "processor_overrides": overrides})
            status[name] = f"ok grid {grid.tolist()}"
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            status[name] = f"FAILED: {type(e).__name__}: {e}"

    b, e, i = cfg["image_start_token_id"], cfg["image_end_token_id"], cfg["image_token_id"]
    vocab = cfg["text_config"]["vocab_size"]
    g = torch.Generator().manual_seed(20261201)

    def text(n):
        return [int(t) for t in torch.randint(0, vocab - 64, (n,), generator=g)]

    cases = {
        "one_image": (text(5) + [b, i, e] + text(6), ["aligned_112x140"]),
        "two_images": (text(4) + [b, i, e] + text(3) + [b, i, e] + text(5), ["aligned_112x140", "aligned_112x112"]),
        "resized_image": (text(3) + [b, i, e] + text(4), ["odd_75x130"]),
    }
    for name, (prompt, images) in cases.items():
        try:
            res, figs = run_case(model, proc, cfg, dev, prompt, images, paths)
            record(f"{name}.figures", figs)
            save(ref_dir / f"{name}.safetensors", res,
                 {"case": name, "model": f"tests/data/models/{folder.name}",
                  "images": [f"tests/data/vision/{n}.png" for n in images], "figures": figs})
            status[name] = "ok"
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            status[name] = f"FAILED: {type(e).__name__}: {e}"
    record("status", status)
    tiny.write_json(out_root / "glm5_vision_fixtures_summary.json", SUMMARY)
    return 0 if all(v.startswith("ok") for v in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
