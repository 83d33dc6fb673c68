"""The queueing network, solved: pure functions over numpy arrays (no cluster, no state).

Closed classes (YCSB threads) are solved with Schweitzer's approximate Mean Value Analysis:
throughput X_c = min(target_c, N_c / (Z_c + Σ_s R_cs)), residence R_cs = D_cs (1 + Q_s −
Q_cs / N_c) (Lazowska et al., "Quantitative System Performance", 1984, §6.4.2). A station with
m servers is a queue with demand D/m plus a delay D(m−1)/m (Seidmann, Schweitzer and
Shalev-Oren, 1987).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MVA_MAX_ITERATIONS = 200
MVA_TOLERANCE = 1e-3  # customers, on every queue length (convergence of the fixed point)


def seidmann(D: np.ndarray, servers: float) -> tuple[np.ndarray, np.ndarray]:
    """A station of `servers` identical servers as (queueing demand, delay per row): D/m
    queues, D(m−1)/m is spent as if no one else were there."""
    return D / servers, (D * (servers - 1) / servers).sum(axis=1)


@dataclass(frozen=True)
class ClosedSolution:
    x: np.ndarray  # (classes,) throughput, ops/s
    R: np.ndarray  # (classes, stations) residence per request, ms
    q: np.ndarray  # (classes, stations) mean customers (the next solve starts from it)
    response_ms: np.ndarray  # (classes,) Z + Σ R, 0 for inactive classes


def closed_mva(Dq: np.ndarray, Z: np.ndarray, N: np.ndarray, target: np.ndarray,
               active: np.ndarray, q0: np.ndarray | None = None) -> ClosedSolution:
    """Schweitzer's approximate MVA with damped updates (converges for heavily loaded
    stations). Dq: (classes, stations) queueing demand per request, ms; Z: (classes,) delay,
    ms; N: customers per class; target: throughput cap per class (inf: none); active: which
    classes run; q0: queue lengths to start from (the last step's), zeros if None."""
    nw = Dq.shape[0]
    q = q0 if q0 is not None else np.zeros(Dq.shape)
    x = np.zeros(nw)
    R = Dq.copy()
    for it in range(MVA_MAX_ITERATIONS):
        qtot = q.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            own = np.where(N[:, None] > 0, q / np.maximum(N[:, None], 1e-12), 0.0)
        R = Dq * (1.0 + qtot[None, :] - own)
        resp = Z + R.sum(axis=1)  # ms
        x_new = np.where(active, np.minimum(target, N / np.maximum(resp, 1e-9) * 1000.0), 0.0)
        q_new = x_new[:, None] * R / 1000.0
        # damped update: converges for heavily loaded stations
        q_next = 0.5 * q + 0.5 * q_new
        if np.max(np.abs(q_next - q)) < MVA_TOLERANCE and it > 2:
            q = q_next
            x = x_new
            break
        q = q_next
        x = x_new
    resp = Z + R.sum(axis=1)
    return ClosedSolution(x, R, q, np.where(active, resp, 0.0))


def utilisation(x: np.ndarray, D: np.ndarray, background: np.ndarray, servers: float) -> np.ndarray:
    """Busy share of each station (columns of D, the demand stretched by the background share
    the station gives away; background per station): the requests' work plus the
    background's, capped at 1."""
    work = (x[:, None] * D * (1.0 - background[None, :])).sum(axis=0) / 1000.0 / servers
    return np.minimum(work + background, 1.0)
