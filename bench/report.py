#!/usr/bin/env python3
"""Turns a JMH JSON result of this module into the Markdown tables of docs/performance.md and bench/HISTORY.md,
among them the peer table: Trellis beside LangGraph4j, LangChain4j agentic and Koog on every workload, with the
fastest peer's time over Trellis's (all from the one JSON result given).

usage: python3 bench/report.py [bench/target/quick.json]
"""
import json
import sys

# workload class -> (label, node steps per run)
WORKLOADS = [
    ("OneNodeBench", "1-node graph", 1),
    ("ChainBench", "chain of 100", 100),
    ("FanOutBench", "fan-out 64 + join", 66),
    ("LoopBench", "loop of 1000", 1000),
    ("StateGrowthBench", "chain of 100, state growing to 40 KB", 100),
]
# workload 6 (FacadeBench) and checkpointing (CheckpointBench) have tables of their own, see facade() and checkpoints()


def load(path):
    rows = {}
    for r in json.load(open(path)):
        name = r["benchmark"].split(".")[-2] + "." + r["benchmark"].split(".")[-1]
        for param, value in sorted(r.get("params", {}).items()):
            name += f"[{param}={value}]"
        score = r["primaryMetric"]["score"]
        err = r["primaryMetric"].get("scoreError")
        alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
        rows[name] = (score, err, alloc)
    return rows


def fmt_us(v):
    if v is None:
        return "—"
    return f"{v:,.2f}" if v < 100 else f"{v:,.0f}"


def fmt_b(v):
    return "—" if v is None else f"{v:,.0f}"


def main():
    rows = load(sys.argv[1] if len(sys.argv) > 1 else "bench/target/quick.json")
    base = rows.get("BaselineBench.emptyRunBlocking")
    b_us = base[0] if base else 0.0
    b_alloc = base[2] if base and base[2] is not None else 0.0
    print(f"Empty `runBlocking` baseline: {fmt_us(b_us)} µs/op, {fmt_b(b_alloc)} B/op "
          "(included in every Trellis figure below; the `− rb` columns subtract it).\n")
    print("| workload | variant | µs/op | ± | B/op | µs/op − rb | per node µs (− rb) | per node B (− rb) | Trellis / LangGraph4j |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for cls, label, steps in WORKLOADS:
        lg = rows.get(f"{cls}.lg4jInvoke")
        variants = [
            ("Trellis `invoke`", "trellisInvoke", True),
            ("Trellis `run` + every event", "trellisRunEvents", True),
            ("LangGraph4j `invoke`", "lg4jInvoke", False),
            ("LangGraph4j `invoke`, parallel executor", "lg4jInvokeParallel", False),
        ]
        for title, method, trellis in variants:
            r = rows.get(f"{cls}.{method}")
            if r is None:
                continue
            score, err, alloc = r
            net = score - b_us if trellis else score
            net_alloc = (alloc - b_alloc) if (trellis and alloc is not None) else alloc
            ratio = ""
            if trellis and lg is not None:
                ratio = f"{score / lg[0]:.3f} (1/{lg[0] / score:,.0f})"
                par = rows.get(f"{cls}.lg4jInvokeParallel")
                if par is not None:
                    ratio += f"; vs parallel {score / par[0]:.3f} (1/{par[0] / score:,.0f})"
            print(f"| {label} | {title} | {fmt_us(score)} | {fmt_us(err)} | {fmt_b(alloc)} | "
                  f"{fmt_us(net) if trellis else '—'} | {net / steps:.3f} | "
                  f"{fmt_b(None if net_alloc is None else net_alloc / steps)} | {ratio} |")
    peers(rows)
    facade(rows)
    java_facade(rows)
    checkpoints(rows)


# workload -> (Trellis benchmark, {peer: [(variant label, benchmark)]}); the fastest variant of every peer counts
PEERS = ["LangGraph4j", "LangChain4j agentic", "Koog"]
PEER_WORKLOADS = [
    ("1-node graph", "OneNodeBench.trellisInvoke", {
        "LangGraph4j": [("", "OneNodeBench.lg4jInvoke")],
        "LangChain4j agentic": [("", "OneNodeBench.agenticInvoke")],
        "Koog": [("", "OneNodeBench.koogRun")]}),
    ("chain of 100", "ChainBench.trellisInvoke", {
        "LangGraph4j": [("", "ChainBench.lg4jInvoke")],
        "LangChain4j agentic": [("", "ChainBench.agenticInvoke")],
        "Koog": [("", "ChainBench.koogRun")]}),
    ("fan-out 64 + join, truly parallel", "FanOutBench.trellisInvoke", {
        "LangGraph4j": [("parallel executor", "FanOutBench.lg4jInvokeParallel")],
        "LangChain4j agentic": [("default executor", "FanOutBench.agenticInvoke")],
        "Koog": [("Default", "FanOutBench.koogRun"), ("Unconfined", "FanOutBench.koogRunUnconfined")]}),
    ("loop of 1000", "LoopBench.trellisInvoke", {
        "LangGraph4j": [("", "LoopBench.lg4jInvoke")],
        "LangChain4j agentic": [("", "LoopBench.agenticInvoke")],
        "Koog": [("", "LoopBench.koogRun")]}),
    ("chain of 100, state growing to 40 KB", "StateGrowthBench.trellisInvoke", {
        "LangGraph4j": [("", "StateGrowthBench.lg4jInvoke")],
        "LangChain4j agentic": [("", "StateGrowthBench.agenticInvoke")],
        "Koog": [("", "StateGrowthBench.koogRun")]}),
    ("10 subgraphs of 10", "CompositionBench.subgraphChain", {
        "LangChain4j agentic": [("", "CompositionBench.agenticSubgraphChain")],
        "Koog": [("", "CompositionBench.koogSubgraphChain")]}),
    ("map over 1,000 items", "CompositionBench.map", {
        "LangChain4j agentic": [("default executor", "CompositionBench.agenticMap"),
                                ("caller's thread", "CompositionBench.agenticMapCallerThread")]}),
]


def peers(rows):
    """Trellis beside every peer per workload (µs/op and B/op), and Trellis against the fastest peer, from one run."""
    if not any(rows.get(name) for _, _, by_peer in PEER_WORKLOADS for vs in by_peer.values() for _, name in vs):
        return
    print("\n| workload | Trellis (Kotlin `invoke`) | " + " | ".join(PEERS) + " | fastest peer | fastest peer ÷ Trellis (time) |")
    print("|---|---:|" + "---:|" * len(PEERS) + "---|---:|")
    for label, trellis_name, by_peer in PEER_WORKLOADS:
        t = rows.get(trellis_name)
        cells, fastest = [], None
        for peer in PEERS:
            parts = []
            for variant, name in by_peer.get(peer, []):
                r = rows.get(name)
                if r is None:
                    continue
                parts.append(f"{fmt_us(r[0])} µs, {fmt_b(r[2])} B" + (f" ({variant})" if variant else ""))
                who = peer + (f" ({variant})" if variant else "")
                if fastest is None or r[0] < fastest[1]:
                    fastest = (who, r[0])
            cells.append("; ".join(parts) if parts else "—")
        t_cell = "—" if t is None else f"{fmt_us(t[0])} µs, {fmt_b(t[2])} B"
        best = "—" if fastest is None else f"{fastest[0]} {fmt_us(fastest[1])} µs"
        ratio = "—" if (fastest is None or t is None) else f"{fastest[1] / t[0]:.2f}×"
        print(f"| {label} | {t_cell} | " + " | ".join(cells) + f" | {best} | {ratio} |")


def facade(rows):
    """Workload 6: the Java facade against plain `invoke` on the same chain."""
    f = rows.get("FacadeBench.facadeInvokeAsync")
    plain = rows.get("ChainBench.trellisInvoke")
    if f is None or plain is None:
        return
    print("\n| workload 6: chain of 100 | µs/op | ± | B/op | per node µs | per node B | ÷ plain `invoke` (time) | + per run |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for title, (score, err, alloc) in [("`invoke` in `runBlocking` (ChainBench)", plain),
                                       ("Java facade `invokeAsync(input).join()`", f)]:
        print(f"| {title} | {fmt_us(score)} | {fmt_us(err)} | {fmt_b(alloc)} | {score / 100:.3f} | "
              f"{fmt_b(None if alloc is None else alloc / 100)} | {score / plain[0]:.2f}× | "
              f"{fmt_us(score - plain[0])} µs, {fmt_b((alloc or 0) - (plain[2] or 0))} B |")


def java_facade(rows):
    """Graphs built in Java (inline `node`s) and the blocking `invoke`, against the Kotlin rows of the same run."""
    kotlin_chain, kotlin_one = rows.get("ChainBench.trellisInvoke"), rows.get("OneNodeBench.trellisInvoke")
    lines = [
        ("chain of 100, Kotlin, `invoke` in `runBlocking` (ChainBench)", "ChainBench.trellisInvoke", 100, kotlin_chain),
        ("chain of 100, Kotlin-built, facade `invoke` (FacadeBench)", "FacadeBench.facadeInvoke", 100, kotlin_chain),
        ("chain of 100, Java `node`s, `invoke`", "JavaFacadeBench.javaChainInvoke", 100, kotlin_chain),
        ("chain of 100, Java `node`s, `invokeAsync(...).join()`", "JavaFacadeBench.javaChainInvokeAsync", 100, kotlin_chain),
        ("1 node, Kotlin, `invoke` in `runBlocking` (OneNodeBench)", "OneNodeBench.trellisInvoke", 1, kotlin_one),
        ("1 node, Java `node`, `invoke`", "JavaFacadeBench.javaOneNodeInvoke", 1, kotlin_one),
    ]
    if not any(rows.get(name) for _, name, _, _ in lines):
        return
    print("\n| Java facade | µs/op | ± | B/op | per node µs | per node B | ÷ Kotlin (time) | ÷ Kotlin (B) | − Kotlin µs |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, name, steps, ref in lines:
        r = rows.get(name)
        if r is None:
            continue
        score, err, alloc = r
        vs = vs_b = delta = "—"
        if ref is not None:
            vs = f"{score / ref[0]:.2f}×"
            delta = f"{score - ref[0]:+,.2f}"
            if alloc is not None and ref[2]:
                vs_b = f"{alloc / ref[2]:.2f}×"
        print(f"| {label} | {fmt_us(score)} | {fmt_us(err)} | {fmt_b(alloc)} | {score / steps:.3f} | "
              f"{fmt_b(None if alloc is None else alloc / steps)} | {vs} | {vs_b} | {delta} |")
    sleeps = sorted((k, v) for k, v in rows.items() if k.startswith("JavaSleepBench.sleepers"))
    if sleeps:
        print("\n| parallel Java `blockingNode`s, each `Thread.sleep(100)` | ms/op (wall per run) | ± | B/op |")
        print("|---|---:|---:|---:|")
        for name, (score, err, alloc) in sorted(sleeps, key=lambda kv: int(kv[0].split("=")[1].rstrip("]"))):
            width = name.split("=")[1].rstrip("]")
            print(f"| {width} | {score:,.1f} | {fmt_us(err)} | {fmt_b(alloc)} |")


def checkpoints(rows):
    """Checkpointing: added cost per node step against the same chain without checkpointing."""
    pairs = [
        ("chain of 100, `InMemoryCheckpointStore`", "CheckpointBench.chainInMemory", "ChainBench.trellisInvoke", 100),
        ("chain of 20, `SqliteCheckpointStore`", "CheckpointBench.chain20Sqlite", "CheckpointBench.chain20Plain", 20),
    ]
    if not any(rows.get(c) for _, c, _, _ in pairs):
        return
    print("\n| checkpointing (EVERY_STEP) | µs/op | ± | B/op | plain µs/op | plain B/op | added µs per step | added B per step |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, ck, base, steps in pairs:
        c, b = rows.get(ck), rows.get(base)
        if c is None or b is None:
            continue
        print(f"| {label} | {fmt_us(c[0])} | {fmt_us(c[1])} | {fmt_b(c[2])} | {fmt_us(b[0])} | {fmt_b(b[2])} | "
              f"{(c[0] - b[0]) / steps:,.2f} | {fmt_b(((c[2] or 0) - (b[2] or 0)) / steps)} |")


if __name__ == "__main__":
    main()
