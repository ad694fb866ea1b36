"""Draws bench.png from results.json: for every workload, bars of median
wall time and of peak RSS per thread count, one colour per allocator.

Runs inside `brisk bench`, or standalone with whichever Python has
matplotlib: `python3 tools/bench_chart.py RESULTS.json OUT.png`.
"""
import json
import sys


def draw(results, out_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = [c for c in results["summary"]]
    workloads = list(dict.fromkeys(c["workload"] for c in summary))
    allocators = list(dict.fromkeys(c["allocator"] for c in summary))
    colours = {a: plt.get_cmap("tab10")(i % 10) for i, a in enumerate(allocators)}
    fig, axes = plt.subplots(len(workloads), 2, figsize=(14, 2.3 * len(workloads) + 1),
                             squeeze=False)
    for row, workload in enumerate(workloads):
        cells = [c for c in summary if c["workload"] == workload]
        threads = sorted(set(c["threads"] for c in cells))
        columns = list(dict.fromkeys(c["allocator"] for c in cells))
        width = 0.8 / max(1, len(columns))
        for col, (metric, unit) in enumerate((("time_s", "s"), ("peak_rss_mb", "MB"))):
            ax = axes[row][col]
            for k, alloc in enumerate(columns):
                xs, ys, failed = [], [], []
                for i, t in enumerate(threads):
                    cell = next((c for c in cells if c["threads"] == t and c["allocator"] == alloc), None)
                    x = i + (k - (len(columns) - 1) / 2) * width
                    if cell and cell["status"] == "ok":
                        xs.append(x)
                        ys.append(cell[metric])
                    elif cell:
                        failed.append((x, cell["status"]))
                ax.bar(xs, ys, width, color=colours[alloc], label=alloc)
                for x, status in failed:
                    ax.text(x, 0, status, rotation=90, ha="center", va="bottom", fontsize=6,
                            color="red")
            ax.set_xticks(range(len(threads)))
            ax.set_xticklabels([f"T={t}" for t in threads], fontsize=8)
            ax.set_ylabel(unit, fontsize=8)
            ax.tick_params(axis="y", labelsize=7)
            ax.set_title(f"{workload}: {'wall time' if col == 0 else 'peak RSS'} (lower is better)",
                         fontsize=9)
            ax.grid(axis="y", alpha=0.3)
    meta = results.get("meta", {})
    fig.suptitle(f"brisk bench - {meta.get('cpu', '')}, {meta.get('cores', '?')} cores, "
                 f"{meta.get('date', '')}", fontsize=11, y=1 - 0.12 / fig.get_figheight())
    # One legend for the whole figure: per-plot legends would cover the bars.
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[a]) for a in allocators]
    top = 1 - 0.9 / fig.get_figheight()
    fig.legend(handles, allocators, loc="upper center", ncol=len(allocators), fontsize=9,
               bbox_to_anchor=(0.5, 1 - 0.4 / fig.get_figheight()), frameon=False)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(out_path, dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: bench_chart.py RESULTS.json OUT.png", file=sys.stderr)
        sys.exit(64)
    with open(sys.argv[1]) as f:
        draw(json.load(f), sys.argv[2])
