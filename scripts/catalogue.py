#!/usr/bin/env python3
"""servesim's catalogue (configs/models, configs/hardware) as the validation scripts read it: the
entries' top-level figures, and the entry a name written elsewhere stands for.

A published or measured run names its model and accelerator its own way ("Llama-2-70b-chat-hf",
"meta-llama/Llama-3.1-8B", "8x H200-SXM-141GB 700 W", "RTXPRO6000"). match() finds the catalogue
entry whose name's words all appear among the name's words (words: runs of letters and digits,
lower-cased), or whose words run together are one of them ("rtx-pro-6000" in "RTXPRO6000");
the entry with the most words wins and a tie is refused, so "Llama-2-70b" is not llama-2-7b and
"H100-NVL-94GB" is not h100-sxm. ALIASES names checkpoints whose architecture is an entry's
under another name.

  python3 scripts/catalogue.py NAME models|hardware    # the entry NAME stands for, or why not
"""
import functools
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# DeepSeek-R1 is DeepSeek-V3's architecture (the same config.json figures; its entry says so).
ALIASES = {"models": {"deepseek-r1": "deepseek-v3"}}


def words(text):
    return set(re.findall(r"[a-z0-9]+", text.lower()))


@functools.lru_cache(maxsize=None)
def catalogue(kind):
    """{name: scalars} of configs/<kind>/*.yaml (comments dropped): the top-level ones by key,
    those of a block map one level down as "parent.key" (mla.kv_lora_rank); flow maps and
    lists are skipped (what the scripts read is not in them)."""
    entries = {}
    folder = os.path.join(ROOT, "configs", kind)
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".yaml"):
            continue
        scalars, parent = {}, None
        with open(os.path.join(folder, f)) as fh:
            for line in fh:
                m = re.match(r"( *)([a-z_0-9]+):\s*([^#\s][^#]*?)?\s*(?:#.*)?$", line)
                if not m:
                    continue
                indent, key, value = m.groups()
                if not indent:
                    parent = key if value is None else None
                    if value is not None:
                        scalars[key] = value.strip("\"'")
                elif parent and value is not None:
                    scalars[f"{parent}.{key}"] = value.strip("\"'")
        entries[f[:-5]] = scalars
    return entries


def match(text, kind):
    """The catalogue entry `text` stands for (see the module's docstring): (name, None) or
    (None, why)."""
    have = words(text)

    def fits(name):
        w = words(name)
        return w <= have or "".join(re.findall(r"[a-z0-9]+", name)) in have

    names = list(catalogue(kind)) + list(ALIASES.get(kind, {}))
    hits = [n for n in names if fits(n)]
    if not hits:
        return None, f"no {kind} catalogue entry for {text!r}"
    most = max(len(words(n)) for n in hits)
    best = [n for n in hits if len(words(n)) == most]
    if len(best) > 1:
        return None, f"{text!r} matches {kind} entries {', '.join(best)} alike"
    return ALIASES.get(kind, {}).get(best[0], best[0]), None


def model_spec(name):
    """The figures a replay sizes KV and weights with: layers, hidden, kv_heads, head_dim,
    parameters, and for a mixture of experts experts, experts_per_token and expert_parameters
    (the routed experts' weights: layers x experts x 3 x hidden x expert width)."""
    m = catalogue("models")[name]
    spec = dict(layers=int(m["layers"]), hidden=int(m["hidden_size"]),
                kv_heads=int(m["kv_heads"]), head_dim=int(m["head_dim"]),
                parameters=int(m["parameters"]))
    if "experts" in m:
        moe_layers = spec["layers"] - int(m.get("dense_layers", 0))
        spec.update(experts=int(m["experts"]), experts_per_token=int(m["experts_per_token"]),
                    expert_parameters=moe_layers * int(m["experts"]) * 3 * spec["hidden"]
                    * int(m["intermediate_size"]))
    return spec


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("models", "hardware"):
        sys.exit(__doc__)
    name, why = match(sys.argv[1], sys.argv[2])
    print(name or why)
    sys.exit(0 if name else 1)


if __name__ == "__main__":
    main()
