"""The decoder model of the serving example: its configuration, weights and HTP program.

A pre-norm transformer decoder (RMSNorm, QKV projection, RoPE, grouped-query attention over a paged KV
cache, output projection, MoE feed-forward with SwiGLU experts, a language-model head), written with HTP's
dialects: `@kernel` tile kernels, `@workload`s over ragged (KV blocks per request) and CSR (experts per
token) domains, and a pipe of stages streaming through a channel. `build(cfg)` returns the program's four entries; one package holds them all:

| entry | runs | does |
|---|---|---|
| `embed` | once per step | gathers each batch slot's token embedding (`E[tok[b]]`, a runtime row) |
| `attn_layer` | once per layer | RMSNorm, QKV projection, RoPE, the new token's K/V into its cache slot, flash-decoding over the request's KV blocks (split by block, then a log-sum-exp merge), output projection, residual, the second RMSNorm and the router's logits |
| `moe_layer` | once per layer | the experts the router chose (CSR: `P.sel`), each an up projection (cube), SwiGLU (vector), a down projection (cube) and a weighted add into the residual (vector) |
| `lm_head` | once per step | the final RMSNorm and the logits: a `P.pipe` whose norm stage streams row blocks through a channel to the projection stage |

Between `attn_layer` and `moe_layer` the host routine takes the top-k of the router's logits (it plans the
step: routing is runtime data, like block tables and lengths). On Ascend a kernel runs on one core type, so
every matmul is its own (cube) kernel and the element-wise work (vector) another; they exchange
runtime-created intermediates.

The same program compiles for pto-a2a3sim and aie-npu1; only the tile sizes (how work is cut into tasks:
`Config.for_target`) differ, because a task's objects must fit one AIE core's 64 KiB.

Everything is f32. Batch slots are rows: a step computes the dense parts for all `slots` rows and the
ragged and routed parts only for active requests (a free slot has no KV blocks and no experts).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from htp.dialects.tile import (kernel, Tensor, In, Out, InOut, f32, i32, load, store, matmul, full, add, sub, mul,
                               muls, adds, exp, rsqrt, sigmoid, rowsum, rowmax, rowexpand_sub, rowexpand_mul,
                               rowexpand_div, colexpand_mul, colexpand_add, transpose)
from htp.dialects.wsp import workload, P, Ragged, Sparse
from htp.dialects.csp import Channel, recv, send

NEG = -1.0e30          # "minus infinity": masked keys and empty split slots weigh exp(NEG - m) = 0


@dataclasses.dataclass(frozen=True)
class Config:
    layers: int = 2
    hidden: int = 512          # model width
    heads: int = 8             # query heads
    kv_heads: int = 2          # grouped KV heads (GQA): heads // kv_heads query heads share one
    head_dim: int = 64
    vocab: int = 256
    experts: int = 8
    top_k: int = 2
    ffn: int = 128             # an expert's intermediate width
    block: int = 16            # tokens per KV-cache block
    max_blocks: int = 8        # blocks per request at most (its context: block * max_blocks tokens)
    cache_blocks: int = 48     # blocks in the cache (per layer)
    slots: int = 8             # batch slots: requests decoded together in one step
    # Tile sizes: how the work is cut into tasks. They change no result, only what one task holds, so each
    # target has its own (for_target): an AIE core keeps every object of a task in 64 KiB of data memory,
    # an Ascend vector core 192 KiB of UB and a cube core 64 KiB operands.
    norm_rows: int = 8         # rows per RMSNorm task
    proj_rows: int = 0         # rows per projection task (0: every slot)
    proj_tile: int = 128       # output columns per projection task
    ffn_tile: int = 128        # columns of an expert's up projection per task
    down_tile: int = 512       # columns of an expert's down projection per task
    k_chunk: int = 64          # the K step of every matmul loop
    eps: float = 1e-6
    rope_theta: float = 10000.0

    @classmethod
    def for_target(cls, target: str, **sizes) -> "Config":
        """The model with the tile sizes of `target` (the model itself is the same on every target)."""
        tiles = {}
        if target.startswith("aie"):
            # An AIE core holds a task's objects in 64 KiB: a [512, 16] f32 weight slice is 32 KiB.
            tiles = dict(norm_rows=2, proj_rows=8, proj_tile=16, ffn_tile=8, down_tile=32)
        return cls(**{**tiles, **sizes})

    @property
    def group(self) -> int:
        return self.heads // self.kv_heads

    @property
    def qkv(self) -> int:
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    @property
    def kv_width(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def max_context(self) -> int:
        return self.block * self.max_blocks

    def blocks_for(self, tokens: int) -> int:
        """KV-cache blocks that hold `tokens` positions."""
        return -(-tokens // self.block)

    @property
    def cache_tokens(self) -> int:
        return self.block * self.cache_blocks

    def check(self) -> None:
        """Shape rules the program relies on; a violation names the fields."""
        rules = [
            (self.heads * self.head_dim == self.hidden, "heads * head_dim == hidden"),
            (self.heads % self.kv_heads == 0, "kv_heads divides heads"),
            (self.head_dim % 2 == 0, "head_dim is even (RoPE rotates halves)"),
            (self.hidden % self.proj_tile == 0 and self.qkv % self.proj_tile == 0
             and self.vocab % self.proj_tile == 0 and self.hidden % self.k_chunk == 0
             and self.ffn % self.k_chunk == 0, "proj_tile divides hidden, qkv and vocab; k_chunk divides hidden and ffn"),
            (self.ffn % self.ffn_tile == 0 and self.hidden % self.down_tile == 0
             and self.down_tile % min(self.proj_tile, self.down_tile) == 0,
             "ffn_tile divides ffn; down_tile divides hidden"),
            (1 <= self.top_k <= self.experts, "1 <= top_k <= experts"),
            (self.slots % self.norm_rows == 0, "norm_rows divides slots"),
            (self.slots % (self.proj_rows or self.slots) == 0, "proj_rows divides slots"),
            (self.max_blocks % 8 == 0 and self.block % 8 == 0,
             "max_blocks and block are multiples of 8 (rows of f32 per-block statistics and scores are whole "
             "32-byte vector blocks on Ascend)"),
        ]
        bad = [text for ok, text in rules if not ok]
        if bad:
            raise ValueError(f"llm_decode.Config{dataclasses.astuple(self)}: {', '.join(bad)}")


def weight_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """Every weight by name: the model's global ones and layer l's (`layer{l}.<name>`)."""
    shapes = {"embedding": (cfg.vocab, cfg.hidden), "final_norm": (1, cfg.hidden), "lm_head": (cfg.hidden, cfg.vocab)}
    for layer in range(cfg.layers):
        shapes |= {f"layer{layer}.{k}": v for k, v in {
            "attn_norm": (1, cfg.hidden), "wqkv": (cfg.hidden, cfg.qkv), "wo": (cfg.hidden, cfg.hidden),
            "ffn_norm": (1, cfg.hidden), "router": (cfg.hidden, cfg.experts),
            "w1": (cfg.experts * cfg.hidden, cfg.ffn), "w3": (cfg.experts * cfg.hidden, cfg.ffn),
            "w2": (cfg.experts * cfg.ffn, cfg.hidden)}.items()}
    return shapes


def make_weights(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    """Weights from a fixed seed, scaled by 1/sqrt(fan-in) so activations stay of order one."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in weight_shapes(cfg).items():
        if name.endswith("norm"):
            w = 1.0 + 0.1 * rng.standard_normal(shape)
        elif name == "embedding":
            w = rng.standard_normal(shape)
        else:
            fan_in = cfg.ffn if name.endswith("w2") else cfg.hidden
            w = rng.standard_normal(shape) / np.sqrt(fan_in)
        out[name] = np.ascontiguousarray(w, dtype=np.float32)
    return out


def rope_tables(cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of every position's rotation angles: [max_context, head_dim // 2]."""
    half = cfg.head_dim // 2
    inv = cfg.rope_theta ** (-np.arange(half, dtype=np.float64) / half)
    ang = np.arange(cfg.max_context, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def check_weights(cfg: Config, weights: dict) -> None:
    """A missing weight or one of the wrong shape or dtype is an error naming the tensor and both shapes."""
    for name, shape in weight_shapes(cfg).items():
        if name not in weights:
            raise ValueError(f"weight '{name}' is missing (expected shape {shape})")
        w = weights[name]
        if tuple(w.shape) != shape:
            raise ValueError(f"weight '{name}' has shape {tuple(w.shape)}, but the model expects {shape}")
        if w.dtype != np.float32:
            raise ValueError(f"weight '{name}' has dtype {w.dtype}, but the model expects float32")


def build(cfg: Config):
    """The program for `cfg`: {entry name: captured workload}. Sizes are captured constants."""
    cfg.check()
    DM, H, KVH, HD, G, V = cfg.hidden, cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.group, cfg.vocab
    HALF, QKV, KVW = HD // 2, cfg.qkv, cfg.kv_width
    E, TOPK, F = cfg.experts, cfg.top_k, cfg.ffn
    BLK, MAXBLK, NSLOT = cfg.block, cfg.max_blocks, cfg.cache_tokens
    B, NT, KC, NR = cfg.slots, cfg.proj_tile, cfg.k_chunk, cfg.norm_rows
    PR = cfg.proj_rows or B
    FT, DT = cfg.ffn_tile, cfg.down_tile
    NK, NF = DM // KC, F // KC                 # K steps of a hidden-wide and an ffn-wide matmul
    DN = min(NT, DT)                           # output columns per matmul of a down-projection task
    NB, NN = B // NR, V // NT                  # row blocks and vocabulary tiles of the head
    MAXPOS = cfg.max_context
    INV_DM, EPS, SCALE = 1.0 / DM, cfg.eps, 1.0 / float(np.sqrt(HD))
    NBG = B * KVH                              # (request, KV head) pairs
    SROWS = NBG * MAXBLK * G                   # score rows: (request, KV head, block, query head)

    # ---------------------------------------------------------------- vector kernels (AIV on Ascend)
    @kernel
    def copy_row(src: In[Tensor[1, DM, f32]], dst: Out[Tensor[1, DM, f32]]):
        store(dst, load(src))

    @kernel
    def rms_norm(x: In[Tensor[NR, DM, f32]], g: In[Tensor[1, DM, f32]], y: Out[Tensor[NR, DM, f32]]):
        t = load(x)
        inv = rsqrt(adds(muls(rowsum(mul(t, t)), INV_DM), EPS))
        store(y, colexpand_mul(rowexpand_mul(t, inv), load(g)))

    @kernel
    def add_norm(x: In[Tensor[NR, DM, f32]], a: In[Tensor[NR, DM, f32]], g: In[Tensor[1, DM, f32]],
                 h: Out[Tensor[NR, DM, f32]], y: Out[Tensor[NR, DM, f32]]):
        t = add(load(x), load(a))               # the residual
        store(h, t)
        inv = rsqrt(adds(muls(rowsum(mul(t, t)), INV_DM), EPS))
        store(y, colexpand_mul(rowexpand_mul(t, inv), load(g)))

    @kernel
    def rope_kv(qkv: In[Tensor[1, QKV, f32]], cos: In[Tensor[1, HALF, f32]], sin: In[Tensor[1, HALF, f32]],
                q: Out[Tensor[1, DM, f32]], kt: InOut[Tensor[KVW, 1, f32]], v: InOut[Tensor[1, KVW, f32]]):
        c = load(cos)
        s = load(sin)
        for h in range(H):                       # rotate each query head's halves
            x1 = load(qkv[:, h * HD:h * HD + HALF])
            x2 = load(qkv[:, h * HD + HALF:(h + 1) * HD])
            store(q[:, h * HD:h * HD + HALF], sub(mul(x1, c), mul(x2, s)))
            store(q[:, h * HD + HALF:(h + 1) * HD], add(mul(x2, c), mul(x1, s)))
        for g in range(KVH):                     # each KV head's key, rotated, into its cache column
            k1 = load(qkv[:, DM + g * HD:DM + g * HD + HALF])
            k2 = load(qkv[:, DM + g * HD + HALF:DM + (g + 1) * HD])
            store(kt[g * HD:g * HD + HALF, :], transpose(sub(mul(k1, c), mul(k2, s))))
            store(kt[g * HD + HALF:(g + 1) * HD, :], transpose(add(mul(k2, c), mul(k1, s))))
        store(v, load(qkv[:, DM + KVW:DM + 2 * KVW]))

    @kernel
    def init_partials(m: Out[Tensor[1, MAXBLK, f32]], l: Out[Tensor[1, MAXBLK, f32]], o: Out[Tensor[MAXBLK, HD, f32]]):
        store(m, full((1, MAXBLK), NEG, f32))    # block slots the request does not use weigh nothing
        store(l, full((1, MAXBLK), 0.0, f32))
        for j in range(MAXBLK):                  # a row at a time: one small tile register
            store(o[j:j + 1, :], full((1, HD), 0.0, f32))

    @kernel
    def block_softmax(s: In[Tensor[G, BLK, f32]], mask: In[Tensor[1, BLK, f32]], p: Out[Tensor[G, BLK, f32]],
                      m_part: Out[Tensor[G, 1, f32]], l_part: Out[Tensor[G, 1, f32]]):
        t = colexpand_add(muls(load(s), SCALE), load(mask))
        m = rowmax(t)
        e = exp(rowexpand_sub(t, m))
        store(p, e)
        store(m_part, m)
        store(l_part, rowsum(e))

    @kernel
    def merge(o_part: In[Tensor[MAXBLK, HD, f32]], m_part: In[Tensor[1, MAXBLK, f32]],
              l_part: In[Tensor[1, MAXBLK, f32]], o: Out[Tensor[1, HD, f32]]):
        m = rowmax(load(m_part))                 # one query head: combine its block partials
        acc = full((1, HD), 0.0, f32)
        total = full((1, 1), 0.0, f32)
        for j in range(MAXBLK):
            w = exp(sub(load(m_part[:, j:j + 1]), m))
            total = add(total, mul(w, load(l_part[:, j:j + 1])))
            acc = add(acc, rowexpand_mul(load(o_part[j:j + 1, :]), w))
        store(o, rowexpand_div(acc, total))

    @kernel
    def swiglu(h1: In[Tensor[1, F, f32]], h3: In[Tensor[1, F, f32]], gate: In[Tensor[1, 1, f32]],
               y: Out[Tensor[1, F, f32]]):
        a = load(h1)
        store(y, rowexpand_mul(mul(mul(a, sigmoid(a)), load(h3)), load(gate)))   # gate * silu(h1) * h3

    @kernel
    def accumulate(h: In[Tensor[1, DM, f32]], y: InOut[Tensor[1, DM, f32]]):
        store(y, add(load(y), load(h)))

    # ---------------------------------------------------------------- cube kernels (AIC on Ascend)
    @kernel
    def proj(x: In[Tensor[PR, DM, f32]], w: In[Tensor[DM, NT, f32]], y: Out[Tensor[PR, NT, f32]]):
        acc = full((PR, NT), 0.0, f32)
        for k in range(NK):
            acc = matmul(load(x[:, k * KC:(k + 1) * KC]), load(w[k * KC:(k + 1) * KC, :]), acc)
        store(y, acc)

    @kernel
    def head_proj(x: In[Tensor[NR, DM, f32]], w: In[Tensor[DM, NT, f32]], y: Out[Tensor[NR, NT, f32]]):
        acc = full((NR, NT), 0.0, f32)
        for k in range(NK):
            acc = matmul(load(x[:, k * KC:(k + 1) * KC]), load(w[k * KC:(k + 1) * KC, :]), acc)
        store(y, acc)

    @kernel
    def router_proj(x: In[Tensor[PR, DM, f32]], w: In[Tensor[DM, E, f32]], y: Out[Tensor[PR, E, f32]]):
        acc = full((PR, E), 0.0, f32)
        for k in range(NK):
            acc = matmul(load(x[:, k * KC:(k + 1) * KC]), load(w[k * KC:(k + 1) * KC, :]), acc)
        store(y, acc)

    @kernel
    def scores(q: In[Tensor[1, G * HD, f32]], kt: In[Tensor[HD, BLK, f32]], s: Out[Tensor[G, BLK, f32]]):
        k = load(kt)
        for i in range(G):                       # the group's query heads share the block's keys
            store(s[i:i + 1, :], matmul(load(q[:, i * HD:(i + 1) * HD]), k))

    @kernel
    def weigh(p: In[Tensor[G, BLK, f32]], v: In[Tensor[BLK, HD, f32]], o: Out[Tensor[G, HD, f32]]):
        store(o, matmul(load(p), load(v)))

    @kernel
    def expert_up(x: In[Tensor[1, DM, f32]], w1: In[Tensor[DM, FT, f32]], w3: In[Tensor[DM, FT, f32]],
                  h1: Out[Tensor[1, FT, f32]], h3: Out[Tensor[1, FT, f32]]):
        a1 = full((1, FT), 0.0, f32)
        a3 = full((1, FT), 0.0, f32)
        for k in range(NK):
            xk = load(x[:, k * KC:(k + 1) * KC])
            a1 = matmul(xk, load(w1[k * KC:(k + 1) * KC, :]), a1)
            a3 = matmul(xk, load(w3[k * KC:(k + 1) * KC, :]), a3)
        store(h1, a1)
        store(h3, a3)

    @kernel
    def expert_down(g: In[Tensor[1, F, f32]], w2: In[Tensor[F, DT, f32]], y: Out[Tensor[1, DT, f32]]):
        for n in range(DT // DN):
            acc = full((1, DN), 0.0, f32)
            for k in range(NF):
                acc = matmul(load(g[:, k * KC:(k + 1) * KC]), load(w2[k * KC:(k + 1) * KC, n * DN:(n + 1) * DN]), acc)
            store(y[:, n * DN:(n + 1) * DN], acc)

    # ---------------------------------------------------------------- workloads (the entries)
    @workload
    def embed(emb: In[Tensor[V, DM, f32]], tok: In[Tensor[B, i32]], X: Out[Tensor[B, DM, f32]]):
        for b in P(B):
            copy_row[b](emb[tok[b]:tok[b] + 1, :], X[b:b + 1, :])

    @workload
    def attn_layer(X: In[Tensor[B, DM, f32]], attn_norm: In[Tensor[1, DM, f32]], wqkv: In[Tensor[DM, QKV, f32]],
                   wo: In[Tensor[DM, DM, f32]], ffn_norm: In[Tensor[1, DM, f32]], router: In[Tensor[DM, E, f32]],
                   cos: In[Tensor[MAXPOS, HALF, f32]], sin: In[Tensor[MAXPOS, HALF, f32]],
                   KT: InOut[Tensor[KVW, NSLOT, f32]], VC: InOut[Tensor[NSLOT, KVW, f32]],
                   pos: In[Tensor[B, i32]], slot: In[Tensor[B, i32]], nblk: In[Tensor[B, i32]],
                   table: In[Tensor[B * MAXBLK, i32]], mask: In[Tensor[B * MAXBLK, BLK, f32]],
                   H2: Out[Tensor[B, DM, f32]], XN2: Out[Tensor[B, DM, f32]], RL: Out[Tensor[B, E, f32]]):
        XN: Tensor[B, DM, f32]                   # intermediates, created by the runtime
        QKVb: Tensor[B, QKV, f32]
        Q: Tensor[B, DM, f32]
        S: Tensor[SROWS, BLK, f32]
        Pb: Tensor[SROWS, BLK, f32]
        O_part: Tensor[NBG * MAXBLK, G, HD, f32]   # (request, KV head, block) x query head of the group
        M_part: Tensor[NBG * G, MAXBLK, f32]
        L_part: Tensor[NBG * G, MAXBLK, f32]
        ATT: Tensor[B, DM, f32]
        AO: Tensor[B, DM, f32]
        for i in P(B // NR):
            rms_norm[i](X[i * NR:(i + 1) * NR, :], attn_norm, XN[i * NR:(i + 1) * NR, :])
        for m, n in P(B // PR, QKV // NT):
            proj[m, n](XN.tile(m, 0), wqkv.tile(0, n), QKVb.tile(m, n))
        for b in P(B):
            with P.when(nblk[b] > 0):            # active requests: rotate, append K/V, reset the partials
                rope_kv[b](QKVb[b:b + 1, :], cos[pos[b]:pos[b] + 1, :], sin[pos[b]:pos[b] + 1, :], Q[b:b + 1, :],
                           KT[:, slot[b]:slot[b] + 1], VC[slot[b]:slot[b] + 1, :])
                for g, i in P(KVH, G):               # per query head: its block partials reset
                    bg = b * KVH + g
                    init_partials[b, g, i](M_part[bg * G + i:bg * G + i + 1, :], L_part[bg * G + i:bg * G + i + 1, :],
                                           O_part[bg * MAXBLK:(bg + 1) * MAXBLK, i, :])
        for b, j in P(Ragged(B, nblk)):          # split-KV: one task chain per (request, KV block, KV head)
            blk = table[b * MAXBLK + j]          # the block table maps the request's block j to a cache block
            for g in P(KVH):
                bg = b * KVH + g
                r = (bg * MAXBLK + j) * G
                scores[b, j, g](Q[b:b + 1, g * G * HD:(g + 1) * G * HD], KT[g * HD:(g + 1) * HD, blk * BLK:(blk + 1) * BLK],
                                S[r:r + G, :])
                block_softmax[b, j, g](S[r:r + G, :], mask[b * MAXBLK + j:b * MAXBLK + j + 1, :], Pb[r:r + G, :],
                                       M_part[bg * G:(bg + 1) * G, j:j + 1], L_part[bg * G:(bg + 1) * G, j:j + 1])
                weigh[b, j, g](Pb[r:r + G, :], VC[blk * BLK:(blk + 1) * BLK, g * HD:(g + 1) * HD],
                               O_part[bg * MAXBLK + j, :, :])
        for b in P(B):
            with P.when(nblk[b] > 0):
                for g, i in P(KVH, G):               # per query head: merge its blocks into its output
                    bg = b * KVH + g
                    h = g * G + i
                    merge[b, g, i](O_part[bg * MAXBLK:(bg + 1) * MAXBLK, i, :], M_part[bg * G + i:bg * G + i + 1, :],
                                   L_part[bg * G + i:bg * G + i + 1, :], ATT[b:b + 1, h * HD:(h + 1) * HD])
        for m, n in P(B // PR, DM // NT):
            proj[m, n](ATT.tile(m, 0), wo.tile(0, n), AO.tile(m, n))
        for i in P(B // NR):
            add_norm[i](X[i * NR:(i + 1) * NR, :], AO[i * NR:(i + 1) * NR, :], ffn_norm, H2[i * NR:(i + 1) * NR, :],
                        XN2[i * NR:(i + 1) * NR, :])
        for m in P(B // PR):
            router_proj[m](XN2.tile(m, 0), router, RL.tile(m, 0))

    @workload
    def moe_layer(H2: In[Tensor[B, DM, f32]], XN2: In[Tensor[B, DM, f32]], w1: In[Tensor[E * DM, F, f32]],
                  w3: In[Tensor[E * DM, F, f32]], w2: In[Tensor[E * F, DM, f32]], gate: In[Tensor[B, E, f32]],
                  indptr: In[Tensor[B + 1, i32]], indices: In[Tensor[B * TOPK, i32]], Y: Out[Tensor[B, DM, f32]]):
        H1: Tensor[B * E, F, f32]
        H3: Tensor[B * E, F, f32]
        GS: Tensor[B * E, F, f32]
        YE: Tensor[B * E, DM, f32]
        routing = Sparse(B, indptr, indices)
        for t in P(B):
            copy_row[t](H2[t:t + 1, :], Y[t:t + 1, :])      # the residual; the experts add into it
        for t in P(B):
            for e in P.sel(routing[t]):                     # the experts token t was routed to
                r = t * E + e
                for f in P(F // FT):
                    expert_up[t, e, f](XN2[t:t + 1, :], w1[e * DM:(e + 1) * DM, f * FT:(f + 1) * FT],
                                       w3[e * DM:(e + 1) * DM, f * FT:(f + 1) * FT], H1[r:r + 1, f * FT:(f + 1) * FT],
                                       H3[r:r + 1, f * FT:(f + 1) * FT])
                swiglu[t, e](H1[r:r + 1, :], H3[r:r + 1, :], gate[t:t + 1, e:e + 1], GS[r:r + 1, :])
                for n in P(DM // DT):
                    expert_down[t, e, n](GS[r:r + 1, :], w2[e * F:(e + 1) * F, n * DT:(n + 1) * DT],
                                         YE[r:r + 1, n * DT:(n + 1) * DT])
                accumulate[t, e](YE[r:r + 1, :], Y[t:t + 1, :])

    @workload
    def lm_head(X: In[Tensor[B, DM, f32]], final_norm: In[Tensor[1, DM, f32]], w: In[Tensor[DM, V, f32]],
                LOGITS: Out[Tensor[B, V, f32]]):
        normed = Channel[Tensor[NR, DM, f32]](depth=2)      # a pipe: norm and projection stream row blocks
        with P.pipe():
            for k in P.seq(NB * NN):                        # row block k // NN, once per vocabulary tile
                send(normed, rms_norm[k](X.tile(k // NN, 0), final_norm))
            for k in P.seq(NB * NN):
                head_proj[k](recv(normed), w.tile(0, k % NN), LOGITS.tile(k // NN, k % NN))

    return {"embed": embed, "attn_layer": attn_layer, "moe_layer": moe_layer, "lm_head": lm_head}
