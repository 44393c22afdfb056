#!/usr/bin/python3
"""PyTorch side of `skiff bench pinn`: one Adam step of the same PINNs, as JSON lines.

Run through bench/compare_pinn.sh, which sets up the peer and prints ratios.
Cases (MLP 2 -> 50 x 4 -> 1 tanh, float32, 2000 interior + 400 boundary points):
  pinn_plate_step     the usual PyTorch PINN code: x and y as leaf tensors,
                      nested torch.autograd.grad(create_graph=True) for every
                      partial (as PaddleScience/DeepXDE write the biharmonic)
  pinn_plate_step_jet the same loss with the Taylor-mode algorithm skiff uses,
                      written in PyTorch ops (an algorithm-for-algorithm twin)
  pinn_poisson_step / pinn_poisson_step_jet   the same for -lap u = f.
torch.set_num_threads(N) is set for every case: Debian's torch defaults to 1.
"""
import json
import math
import statistics
import sys
import time

import torch


def timeit(fn, min_time=1.0, min_reps=5, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def mlp():
    layers = []
    sizes = [2, 50, 50, 50, 50, 1]
    for i in range(len(sizes) - 1):
        lin = torch.nn.Linear(sizes[i], sizes[i + 1])
        torch.nn.init.xavier_normal_(lin.weight)
        torch.nn.init.zeros_(lin.bias)
        layers.append(lin)
    return layers


def forward(layers, x):
    h = x
    for i, lin in enumerate(layers):
        h = lin(h)
        if i + 1 < len(layers):
            h = torch.tanh(h)
    return h


def jet(layers, x, dirs, order):
    """Directional Taylor coefficients d^k/ds^k u(x + s v), k = 1..order (Faa di Bruno through tanh)."""
    w, b = layers[0].weight, layers[0].bias
    z0 = x @ w.T + b
    z = [(dirs @ w.T)[:, None, :]] + [None] * (order - 1)
    for lin in layers[1:]:
        t = torch.tanh(z0)
        f1 = 1 - t * t
        f = [f1, -2 * t * f1, f1 * (6 * t * t - 2), f1 * t * (16 - 24 * t * t)]
        z1 = z[0]
        y = [f1 * z1]
        if order >= 2:
            y.append(f[1] * z1 * z1 + (f1 * z[1] if z[1] is not None else 0))
        if order >= 4:
            z1s = z1 * z1
            y.append(f[2] * z1s * z1 + (3 * f[1] * z1 * z[1] + f1 * z[2] if z[1] is not None else 0))
            y.append(f[3] * z1s * z1s + (6 * f[2] * z1s * z[1] + f[1] * (3 * z[1] * z[1] + 4 * z1 * z[2]) + f1 * z[3]
                                         if z[1] is not None else 0))
        z0 = t @ lin.weight.T + lin.bias
        z = [yy @ lin.weight.T for yy in y]
    return z0[:, 0], [zz[..., 0] for zz in z]


def points(n_in=2000, n_bd=400, a=2.0, b=3.0):
    g = torch.Generator().manual_seed(0)
    xi = torch.rand(n_in, 2, generator=g) * torch.tensor([a, b])
    t = torch.rand(n_bd // 4, generator=g)
    zero, one = torch.zeros_like(t), torch.ones_like(t)
    xb = torch.cat([torch.stack([zero, t * b], 1), torch.stack([one * a, t * b], 1),
                    torch.stack([t * a, zero], 1), torch.stack([t * a, one * b], 1)])
    on_x = torch.cat([torch.ones(n_bd // 2), torch.zeros(n_bd // 2)]).bool()
    return xi, xb, on_x


def plate_loss_nested(layers, xi, xb, on_x, nu=0.25):
    def d(u, v):
        return torch.autograd.grad(u.sum(), v, create_graph=True)[0]
    x, y = xi[:, :1].clone().requires_grad_(), xi[:, 1:].clone().requires_grad_()
    w = forward(layers, torch.cat([x, y], 1))
    wxx, wyy = d(d(w, x), x), d(d(w, y), y)
    wxxxx = d(d(wxx, x), x)
    wyyyy = d(d(wyy, y), y)
    wxxyy = d(d(wxx, y), y)
    q = torch.sin(math.pi * x / 2) * torch.sin(math.pi * y / 3)
    r = wxxxx + 2 * wxxyy + wyyyy - q
    bx, by = xb[:, :1].clone().requires_grad_(), xb[:, 1:].clone().requires_grad_()
    wb = forward(layers, torch.cat([bx, by], 1))
    bxx, byy = d(d(wb, bx), bx), d(d(wb, by), by)
    m = torch.where(on_x[:, None], bxx + nu * byy, byy + nu * bxx)
    return (r ** 2).mean() + (wb ** 2).mean() + (m ** 2).mean()


def plate_loss_jet(layers, xi, xb, on_x, nu=0.25):
    d4 = torch.tensor([[1.0, 0], [0, 1], [1, 1], [1, -1]])
    _, ds = jet(layers, xi, d4, 4)
    D4 = ds[3]
    bih = D4[0] + D4[1] + (D4[2] + D4[3] - 2 * D4[0] - 2 * D4[1]) / 6
    q = torch.sin(math.pi * xi[:, 0] / 2) * torch.sin(math.pi * xi[:, 1] / 3)
    r = bih - q
    wb, dsb = jet(layers, xb, torch.tensor([[1.0, 0], [0, 1]]), 2)
    bxx, byy = dsb[1][0], dsb[1][1]
    m = torch.where(on_x, bxx + nu * byy, byy + nu * bxx)
    return (r ** 2).mean() + (wb ** 2).mean() + (m ** 2).mean()


def poisson_loss_nested(layers, xi, xb, _on_x):
    def d(u, v):
        return torch.autograd.grad(u.sum(), v, create_graph=True)[0]
    x, y = xi[:, :1].clone().requires_grad_(), xi[:, 1:].clone().requires_grad_()
    u = forward(layers, torch.cat([x, y], 1))
    f = 5 * math.pi ** 2 * torch.sin(math.pi * x) * torch.sin(2 * math.pi * y)
    r = -(d(d(u, x), x) + d(d(u, y), y)) - f
    return (r ** 2).mean() + (forward(layers, xb) ** 2).mean()


def poisson_loss_jet(layers, xi, xb, _on_x):
    _, ds = jet(layers, xi, torch.tensor([[1.0, 0], [0, 1]]), 2)
    f = 5 * math.pi ** 2 * torch.sin(math.pi * xi[:, 0]) * torch.sin(2 * math.pi * xi[:, 1])
    r = -(ds[1][0] + ds[1][1]) - f
    return (r ** 2).mean() + (forward(layers, xb) ** 2).mean()


CASES = {
    "pinn_plate_step": plate_loss_nested,
    "pinn_plate_step_jet": plate_loss_jet,
    "pinn_poisson_step": poisson_loss_nested,
    "pinn_poisson_step_jet": poisson_loss_jet,
}


def main():
    threads = [int(t) for t in (sys.argv[1] if len(sys.argv) > 1 else "1,2").split(",")]
    try:
        from peer_info import describe
        print(f"pytorch_pinn: {describe()}", file=sys.stderr)
    except Exception as e:  # informative only
        print(f"pytorch_pinn: cannot describe the BLAS: {e}", file=sys.stderr)
    torch.manual_seed(0)
    xi, xb, on_x = points()
    for nt in threads:
        torch.set_num_threads(nt)
        for name, loss_fn in CASES.items():
            layers = mlp()
            params = [p for lin in layers for p in lin.parameters()]
            opt = torch.optim.Adam(params, lr=1e-3)

            def step():
                opt.zero_grad()
                loss_fn(layers, xi, xb, on_x).backward()
                opt.step()

            print(json.dumps({"bench": name, "threads": nt, "seconds": timeit(step)}), flush=True)


if __name__ == "__main__":
    main()
