#!/usr/bin/env python3
"""Writes traces/data/chat-sessions-synthetic.csv: a synthetic multi-turn chat trace in
servesim's CSV with session_id and think_s columns (docs/workloads.md, "Sessions and
dependencies"). Seeded, so the file is the same on every run:

    python3 scripts/make_session_trace.py > traces/data/chat-sessions-synthetic.csv

Sessions start as a Poisson process (1 a second); each has 1 + a geometric number of further
turns (mean 4 turns); a turn's new prompt tokens are lognormal (median 120), its reply lognormal
(median 220), capped at 2,048; users think for an exponential time (mean 15 s) after a reply.
Later turns' arrival_s is 0: they arrive when the previous reply is out plus think_s.
"""
import math
import random

rng = random.Random(20261130)
print("arrival_s,prompt_tokens,output_tokens,session_id,think_s")
t = 0.0
for s in range(600):
    t += rng.expovariate(1.0)
    turns = 1
    while rng.random() < 0.75:
        turns += 1
    for k in range(turns):
        prompt = min(2048, max(1, round(math.exp(rng.gauss(math.log(120), 0.9)))))
        output = min(2048, max(1, round(math.exp(rng.gauss(math.log(220), 0.7)))))
        if k == 0:
            print(f"{t:.3f},{prompt},{output},chat{s},")
        else:
            print(f"0,{prompt},{output},chat{s},{rng.expovariate(1 / 15.0):.3f}")
