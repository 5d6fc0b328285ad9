"""Ctrl-C: SIGINT during sampling stops every chain between two iterations, joins their threads
and raises KeyboardInterrupt in the caller; the module is usable afterwards."""

import signal
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, sys, time
    import pandas as pd
    import tallmc

    df = pd.read_csv(sys.argv[1])
    def threads():
        return len(os.listdir("/proc/self/task"))
    before = threads()
    said = []
    def progress(done, total):
        if done > 0 and not said:
            said.append(True)
            print("started", flush=True)
    t0 = time.monotonic()
    try:
        # 2 x 5 000 000 NUTS iterations: far longer than the test waits.
        tallmc.sample(df, model="logistic", response="y", sampler="nuts", chains=2,
                      warmup=100, draws=5_000_000, seed=1, progress=progress)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted after {time.monotonic() - t0:.2f} s", flush=True)
    print("threads", before, threads(), flush=True)
    idata = tallmc.sample(df, model="logistic", response="y", sampler="nuts", chains=2,
                          warmup=50, draws=50, seed=1, progress=False)
    print("ok", idata.posterior.sizes["draw"], flush=True)
""")


def test_ctrl_c_stops_the_chains(data_dir, tmp_path):
    script = tmp_path / "long_run.py"
    script.write_text(SCRIPT)
    p = subprocess.Popen([sys.executable, str(script), str(data_dir / "logistic.csv")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "started"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("interrupted after"), out
    _, before, after = lines[1].split()
    assert before == after, "chain threads left running after the interrupt"
    assert lines[2] == "ok 50"
