"""plot.py: TFLOP/s against size for libfastgemm and cuBLAS, from fastgemm-sweep CSV files.
Usage: python3 perf/plot.py OUT.png sweep_s.csv [sweep_d.csv ...]  (needs matplotlib)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    out, files = sys.argv[1], sys.argv[2:]
    rows = [r for f in files for r in csv.DictReader(open(f))]
    # The square sweep: powers of two and their halves (the irregular list has 4095^3 and 1000^3).
    square = [r for r in rows if r["m"] == r["n"] == r["k"] and int(r["m"]) % 256 == 0]
    panels = sorted({(r["prec"], r["trans"]) for r in square})
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (prec, trans) in zip(axes[0], panels):
        sel = sorted((r for r in square if (r["prec"], r["trans"]) == (prec, trans)),
                     key=lambda r: int(r["m"]))
        n = [int(r["m"]) for r in sel]
        ax.plot(n, [float(r["fastgemm_tflops"]) for r in sel], "o-", label="libfastgemm")
        ax.plot(n, [float(r["cublas_tflops"]) for r in sel], "s--", label="cuBLAS")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{'SGEMM' if prec == 's' else 'DGEMM'} {trans}")
        ax.set_xlabel("n (square)")
        ax.set_ylabel("TFLOP/s")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
