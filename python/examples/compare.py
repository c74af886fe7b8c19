# SPDX-License-Identifier: GPL-2.0
"""The digits MLP trained through inagg and through Gloo on the same live
network (python/examples/tree.json: 6 workers under 3 switches, SMC, k = 2),
same seeds; loss curves to OUTDIR/train_loss.dat and a gnuplot PNG; the
final test accuracies and their difference printed. Run as root under
flock /tmp/inagg-net.lock (make bench does):

    PYTHONPATH=python /usr/bin/python3 python/examples/compare.py [OUTDIR] [EPOCHS]
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from inagg import launch, net  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(net.ROOT, "build", "bench")
    epochs = sys.argv[2] if len(sys.argv) > 2 else "10"
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(HERE, "tree.json")) as f:
        topo = json.load(f)
    res = {}
    with net.LiveNet(topo) as live:
        for backend, port in (("inagg", 29700), ("gloo", 29701)):
            job = live.submit(2)
            out = os.path.join(outdir, f"train_{backend}.json")
            t0 = time.monotonic()
            rc = launch.run(job["job"], [os.path.join(HERE, "digits.py"), "--epochs", epochs,
                                         "--out", out], live.sock, backend, port, timeout=1200)
            if rc:
                raise SystemExit(f"{backend} training failed ({rc})")
            with open(out) as f:
                res[backend] = json.load(f)
            res[backend]["wall"] = time.monotonic() - t0
            if backend == "inagg":
                print(f"# job {job['job']}: blue {job['blue']}, congestion {job['congestion']}")
            live.end(job["job"])
    dat = os.path.join(outdir, "train_loss.dat")
    with open(dat, "w") as f:
        f.write("# step loss_inagg loss_gloo (whole training set, after each step)\n")
        for i, (a, b) in enumerate(zip(res["inagg"]["loss"], res["gloo"]["loss"])):
            f.write(f"{i + 1} {a:.6f} {b:.6f}\n")
    gp = os.path.join(outdir, "train_loss.gp")
    with open(gp, "w") as f:
        f.write(f"set terminal pngcairo size 800,500\nset output '{outdir}/train_loss.png'\n"
                "set xlabel 'step'\nset ylabel 'training loss'\nset logscale y\n"
                f"set title 'digits MLP, {res['inagg']['workers']} workers, DDP'\n"
                f"plot '{dat}' using 1:2 with lines lw 2 title 'inagg', "
                f"'' using 1:3 with lines dt 2 lw 2 title 'Gloo'\n")
    subprocess.run(["gnuplot", gp], check=False)
    a, g = res["inagg"]["test_accuracy"][-1], res["gloo"]["test_accuracy"][-1]
    diff = max(abs(x - y) for x, y in zip(res["inagg"]["loss"], res["gloo"]["loss"]))
    print(f"{'backend':>8} {'test accuracy':>14} {'final loss':>11} {'train s':>8} "
          f"{'backward s':>11}")
    for b in ("inagg", "gloo"):
        r = res[b]
        print(f"{b:>8} {r['test_accuracy'][-1]:>14.4f} {r['loss'][-1]:>11.5f} "
              f"{r['seconds']:>8.2f} {r['backward_seconds']:>11.2f}")
    print(f"# {res['inagg']['workers']} workers, {epochs} epochs x "
          f"{res['inagg']['steps_per_epoch']} steps; accuracy difference "
          f"{abs(a - g) * 100:.2f} points (limit 1); largest loss difference {diff:.2e}; "
          f"scale resends {res['inagg']['resends']}")
    print(f"# loss curves: {dat}, {outdir}/train_loss.png")
    if abs(a - g) > 0.01:
        raise SystemExit("accuracy differs by more than 1 point")


if __name__ == "__main__":
    main()
