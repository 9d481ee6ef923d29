"""plot_host.py: wall time of host-pointer sgemm_/dgemm_ (square n) for libfastgemm (auto and
forced to the GPU), NVBLAS and OpenBLAS, log-log, from perf/run_hostbench.sh's CSV.
Usage: python3 perf/plot_host.py OUT.png hostbench.csv  (needs matplotlib)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"fastgemm_auto": ("o-", "libfastgemm (auto)"), "fastgemm_gpu": ("^--", "libfastgemm (GPU)"),
         "nvblas": ("s-", "NVBLAS"), "openblas": ("d-", "OpenBLAS")}


def main():
    out, path = sys.argv[1], sys.argv[2]
    rows = [r for r in csv.DictReader(open(path)) if r["m"] == r["n"] == r["k"] and int(r["m"]) % 64 == 0]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, prec in zip(axes, "sd"):
        for label, (style, name) in STYLE.items():
            sel = sorted((r for r in rows if r["prec"] == prec and r["label"] == label), key=lambda r: int(r["m"]))
            ax.plot([int(r["m"]) for r in sel], [float(r["ms"]) for r in sel], style, label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{prec}gemm_, host matrices (malloc)")
        ax.set_xlabel("n (square)")
        ax.set_ylabel("wall time per call, ms")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
