# SPDX-License-Identifier: MIT
"""Draws bench.png from results.json: one summary panel of two heat maps,
time and peak RSS, each cell the allocator's median divided by the best
allocator's median on that row (1.00 = best), the value printed in the cell
and brisk's column outlined. Rows are workloads at each thread count; the
Free Pascal workloads, whose columns are memory managers, get a second pair
of maps below. Sized to stay readable at the ~900 px GitHub shows.

Runs inside `brisk bench`, or standalone with whichever Python has
matplotlib: `python3 tools/bench_chart.py RESULTS.json OUT.png`.
"""
import json
import sys

BRISK = "brisk"
WIDTH_IN, DPI = 10.0, 100  # 1000 px: GitHub shows it at ~900 px, barely scaled
ROW_IN = 0.24
WORST = 3.0  # ratios at or above this share the darkest colour
METRICS = (("time_s", "Time"), ("peak_rss_mb", "Peak memory (RSS)"))


def _sections(summary):
    """[(rows, columns)]: C workloads, then Pascal; references left out."""
    sections = {}
    for cell in summary:
        if cell.get("reference"):
            continue
        pascal = cell["workload"].startswith("pascal-")
        rows, columns = sections.setdefault(pascal, ({}, {}))
        rows[(cell["workload"], cell["threads"])] = None
        columns[cell["allocator"]] = None
    out = []
    for pascal in sorted(sections):
        rows, columns = sections[pascal]
        names = list(columns)
        # brisk first: the column a reader looks for.
        names.sort(key=lambda name: name != BRISK)
        out.append((list(rows), names, pascal))
    return out


def _ratio_text(ratio):
    if ratio < 1.995:
        return f"{ratio:.2f}"
    return f"{ratio:.1f}" if ratio < 9.95 else f"{ratio:.0f}"


def _heat_map(ax, rows, columns, cells, metric, verdicts, show_rows, norm, cmap):
    import numpy as np
    data = np.full((len(rows), len(columns)), np.nan)
    for i, key in enumerate(rows):
        for j, name in enumerate(columns):
            cell = cells.get((*key, name))
            if cell and cell["status"] == "ok" and cell.get(f"{metric}_ratio"):
                data[i, j] = cell[f"{metric}_ratio"]
    ax.imshow(np.ma.masked_invalid(data), cmap=cmap, norm=norm, aspect="auto",
              interpolation="nearest")
    ax.set_facecolor("#f2f2f2")
    for i, key in enumerate(rows):
        winner = verdicts.get(key, {}).get(metric, {}).get("winner")
        for j, name in enumerate(columns):
            cell = cells.get((*key, name))
            if cell is None:
                text, colour, weight = "", "black", "normal"
            elif cell["status"] != "ok":
                text, colour, weight = cell["status"][:5], "#b00000", "bold"
            else:
                ratio = data[i, j]
                text = _ratio_text(ratio)
                colour = "white" if ratio >= 2.2 else "black"
                weight = "bold" if name == winner else "normal"
            ax.text(j, i, text, ha="center", va="center", fontsize=8.5, color=colour,
                    fontweight=weight)
    ax.set_xticks(range(len(columns)))
    # Vertical: slanted labels would run into the next map or off the page.
    ax.set_xticklabels(columns, rotation=90, ha="center", va="bottom", fontsize=9.5)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for label in ax.get_xticklabels():
        if label.get_text() == BRISK:
            label.set_fontweight("bold")
    _row_labels(ax, rows, show_rows)
    # White gaps between workloads, so thread counts read as one group.
    for i in range(1, len(rows)):
        if rows[i][0] != rows[i - 1][0]:
            ax.axhline(i - 0.5, color="white", linewidth=3)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if BRISK in columns:
        import matplotlib.patches as patches
        j = columns.index(BRISK)
        ax.add_patch(patches.Rectangle((j - 0.5, -0.5), 1, len(rows), fill=False,
                                       edgecolor="#1f3a93", linewidth=2.5, clip_on=False))


def _row_labels(ax, rows, show):
    ax.set_yticks(range(len(rows)))
    if not show:
        ax.set_yticklabels([])
        return
    labels = []
    for i, (workload, threads) in enumerate(rows):
        first = i == 0 or rows[i - 1][0] != workload
        name = workload.replace("pascal-", "") if first else ""
        labels.append(f"{name}  T={threads}" if name else f"T={threads}")
    ax.set_yticklabels(labels, fontsize=9)


def _subtitle(meta, outlined):
    parts = [f"{meta.get('cpu', '')}, {meta.get('cores', '?')} cores",
             f"{meta.get('date', '')[:16].replace('T', ' ')}",
             f"median of {meta.get('reps', '?')} runs per cell", "T = threads"]
    outline = "brisk's column is outlined; " if outlined else ""
    return (" | ".join(parts) + "\nGreen = best, red = 3x the best or worse. " + outline +
            "bold = a clear winner (its lead exceeds the run-to-run spread).")


# What each Free Pascal column is. The note above the Pascal maps names only
# the columns drawn: a run without FastMM4's sources, or one whose
# --allocators leaves some out, has fewer.
PASCAL_COLUMNS = (("brisk", "brisk = BriskMM (the brisk unit)"),
                  ("fpcheap", "fpcheap = FPC's own heap"),
                  ("fastmm4", "fastmm4 = FastMM4"),
                  ("fpcx64mm", "fpcx64mm(_server, _booster) = mORMot 2's fpcx64mm (its settings)"),
                  ("cmem", "cmem = FPC's cmem unit over glibc's malloc"))
CMEM_OVER = "cmem+"  # cmem+jemalloc: the cmem binary with jemalloc preloaded
NOTE_CHARS = 110  # characters on one line of the note at its font size


def pascal_note(columns):
    """The lines of the note over the Pascal maps, saying what each column
    drawn is (and nothing about columns that are not)."""
    parts = [text for name, text in PASCAL_COLUMNS
             if name in columns or any(c.startswith(name + "_") for c in columns)]
    if any(name.startswith(CMEM_OVER) for name in columns):
        parts.append("cmem+X = cmem over allocator X (preloaded)")
    # A line breaks between two columns' descriptions, never inside one.
    words = ["Free Pascal workloads."] + [part + ("," if i < len(parts) - 1 else ".")
                                           for i, part in enumerate(parts)]
    lines = [words[0]]
    for word in words[1:]:
        if len(lines[-1]) + 1 + len(word) <= NOTE_CHARS:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


class _Layout:
    """Places everything in inches from the top, so every row has the same
    height whatever the number of rows and sections."""
    LEFT, RIGHT, GAP = 1.75, 0.1, 0.3
    TITLE, AFTER = 0.3, 0.35
    NOTE_LINE, NOTE_PAD = 0.2, 0.05  # the Pascal note: per line, and below it
    CHAR_IN = 0.075  # width of one character of a column label

    def __init__(self, sections, busy):
        self.header = 0.95 + (0.25 if busy else 0)
        self.labels_in = [0.15 + self.CHAR_IN * max(len(c) for c in columns)
                          for _, columns, _ in sections]
        self.notes = [pascal_note(columns) if pascal else [] for _, columns, pascal in sections]
        self.section_in = [self.note_in(note) + self.TITLE + labels + len(rows) * ROW_IN
                           for (rows, _, _), labels, note in
                           zip(sections, self.labels_in, self.notes)]
        self.height = self.header + sum(self.section_in) + self.AFTER * len(sections)

    def note_in(self, note):
        return self.NOTE_LINE * len(note) + self.NOTE_PAD if note else 0.0

    def map_width(self):
        return (WIDTH_IN - self.LEFT - self.RIGHT - self.GAP) / 2

    def map_left(self, column):
        return self.LEFT + column * (self.map_width() + self.GAP)

    def axes_rect(self, top_in, n_rows, column):
        """[left, bottom, width, height] as figure fractions."""
        height = n_rows * ROW_IN
        bottom = self.height - top_in - height
        return [self.map_left(column) / WIDTH_IN, bottom / self.height,
                self.map_width() / WIDTH_IN, height / self.height]

    def x(self, inches):
        return inches / WIDTH_IN

    def y(self, top_in):
        return 1 - top_in / self.height


def draw(results, out_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LinearSegmentedColormap, LogNorm

    summary = results["summary"]
    cells = {(c["workload"], c["threads"], c["allocator"]): c for c in summary}
    verdicts = {(v["workload"], v["threads"]): v for v in results.get("verdicts", [])}
    sections = _sections(summary)
    meta = results.get("meta", {})
    layout = _Layout(sections, meta.get("busy"))
    fig = plt.figure(figsize=(WIDTH_IN, layout.height), dpi=DPI)
    cmap = LinearSegmentedColormap.from_list("ratio", ["#1a9850", "#fee08b", "#f46d43",
                                                       "#a50026"])
    norm = LogNorm(vmin=1.0, vmax=WORST, clip=True)
    fig.text(0.01, layout.y(0.12), "brisk bench: each allocator's median / the best median "
             "on its row (1.00 = best; lower is better)", fontsize=12.5, fontweight="bold",
             va="top")
    outlined = any(BRISK in columns for _, columns, _ in sections)
    fig.text(0.01, layout.y(0.45), _subtitle(meta, outlined), fontsize=9, va="top",
             linespacing=1.4)
    if meta.get("busy"):
        fig.text(0.01, layout.y(0.95), "Warning: the machine was busy during this run; "
                 "timings are noisy.", fontsize=9.5, color="#b00000", va="top",
                 fontweight="bold")
    top = layout.header
    sized = zip(sections, layout.labels_in, layout.section_in, layout.notes)
    for (rows, columns, pascal), labels_in, section_in, note in sized:
        section_top = top
        if note:
            fig.text(0.01, layout.y(top + 0.05), "\n".join(note), fontsize=9.5, va="top")
            top += layout.note_in(note)
        maps_top = top + layout.TITLE + labels_in
        for m, (metric, title) in enumerate(METRICS):
            fig.text(layout.x(layout.map_left(m)), layout.y(top + 0.05), title, fontsize=11,
                     fontweight="bold", va="top")
            ax = fig.add_axes(layout.axes_rect(maps_top, len(rows), m))
            _heat_map(ax, rows, columns, cells, metric, verdicts, m == 0, norm, cmap)
        top = section_top + section_in + layout.AFTER
    fig.savefig(out_path, dpi=DPI)
    plt.close(fig)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: bench_chart.py RESULTS.json OUT.png", file=sys.stderr)
        sys.exit(64)
    with open(sys.argv[1]) as f:
        draw(json.load(f), sys.argv[2])
