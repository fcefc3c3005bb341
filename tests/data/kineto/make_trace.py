#!/usr/bin/python3
"""Runs a pipeline-parallel schedule on CPU processes with torch.distributed (gloo) and writes one
torch.profiler (Kineto) Chrome trace per rank, every action labelled as PyTorch's pipeline runtime
labels it: record_function("PP:{action}") with actions such as 0F3, 1I2, 1W2, 0B1, 1SEND_F0,
1RECV_B0 (torch/distributed/pipelining/schedules.py, _get_profiler_function_name).

torch 1.13 (Debian's python3-torch) has no torch.distributed.pipelining, so the runtime is written
here: each rank holds the stages its row of the schedule names, each stage a stack of residual MLP
blocks; F runs the blocks, I (input gradient) is torch.autograd.grad on the stage's input and the
block outputs, W (weight gradient) is torch.autograd.grad of each block output on its weights, B
(full backward) is both. Activations and gradients travel with isend/irecv; a receive waits inside
its RECV span, so that span includes the wait for the sender.

The schedule is a PyTorch pipeline CSV (one row per rank, cells {stage}{op}{microbatch}), as
`zbsim export --to pytorch-csv` writes it:

  zbsim export --schedule zb-h1 --p 2 --m 4 --to pytorch-csv --out zb-h1.csv
  /usr/bin/python3 make_trace.py --schedule zb-h1.csv --out-dir out
"""

import argparse
import csv
import os
import re

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as functional
from torch.profiler import ProfilerActivity, profile, record_function

CELL = re.compile(r"(\d+)(F|I|W|B)(\d+)")


def read_schedule(path):
    """Per rank, the list of (stage, op, microbatch); op is F, I, W or B (full backward)."""
    ranks = []
    with open(path, newline="") as handle:
        for row in csv.reader(handle):
            actions = []
            for cell in row:
                cell = cell.strip()
                if not cell:
                    continue  # an idle slot
                match = CELL.fullmatch(cell)
                if match is None:
                    raise SystemExit(f"{path}: cell '{cell}' is not a compute action (stage, F/I/W/B, microbatch)")
                actions.append((int(match[1]), match[2], int(match[3])))
            ranks.append(actions)
    return ranks


class Block(torch.nn.Module):
    """y = x + fc2(gelu(fc1(x))): one residual MLP block."""

    def __init__(self, hidden):
        super().__init__()
        self.fc1 = torch.nn.Linear(hidden, 4 * hidden)
        self.fc2 = torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x, linear_outputs):
        """Appends (layer, its output) of both linear layers, which the split backward needs."""
        u = self.fc1(x)
        v = self.fc2(functional.gelu(u))
        linear_outputs += [(self.fc1, u), (self.fc2, v)]
        return x + v


class Stage:
    """One pipeline stage: its blocks and, per microbatch in flight, what the backward needs."""

    def __init__(self, index, stages, args):
        torch.manual_seed(args.seed + index)  # a stage's weights depend only on the seed and the stage
        self.is_first = index == 0
        self.is_last = index == stages - 1
        self.blocks = [Block(args.hidden) for _ in range(args.blocks_per_stage)]
        self.saved = {}         # microbatch -> (stage input, [(linear layer, output)], backward root)
        self.linear_grads = {}  # microbatch -> gradients of the linear outputs, from I for W
        self.output_grad = {}   # microbatch -> gradient of the stage output (received)

    def parameters(self):
        return [p for block in self.blocks for p in block.parameters()]

    def forward(self, mb, x, target):
        """F: returns the stage output; the last stage's backward starts from its loss."""
        x = x.detach().requires_grad_(not self.is_first)
        linear_outputs = []
        h = x
        for block in self.blocks:
            h = block(h, linear_outputs)
        root = functional.mse_loss(h, target) if self.is_last else h
        self.saved[mb] = (x, linear_outputs, root)
        return h

    def loss(self, mb):
        return self.saved[mb][2]

    def backward_input(self, mb):
        """I: the gradient of the stage input, and of every linear output (kept for W). The
        weights are not asked for, so autograd skips their matrix products."""
        x, linear_outputs, root = self.saved[mb]
        root_grad = torch.ones_like(root) if self.is_last else self.output_grad.pop(mb)
        outputs = [output for _, output in linear_outputs]
        # The first stage's input is data: like PyTorch's stage_backward_input, no gradient for it.
        inputs = outputs if self.is_first else [x] + outputs
        grads = torch.autograd.grad([root], inputs, grad_outputs=[root_grad], retain_graph=True)
        self.linear_grads[mb] = grads[-len(outputs):]
        return None if self.is_first else grads[0]

    def backward_weight(self, mb):
        """W: each linear layer's weight and bias gradient from its output gradient (one matrix
        product and one sum per layer), accumulated into .grad; the microbatch's graph is freed."""
        _, linear_outputs, _ = self.saved.pop(mb)
        for (layer, output), grad in zip(linear_outputs, self.linear_grads.pop(mb)):
            params = [layer.weight, layer.bias]
            weight_grads = torch.autograd.grad([output], params, grad_outputs=[grad], retain_graph=True)
            for param, weight_grad in zip(params, weight_grads):
                param.grad = weight_grad if param.grad is None else param.grad + weight_grad


def run_rank(rank, world, args, schedule):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    torch.set_num_threads(1)  # one core per rank, so ranks do not steal each other's threads
    dist.init_process_group("gloo", rank=rank, world_size=world)
    stage_rank = {stage: r for r, actions in enumerate(schedule) for stage, _, _ in actions}
    stages_total = max(stage_rank) + 1
    stages = {s: Stage(s, stages_total, args) for s, r in stage_rank.items() if r == rank}
    microbatches = 1 + max(mb for actions in schedule for _, _, mb in actions)
    generator = torch.Generator().manual_seed(args.seed)
    data = [torch.randn(args.microbatch_size, args.hidden, generator=generator) for _ in range(microbatches)]
    targets = [torch.randn(args.microbatch_size, args.hidden, generator=generator) for _ in range(microbatches)]
    optimizer = torch.optim.SGD([p for s in stages.values() for p in s.parameters()], lr=args.lr)

    def tag(kind, stage, mb):  # one tag per message, so a receive can only match its own message
        return (kind * 1000 + stage) * 10000 + mb

    def run_step():
        pending_sends = []

        def send(stage, kind, mb, tensor, to_stage):
            label = f"PP:{stage}SEND_{kind}{mb}"
            if stage_rank[to_stage] == rank:
                return tensor
            with record_function(label):
                pending_sends.append(dist.isend(tensor.detach().contiguous(), stage_rank[to_stage],
                                                tag=tag(0 if kind == "F" else 1, stage, mb)))
            return None

        def receive(stage, kind, mb, from_stage):
            buffer = torch.empty(args.microbatch_size, args.hidden)
            with record_function(f"PP:{stage}RECV_{kind}{mb}"):
                dist.irecv(buffer, stage_rank[from_stage], tag=tag(0 if kind == "F" else 1, from_stage, mb)).wait()
            return buffer

        local = {}  # (kind, to_stage, mb) -> tensor passed between stages on this rank
        losses = []
        for stage_index, op, mb in schedule[rank]:
            stage = stages[stage_index]
            if op == "F":
                if stage.is_first:
                    x = data[mb]
                elif stage_rank[stage_index - 1] == rank:
                    x = local.pop(("F", stage_index, mb))
                else:
                    x = receive(stage_index, "F", mb, stage_index - 1)
                with record_function(f"PP:{stage_index}F{mb}"):
                    y = stage.forward(mb, x, targets[mb])
                if stage.is_last:
                    losses.append(stage.loss(mb).item())
                elif stage_rank[stage_index + 1] == rank:
                    local[("F", stage_index + 1, mb)] = y
                else:
                    send(stage_index, "F", mb, y, stage_index + 1)
            elif op in ("I", "B"):
                if not stage.is_last:
                    if stage_rank[stage_index + 1] == rank:
                        stage.output_grad[mb] = local.pop(("B", stage_index, mb))
                    else:
                        stage.output_grad[mb] = receive(stage_index, "B", mb, stage_index + 1)
                with record_function(f"PP:{stage_index}{op}{mb}"):
                    grad_input = stage.backward_input(mb)
                    if op == "B":
                        stage.backward_weight(mb)
                if not stage.is_first:
                    if stage_rank[stage_index - 1] == rank:
                        local[("B", stage_index - 1, mb)] = grad_input
                    else:
                        send(stage_index, "B", mb, grad_input, stage_index - 1)
            else:  # W
                with record_function(f"PP:{stage_index}W{mb}"):
                    stage.backward_weight(mb)
        for work in pending_sends:
            work.wait()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return losses

    for _ in range(args.warmup_steps):  # allocator, thread pools and sockets warm before the profile
        run_step()
    dist.barrier()
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        losses = run_step()
    dist.barrier()
    profiler.export_chrome_trace(os.path.join(args.out_dir, f"{args.name}.rank{rank}.json"))
    if losses:
        print(f"rank {rank}: loss per microbatch {', '.join(f'{v:.4f}' for v in losses)}")
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedule", required=True, help="PyTorch pipeline CSV (zbsim export --to pytorch-csv)")
    parser.add_argument("--out-dir", default=".", help="where NAME.rankR.json are written")
    parser.add_argument("--name", help="file name stem (default: the CSV's)")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--blocks-per-stage", type=int, default=2)
    parser.add_argument("--microbatch-size", type=int, default=64)
    parser.add_argument("--warmup-steps", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--port", type=int, default=29517)
    args = parser.parse_args()
    args.name = args.name or os.path.splitext(os.path.basename(args.schedule))[0]
    schedule = read_schedule(args.schedule)
    os.makedirs(args.out_dir, exist_ok=True)
    mp.spawn(run_rank, args=(len(schedule), args, schedule), nprocs=len(schedule), join=True)


if __name__ == "__main__":
    main()
