"""Plots of a Result with matplotlib (the panels of ``livens plot``)."""

import numpy as np


def plot_result(res, path=None, show=False):
    """Figure with the relative energy error (log scale), the momentum maps'
    change and the constraint residuals |g|, |Gv| (log scale) against t.
    Saved to ``path`` when given; shown when ``show``.  Returns the Figure."""
    import matplotlib.pyplot as plt

    tiny = np.finfo(float).tiny
    t = res.t
    panels = 3 if res.momenta.shape[1] else 2
    fig, axes = plt.subplots(panels, 1, sharex=True, figsize=(8, 2.6 * panels), squeeze=False)
    axes = axes[:, 0]
    e0 = res.energy[0] if len(res) else 1.0
    rel = np.abs(res.energy - e0) / max(abs(e0), 1e-300)
    axes[0].semilogy(t, np.maximum(rel, tiny), lw=1)
    axes[0].set_ylabel("|E - E0| / |E0|")
    axes[0].set_title(f"{res.scheme} on {res.model}, h = {res.step:g} ({res.status})")
    k = 1
    if panels == 3:
        for j in range(res.momenta.shape[1]):
            axes[1].plot(t, res.momenta[:, j] - res.momenta[0, j], lw=1, label=f"J{j + 1}")
        axes[1].set_ylabel("J - J(0)")
        axes[1].legend(loc="best", fontsize="small")
        k = 2
    axes[k].semilogy(t, np.maximum(res.g, tiny), lw=1, label="max |g|")
    axes[k].semilogy(t, np.maximum(res.gv, tiny), lw=1, label="max |G v|")
    if np.any(res.gp != res.gv):
        axes[k].semilogy(t, np.maximum(res.gp, tiny), lw=1, label="max |G M^-1 p|")
    axes[k].set_ylabel("constraints")
    axes[k].set_xlabel("t")
    axes[k].legend(loc="best", fontsize="small")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    if show:
        plt.show()
    return fig


def plot_convergence(conv, path=None, show=False):
    """Log-log plot of a :func:`livens.converge` dict: error against h with
    the fitted orders in the legend.  Returns the Figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for key in ("q", "v", "lambda"):
        e = conv.get("err_" + key)
        if e is None:
            continue
        ax.loglog(conv["h"], e, "o-", label=f"{key} (order {conv['fitted'][key]:.2f})")
    ax.set_xlabel("h")
    ax.set_ylabel("error at t_end")
    ax.legend(loc="best")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    if show:
        plt.show()
    return fig
