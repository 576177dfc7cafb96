#!/usr/bin/env python3
"""Collective Profiler's native harness: runs real collectives through torch.distributed and streams JSON lines.

Works on torch 1.13 to 2.x, NCCL on GPUs and gloo on CPUs, by feature detection rather than version pins. Ranks
are started by torchrun or by the extension's runner through env:// (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE,
LOCAL_RANK). For each size it times the fused all_reduce, reduce_scatter + all_gather where the backend has them,
and ring and tree all-reduces done step by step with send/recv, timing each rank's exchange, reduce and broadcast
phases. Rank 0 prints every line: {"type": "env" | "progress" | "result" | "span" | "error" | "done", ...}.
"""
import argparse
import json
import os
import platform
import sys
import time
import traceback


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def environment(torch, dist):
    """What the runner's environment check reports; needs no process group."""
    info = {"type": "env", "python": platform.python_version(), "executable": sys.executable,
            "torch": torch.__version__, "distributed": bool(dist.is_available())}
    cuda = torch.cuda.is_available()
    info["gpuCount"] = torch.cuda.device_count() if cuda else 0
    info["cudaVersion"] = getattr(torch.version, "cuda", None)
    info["gloo"] = bool(dist.is_available() and dist.is_gloo_available())
    info["nccl"] = bool(dist.is_available() and dist.is_nccl_available())
    nccl_version = None
    if info["nccl"] and cuda:
        try:
            v = torch.cuda.nccl.version()
            nccl_version = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
        except Exception:  # Older builds expose no version; leave it unknown.
            pass
    info["ncclVersion"] = nccl_version
    info["backend"] = "nccl" if info["nccl"] and info["gpuCount"] > 0 else "gloo"
    return info


class Clock:
    """Host nanoseconds on CPU; CUDA events (read back after a synchronize) on GPU."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device.type == "cuda"
        self.marks = []
        if self.cuda:
            torch.cuda.synchronize(device)
            self.base_event = torch.cuda.Event(enable_timing=True)
            self.base_event.record()
            torch.cuda.synchronize(device)
        self.base_ns = time.perf_counter_ns()

    def mark(self):
        if self.cuda:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter_ns()

    def us(self, mark):
        """Microseconds since this clock's base, on the host timeline."""
        if self.cuda:
            self.torch.cuda.synchronize()
            return self.base_event.elapsed_time(mark) * 1000.0 + self.base_ns / 1000.0
        return mark / 1000.0


def estimate_offsets(torch, dist, rank, world, device):
    """Each rank's clock minus rank 0's, in µs, from the best of several ping-pongs (the smallest round trip).

    Ranks on one host share CLOCK_MONOTONIC, so only ranks on other hosts are measured; the buffer lives on the backend's
    device because NCCL only moves GPU tensors. Rank 0 then shares the offsets so every rank could use them.
    """
    offsets = [0.0] * world
    # Ranks on rank 0's host read the same clock: their offset is exactly 0, and a ping-pong estimate would only add
    # an error of up to half a round trip (milliseconds on a loaded machine). Every rank learns every host, so all
    # of them skip the same peers and the ping-pongs stay paired.
    hosts = [None] * world
    dist.all_gather_object(hosts, platform.node())
    for peer in range(1, world):
        if hosts[peer] == hosts[0]:
            continue
        best = None
        for _ in range(8):
            buf = torch.zeros(1, dtype=torch.float64, device=device)
            if rank == 0:
                t0 = time.perf_counter_ns() / 1000.0
                dist.send(buf, dst=peer)
                dist.recv(buf, src=peer)
                t1 = time.perf_counter_ns() / 1000.0
                if best is None or t1 - t0 < best[0]:
                    best = (t1 - t0, buf.item() - (t0 + t1) / 2.0)
            elif rank == peer:
                dist.recv(buf, src=0)
                buf.fill_(time.perf_counter_ns() / 1000.0)
                dist.send(buf, dst=0)
        if rank == 0:
            offsets[peer] = best[1]
    shared = torch.tensor(offsets, dtype=torch.float64, device=device)
    dist.broadcast(shared, src=0)
    return [float(x) for x in shared.cpu().tolist()]


def exchange(dist, send_buf, dst, recv_buf, src):
    """Sends and receives at once so neighbours in a ring never wait on each other."""
    requests = [dist.isend(send_buf, dst=dst), dist.irecv(recv_buf, src=src)]
    for request in requests:
        request.wait()


def ring_allreduce(torch, dist, data, rank, world, clock, spans):
    """Ring all-reduce by hand: reduce-scatter steps (exchange + reduce), then all-gather steps (broadcast)."""
    bounds = [len(data) * i // world for i in range(world + 1)]
    chunk = lambda i: data[bounds[i % world]:bounds[i % world + 1]]
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    for step in range(world - 1):
        send_c, recv_c = chunk(rank - step), chunk(rank - step - 1)
        tmp = torch.empty_like(recv_c)
        a = clock.mark(); exchange(dist, send_c.contiguous(), nxt, tmp, prv); b = clock.mark()
        recv_c.add_(tmp); c = clock.mark()
        spans.append(("exchange", step, a, b, send_c.numel(), nxt, prv))
        spans.append(("reduce", step, b, c, recv_c.numel(), rank, rank))
    for step in range(world - 1):
        send_c, recv_c = chunk(rank + 1 - step), chunk(rank - step)
        tmp = torch.empty_like(recv_c)
        a = clock.mark(); exchange(dist, send_c.contiguous(), nxt, tmp, prv); recv_c.copy_(tmp); b = clock.mark()
        spans.append(("broadcast", step, a, b, send_c.numel(), nxt, prv))


def tree_allreduce(torch, dist, data, rank, world, clock, spans):
    """Binary-tree all-reduce by hand: children's partial sums flow up (exchange + reduce), the total flows down."""
    parent, children = (rank - 1) // 2, [c for c in (2 * rank + 1, 2 * rank + 2) if c < world]
    depth = lambda r: 0 if r == 0 else 1 + depth((r - 1) // 2)
    for child in children:
        tmp = torch.empty_like(data)
        a = clock.mark(); dist.recv(tmp, src=child); b = clock.mark(); data.add_(tmp); c = clock.mark()
        spans.append(("exchange", depth(child), a, b, data.numel(), child, child))
        spans.append(("reduce", depth(child), b, c, data.numel(), rank, rank))
    if rank != 0:
        a = clock.mark(); dist.send(data, dst=parent); dist.recv(data, src=parent); b = clock.mark()
        spans.append(("broadcast", depth(rank), a, b, data.numel(), parent, parent))
    for child in children:
        a = clock.mark(); dist.send(data, dst=child); b = clock.mark()
        spans.append(("broadcast", depth(child), a, b, data.numel(), child, child))


def pattern(torch, n, rank, device):
    """Small integers, exact in float32 after summing, different on every rank."""
    return ((torch.arange(n, dtype=torch.float32) % 7) + 1).mul_(rank + 1).to(device)


def timed(torch, dist, fn, device, warmup, iters):
    """Median wall time of fn in µs, synchronising the device and the ranks around every call."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        dist.barrier()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter_ns()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append((time.perf_counter_ns() - t0) / 1000.0)
    times.sort()
    return times[len(times) // 2]


def row(kind, label, nbytes, time_us, world, **extra):
    algbw = nbytes / (time_us * 1e3) if time_us > 0 else 0.0
    return dict(type="result", kind=kind, label=label, bytes=nbytes, timeUs=time_us, algbwGBps=algbw,
                busbwGBps=algbw * 2 * (world - 1) / world if world > 1 else 0.0, **extra)


def measure_size(torch, dist, args, label, nbytes, rank, world, device, offsets, features):
    n = max(world, nbytes // 4)
    nbytes = n * 4
    expected_sum = pattern(torch, n, 0, device) * (world * (world + 1) // 2)
    out = []
    # Fused all_reduce, the library's own algorithm; the result is checked for sum and average.
    data = pattern(torch, n, rank, device)
    dist.all_reduce(data)
    sum_ok = bool(torch.equal(data, expected_sum))
    data = pattern(torch, n, rank, device)
    if features["avg"]:
        dist.all_reduce(data, op=dist.ReduceOp.AVG)
        avg_method = "ReduceOp.AVG"
    else:
        dist.all_reduce(data)
        data.div_(world)
        avg_method = "sum/world"
    avg_ok = bool(torch.allclose(data, expected_sum / world))
    buf = pattern(torch, n, rank, device)
    fused_us = timed(torch, dist, lambda: dist.all_reduce(buf), device, args.warmup, args.iters)
    out.append(row("fused", label, nbytes, fused_us, world, verified={"sum": sum_ok, "avg": avg_ok, "avgMethod": avg_method}))
    # The reference: reduce_scatter then all_gather, where the backend has both.
    if features["reduceScatter"]:
        per = n // world
        inp, part, full = pattern(torch, per * world, rank, device), torch.empty(per, device=device), torch.empty(per * world, device=device)
        def rs_ag():
            if hasattr(dist, "reduce_scatter_tensor"):
                dist.reduce_scatter_tensor(part, inp)
                dist.all_gather_into_tensor(full, part)
            else:
                dist.reduce_scatter(part, list(inp.chunk(world)))
                dist.all_gather(list(full.chunk(world)), part)
        rs_us = timed(torch, dist, rs_ag, device, args.warmup, args.iters)
        out.append(row("reduce_scatter+all_gather", label, nbytes, rs_us, world))
    else:
        out.append(dict(type="result", kind="reduce_scatter+all_gather", label=label, bytes=nbytes, unsupported=features["reduceScatterWhy"]))
    spans = []
    for algorithm in args.algorithms:
        step_fn = ring_allreduce if algorithm == "ring" else tree_allreduce
        step_fn(torch, dist, pattern(torch, n, rank, device), rank, world, Clock(torch, device), [])  # warm-up
        data, local = pattern(torch, n, rank, device), []
        dist.barrier()
        clock = Clock(torch, device)
        t0 = clock.mark()
        step_fn(torch, dist, data, rank, world, clock, local)
        t1 = clock.mark()
        ok = bool(torch.equal(data, expected_sum))
        start_us, end_us = clock.us(t0), clock.us(t1)
        for phase, step, a, b, elems, to, frm in local:
            spans.append(dict(type="span", algorithm=algorithm, label=label, messageBytes=nbytes, bytes=elems * 4, rank=rank, phase=phase, step=step,
                              startUs=clock.us(a), endUs=clock.us(b), sendTo=to, recvFrom=frm))
        out.append(row(algorithm, label, nbytes, end_us - start_us, world, verified={"sum": ok}, rank=rank))
    gathered = [None] * world
    dist.all_gather_object(gathered, {"spans": spans, "rows": [r for r in out if r.get("rank") == rank]})
    if rank == 0:
        for r in out:
            if r["kind"] in ("fused", "reduce_scatter+all_gather"):
                emit(r)
        for algorithm in args.algorithms:
            per_rank = [r for g in gathered for r in g["rows"] if r["kind"] == algorithm]
            slowest = max(per_rank, key=lambda r: r["timeUs"])
            emit(dict(slowest, verified={"sum": all(r["verified"]["sum"] for r in per_rank)}, rank=None))
        for g in gathered:
            for s in g["spans"]:
                s["startUs"] -= offsets[s["rank"]]
                s["endUs"] -= offsets[s["rank"]]
                emit(s)


def detect_features(torch, dist, backend, device, world):
    features = {"avg": hasattr(dist.ReduceOp, "AVG") and backend == "nccl", "reduceScatter": True, "reduceScatterWhy": None,
                "allGatherIntoTensor": hasattr(dist, "all_gather_into_tensor"), "reduceScatterTensor": hasattr(dist, "reduce_scatter_tensor")}
    try:
        out = torch.empty(1, device=device)
        dist.reduce_scatter(out, [torch.ones(1, device=device) for _ in range(world)])
    except (RuntimeError, NotImplementedError, AttributeError) as error:
        features["reduceScatter"], features["reduceScatterWhy"] = False, str(error).splitlines()[0]
    return features


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env-check", action="store_true", help="print the environment as one JSON line and exit")
    parser.add_argument("--sizes", default="1048576", help="comma-separated message sizes in bytes")
    parser.add_argument("--buckets", default="", help="comma-separated gradient bucket sizes in bytes")
    parser.add_argument("--algorithms", default="ring,tree")
    parser.add_argument("--backend", default="auto", choices=["auto", "gloo", "nccl"])
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--timeout-s", type=float, default=300.0)
    args = parser.parse_args()
    args.algorithms = [a for a in args.algorithms.split(",") if a]
    try:
        import torch
        import torch.distributed as dist
    except ImportError as error:
        emit({"type": "error", "kind": "no-torch", "message": "torch is not importable from %s: %s" % (sys.executable, error)})
        return 3
    env = environment(torch, dist)
    if args.env_check:
        emit(env)
        return 0
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    backend = env["backend"] if args.backend == "auto" else args.backend
    device = torch.device("cuda", local_rank) if backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    try:
        import datetime
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=args.timeout_s))
        offsets = estimate_offsets(torch, dist, rank, world, device)
        features = detect_features(torch, dist, backend, device, world)
        jobs = [("size", int(s)) for s in args.sizes.split(",") if s] + [("bucket", int(s)) for s in args.buckets.split(",") if s]
        if rank == 0:
            emit(dict(env, type="env", backend=backend, worldSize=world, features=features, clockOffsetsUs=offsets))
        for done, (label, nbytes) in enumerate(jobs):
            if rank == 0:
                emit({"type": "progress", "done": done, "total": len(jobs), "label": label, "bytes": nbytes})
            measure_size(torch, dist, args, label, nbytes, rank, world, device, offsets, features)
        if rank == 0:
            emit({"type": "progress", "done": len(jobs), "total": len(jobs)})
            emit({"type": "done"})
        dist.barrier()
        dist.destroy_process_group()
        return 0
    except Exception as error:
        text = "%s: %s" % (type(error).__name__, error)
        kind = "nccl" if "NCCL" in text or "nccl" in text else "cuda" if "CUDA" in text else "runtime"
        emit({"type": "error", "kind": kind, "rank": rank, "message": text, "traceback": traceback.format_exc()[-2000:]})
        return 1


if __name__ == "__main__":
    sys.exit(main())
