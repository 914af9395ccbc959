#!/usr/bin/env python3
"""Checks the transformer time model's closed-form pipeline bubble against an
event simulation of Megatron-LM's schedules, for stages of unequal cost.

The model (src/models/llm_time.cpp) takes an iteration's pipeline part as
    m * t_slowest + bubble,  bubble = pp * t_mean - t_slowest      (1F1B, vpp = 1)
                             bubble = (pp - 1) / vpp * t_mean      (interleaved)
where t is a stage's forward and backward of one micro-batch. Here each
virtual stage (chunk) runs in the order Megatron-LM's
forward_backward_pipelining_with[out]_interleaving issues it (warm-up
forwards, one forward and one backward in turn, the backwards drained), and
starts when its device is free and its inputs are done: the forward of the
chunk before, or for a backward the chunk after and its own forward.
Transfers between stages are left out (the model adds them to the stages).

Chunk times are in units of one layer's forward (backward twice that); the
last chunk adds the output layer (logits), the first the embedding.
    python3 scripts/dev/pipeline-schedule-check.py
prints, per case, the simulated and the closed-form time and their ratio.
"""


def simulate(pp, vpp, m, fwd, bwd):
    total = m * vpp
    order = []
    for rank in range(pp):
        if vpp == 1:
            warm = min(pp - rank - 1, m)
        else:
            warm = min((pp - rank - 1) * 2 + (vpp - 1) * pp, total)

        def op(kind, k):
            chunk = (k // pp) % vpp
            if kind == "B":
                chunk = vpp - 1 - chunk
            micro_batch = (k // (pp * vpp)) * pp + k % pp
            return (kind, micro_batch, chunk * pp + rank)

        seq = [op("F", k) for k in range(warm)]
        f, b = warm, 0
        while f < total:
            seq += [op("F", f), op("B", b)]
            f, b = f + 1, b + 1
        seq += [op("B", k) for k in range(b, total)]
        order.append(seq)
    last = pp * vpp - 1
    done, pos, free = {}, [0] * pp, [0.0] * pp
    moved = True
    while moved:
        moved = False
        for r in range(pp):
            while pos[r] < len(order[r]):
                kind, mb, g = order[r][pos[r]]
                if kind == "F":
                    deps = [("F", mb, g - 1)] if g > 0 else []
                else:
                    deps = [("F", mb, g)] + ([("B", mb, g + 1)] if g < last else [])
                if not all(d in done for d in deps):
                    break
                start = max([free[r]] + [done[d] for d in deps])
                free[r] = start + (fwd[g] if kind == "F" else bwd[g])
                done[(kind, mb, g)] = free[r]
                pos[r] += 1
                moved = True
    if any(pos[r] < len(order[r]) for r in range(pp)):
        raise SystemExit("the schedule deadlocked: interleaving needs m to be a multiple of pp")
    return max(free)


def simulate_greedy(pp, vpp, m, fwd, bwd):
    """Fewer micro-batches than stages, where Megatron-LM's interleaved order
    does not exist: each device runs, whenever it is free, the ready chunk
    that can start first (a backward before a forward on a tie)."""
    last = pp * vpp - 1
    done, free = {}, [0.0] * pp
    todo = {(k, mb, g) for mb in range(m) for g in range(pp * vpp) for k in "FB"}
    while todo:
        best = None
        for kind, mb, g in todo:
            deps = ([("F", mb, g - 1)] if g > 0 else []) if kind == "F" else \
                [("F", mb, g)] + ([("B", mb, g + 1)] if g < last else [])
            if not all(d in done for d in deps):
                continue
            r = g % pp
            start = max([free[r]] + [done[d] for d in deps])
            key = (start, kind != "B", mb)
            if best is None or key < best[0]:
                best = (key, (kind, mb, g), start, r)
        _, op, start, r = best
        free[r] = start + (fwd[op[2]] if op[0] == "F" else bwd[op[2]])
        done[op] = free[r]
        todo.remove(op)
    return max(free)


def closed_form(pp, vpp, m, fwd, bwd):
    stage = [sum(fwd[c * pp + r] + bwd[c * pp + r] for c in range(vpp)) for r in range(pp)]
    slowest, mean = max(stage), sum(stage) / pp
    if vpp == 1:
        bubble = max(0.0, pp * mean - slowest)
    elif m >= pp:
        bubble = (pp - 1) / vpp * mean
    else:
        heaviest_chunk = max(fwd[i] + bwd[i] for i in range(pp * vpp))
        bubble = pp * mean + (m - 1) * heaviest_chunk - m * slowest
    return m * slowest + bubble


def case(name, pp, vpp, m, layers, logits, embedding=0.0):
    chunks = pp * vpp
    per = layers / chunks
    fwd = [per] * chunks
    bwd = [2 * per] * chunks
    fwd[-1] += logits
    bwd[-1] += 2 * logits
    fwd[0] += embedding
    bwd[0] += 2 * embedding
    sim = simulate_greedy if vpp > 1 and m < pp else simulate
    s, c = sim(pp, vpp, m, fwd, bwd), closed_form(pp, vpp, m, fwd, bwd)
    print(f"{name:<44} pp {pp:>2} vpp {vpp} m {m:>3}: simulated {s:9.2f}, closed form {c:9.2f}, ratio {s / c:.4f}")


if __name__ == "__main__":
    # Logits in layer-forward units: 2 T h V against one layer's forward FLOPs.
    case("Megatron CI 7B (V 131k), pp 4 interleaved", 4, 8, 4, 32, 2.2)
    case("the same, 1F1B", 4, 1, 4, 32, 2.2)
    case("the same, no output layer", 4, 8, 4, 32, 0.0)
    case("Korthikanti 175B (pp 8, vpp 3)", 8, 3, 64, 96, 0.1)
    case("Korthikanti 530B (pp 35, vpp 3)", 35, 3, 280, 105, 0.05)
    case("Korthikanti 1T (pp 64)", 64, 1, 512, 128, 0.08)
    case("a heavy first and last stage, 1F1B", 8, 1, 16, 16, 3.0, 1.0)
    case("a heavy first and last stage, interleaved", 8, 2, 16, 16, 3.0, 1.0)
    # Fewer micro-batches than stages, interleaved (llm predict prices them;
    # Megatron-LM refuses them): simulated greedily.
    case("one micro-batch, pp 4, vpp 8", 4, 8, 1, 32, 0.0)
    case("two micro-batches, pp 4, vpp 2", 4, 2, 2, 32, 0.0)
    case("three micro-batches, pp 8, vpp 4", 8, 4, 3, 32, 0.0)
    case("one micro-batch, heavy ends, pp 4, vpp 8", 4, 8, 1, 32, 2.2, 1.0)
    case("two micro-batches, heavy ends, pp 4, vpp 8", 4, 8, 2, 32, 2.2)
    case("three micro-batches, heavy ends, pp 8, vpp 4", 8, 4, 3, 32, 3.0, 1.0)
    case("five micro-batches, heavy ends, pp 8, vpp 2", 8, 2, 5, 16, 3.0, 1.0)
