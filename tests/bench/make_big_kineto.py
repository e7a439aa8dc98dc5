#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a Kineto Chrome trace of about SIZE_MB megabytes (default 500) shaped like
torch.profiler's output with profile_memory=True and with_modules=True: per step,
nn.Module python_function spans, cpu_ops with [memory] instant events, CUDA runtime calls
and kernels, autograd backward functions. Written as text, streaming.

    python3 tests/bench/make_big_kineto.py 500 /tmp/big.pt.trace.json
"""

import random
import sys


def main():
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    out = sys.argv[2] if len(sys.argv) > 2 else "big.pt.trace.json"
    rng = random.Random(11)
    limit = size_mb * 1_000_000
    pid, tid, bwd_tid = 12345, 12345, 12388
    ts = 100.0
    allocated, reserved = 500 << 20, 1 << 30
    written = 0
    with open(out, "w") as f:
        head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": "NVIDIA H100 80GB HBM3", '
                '"totalGlobalMem": 85045608448, "computeMajor": 9, "computeMinor": 0}\n  ],\n'
                '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},\n  "traceEvents": [\n')
        f.write(head)
        first = True
        step = 0
        external = 0
        addr_live = []
        while written < limit:
            parts = []
            step_begin = ts
            for block in range(24):
                mod_begin = ts
                for op in range(6):
                    external += 1
                    b = ts
                    name = rng.choice(["aten::linear", "aten::addmm", "aten::gelu", "aten::layer_norm", "aten::softmax"])
                    ts += rng.uniform(5, 40)
                    size = 512 * rng.randint(1, 8192)
                    addr = 0x7F0000000000 + rng.randrange(1 << 30) * 512
                    allocated += size
                    addr_live.append((addr, size))
                    parts.append('{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": %d, "tid": %d, '
                                 '"ts": %.3f, "args": {"Total Reserved": %d, "Total Allocated": %d, "Bytes": %d, "Addr": %d, '
                                 '"Device Id": 0, "Device Type": 1, "Ev Idx": %d}}' % (pid, tid, ts, reserved, allocated, size, addr, external))
                    ts += rng.uniform(1, 5)
                    parts.append('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d, "ts": %.3f, "dur": %.3f, '
                                 '"args": {"External id": %d, "Record function id": 0, "Ev Idx": %d, "Sequence number": %d, '
                                 '"Fwd thread id": 0, "Input Dims": [[8, 1024, 4096], [4096, 4096]], '
                                 '"Input type": ["c10::BFloat16", "c10::BFloat16"]}}' % (name, pid, tid, b, ts - b, external, external, external))
                    parts.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, "tid": %d, "ts": %.3f, '
                                 '"dur": 4.120, "args": {"External id": %d, "cbid": 211, "correlation": %d}}' % (pid, tid, ts, external, external * 2))
                    parts.append('{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", '
                                 '"pid": 0, "tid": 7, "ts": %.3f, "dur": %.3f, "args": {"External id": %d, "queued": 0, "device": 0, '
                                 '"context": 1, "stream": 7, "correlation": %d, "registers per thread": 168, "shared memory": 213248, '
                                 '"blocks per SM": 1.0, "warps per SM": 12.0, "grid": [132, 1, 1], "block": [384, 1, 1], '
                                 '"est. achieved occupancy %%": 19}}' % (ts + 3, rng.uniform(10, 200), external, external * 2))
                parts.append('{"ph": "X", "cat": "python_function", "name": "nn.Module: Block_%d", "pid": %d, "tid": %d, "ts": %.3f, '
                             '"dur": %.3f, "args": {"Python parent id": 1, "Python id": %d, "Python module id": %d, "Ev Idx": %d}}'
                             % (block, pid, tid, mod_begin, ts - mod_begin, 100 + block, block, external))
                ts += 1
            for block in reversed(range(24)):
                b = ts
                for _ in range(6):
                    if addr_live:
                        addr, size = addr_live.pop()
                        allocated -= size
                        parts.append('{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": %d, "tid": %d, '
                                     '"ts": %.3f, "args": {"Total Reserved": %d, "Total Allocated": %d, "Bytes": %d, "Addr": %d, '
                                     '"Device Id": 0, "Device Type": 1, "Ev Idx": %d}}' % (pid, bwd_tid, ts, reserved, allocated, -size, addr, external))
                    ts += rng.uniform(5, 30)
                parts.append('{"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", '
                             '"pid": %d, "tid": %d, "ts": %.3f, "dur": %.3f, "args": {"Ev Idx": %d}}' % (pid, bwd_tid, b, ts - b, external))
            parts.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": %d, "tid": %d, "ts": %.3f, '
                         '"dur": %.3f, "args": {"External id": %d}}' % (step, pid, tid, step_begin, ts - step_begin, external))
            step += 1
            text = (",\n  " if not first else "  ") + ",\n  ".join(parts)
            first = False
            f.write(text)
            written += len(text)
        f.write('\n  ],\n  "traceName": "big.pt.trace.json",\n  "displayTimeUnit": "ms",\n'
                '  "baseTimeNanoseconds": 1699992000000000000\n}\n')


if __name__ == "__main__":
    main()
