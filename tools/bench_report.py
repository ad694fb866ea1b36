# SPDX-License-Identifier: MIT
"""Summaries of the benchmark runs: per row and allocator the median and
spread of every sample, the verdict of each row (bench_stats), the tables
(terminal and markdown), results.json and results.csv."""
import csv
import json

import bench_stats
from bench_runner import OK

METRICS = {  # key in a cell -> (table title, unit)
    "time_s": ("Time", "s"),
    "peak_rss_mb": ("Peak RSS", "MB"),
}


def _samples(good, row):
    """{metric: [values]} from the successful runs of one cell."""
    w = row["workload_def"]
    time_of = (lambda r: float(r["result"][w.time_key])) if w.time_key else (lambda r: r["wall_s"])
    samples = {"time_s": [time_of(r) for r in good],
               "peak_rss_mb": [r["peak_rss_mb"] for r in good]}
    for name in dict.fromkeys(["end_rss_mb", "ops_s", *w.figures]):
        values = [float(r["result"][name]) for r in good if name in r["result"]]
        if values:
            samples[name] = values
    return samples


def _cell(row, column, reps):
    good = [r for r in reps if r["status"] == OK]
    failed = [r for r in reps if r["status"] != OK]
    cell = {"workload": row["workload"], "threads": row["threads"], "allocator": column.name,
            "reference": column.reference, "reps": len(reps), "reps_ok": len(good),
            "status": failed[0]["status"] if failed else (OK if good else "MISSING"),
            "detail": failed[0]["detail"] if failed else ""}
    if good:
        for metric, values in _samples(good, row).items():
            s = bench_stats.spread(values)
            cell[metric] = s.median
            if metric in METRICS or metric == "end_rss_mb":
                cell[f"{metric}_low"], cell[f"{metric}_high"] = s.low, s.high
                cell["spread"] = s.kind
    return cell


def _judge_row(cells):
    """Adds each metric's verdict and every cell's ratio to the row's best."""
    ranked = [c for c in cells if c["status"] == OK and not c["reference"]]
    verdicts = {}
    for metric in METRICS:
        spreads = {c["allocator"]: bench_stats.Spread(c[metric], c[f"{metric}_low"],
                                                      c[f"{metric}_high"], c["spread"],
                                                      c["reps_ok"]) for c in ranked}
        verdict = bench_stats.judge(spreads)
        verdicts[metric] = {"winner": verdict.winner, "tied": list(verdict.tied),
                            "why_none": verdict.why_none}
        best = min((c[metric] for c in ranked), default=0)
        for c in cells:
            if c["status"] == OK and best > 0:
                c[f"{metric}_ratio"] = c[metric] / best
    return verdicts


def summarise(runs, rows, columns_of):
    """(cells, {(workload, threads): verdicts}). A cell with any failed rep
    shows the failure: a wrong answer is never averaged away."""
    cells, verdicts = [], {}
    by_key = {}
    for r in runs:
        by_key.setdefault((r["workload"], r["threads"], r["allocator"]), []).append(r)
    for row in rows:
        row_cells = [_cell(row, column, by_key.get((row["workload"], row["threads"], column.name),
                                                   []))
                     for column in columns_of[row["workload"]]]
        verdicts[(row["workload"], row["threads"])] = _judge_row(row_cells)
        cells.extend(row_cells)
    return cells, verdicts


# --- tables ------------------------------------------------------------------

def _number(value, metric):
    """Seconds to the millisecond below 10 s; megabytes to 0.01 below 10 MB."""
    if value >= 1000:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}" if metric == "time_s" else f"{value:.2f}"


def _cell_text(cell, metric):
    if cell is None:
        return "-"
    if cell["status"] != OK:
        return cell["status"]
    if metric not in cell:
        return "-"
    text = _number(cell[metric], metric)
    low, high = cell.get(f"{metric}_low"), cell.get(f"{metric}_high")
    if low is not None and cell["reps_ok"] > 1:
        text += f" ({_number(low, metric)}-{_number(high, metric)})"
    return text


def verdict_text(verdict, n_ranked):
    if verdict["winner"]:
        return verdict["winner"]
    if verdict["tied"]:
        if len(verdict["tied"]) == n_ranked > 3:
            return f"tie: all {n_ranked}"
        return "tie: " + ", ".join(verdict["tied"])
    return "-"


def _sections(rows, columns_of):
    """Rows grouped by their columns (C workloads, Pascal workloads), in order."""
    sections = {}
    for row in rows:
        key = tuple(c.name for c in columns_of[row["workload"]])
        sections.setdefault(key, []).append(row)
    return list(sections.items())


def _render(title, header, body, markdown, text_columns=(0,)):
    """A table as lines: numbers right-aligned, the text_columns left-aligned."""
    if markdown:
        align = ["---" if i in text_columns else "--:" for i in range(len(header))]
        return [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "|".join(align) + "|",
                *("| " + " | ".join(line) + " |" for line in body), ""]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def fmt(r):
        return "  ".join(v.ljust(w) if i in text_columns else v.rjust(w)
                         for i, (v, w) in enumerate(zip(r, widths))).rstrip()
    return [title, fmt(header), "-" * len(fmt(header)), *(fmt(line) for line in body), ""]


def _metric_table(metric, section_rows, columns, cells_by_key, verdicts, markdown):
    title, unit = METRICS[metric]
    spread_note = "median (IQR)" if any(
        c.get("spread") == "IQR" for c in cells_by_key.values()) else "median (min-max)"
    body = []
    for row in section_rows:
        key = (row["workload"], row["threads"])
        cells = [cells_by_key.get((*key, col)) for col in columns]
        verdict = verdicts[key][metric]
        texts = [_cell_text(c, metric) for c in cells]
        if markdown:
            texts = [f"**{t}**" if c and (c["allocator"] == verdict["winner"]) else t
                     for t, c in zip(texts, cells)]
        n_ranked = sum(1 for c in cells if c and c["status"] == OK and not c["reference"])
        body.append([row["workload"], str(row["threads"]), *texts, verdict_text(verdict, n_ranked)])
    header = ["workload", "T", *columns, "winner"]
    return _render(f"{title}, {unit}: {spread_note}; lower is better", header, body, markdown,
                   text_columns=(0, len(header) - 1))


def _memory_table(rows, columns, cells_by_key, markdown):
    """The RSS figures the memory workloads report besides the peak."""
    body = []
    for row in rows:
        w = row["workload_def"]
        if not w.memory:
            continue
        key = (row["workload"], row["threads"])
        for figure in [f for f in w.figures if f.endswith("_rss_mb")]:
            cells = [cells_by_key.get((*key, col)) for col in columns]
            texts = [_number(c[figure], figure) if c and c["status"] == OK and figure in c else
                     (c["status"] if c and c["status"] != OK else "-") for c in cells]
            label = figure[:-len("_rss_mb")]
            body.append([f"{row['workload']} {label}", str(row["threads"]), *texts])
    if not body:
        return []
    header = ["workload, when", "T", *columns]
    title = ("Memory workloads: resident memory after the work, MB (medians; half = after "
             "half the threads, joined = right after the last join, burst = right after "
             "the last burst, idle = 1.5 s later, end = at exit)")
    return _render(title, header, body, markdown)


def tables(cells, verdicts, rows, columns_of, markdown):
    """Every table as a list of lines: time and peak RSS per section, then the
    memory workloads' own RSS figures."""
    cells_by_key = {(c["workload"], c["threads"], c["allocator"]): c for c in cells}
    out = []
    for columns, section_rows in _sections(rows, columns_of):
        for metric in METRICS:
            out += _metric_table(metric, section_rows, columns, cells_by_key, verdicts, markdown)
        out += _memory_table(section_rows, columns, cells_by_key, markdown)
    return out


def failures(cells):
    return [f"{c['workload']} T={c['threads']} {c['allocator']}: {c['status']} "
            f"{c['detail']}".rstrip() for c in cells if c["status"] != OK]


def figures_lines(cells, rows):
    """The workloads' own figures (ops/s and friends), one line per row."""
    out = []
    for row in rows:
        parts = []
        for c in cells:
            same_row = (c["workload"], c["threads"]) == (row["workload"], row["threads"])
            if not same_row or c["status"] != OK:
                continue
            figures = row["workload_def"].figures
            if figures:
                vals = " ".join(f"{n}={c[n]:.3g}" for n in figures if n in c)
            else:
                vals = f"{c['ops_s'] / 1e6:.2f}M ops/s" if c.get("ops_s") else ""
            if vals:
                parts.append(f"{c['allocator']} {vals}")
        if parts:
            out.append(f"  {row['workload']:<20} T={row['threads']}: " + "; ".join(parts))
    return out


# --- files -------------------------------------------------------------------

def write_json(path, meta, runs, cells, verdicts):
    rows = [{"workload": w, "threads": t, **v} for (w, t), v in verdicts.items()]
    with open(path, "w") as f:
        json.dump({"meta": meta, "summary": cells, "verdicts": rows, "runs": runs}, f, indent=1)


CSV_FIELDS = ["workload", "threads", "allocator", "status", "reps", "reps_ok", "time_s",
              "time_s_low", "time_s_high", "peak_rss_mb", "peak_rss_mb_low", "peak_rss_mb_high",
              "end_rss_mb", "ops_s", "time_s_ratio", "peak_rss_mb_ratio", "spread", "detail"]


def write_csv(path, cells):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for cell in cells:
            writer.writerow({k: cell.get(k, "") for k in CSV_FIELDS})
