"""The GIL is released while C runs; Ctrl-C stops a run keeping its data."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import livens
import livens._core as core

FIELDS = ("t", "q", "v", "p", "lam", "gamma", "energy", "momenta", "g", "gv", "gp", "newton_iters")
RUNS = [("four-particle", "vi-a", 0.01, 40.0), ("heavy-top", "genalpha", 1e-3, 10.0)]


def same(a, b):
    for f in FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    for k, v in a.summary.items():
        if k not in ("steps_per_second", "wall_time"):
            assert v == b.summary[k], k


def test_two_threads_give_the_sequential_results():
    seq = [livens.simulate(*r, every=10) for r in RUNS]
    out = [None, None]

    def work(i):
        out[i] = livens.simulate(*RUNS[i], every=10)

    ths = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    for a, b in zip(seq, out):
        same(a, b)
    # the same run twice at once, on one shared model object
    m = livens.Model("four-particle")
    res = [None, None]

    def work2(i):
        res[i] = livens.simulate(m, "em", 0.01, 20.0, every=10)

    ths = [threading.Thread(target=work2, args=(i,)) for i in range(2)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    same(res[0], res[1])
    same(res[0], livens.simulate(m, "em", 0.01, 20.0, every=10))


def test_the_gil_is_released_during_a_run(monkeypatch):
    """One C call (no chunking): the main thread keeps running Python
    meanwhile.  Were the GIL held, the longest pause of the main thread would
    be about the whole run.  The run is lengthened until it lasts long enough
    to tell, whatever the machine's speed or load."""
    monkeypatch.setattr(core, "_CHUNK_SECONDS", 0.0)
    t_end = 60.0
    for _ in range(4):
        done = threading.Event()
        box = {}

        def work():
            t0 = time.monotonic()
            box["r"] = livens.simulate("four-particle", "vi-a", 0.01, t_end, every=1000)
            box["wall"] = time.monotonic() - t0
            done.set()

        th = threading.Thread(target=work)
        th.start()
        gaps = []
        last = time.monotonic()
        while not done.is_set():
            now = time.monotonic()
            gaps.append(now - last)
            last = now
            sum(range(100))
        th.join()
        assert box["r"].status == "ok"
        if box["wall"] > 0.3:
            break
        t_end *= 4
    assert box["wall"] > 0.3, "run too short to tell"
    assert max(gaps) < 0.5 * box["wall"], (max(gaps), box["wall"])
    print(f"\nrun {box['wall']:.3f} s in one C call; longest pause of the main thread {max(gaps) * 1e3:.1f} ms")


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@pytest.mark.skipif(_cores() < 2, reason="fewer than 2 cores: two threads cannot run in parallel here")
def test_two_threads_run_in_parallel():
    """Two runs of a built-in model in two threads take less than 1.5 times
    the wall time of one (ideal: 1.0; with the GIL held they would take 2.0).
    The run is sized to about 0.6 s; the machine may be shared, so up to 3
    attempts, each timing one run before and after the pair, and the test
    passes when one attempt meets the bound with the pair's CPU time above
    1.1 times its wall time (both threads computing at once).  It fails when
    an attempt shows the threads serialised (the pair at most 1.05 cores
    while a single run had a core to itself: the GIL held in C) or two busy
    cores without the speed-up; an attempt whose pair ran above one core but
    shared the cores with other work (make check runs tests side by side)
    proves nothing about wall time, and if every attempt was such the test
    is skipped with the figures."""
    cores = _cores()
    model, scheme, h = "four-particle", "vi-a", 0.01
    t_end = 20.0
    for _ in range(6):  # size the run
        t0 = time.monotonic()
        livens.simulate(model, scheme, h, t_end, every=1000)
        one = time.monotonic() - t0
        if one > 0.3:
            break
        t_end *= min(8.0, 0.6 / max(one, 1e-3))
    args = (model, scheme, h, t_end)

    def one_run():
        c0, t0 = time.process_time(), time.monotonic()
        r = livens.simulate(*args, every=1000)
        wall = time.monotonic() - t0
        return wall, (time.process_time() - c0) / wall, r

    attempts = []
    for _ in range(3):
        before, share0, ref = one_run()
        out = [None, None]

        def work(i):
            out[i] = livens.simulate(*args, every=1000)

        ths = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        c0, t0 = time.process_time(), time.monotonic()
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        two = time.monotonic() - t0
        cpu2 = time.process_time() - c0
        after, share1, _ = one_run()
        same(out[0], ref)
        same(out[1], ref)
        one = 0.5 * (before + after)
        load = os.getloadavg()[0]
        free = load < cores + 0.5 and min(share0, share1) >= 0.9
        pair = cpu2 / two
        attempts.append((two / one, free, load, min(share0, share1), pair))
        print(f"\none run {one:.3f} s (t_end {t_end:g}), two runs in two threads {two:.3f} s: "
              f"{two / one:.2f}x; cores used by the pair {pair:.2f}, load average {load:.2f}")
        # the pair's CPU time above its wall time: both threads ran at once
        # (with the GIL held it could not exceed 1.0); without that a ratio
        # below 1.5 is the noise of a loaded machine
        if two / one < 1.5 and pair > 1.1:
            return
    figures = "; ".join(f"{r:.2f}x (load {l:.2f}, single run {s:.2f} core, pair {p:.2f} cores)"
                        for r, _, l, s, p in attempts)
    # Failures that no load explains: the pair never above one core while a
    # single run had a core to itself (the threads were serialised: the GIL
    # held during the C run), or two full cores busy and still no speed-up.
    if any(f and p <= 1.05 for _, f, _, _, p in attempts):
        pytest.fail(f"two threads did not run in parallel: {figures}")
    if any(p >= 1.8 and r >= 1.5 for r, _, _, _, p in attempts):
        pytest.fail(f"two threads used two cores but took {figures}")
    # Otherwise the pair ran in parallel (above one core) but shared the
    # cores with other work (make check runs tests side by side): the wall
    # time says nothing about livens then.
    pytest.skip(f"this machine could not give the test two free cores: {figures}")


def test_ctrl_c_raises_keyboard_interrupt_with_the_data_so_far():
    sent = {}

    def interrupt():
        sent["t"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.3, interrupt)
    timer.start()
    with pytest.raises(KeyboardInterrupt) as e:
        livens.simulate("pendulum3d", "rattle", 1e-3, 1e6, every=100)
    caught = time.monotonic()
    timer.join()
    assert isinstance(e.value, livens.Interrupted)
    assert caught - sent["t"] < 1.0
    r = e.value.result
    assert r.status == "LV_ESTOPPED" and "interrupted at t = " in r.detail
    steps = r.summary["steps"]
    assert steps > 100 and 0 < r.t[-1] < 1e6
    # every 100th step and the last accepted one, evenly spaced, all kept
    assert len(r) == steps // 100 + 1 + (steps % 100 != 0)
    assert r.t[-1] == pytest.approx(steps * 1e-3, rel=1e-12)
    assert np.all(np.diff(r.t) > 0)
    assert np.allclose(np.linalg.norm(r.q, axis=1), 1.0, atol=1e-12)
    # the library is usable afterwards
    assert livens.simulate("pendulum3d", "rattle", 0.01, 0.1).status == "ok"


def test_ctrl_c_inside_one_long_c_call(monkeypatch):
    """No chunking (one C call for the whole run): the C-level SIGINT
    handler of the main thread still stops the run at the next step."""
    monkeypatch.setattr(core, "_CHUNK_SECONDS", 0.0)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(livens.Interrupted) as e:
        livens.simulate("pendulum3d", "rattle", 1e-3, 1e4, every=1000)
    elapsed = time.monotonic() - t0
    timer.join()
    r = e.value.result
    assert elapsed < 5.0 and 0 < r.t[-1] < 1e4 and r.status == "LV_ESTOPPED"
    assert r.t[-1] == pytest.approx(r.summary["steps"] * 1e-3, rel=1e-12)
    # Python's handler is back: a signal now raises KeyboardInterrupt as usual
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)
