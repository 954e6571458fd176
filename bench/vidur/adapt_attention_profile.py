"""Vidur's A100 attention profile for Llama-2-7B (data/profiling/compute/a100/meta-llama/
Llama-2-7b-hf/attention.csv) is a Git LFS object that no snapshot here holds. The closest real
A100 attention profile available is Vidur's earlier data/profiling/a100/attention.csv (commit
e2d00e9), measured for Llama-2-70B at tensor parallel 2: per GPU 32 query heads of dim 128
(the same as Llama-2-7B at TP1), but 4 KV heads (GQA) where Llama-2-7B has 32.
This script keeps every measured row and timing as is and only relabels the model-shape
columns the predictor filters on (n_embd 8192->4096, n_q_head 64->32, n_kv_head 8->32,
num_tensor_parallel_workers 2->1). Usage: adapt_attention_profile.py IN OUT"""
import sys
import pandas as pd

df = pd.read_csv(sys.argv[1])
sel = (df.n_embd == 8192) & (df.n_q_head == 64) & (df.n_kv_head == 8) & (df.num_tensor_parallel_workers == 2)
assert sel.all(), "unexpected shapes in the early profile"
df["n_embd"], df["n_q_head"], df["n_kv_head"], df["num_tensor_parallel_workers"] = 4096, 32, 32, 1
assert ((df.prefill_chunk_size == 0) == (df.is_prefill == False)).all()
df.to_csv(sys.argv[2], index=False)
print(f"{len(df)} rows -> {sys.argv[2]}", file=sys.stderr)
