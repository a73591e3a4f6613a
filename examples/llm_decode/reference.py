"""The NumPy reference of the decoder model: each request decoded on its own, greedily, with its keys and
values kept contiguous (no pages, no batch), in float64. The served tokens must equal these and the logits
agree to rtol 1e-3: batching, paging, the split-KV merge and the routing do not change the maths.
"""
from __future__ import annotations

import numpy as np


def rms_norm(x, g, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g


def rope(x, pos, theta):
    """Rotate the halves of every head's vector x[..., head_dim] by position pos's angles."""
    half = x.shape[-1] // 2
    ang = pos * theta ** (-np.arange(half, dtype=np.float64) / half)
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


def route(logits, top_k):
    """Top-k experts of one token, ascending expert order, and their gates (the softmax of the chosen
    logits). The serving routine plans with this same rule."""
    chosen = np.sort(np.argsort(-np.asarray(logits, np.float64), kind="stable")[:top_k])
    z = np.asarray(logits, np.float64)[chosen]
    w = np.exp(z - z.max())
    return chosen, w / w.sum()


class Reference:
    def __init__(self, cfg, weights):
        self.cfg = cfg
        self.w = {k: v.astype(np.float64) for k, v in weights.items()}

    def decode(self, prompt, max_new):
        """Greedy decoding of one request: (generated token ids, the logits of each generated token)."""
        cfg, w = self.cfg, self.w
        H, KVH, HD, G = cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.group
        keys = [[] for _ in range(cfg.layers)]
        values = [[] for _ in range(cfg.layers)]
        tokens, out, logits_out = list(prompt), [], []
        for pos in range(len(prompt) + max_new - 1):
            x = w["embedding"][tokens[pos]]
            for layer in range(cfg.layers):
                p = f"layer{layer}."
                xn = rms_norm(x, w[p + "attn_norm"][0], cfg.eps)
                qkv = xn @ w[p + "wqkv"]
                q = rope(qkv[:H * HD].reshape(H, HD), pos, cfg.rope_theta)
                k = rope(qkv[H * HD:(H + KVH) * HD].reshape(KVH, HD), pos, cfg.rope_theta)
                v = qkv[(H + KVH) * HD:].reshape(KVH, HD)
                keys[layer].append(k)
                values[layer].append(v)
                K, V = np.stack(keys[layer]), np.stack(values[layer])       # [pos + 1, KVH, HD]
                att = np.empty((H, HD))
                for h in range(H):
                    s = K[:, h // G, :] @ q[h] / np.sqrt(HD)
                    e = np.exp(s - s.max())
                    att[h] = (e / e.sum()) @ V[:, h // G, :]
                x = x + att.reshape(-1) @ w[p + "wo"]
                xn2 = rms_norm(x, w[p + "ffn_norm"][0], cfg.eps)
                chosen, gates = route(xn2 @ w[p + "router"], cfg.top_k)
                y = x.copy()
                for e, gate in zip(chosen, gates):
                    h1 = xn2 @ w[p + "w1"][e * cfg.hidden:(e + 1) * cfg.hidden]
                    h3 = xn2 @ w[p + "w3"][e * cfg.hidden:(e + 1) * cfg.hidden]
                    y = y + (gate * h1 / (1.0 + np.exp(-h1)) * h3) @ w[p + "w2"][e * cfg.ffn:(e + 1) * cfg.ffn]
                x = y
            logits = rms_norm(x, w["final_norm"][0], cfg.eps) @ w["lm_head"]
            if pos >= len(prompt) - 1:                  # past the prompt: greedy sampling
                nxt = int(np.argmax(logits))
                out.append(nxt)
                logits_out.append(logits)
                tokens.append(nxt)
        return out, logits_out
